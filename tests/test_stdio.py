"""`papercode serve` as a real subprocess, spoken to over stdio by the SDK client, and the launchers hosts use:
mcp.json (the handshake era), `mcp run` (the current era; the `papercode config` snippet is in test_cli.py).

Everything a stdio process serves is tested in-process (test_queries.py, test_mcp_roundtrip.py); here the pipe."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from conftest import BERT_MOUTH, BERT_MOUTH_ORDER, BERTS_ICL, THIS_CHECKOUT, TOOL_NAMES, make_record, make_sample, sha_for, write_records
from papercode.settings import bundled_records_dir
from tool_answers import flat_samples

pytestmark = [pytest.mark.anyio, pytest.mark.process]

STARTUP_AND_CALLS_SECONDS = 60


def serve_params(tmp_path: Path, *extra: str) -> StdioServerParameters:
    # The stdio client passes on only HOME, LOGNAME, PATH, SHELL, TERM and USER: everything else is explicit.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "papercode", "serve", *extra],
        env={"HOME": str(tmp_path), "PAPERCODE_CACHE_DIR": str(tmp_path / "cache"), "PAPERCODE_LOG_LEVEL": "WARNING", **THIS_CHECKOUT},
        cwd=tmp_path,
    )


async def test_stdio_serves_the_records_given_by_flag_with_exact_counts(tmp_path: Path) -> None:
    # The bundled records beside one more: the counts say the flag's directory is what is served.
    records = write_records(tmp_path / "mine", [make_record("2001.00001", "one-more", [make_sample(sha_for("one-more"))])])
    for path in bundled_records_dir().glob("*.txt"):
        shutil.copy(path, records / path.name)
    with anyio.fail_after(STARTUP_AND_CALLS_SECONDS):
        async with Client(serve_params(tmp_path, "--records", str(records)), mode="auto") as client:
            bert_mouth = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "arXiv:1902.04094v2"})
            berts_icl = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERTS_ICL, "limit": 100})
            stats = await client.call_tool("corpus_stats", {})
            missing = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "9999.99999"})
            tools = (await client.list_tools()).tools
    assert bert_mouth.is_error is False and berts_icl.is_error is False
    first = bert_mouth.structured_content
    assert first is not None and json.loads(bert_mouth.content[0].text) == first
    assert first["query"] == {"asked": "arXiv:1902.04094v2", "resolved": BERT_MOUTH}
    assert first["counts"] == {
        "total": 10,
        "by_status": {"ran_honours": 2, "ran_draft_wrong": 2, "ran": 6},
        "by_repo_kind": {"official": 2, "listed": 8},
        "pointer_only": 2,
    }
    assert [(s["repo"], s["status"], s["entry"]) for s in flat_samples(first)] == BERT_MOUTH_ORDER
    second = berts_icl.structured_content
    assert second is not None
    assert second["counts"]["by_status"] == {"ran_violates": 1, "ran": 11, "ran_draft_wrong": 1, "unverified": 13}
    assert len(flat_samples(second)) == 26 and "next_cursor" not in second
    assert stats.structured_content is not None
    assert (stats.structured_content["papers"], stats.structured_content["samples"]) == (3, 37)
    assert missing.is_error is True and missing.content[0].text.startswith("not_found: no paper with arXiv id 9999.99999")
    assert len(tools) == len(TOOL_NAMES)


async def test_the_repositorys_mcp_json_launches_a_working_server(tmp_path: Path) -> None:
    """mcp.json (and .mcp.json, which Claude Code reads: the same server) is what hosts run from a checkout after the README's setup."""
    root = Path(__file__).resolve().parents[1]
    (entry,) = json.loads((root / "mcp.json").read_text())["mcpServers"].values()
    assert json.loads((root / ".mcp.json").read_text()) == json.loads((root / "mcp.json").read_text())
    params = StdioServerParameters(
        command=str(root / entry["command"]),
        args=entry["args"],
        # THIS_CHECKOUT: the code under test, which in a checkout set up as the README says is what the editable install runs.
        env={"HOME": str(tmp_path), "PAPERCODE_OFFLINE": "1", **entry.get("env", {}), **THIS_CHECKOUT},
        cwd=root,
    )
    with anyio.fail_after(STARTUP_AND_CALLS_SECONDS):
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
    assert result.structured_content is not None and result.structured_content["counts"]["total"] == 10
    assert json.loads(result.content[0].text) == result.structured_content  # the handshake era over a real pipe


async def test_mcp_run_serves_the_bundled_records(tmp_path: Path) -> None:
    """`mcp run server/papercode_mcp.py` (what `mcp dev` starts inside the Inspector) finds the server object."""
    root = Path(__file__).resolve().parents[1]
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "mcp"),
        args=["run", str(root / "server" / "papercode_mcp.py")],
        env={"HOME": str(tmp_path), "PAPERCODE_CACHE_DIR": str(tmp_path / "cache"), "PAPERCODE_OFFLINE": "1", **THIS_CHECKOUT},
        cwd=tmp_path,
    )
    with anyio.fail_after(STARTUP_AND_CALLS_SECONDS):
        async with Client(params) as client:
            stats = await client.call_tool("corpus_stats", {})
            paper = await client.call_tool("get_paper", {"paper": 2406.04823})
    assert stats.structured_content is not None and (stats.structured_content["papers"], stats.structured_content["samples"]) == (2, 36)
    assert paper.structured_content is not None and paper.structured_content["query"] == {"asked": BERTS_ICL}
