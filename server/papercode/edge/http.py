"""Serving the MCP server over HTTP (streamable HTTP or SSE) with uvicorn, safe to expose to a team.

- The socket is bound before uvicorn starts: a busy port is one clear error, and `--port 0` serves on a
  free port that the startup line names.
- Auth goes through the SDK's own extension point (its token verifier): bearer tokens from an
  environment variable, compared in constant time. A non-loopback `--host` needs a token (or an
  explicit `--insecure-no-auth`), and the SDK's Host/Origin checks stay on for every host.
- Each client's cost is bounded: a 64 KiB request body, a 10 s limit to send a request's headers,
  at most `--max-sessions` sessions (opening another closes the least recently used one, so no
  client can lock the others out), slow tools in worker threads (see `tools`).
- SIGTERM and SIGINT stop accepting, let calls in flight finish (bounded) and exit 0.
"""

from __future__ import annotations

import errno
import hmac
import logging
import socket
import sys
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import orjson
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_REQUEST
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papercode.settings import Settings

from .uvicorn_adapter import GracefulServer, HeaderTimeoutH11

log = logging.getLogger(__name__)

PATHS = {"streamable-http": "/mcp", "sse": "/sse"}
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES = 64 * 1024  # the largest real tool call is well under 2 KiB
SHUTDOWN_GRACE_SECONDS = 10
MIN_TOKEN_CHARS = 16

Health = Callable[[], Mapping[str, object]]


class StartupError(Exception):
    """papercode cannot start as asked; the message says what and what to do (one line)."""


# -- before anything listens ----------------------------------------------------------------------


def read_tokens(settings: Settings, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The bearer tokens from `--auth-token-env`'s variable (several, comma-separated, to rotate one)."""
    name = settings.auth_token_env
    if name is None:
        return ()
    tokens = tuple(token.strip() for token in environ.get(name, "").split(",") if token.strip())
    if not tokens:
        raise StartupError(
            f"--auth-token-env {name}: the variable is not set or empty. "
            f"Next: export {name}=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))') and start again"
        )
    if any(len(token) < MIN_TOKEN_CHARS for token in tokens):
        raise StartupError(f"--auth-token-env {name}: every token must have at least {MIN_TOKEN_CHARS} characters. Next: use longer random tokens")
    return tokens


def check_exposure(settings: Settings, tokens: tuple[str, ...]) -> None:
    """A non-loopback address without a token would serve anyone who can reach it."""
    if settings.host not in LOOPBACK and not tokens and not settings.insecure_no_auth:
        raise StartupError(
            f"--host {settings.host} would serve anyone who can reach it, with no auth. "
            "Next: add --auth-token-env VAR (the token in that variable), or --insecure-no-auth if a proxy in front authenticates"
        )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or StartupError saying why not."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted connections only for such
        # sockets, and without it every answer written in two parts waits ~40 ms for a delayed ACK.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    except OSError as exc:
        raise StartupError(f"--host {host}: {exc.strerror or exc}. Next: pass an address of this machine, e.g. 127.0.0.1") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise StartupError(f"port {port} on {host} is already in use. Next: pass another --port, or stop the server using it") from None
        if exc.errno == errno.EACCES:
            raise StartupError(f"not allowed to bind port {port} on {host}. Next: pass a --port above 1023") from None
        if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
            raise StartupError(f"--host {host} is not an address of this machine. Next: pass one of its addresses, or 0.0.0.0") from None
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}. Next: check --host and --port") from None
    sock.setblocking(False)
    return sock


def url_of(sock: socket.socket, transport: str) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATHS[transport]}"


# -- auth and Host/Origin checks ------------------------------------------------------------------


class StaticTokens:
    """The SDK's `TokenVerifier`: a request is let in when its bearer token is one of ours."""

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self._tokens = [token.encode() for token in tokens]

    async def verify_token(self, token: str) -> AccessToken | None:
        presented = token.encode()
        matched = False
        for known in self._tokens:  # every one compared, in constant time: no early exit to time
            matched |= hmac.compare_digest(presented, known)
        # The token itself is never kept in the request's context (nothing can log it from there).
        return AccessToken(token="(bearer)", client_id="papercode-client", scopes=[]) if matched else None


