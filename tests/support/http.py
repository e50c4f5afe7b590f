"""A papercode server over HTTP for the tests on real sockets: `http_server` runs `papercode serve`'s HTTP stack in the
test's own process on a free port, `papercode_serve` runs it as a process of its own (`listening` waits for its
startup line; `health` reads its `/healthz`, `wait_ready` waits for `ok`), and the requests they are sent
(`INITIALIZE` with the `ACCEPT` headers, `bearer` for the `TOKEN` a team would give), every wait bounded by `WAIT`.
"""

from __future__ import annotations

import re
import select
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx2

from papercode.corpus.stages import Corpus
from papercode.edge.access import StaticTokens, auth_for
from papercode.edge.app import build_server
from papercode.edge.health import add_health_route
from papercode.edge.http import url_of, uvicorn_server
from papercode.edge.startup import bind
from papercode.settings import Settings
from papercode.verified.materialize import VerifiedCode
from tests.support.checkout import THIS_CHECKOUT

WAIT = 30  # seconds: the bound on every wait for a server over HTTP
TOKEN = "team-token-0123456789abcdef"
LISTENING = re.compile(r"serving MCP over (?P<transport>[\w-]+) on (?P<url>http://\S+)")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@asynccontextmanager
async def http_server(
    corpus: Corpus, settings: Settings, tokens: tuple[str, ...] = (), code: VerifiedCode | None = None
) -> AsyncIterator[str]:
    """`papercode serve`'s HTTP stack in this process, on a free port; yields the MCP URL."""
    sock = bind(settings.host, 0)
    url = url_of(sock, settings.transport)
    auth = (StaticTokens(tokens), auth_for(url)) if tokens else None
    server = build_server(lambda: corpus, code, auth=auth)
    health = {"status": "ok", "papers": len(corpus.index.papers), "reloads": 0, "failed_reloads": 0, "last_reload_error": None}
    add_health_route(server, lambda: health)
    running = uvicorn_server(server, settings, auth)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: running.serve(sockets=[sock]))  # the socket listens already: clients may connect at once
        try:
            yield url.replace("0.0.0.0", "127.0.0.1")
        finally:
            running.should_exit = True  # as on SIGTERM: finish, close every connection, then return


def settings_for(transport: str, **changes: Any) -> Settings:
    """The default settings, served over `transport`, with `changes`."""
    return replace(Settings(), transport=transport, **changes)


@contextmanager
def listening(server: subprocess.Popen[str]) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A `papercode serve` process on its way up: it and the URL its startup line names, killed at the end if it still runs."""
    with server:
        try:
            assert server.stderr is not None
            ready, _, _ = select.select([server.stderr], [], [], WAIT)  # the line comes once the socket listens
            line = server.stderr.readline() if ready else ""
            found = LISTENING.search(line)
            assert found is not None, f"no startup line within {WAIT} s: {line!r}"
            yield server, found["url"]
        finally:
            if server.poll() is None:
                server.kill()
            server.wait(timeout=WAIT)


# `python -m papercode ARGS` with RLIMIT_NOFILE lowered to the first argument (0: unchanged).
LAUNCH = """
import resource, runpy, sys
limit = int(sys.argv.pop(1))
if limit:
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
sys.argv[0] = "papercode"
runpy.run_module("papercode", run_name="__main__", alter_sys=True)
"""


@contextmanager
def papercode_serve(tmp_path: Path, *args: str, fd_limit: int = 0, **environment: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`papercode serve ARGS` (this checkout's) on a free port; yields the process and the URL its startup line names."""
    server = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, str(fd_limit), "serve", "--port", "0", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        encoding="utf-8",
        errors="backslashreplace",
        env={
            "HOME": str(tmp_path),
            "PAPERCODE_CACHE_DIR": str(tmp_path / "cache"),
            "PAPERCODE_OFFLINE": "1",
            "PATH": "",
            **THIS_CHECKOUT,
            "PYTHONIOENCODING": "utf-8",
            **environment,
        },
    )
    with listening(server) as started:
        yield started


def health(url: str) -> dict[str, Any]:
    """What the `/healthz` beside the MCP endpoint `url` answers (whatever its HTTP status)."""
    return dict(httpx2.get(url.rsplit("/", 1)[0] + "/healthz", timeout=WAIT).json())


def wait_ready(url: str) -> None:
    deadline = time.monotonic() + WAIT
    while health(url)["status"] != "ok":
        assert time.monotonic() < deadline, f"not ready within {WAIT} s"
        time.sleep(0.05)
