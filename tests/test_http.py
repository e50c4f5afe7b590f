"""`papercode serve` over HTTP as a real subprocess: streamable HTTP and SSE, in both protocol eras."""

from __future__ import annotations

import re
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.sse import sse_client

from conftest import BERT_MOUTH, MODES

pytestmark = [pytest.mark.anyio, pytest.mark.transport]

STARTUP_SECONDS = 60
LISTENING = re.compile(r"serving MCP over (?P<transport>[\w-]+) on (?P<url>http://\S+)")


@contextmanager
def running(tmp_path: Path, transport: str) -> Iterator[str]:
    """A server on a free port (--port 0); yields the URL its startup line names."""
    server = subprocess.Popen(
        [sys.executable, "-m", "papercode", "serve", "--transport", transport, "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={"HOME": str(tmp_path), "PAPERCODE_CACHE_DIR": str(tmp_path / "cache"), "PAPERCODE_OFFLINE": "1", "PATH": ""},
    )
    with server:
        try:
            assert server.stderr is not None
            # The line comes once the socket listens; wait for it, bounded.
            ready, _, _ = select.select([server.stderr], [], [], STARTUP_SECONDS)
            line = server.stderr.readline() if ready else ""
            found = LISTENING.search(line)
            assert found is not None and found["transport"] == transport, f"no startup line within {STARTUP_SECONDS} s: {line!r}"
            yield found["url"]
        finally:
            server.terminate()
            server.wait(timeout=STARTUP_SECONDS)


@pytest.fixture
def streamable(tmp_path: Path) -> Iterator[str]:
    with running(tmp_path, "streamable-http") as url:
        yield url


@pytest.fixture
def sse(tmp_path: Path) -> Iterator[str]:
    with running(tmp_path, "sse") as url:
        yield url


async def test_streamable_http_on_a_free_port_in_both_eras(streamable: str) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", streamable)
    for mode in MODES:
        with anyio.fail_after(STARTUP_SECONDS):
            async with Client(streamable, mode=mode) as client:
                result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
        assert result.structured_content is not None and result.structured_content["counts"]["total"] == 10, mode


async def test_sse_on_a_free_port_in_both_eras(sse: str) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/sse", sse)
    for mode in MODES:
        with anyio.fail_after(STARTUP_SECONDS):
            async with Client(sse_client(sse), mode=mode) as client:
                result = await client.call_tool("get_paper", {"paper": 1902.04094})
        assert result.structured_content is not None and result.structured_content["query"]["resolved"] == BERT_MOUTH, mode
