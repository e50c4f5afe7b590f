"""Canaries for `papercode.edge.compat`: each asserts the upstream behaviour one workaround exists for, on the SDK
(`MCPServer`, bare) or uvicorn (plain), never through papercode. A canary failing means upstream changed: read the
workaround's docstring ("Goes when:") and remove the workaround, or adapt it, and this canary with it.

Every compat module's docstring names what it works around, its canary here and what would let it go; the first
test holds that to this file. The canaries that serve on sockets on a clock, or watch a process end, are
`-m process`; the rest run in the default suite.
"""

from __future__ import annotations

import ast
import gc
import inspect
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client, MCPError
from mcp.server.apps import EXTENSION_ID, Apps
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CONNECTION_CLOSED, INTERNAL_ERROR, METHOD_NOT_FOUND
from starlette.types import Message, Receive, Scope, Send

from papercode.edge import compat
from tests.support.http import ACCEPT, INITIALIZE

pytestmark = pytest.mark.anyio

COMPAT = Path(compat.__file__).parent
WAIT = 20  # seconds: the bound on every wait for something that does happen
QUIET = 1.0  # seconds: how long a canary watches for something upstream does not do
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# uvicorn's timeouts today; one more (a body or header timeout, say) is the change the HTTP canaries watch for.
UVICORN_TIMEOUTS = {"timeout_keep_alive", "timeout_notify", "timeout_graceful_shutdown", "timeout_worker_healthcheck"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _line(message: object) -> bytes:
    return json.dumps(message).encode() + b"\n"


# -- every workaround names its canary -------------------------------------------------------------------------------


def _canaries() -> set[str]:
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")}


@pytest.mark.parametrize("module", sorted(path.stem for path in COMPAT.glob("*.py") if path.name != "__init__.py"))
def test_each_workaround_says_what_it_works_around_its_canary_and_what_lets_it_go(module: str) -> None:
    doc = ast.get_docstring(ast.parse((COMPAT / f"{module}.py").read_text(encoding="utf-8"))) or ""
    for part in ("Works around: ", "Canary: ", "Goes when: "):
        assert f"\n{part}" in doc, f"edge/compat/{module}.py's docstring has no '{part.strip()}' paragraph"
    works_around = doc.split("\nWorks around: ", 1)[1]
    assert re.match(r"(mcp|uvicorn) \d+\.\d+\.\d+\b", works_around), f"{module}: say which library and version it works around"
    canary_part = doc.split("\nCanary: ", 1)[1].split("\nGoes when: ", 1)[0]
    named = re.findall(r"`(test_\w+)`", canary_part)
    assert named, f"edge/compat/{module}.py names no canary"
    missing = [name for name in named if name not in _canaries()]
    assert not missing, f"edge/compat/{module}.py names canaries this file does not have: {missing}"


# -- stdio: stdio_lines, stdio_wire, stdio_eof -----------------------------------------------------------------------


class _Std:
    """What `sys.stdin`/`sys.stdout` are for the SDK's `stdio_server()`: it serves a `.buffer` that is not fd 0/1 in place."""

    def __init__(self, buffer: Any) -> None:
        self.buffer = buffer


async def test_the_sdk_leaves_a_malformed_line_and_an_unusable_id_unanswered(monkeypatch: pytest.MonkeyPatch) -> None:
    """compat.stdio_lines: a line that is not JSON (its id still readable) and a request with a float id get no answer."""
    sent = b"".join(
        [
            _line(INITIALIZE),
            _line(INITIALIZED),
            b'{"jsonrpc": "2.0", "id": 7, "method": "ping", \n',  # broken JSON, its id readable
            _line({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),  # an id that is neither a string nor an integer
            _line({"jsonrpc": "2.0", "id": 9, "method": "ping"}),  # answered: the server read past both
        ]
    )
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(in_read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout, os.fdopen(out_read, "rb") as answers:
        monkeypatch.setattr(sys, "stdin", _Std(stdin))
        monkeypatch.setattr(sys, "stdout", _Std(stdout))
        os.write(in_write, sent)

        def until_the_last_ping() -> list[object]:
            ids: list[object] = []
            while 9 not in ids:
                ids.append(json.loads(answers.readline()).get("id"))
            return ids

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(MCPServer("canary").run_stdio_async)
            with anyio.fail_after(WAIT):
                answered = await anyio.to_thread.run_sync(until_the_last_ping)
            os.close(in_write)  # the end of input ends the server
    assert answered == [1, 9], answered


async def test_cancelling_the_sdks_stdio_server_waits_for_its_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """compat.stdio_wire: cancelled while its reader waits for a line, the SDK's stdio server waits for the client."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(in_read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout, os.fdopen(out_read, "rb") as answers:
        monkeypatch.setattr(sys, "stdin", _Std(stdin))
        monkeypatch.setattr(sys, "stdout", _Std(stdout))
        os.write(in_write, _line(INITIALIZE))
        serving, ended = anyio.CancelScope(), anyio.Event()

        async def serve() -> None:
            with serving:
                await MCPServer("canary").run_stdio_async()
            ended.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(serve)
            with anyio.fail_after(WAIT):
                assert json.loads(await anyio.to_thread.run_sync(answers.readline))["id"] == 1  # serving, its reader waiting
            serving.cancel()
            with anyio.move_on_after(QUIET):
                await ended.wait()
            still_waiting = not ended.is_set()
            os.close(in_write)  # the client ends its input: now the cancelled server ends
            with anyio.fail_after(WAIT):
                await ended.wait()
    assert still_waiting, "the SDK's stdio server ended when cancelled, without its client: compat.stdio_wire can go"


async def test_a_client_that_stopped_reading_crashes_the_sdks_stdio_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """compat.stdio_wire: the SDK's stdio server writing to a closed pipe raises BrokenPipeError out of the transport."""
    out_read, out_write = os.pipe()
    os.close(out_read)  # the client stopped reading
    with os.fdopen(out_write, "wb", buffering=0) as stdout:  # unbuffered: only the SDK's own write meets the pipe
        monkeypatch.setattr(sys, "stdin", _Std(io.BytesIO(_line(INITIALIZE))))
        monkeypatch.setattr(sys, "stdout", _Std(stdout))
        with pytest.raises(BaseException) as raised, anyio.fail_after(WAIT):  # whichever group carries it
            await MCPServer("canary").run_stdio_async()
    assert (
        raised.group_contains(BrokenPipeError, depth=None)
        if isinstance(raised.value, BaseExceptionGroup)
        else raised.type is BrokenPipeError
    )


async def test_the_sdk_cuts_off_a_request_still_running_when_its_input_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """compat.stdio_eof: a request still running when the client closes its input is answered -32000 Connection closed
    (or not at all, when its answer was on its way), never with its result."""
    server = MCPServer("canary")
    started = anyio.Event()

    @server.tool()
    async def slow() -> str:
        started.set()
        await anyio.sleep(QUIET)  # long enough for the end of input to come first
        return "done"

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    with os.fdopen(in_read, "rb") as stdin, os.fdopen(out_write, "wb") as stdout, os.fdopen(out_read, "rb") as answers:
        monkeypatch.setattr(sys, "stdin", _Std(stdin))
        monkeypatch.setattr(sys, "stdout", _Std(stdout))
        os.write(in_write, _line(INITIALIZE) + _line(INITIALIZED) + _line(call))
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(server.run_stdio_async)
                await started.wait()
                os.close(in_write)  # the client closes its input after its last request, as a one-shot script does
        stdout.close()  # the server has ended: everything it wrote is in the pipe
        answered = [json.loads(line) for line in answers.read().splitlines()]
    (slow_answer,) = [answer for answer in answered if answer.get("id") == 2] or [None]
    assert slow_answer is None or slow_answer.get("error", {}).get("code") == CONNECTION_CLOSED, (
        f"the SDK answered a request running when its input ended ({slow_answer}): compat.stdio_eof can go"
    )


# -- a bare MCPServer, in memory: set_level, list_changed, unknown_tool, prompt_arguments, resource_uri_length -------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # the handshake era's logging
async def test_mcpserver_answers_no_set_level_and_advertises_no_logging() -> None:
    """compat.set_level: a bare `MCPServer` has no `logging` capability and answers `logging/setLevel` -32601."""
    async with Client(MCPServer("canary"), mode="legacy") as client:
        assert client.server_capabilities.logging is None
        with pytest.raises(MCPError) as refused:
            await client.set_logging_level("info")
    assert refused.value.code == METHOD_NOT_FOUND


async def test_the_sdks_discover_says_every_list_may_change() -> None:
    """compat.list_changed: in the 2026-07-28 era a bare `MCPServer` says `listChanged: true` for every list."""
    server = MCPServer("canary")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.prompt()
    def hello() -> str:
        return "hello"

    @server.resource("canary://one")
    def one() -> str:
        return "one"

    async with Client(server) as client:
        assert client.protocol_version == "2026-07-28"
        capabilities = client.server_capabilities
    assert capabilities.tools is not None and capabilities.tools.list_changed is True
    assert capabilities.prompts is not None and capabilities.prompts.list_changed is True
    assert capabilities.resources is not None and capabilities.resources.list_changed is True


async def test_the_sdks_handshake_advertises_no_extensions() -> None:
    """compat.handshake_extensions: a bare `MCPServer` with an extension advertises it in the 2026-07-28 era only."""
    async with Client(MCPServer("canary", extensions=[Apps()]), mode="legacy") as client:
        assert client.server_capabilities.extensions is None
    async with Client(MCPServer("canary", extensions=[Apps()])) as client:
        assert client.server_capabilities.extensions == {EXTENSION_ID: {}}


async def test_the_sdk_answers_an_unknown_tool_with_a_failed_call() -> None:
    """compat.unknown_tool: a bare `MCPServer` answers a call to a tool it does not have as a failed call."""
    async with Client(MCPServer("canary")) as client:
        answer = await client.call_tool("no_such_tool", {})
    assert answer.is_error is True


async def test_the_sdk_answers_a_prompts_mistaken_arguments_with_an_internal_error() -> None:
    """compat.prompt_arguments: an unknown prompt, a missing argument and an unknown one are each -32603."""
    server = MCPServer("canary")

    @server.prompt()
    def paper(arxiv_id: str) -> str:
        return arxiv_id

    codes = []
    async with Client(server) as client:
        for name, arguments in [("no_such_prompt", {}), ("paper", {}), ("paper", {"arxiv_id": "1", "extra": "x"})]:
            with pytest.raises(MCPError) as refused:
                await client.get_prompt(name, arguments)
            codes.append(refused.value.code)
    assert codes == [INTERNAL_ERROR] * 3


async def test_the_sdks_unknown_resource_error_echoes_the_whole_uri() -> None:
    """compat.resource_uri_length: the error for a URI nothing matches quotes all of it."""
    uri = "canary://" + "x" * 10_000
    async with Client(MCPServer("canary")) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
    assert uri in refused.value.message


# -- the SDK's HTTP apps, called as ASGI: auth_first, quiet_after_answer ---------------------------------------------


async def _call(app: Any, scope: Scope, body: bytes = b"") -> list[Message]:
    """What `app` sends for one request (raising what it raises, after what it sent)."""
    sent: list[Message] = []
    given = False

    async def receive() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _scope(method: str, path: str, headers: dict[str, str]) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(name.encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


class _NoTokens:
    async def verify_token(self, token: str) -> AccessToken | None:
        return None


async def test_the_sdks_401_leaves_the_connection_open() -> None:
    """compat.auth_first: the SDK refuses a request without a valid token with 401, and no `Connection: close`."""
    auth = AuthSettings(issuer_url="http://127.0.0.1:8000", resource_server_url="http://127.0.0.1:8000/mcp", validate_token_resource=False)  # type: ignore[arg-type]
    server = MCPServer("canary", token_verifier=_NoTokens(), auth=auth)
    app = server.streamable_http_app(host="127.0.0.1")
    sent = await _call(app, _scope("POST", "/mcp", {"host": "127.0.0.1:8000", **ACCEPT}), json.dumps(INITIALIZE).encode())
    (start,) = [message for message in sent if message["type"] == "http.response.start"]
    assert start["status"] == 401
    assert (b"connection", b"close") not in [(name.lower(), value.lower()) for name, value in start["headers"]]


async def test_the_sdks_sse_endpoint_raises_after_refusing_a_host() -> None:
    """compat.quiet_after_answer: the SDK's SSE endpoint answers a request from a host it does not allow, then raises."""
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*"], allowed_origins=[])
    app = MCPServer("canary").sse_app(transport_security=security, host="127.0.0.1")
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    with pytest.raises(ValueError, match="Request validation failed"):
        await app(_scope("GET", "/sse", {"host": "elsewhere.example"}), receive, send)
    assert [message["status"] for message in sent if message["type"] == "http.response.start"] == [421]
    assert sent[-1]["type"] == "http.response.body" and not sent[-1].get("more_body", False)  # answered in full first


# -- served by plain uvicorn: session_limit, in_flight_ids, header_timeout, body_timeout, graceful_stop ---------------


@asynccontextmanager
async def plain_uvicorn(app: Any, **config: Any) -> AsyncIterator[tuple[str, int]]:
    """`app` served by a plain `uvicorn.Server` on a free port of 127.0.0.1; yields (host, port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None, access_log=False, **config))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: server.serve(sockets=[sock]))
        with anyio.fail_after(WAIT):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield sock.getsockname()[:2]
        finally:
            server.should_exit = True
    sock.close()


async def _initialize(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    return await http.post(url, json=INITIALIZE, headers=ACCEPT)


@pytest.mark.process
async def test_the_sdk_refuses_a_session_past_its_cap() -> None:
    """compat.session_limit: at its `max_sessions`, the SDK answers a new session's `initialize` with 503."""
    app = MCPServer("canary").streamable_http_app(json_response=True, max_sessions=1, host="127.0.0.1")
    async with plain_uvicorn(app) as (host, port), httpx2.AsyncClient(timeout=WAIT) as http:
        url = f"http://{host}:{port}/mcp"
        first, second = await _initialize(http, url), await _initialize(http, url)
    assert first.status_code == 200 and "mcp-session-id" in first.headers
    assert second.status_code == 503, second.text


@pytest.mark.process
@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")  # its streams, left open
async def test_the_sdk_never_answers_the_first_of_two_requests_sharing_an_id() -> None:
    """compat.in_flight_ids: of two requests in flight with one id in one session, the first never gets its answer."""
    server = MCPServer("canary")
    started, release = anyio.Event(), anyio.Event()

    @server.tool()
    async def slow() -> str:
        started.set()
        await release.wait()
        return "slow"

    @server.tool()
    def quick() -> str:
        return "quick"

    def call(name: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": name, "arguments": {}}}

    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    first: list[httpx2.Response] = []
    # The first request's handler never ends: shutting down waits for it for a second only.
    async with plain_uvicorn(app, timeout_graceful_shutdown=1) as (host, port), httpx2.AsyncClient(timeout=WAIT) as http:
        url = f"http://{host}:{port}/mcp"
        opened = await _initialize(http, url)
        headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        await http.post(url, json=INITIALIZED, headers=headers)
        async with anyio.create_task_group() as tasks:

            async def post_slow() -> None:
                first.append(await http.post(url, json=call("slow"), headers=headers))

            tasks.start_soon(post_slow)
            with anyio.fail_after(WAIT):
                await started.wait()
            second = await http.post(url, json=call("quick"), headers=headers)
            release.set()
            with anyio.move_on_after(QUIET):
                while not first:
                    await anyio.sleep(0.01)
            tasks.cancel_scope.cancel()
    gc.collect()  # the SDK's streams for the unanswered request, closed by no one: their warnings belong to this test
    assert second.status_code == 200 and "quick" in second.text
    answered_first = bool(first) and first[0].status_code == 200 and "slow" in first[0].text
    assert not answered_first, "the SDK answered both requests sharing an id: compat.in_flight_ids can go"


async def _reading_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message["type"] == "http.request" and message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _uvicorn_timeouts() -> set[str]:
    return {name for name in inspect.signature(uvicorn.Config).parameters if name.startswith("timeout")}


def _open_after(raw: socket.socket, seconds: float) -> bool:
    """Whether the server still holds `raw` open, having sent nothing, `seconds` from now (False: it answered or closed)."""
    raw.settimeout(seconds)
    try:
        raw.recv(1)
    except TimeoutError:
        return True
    return False


@pytest.mark.process
async def test_uvicorn_leaves_a_connection_with_unfinished_headers_open() -> None:
    """compat.header_timeout: uvicorn, every timeout of its short, keeps a connection whose headers never finish."""
    assert _uvicorn_timeouts() == UVICORN_TIMEOUTS
    async with plain_uvicorn(_reading_app, timeout_keep_alive=0.1) as address:
        with socket.create_connection(address, timeout=WAIT) as raw:
            raw.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and the rest of the headers never comes
            held = await anyio.to_thread.run_sync(_open_after, raw, QUIET)
    assert held, "uvicorn closed a connection whose headers were late: compat.header_timeout can go"


@pytest.mark.process
async def test_uvicorn_waits_for_a_request_body_as_long_as_the_client_takes() -> None:
    """compat.body_timeout: uvicorn, every timeout of its short, waits on for the rest of a request's body."""
    assert _uvicorn_timeouts() == UVICORN_TIMEOUTS
    async with plain_uvicorn(_reading_app, timeout_keep_alive=0.1) as address:
        with socket.create_connection(address, timeout=WAIT) as raw:
            raw.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n{")  # 1 byte of 10
            held = await anyio.to_thread.run_sync(_open_after, raw, QUIET)
    assert held, "uvicorn cut off a request whose body was late: compat.body_timeout can go"


GRACEFUL_STOP = """
import os, signal, socket, threading, uvicorn

async def app(scope, receive, send):
    pass

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_config=None))

def stop_once_started():
    while not server.started:
        threading.Event().wait(0.01)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=stop_once_started, daemon=True).start()
server.run(sockets=[sock])
print("returned", flush=True)
"""


@pytest.mark.process
def test_uvicorn_raises_again_the_signal_it_stopped_on() -> None:
    """compat.graceful_stop: a plain `uvicorn.Server` stopped by SIGTERM ends by that signal instead of returning."""
    done = subprocess.run([sys.executable, "-c", GRACEFUL_STOP], capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == -signal.SIGTERM, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "returned" not in done.stdout
