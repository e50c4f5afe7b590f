"""The `papercode` command line, run in-process (`cli.main`): check, call, config, flags, environment and start-up errors.

Three tests need a real process: a host launching the configured command, one starting `serve` with and without
`--no-views`, and a reader closing the pipe under `python -m papercode`; the transports have their own subprocess tests
(test_stdio.py, test_http.py).
"""

from __future__ import annotations

import json
import os
import runpy
import shlex
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import orjson
import pytest
from mcp import Client, StdioServerParameters

from papercode import __version__
from papercode.cli import main as cli
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from tests.support.checkout import THIS_CHECKOUT
from tests.support.records import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL, make_record, write_records
from tests.support.tool_answers import flat_samples

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Run]:
    """`papercode ARGS` in-process with a clean PAPERCODE_* environment: (exit code, stdout, stderr)."""
    for name in [name for name in os.environ if name.startswith("PAPERCODE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PAPERCODE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PAPERCODE_OFFLINE", "1")

    def papercode(*args: str, **environment: str) -> tuple[int, str, str]:
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    yield papercode


def test_check_on_bundled_records_prints_counts(run: Run) -> None:
    code, out, _ = run("check")
    assert code == 0
    lines = out.splitlines()
    assert "files: 2 found, 2 read" in lines
    assert "records: 2 read, 2 indexed" in lines
    assert "problems: 0 rejected, 0 warnings" in lines


def test_check_exits_1_when_a_record_is_rejected(run: Run, tmp_path: Path) -> None:
    records = write_records(tmp_path / "records", [make_record(), {"title": "no key"}])
    code, out, _ = run("check", "--records", str(records))
    assert code == 1
    assert "records: 2 read, 1 indexed" in out
    assert "problems: 1 rejected" in out
    assert "no_key" in out and "001.json" in out


def test_check_reads_records_from_the_environment(run: Run, tmp_path: Path) -> None:
    first = write_records(tmp_path / "a", [make_record("2001.00001", "one")])
    second = write_records(tmp_path / "b", [make_record("2001.00002", "two")])
    code, out, _ = run("check", PAPERCODE_RECORDS=f"{first}{os.pathsep}{second}")
    assert code == 0
    assert "records: 2 read, 2 indexed" in out


def test_records_flag_is_repeatable_and_beats_the_environment(run: Run, tmp_path: Path) -> None:
    first = write_records(tmp_path / "a", [make_record("2001.00001", "one")])
    second = write_records(tmp_path / "b", [make_record("2001.00002", "two")])
    code, out, _ = run("check", "--records", str(first), "--records", str(second), PAPERCODE_RECORDS=str(tmp_path / "nowhere"))
    assert code == 0
    assert "records: 2 read, 2 indexed" in out


def test_call_get_paper_prints_only_compact_json(run: Run) -> None:
    code, out, _ = run("call", "get_paper", f"paper={BERT_MOUTH}")
    assert code == 0
    answer = json.loads(out)
    assert out == orjson.dumps(answer).decode() + "\n"
    assert answer["title"] == BERT_MOUTH_TITLE
    assert answer["query"] == {"asked": BERT_MOUTH}  # resolved to what was asked


def test_call_coerces_arguments_to_the_tools_types(run: Run) -> None:
    code, out, _ = run("call", "get_harvested_code_for_paper", f"arxiv_id={BERTS_ICL}", "limit=3", "status=ran,unverified")
    assert code == 0
    answer = json.loads(out)
    assert len(flat_samples(answer)) == 3 and answer["matched"] == 24 and "next_cursor" in answer


def test_call_stdout_is_only_json_even_when_logging_debug(run: Run) -> None:
    code, out, _ = run("call", "corpus_stats", "--log-level", "DEBUG")
    assert code == 0
    assert json.loads(out)["papers"] == 2
    assert out.count("\n") == 1


def test_call_tool_error_exits_1_with_message_on_stderr(run: Run) -> None:
    code, out, err = run("call", "get_paper", "paper=9999.99999")
    assert code == 1 and out == ""
    assert err.startswith("not_found: no paper with arXiv id 9999.99999") and "Next:" in err


def test_call_unknown_tool_exits_1(run: Run) -> None:
    code, out, err = run("call", "no_such_tool")
    assert code == 1 and out == ""
    assert err.startswith("not_found:")


def test_call_malformed_argument_exits_2(run: Run) -> None:
    code, out, err = run("call", "get_paper", BERT_MOUTH)
    assert code == 2 and out == ""
    assert "key=value" in err


# -- start-up errors: one line, exit 2, no traceback ----------------------------------------------


@pytest.mark.parametrize(
    ("args", "environment", "named"),
    [
        (("check",), {"PAPERCODE_MAX_FILE_BYTES": "0"}, "PAPERCODE_MAX_FILE_BYTES must be positive"),
        (("check",), {"PAPERCODE_MAX_FILE_BYTES": "-5"}, "PAPERCODE_MAX_FILE_BYTES must be positive"),
        (("check",), {"PAPERCODE_MAX_FILE_BYTES": "lots"}, "PAPERCODE_MAX_FILE_BYTES must be a whole number"),
        (("serve", "--port", "http"), {}, "--port must be a port number"),
        (("serve", "--port", "70000"), {}, "--port must be a port number"),
        (("serve",), {"PAPERCODE_TRANSPORT": "carrier-pigeon"}, "PAPERCODE_TRANSPORT must be one of stdio, sse, streamable-http"),
        (("serve", "--watch-interval", "nan"), {}, "--watch-interval must be positive"),
        (("check", "--log-level", "loud"), {}, "--log-level must be one of DEBUG"),
        (("call", "corpus_stats"), {"PAPERCODE_OFFLINE": "maybe"}, "PAPERCODE_OFFLINE must be 1 or 0"),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2(run: Run, args: tuple[str, ...], environment: dict[str, str], named: str) -> None:
    code, out, err = run(*args, **environment)
    assert code == 2 and out == ""
    assert err.startswith(f"papercode: {named}") and "Next:" in err and err.count("\n") == 1


def test_missing_records_directory_is_one_line_and_exit_2(run: Run, tmp_path: Path) -> None:
    code, _, err = run("serve", "--records", str(tmp_path / "nowhere"))
    assert code == 2
    assert (
        err
        == f"papercode: --records {tmp_path / 'nowhere'}: no such file or directory. Next: pass the directory that holds your record files\n"
    )


def test_unreadable_records_directory_is_one_line_and_exit_2(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = write_records(tmp_path / "records", [make_record()])
    records.chmod(0)
    try:
        if os.access(records, os.R_OK):  # root reads anything: let the permission check see what a user would
            monkeypatch.setattr(cli.os, "access", lambda path, mode: Path(path) != records)
        code, _, err = run("check", "--records", str(records))
    finally:
        records.chmod(0o755)
    assert code == 2 and err.startswith(f"papercode: --records {records}: permission denied. Next:") and err.count("\n") == 1


@pytest.mark.parametrize("transport", ["sse", "streamable-http"])
def test_a_busy_port_is_one_line_and_exit_2(run: Run, transport: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, out, err = run("serve", "--transport", transport, "--port", str(port))
    assert code == 2 and out == ""
    assert err == f"papercode: port {port} on 127.0.0.1 is already in use. Next: pass another --port, or stop the server using it\n"


def test_a_public_bind_without_a_token_is_refused(run: Run) -> None:
    code, out, err = run("serve", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "0")
    assert code == 2 and out == ""
    assert err.startswith("papercode: --host 0.0.0.0 would serve anyone who can reach it, with no auth. Next:")
    assert err.count("\n") == 1


# -- config: snippets that paste ------------------------------------------------------------------


def _installed_command() -> str:
    return str(Path(sys.executable).parent / "papercode")


@pytest.mark.parametrize("host", ["claude-desktop", "cursor"])
def test_config_for_mcp_servers_hosts_uses_absolute_paths(run: Run, host: str, tmp_path: Path) -> None:
    records = write_records(tmp_path / "records", [make_record()])
    code, out, err = run("config", host, "--records", str(records / ".." / "records"))
    assert code == 0
    entry = json.loads(out)["mcpServers"]["papercode"]
    assert entry == {"command": _installed_command(), "args": ["serve", "--records", str(records.resolve())]}
    assert Path(entry["command"]).is_absolute() and os.access(entry["command"], os.X_OK)
    assert err.startswith("papercode: paste this into ")


def test_config_for_vscode_uses_servers(run: Run) -> None:
    code, out, _ = run("config", "vscode")
    assert code == 0
    assert json.loads(out) == {"servers": {"papercode": {"type": "stdio", "command": _installed_command(), "args": ["serve"]}}}


def test_config_for_claude_code_is_a_command_line(run: Run, tmp_path: Path) -> None:
    write_records(tmp_path / "my records", [make_record()])
    code, out, _ = run("config", "claude-code", "--records", str(tmp_path / "my records"))
    assert code == 0
    assert shlex.split(out) == [
        "claude",
        "mcp",
        "add",
        "papercode",
        "--",
        _installed_command(),
        "serve",
        "--records",
        str(tmp_path / "my records"),
    ]


def test_config_for_http_names_the_url(run: Run) -> None:
    code, out, err = run("config", "http", "--port", "8123")
    assert code == 0
    assert json.loads(out) == {"mcpServers": {"papercode": {"type": "http", "url": "http://127.0.0.1:8123/mcp"}}}
    assert f"{_installed_command()} serve --transport streamable-http --port 8123" in err


@pytest.mark.process
@pytest.mark.anyio
async def test_the_claude_desktop_snippet_launches_a_working_server(run: Run, tmp_path: Path) -> None:
    _, out, _ = run("config", "claude-desktop")
    entry = json.loads(out)["mcpServers"]["papercode"]
    # Desktop hosts start servers elsewhere, with little of the shell's environment (THIS_CHECKOUT: the code under test,
    # which is what the snippet's command runs when the virtualenv's install is this checkout's, as the README sets it up).
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={"HOME": str(tmp_path), "PAPERCODE_OFFLINE": "1", **THIS_CHECKOUT}, cwd="/"
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
    assert result.structured_content is not None and result.structured_content["counts"]["total"] == 10


@pytest.mark.process
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("args", "environment", "views"),
    [((), {}, True), (("--no-views",), {}, False), ((), {"PAPERCODE_NO_VIEWS": "1"}, False)],
    ids=["default", "flag", "variable"],
)
async def test_serve_with_no_views_names_no_view_and_serves_none(
    tmp_path: Path, args: tuple[str, ...], environment: dict[str, str], views: bool
) -> None:
    """`papercode serve --no-views` (or PAPERCODE_NO_VIEWS=1), as a host starts it: no extension in its capabilities, no
    tool with a `_meta.ui` view, no `ui://` resource; served without it, all three are there."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "papercode", "serve", *args],
        env={"HOME": str(tmp_path), "PAPERCODE_OFFLINE": "1", **environment, **THIS_CHECKOUT},
        cwd=str(tmp_path),
    )
    with anyio.fail_after(60):
        async with Client(params, mode="legacy") as client:
            capabilities = client.server_capabilities
            tools = (await client.list_tools()).tools
            resources = (await client.list_resources()).resources
    assert capabilities is not None and bool(capabilities.extensions) is views
    assert sorted(tool.name for tool in tools if tool.meta and "ui" in tool.meta) == (["get_leaderboard", "get_paper"] if views else [])
    assert sorted(str(resource.uri) for resource in resources if str(resource.uri).startswith("ui://")) == (
        ["ui://papercode/leaderboard", "ui://papercode/paper"] if views else []
    )


def test_version_through_the_module_entry_point(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # `python -m papercode --version`, in-process (the test below runs `python -m papercode` as a real process).
    monkeypatch.setattr(sys, "argv", ["papercode", "--version"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module("papercode", run_name="__main__")
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"papercode {__version__}"


@pytest.mark.process
def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """`papercode config vscode | head -1`: the pipe closes under the writer, which must end quietly."""
    reader, writer = os.pipe()
    os.close(reader)  # nobody will read: the first write fails with EPIPE
    done = subprocess.run(
        [sys.executable, "-m", "papercode", "config", "vscode"],
        stdout=writer,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    os.close(writer)
    assert done.returncode == 1 and "Traceback" not in done.stderr


def test_materialize_chooses_samples_by_status_paper_and_repository(corpus: Corpus) -> None:
    chosen = cli.samples_to_materialize(corpus, "ran", [BERT_MOUTH], ["https://github.com/SeanRJohnson/protein_gibbs_sampler"])
    assert [(row.repo, row.status) for row in chosen] == [("seanrjohnson/protein_gibbs_sampler", "ran")] * 6
    assert len(cli.samples_to_materialize(corpus, None, [], [])) == len(corpus.index.samples)
    with pytest.raises(QueryError, match=r"^invalid_argument: 'nothing' is not a repository"):
        cli.samples_to_materialize(corpus, None, [], ["nothing"])
