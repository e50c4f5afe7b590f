"""The two workarounds of uvicorn (`papercode.edge.compat.header_timeout` and `graceful_stop`) still work: they override
uvicorn methods that are no public extension point, so a uvicorn release that renames, re-signs or stops calling
them must fail here, by name.

Each test checks one assumption their docstrings list: the methods and attributes they use still exist with the
signatures they override, and both behaviours (a header timeout, a graceful stop that returns) still work on a
plain ASGI app, without MCP. Whether uvicorn still needs them is for the canaries (`test_compat_canaries.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from papercode.edge.compat.graceful_stop import GracefulServer
from papercode.edge.compat.header_timeout import HeaderTimeoutH11

pytestmark = pytest.mark.anyio

WAIT = 30  # seconds: the bound on every wait in this module
HEADER_TIMEOUT = 0.3


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("owner", "name", "parameters"),
    [
        (H11Protocol, "connection_made", ["self", "transport"]),
        (H11Protocol, "data_received", ["self", "data"]),
        (H11Protocol, "on_response_complete", ["self"]),
        (H11Protocol, "connection_lost", ["self", "exc"]),
        (uvicorn.Server, "capture_signals", ["self"]),
        (uvicorn.Server, "serve", ["self", "sockets"]),
    ],
)
def test_every_overridden_or_called_uvicorn_method_keeps_its_signature(owner: type, name: str, parameters: list[str]) -> None:
    assert _parameters(getattr(owner, name)) == parameters


def test_handle_exit_is_still_a_signal_handler() -> None:
    # sse-starlette (an SDK dependency) replaces it with a `(*args, **kwargs)` wrapper that calls uvicorn's.
    server = uvicorn.Server(uvicorn.Config(_hello, log_config=None))
    inspect.signature(server.handle_exit).bind(signal.SIGTERM, None)
    server.handle_exit(signal.SIGTERM, None)
    assert server.should_exit


def test_h11_protocol_still_has_the_attributes_the_header_timeout_reads() -> None:
    config = uvicorn.Config(_hello, log_config=None)
    loop = asyncio.new_event_loop()
    try:
        protocol = H11Protocol(config, uvicorn.Server(config).server_state, {}, _loop=loop)
    finally:
        loop.close()
    assert {"loop", "transport", "cycle"} <= set(vars(protocol))
    assert protocol.cycle is None  # no request yet; a new cycle object once a request's headers are parsed


def test_uvicorn_server_still_enters_capture_signals_when_it_serves() -> None:
    source = inspect.getsource(uvicorn.Server.serve)
    assert "self.capture_signals()" in source


async def _hello(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@asynccontextmanager
async def serving(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[str, int]]:
    """A plain ASGI app on a free port, through the workarounds' protocol and server; yields (host, port)."""
    monkeypatch.setattr(HeaderTimeoutH11, "header_timeout", HEADER_TIMEOUT)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    server = GracefulServer(uvicorn.Config(_hello, http=HeaderTimeoutH11, lifespan="off", log_config=None, access_log=False))
    with sock:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: server.serve(sockets=[sock]))
            try:
                yield sock.getsockname()[:2]
            finally:
                server.should_exit = True


def _answered(raw: socket.socket) -> bytes:
    """Read until a whole answer has come, its head and its body (`ok`): TCP may deliver them in separate reads."""
    raw.settimeout(WAIT)
    data = b""
    while not (b"\r\n\r\n" in data and data.endswith(b"ok")) and (chunk := raw.recv(4096)):
        data += chunk
    return data


def _closed_by_server(raw: socket.socket) -> bool:
    """Read until the server closes the connection (True: an end of stream, or a reset when it closed with our bytes
    unread) or WAIT passes (False)."""
    raw.settimeout(WAIT)
    try:
        while raw.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def _send_unless_closed(raw: socket.socket, data: bytes) -> None:
    """Send `data`; on a loaded machine the header timer may already have closed the connection, which is what
    the caller then checks for."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        raw.sendall(data)


@pytest.mark.process
async def test_a_connection_that_never_finishes_its_headers_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(monkeypatch) as address:
        with socket.create_connection(address, timeout=WAIT) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and nothing more
            with anyio.fail_after(WAIT):
                assert await anyio.to_thread.run_sync(_closed_by_server, raw)


@pytest.mark.process
async def test_a_slow_second_request_on_a_kept_alive_connection_is_closed_too(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(monkeypatch) as address:
        with socket.create_connection(address, timeout=WAIT) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            with anyio.fail_after(WAIT):
                assert (await anyio.to_thread.run_sync(_answered, raw)).endswith(b"ok")
            _send_unless_closed(raw, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # the next request's headers, never finished
            with anyio.fail_after(WAIT):
                assert await anyio.to_thread.run_sync(_closed_by_server, raw)


@pytest.mark.process
async def test_headers_that_arrive_in_time_are_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(monkeypatch) as address:
        with socket.create_connection(address, timeout=WAIT) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            await anyio.sleep(HEADER_TIMEOUT / 3)
            raw.sendall(b"\r\n")
            await anyio.sleep(HEADER_TIMEOUT * 2)  # the timer was stopped: a slow app or client body is not cut off
            raw.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            with anyio.fail_after(WAIT):
                answered = await anyio.to_thread.run_sync(_answered, raw)
    assert answered.startswith(b"HTTP/1.1 200") and answered.endswith(b"ok")


GRACEFUL_STOP = """
import os, signal, socket, anyio, uvicorn
from papercode.edge.compat.graceful_stop import GracefulServer

async def app(scope, receive, send):
    pass

async def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = GracefulServer(uvicorn.Config(app, lifespan="off", log_config=None))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: server.serve(sockets=[sock]))
        while not server.started:
            await anyio.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)
    print("returned", signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)

anyio.run(main)
"""


@pytest.mark.process
def test_sigterm_stops_the_server_gracefully_and_serve_returns() -> None:
    done = subprocess.run([sys.executable, "-c", GRACEFUL_STOP], capture_output=True, text=True, timeout=WAIT, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "returned True"), done.stderr[-2000:]
    assert done.returncode != -signal.SIGTERM