def auth_for(url: str) -> AuthSettings:
    """The SDK's resource-server settings for static bearer tokens (no OAuth server: tokens are configured)."""
    base = url.rsplit("/", 1)[0]
    return AuthSettings(issuer_url=base, resource_server_url=url, required_scopes=None, validate_token_resource=False)  # type: ignore[arg-type]


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection on whatever the bind address: loopback, the bound name, and what was allowed."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    named = [] if settings.host in ("0.0.0.0", "::") or settings.host in LOOPBACK else [settings.host]
    for host in (*named, *settings.allowed_hosts):
        shown = f"[{host}]" if ":" in host and not host.startswith("[") and not host.endswith(":*") else host
        hosts += [shown] if shown.endswith(":*") else [shown, f"{shown}:*"]
    origins += list(settings.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


# -- bounded cost per client ----------------------------------------------------------------------


class SessionGuard:
    """Bounds what streamable HTTP sessions can cost, in front of the SDK's session manager.

    - At most `most` sessions: opening one more first closes the least recently used. (At its own
      cap the SDK refuses new sessions with 503 until old ones time out, so one client opening
      sessions in a loop would lock every other client out.) Closing goes through the protocol
      itself: a DELETE for that session, with the new request's credentials.
    - A request whose id is already in flight in its session is answered with a JSON-RPC error:
      the SDK would route both answers to the last one, leaving the first an empty 200 (or a hang).
    """

    def __init__(self, app: ASGIApp, path: str, most: int) -> None:
        self.app, self.path, self.most = app, path, most
        self._sessions: OrderedDict[bytes, None] = OrderedDict()  # least recently used first
        self._in_flight: set[tuple[bytes, str]] = set()  # (session, request id)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        session = _header(scope["headers"], b"mcp-session-id")
        if session is None:
            if scope["method"] == "POST":
                body, receive = await _buffered(receive)
                if "initialize" in _methods(body):  # only a handshake opens a session (2026-07-28 requests have none)
                    await self._make_room(scope)
            await self.app(scope, receive, self._tracking(send, None))
            return
        if session in self._sessions:
            self._sessions.move_to_end(session)
        if scope["method"] == "DELETE":
            self._sessions.pop(session, None)
        if scope["method"] != "POST":
            await self.app(scope, receive, self._tracking(send, session))
            return
        body, replay = await _buffered(receive)
        ids = [(session, request_id) for request_id in _request_ids(body)]
        duplicate = next((key[1] for key in ids if key in self._in_flight), None)
        if duplicate is not None:
            await _json_rpc_error(send, duplicate, f"invalid_request: request id {duplicate[:40]} is already in flight in this session. Next: give each request its own id")
            return
        self._in_flight.update(ids)
        try:
            await self.app(scope, replay, self._tracking(send, session))
        finally:
            self._in_flight.difference_update(ids)

    def _tracking(self, send: Send, session: bytes | None) -> Send:
        async def tracked(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = _header(message.get("headers", []), b"mcp-session-id")
                if session is None and opened is not None and message["status"] < 300:
                    self._sessions[opened] = None
                elif session is not None and message["status"] == 404:  # expired or closed: forget it
                    self._sessions.pop(session, None)
            await send(message)

        return tracked

    async def _make_room(self, scope: Scope) -> None:
        while len(self._sessions) >= self.most:
            oldest = next(iter(self._sessions))
            if not await self._close(scope, oldest):
                return
            self._sessions.pop(oldest, None)

    async def _close(self, scope: Scope, session: bytes) -> bool:
        """DELETE `session` as the current request's client would; True when it is gone."""
        kept = [(name, value) for name, value in scope["headers"] if name in (b"host", b"authorization", b"origin")]
        headers = [*kept, (b"mcp-session-id", session), (b"mcp-protocol-version", b"2025-11-25")]
        closing = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}
        status = 0

        async def nothing() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await self.app(closing, nothing, record)
        log.info("session limit %d reached: closed the least recently used session (%d)", self.most, status)
        return status < 300 or status == 404


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (read up to just past the cap, which the SDK then refuses) and a `receive` that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more and size <= MAX_BODY_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return body, replay


def _requests(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC requests in a body (one message or a batch); none for anything else."""
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return []
    messages = payload if isinstance(payload, list) else [payload]
    return [message for message in messages if isinstance(message, dict) and "id" in message and "method" in message]


def _request_ids(body: bytes) -> list[str]:
    return [orjson.dumps(request["id"]).decode() for request in _requests(body)]


def _methods(body: bytes) -> list[object]:
    return [request["method"] for request in _requests(body)]


async def _json_rpc_error(send: Send, request_id: str, message: str) -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": orjson.loads(request_id), "error": {"code": INVALID_REQUEST, "message": message}})
    await send({"type": "http.response.start", "status": 409, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _header(headers: Any, name: bytes) -> bytes | None:
    return next((value for key, value in headers if key.lower() == name), None)


# -- the app --------------------------------------------------------------------------------------


def add_health_route(server: MCPServer, health: Health) -> None:
    """`GET /healthz`: readiness and counts for load balancers; no auth, no corpus details."""

    @server.custom_route("/healthz", methods=["GET"])  # type: ignore[untyped-decorator]  # the SDK leaves it untyped
    async def healthz(request: Request) -> Response:
        answer = dict(health())
        return JSONResponse(answer, status_code=200 if answer.get("status") == "ok" else 503)


class QuietAfterAnswer:
    """An error raised after the response went out is logged in one line, not as a traceback.

    The SDK's SSE endpoint answers a request that fails its Host/Origin checks (421/403) and then
    raises `ValueError("Request validation failed")`; its message endpoint answers a malformed POST
    with 400 and then fails to forward the error to a closed stream. uvicorn would log a traceback
    for each (and cut the answer short): a client could fill the log just by sending bad requests.
    The client has its answer; what is left is a line at INFO.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answered = False

        async def watching(message: Message) -> None:
            nonlocal answered
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                answered = True

        try:
            await self.app(scope, receive, watching)
        except Exception as exc:
            if not answered:
                raise
            log.info("after answering %s %s: %s: %s", scope.get("method"), scope.get("path"), type(exc).__name__, exc)


def http_app(server: MCPServer, settings: Settings) -> ASGIApp:
    security = transport_security(settings)
    if settings.transport == "sse":
        return QuietAfterAnswer(server.sse_app(max_request_body_size=MAX_BODY_BYTES, transport_security=security, host=settings.host))
    app = server.streamable_http_app(
        streamable_http_path=PATHS["streamable-http"],
        json_response=settings.stateless,
        stateless_http=settings.stateless,
        max_request_body_size=MAX_BODY_BYTES,
        session_idle_timeout=settings.session_idle_timeout,
        max_sessions=settings.max_sessions + 16,  # the limiter below closes sessions first; this is a backstop
        transport_security=security,
        host=settings.host,
    )
    return QuietAfterAnswer(app if settings.stateless else SessionGuard(app, PATHS["streamable-http"], settings.max_sessions))


def uvicorn_server(server: MCPServer, settings: Settings) -> GracefulServer:
    """uvicorn serving `server` as `settings` say, with papercode's limits; `.serve(sockets=[sock])` runs it."""
    config = uvicorn.Config(
        http_app(server, settings),
        http=HeaderTimeoutH11,
        lifespan="on",
        log_config=None,  # uvicorn's records go through papercode's stderr handler and its filter
        access_log=False,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        h11_max_incomplete_event_size=16 * 1024,
    )
    return GracefulServer(config)


async def serve_http(server: MCPServer, settings: Settings, sock: socket.socket) -> None:
    """Serve `server` on the bound `sock` until SIGTERM/SIGINT (then return cleanly) or cancellation."""
    running = uvicorn_server(server, settings)
    # The startup line names the real port (useful with --port 0); on stderr, like every diagnostic.
    sys.stderr.write(f"papercode: serving MCP over {settings.transport} on {url_of(sock, settings.transport)}\n")
    sys.stderr.flush()
    await running.serve(sockets=[sock])
