"""Serving the MCP server over HTTP (streamable HTTP or SSE) with uvicorn, safe to expose to a team.

- The socket is bound before uvicorn starts: a busy port is one clear error, and `--port 0` serves on a
  free port that the startup line names.
- Auth goes through the SDK's own extension point (its token verifier): bearer tokens from an
  environment variable, compared in constant time, checked before any layer reads a request's body.
  A non-loopback `--host` needs a token (or an explicit `--insecure-no-auth`), and the SDK's
  Host/Origin checks stay on for every host.
- Each client's cost is bounded: a 64 KiB request body, 10 s to send a request's headers and 10 s
  more for its body, at most `--max-sessions` sessions (opening another closes the least recently
  used one, so no client can lock the others out), slow tools in worker threads (see `tools`).
- SIGTERM and SIGINT stop accepting, let calls in flight finish (bounded) and exit 0.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import ipaddress
import logging
import socket
import sys
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import orjson
import uvicorn
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import INVALID_REQUEST
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papercode.settings import Settings

from .uvicorn_adapter import GracefulServer, HeaderTimeoutH11

Auth = tuple[TokenVerifier, AuthSettings]
"""The token verifier and auth settings `build_server` gives the SDK, for the checks before it."""

log = logging.getLogger(__name__)

PATHS = {"streamable-http": "/mcp", "sse": "/sse"}
AUTH_PATHS = {"streamable-http": ("/mcp",), "sse": ("/sse", "/messages")}  # what the SDK protects with tokens
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_BODY_BYTES = 64 * 1024  # the largest real tool call is well under 2 KiB
BODY_TIMEOUT_SECONDS = 10.0  # from a request's headers to the end of its body
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
        raise StartupError(
            f"--auth-token-env {name}: every token must have at least {MIN_TOKEN_CHARS} characters. Next: use longer random tokens"
        )
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
    """DNS-rebinding protection on whatever the bind address: loopback, the bound name, and what was allowed,
    each with any port or none (a client leaves out the scheme's default port: `Host: 127.0.0.1` on port 80)."""
    named = [] if settings.host in ("0.0.0.0", "::") or settings.host in LOOPBACK else [settings.host]
    hosts = [pattern for host in (*sorted(LOOPBACK), *named, *settings.allowed_hosts) for pattern in host_patterns(host)]
    origins = [pattern for host in sorted(LOOPBACK) for pattern in host_patterns(host, "http://")]
    origins += list(settings.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def host_patterns(host: str, scheme: str = "") -> list[str]:
    """The SDK's patterns for `host` (a name or an IPv4 or IPv6 address; `:*` or not) with any port and with none;
    for a host given with its port, that port only."""
    bare = host.removesuffix(":*")
    with contextlib.suppress(ValueError):
        ipaddress.IPv6Address(bare.strip("[]"))
        bare = f"[{bare.strip('[]')}]"
    if ":" in bare.rsplit("]", 1)[-1]:
        return [f"{scheme}{bare}"]
    return [f"{scheme}{bare}", f"{scheme}{bare}:*"]


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
            await _json_rpc_error(
                send,
                duplicate,
                f"invalid_request: request id {duplicate[:40]} is already in flight in this session. Next: give each request its own id",
            )
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
    await send(
        {
            "type": "http.response.start",
            "status": 409,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
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


class AuthFirst:
    """With tokens, the token is checked before anything reads the request: on the MCP paths, a request
    without a valid one is refused from its headers alone, with the SDK's own 401, and its connection closed.

    papercode's own layers (SessionGuard) read a request's body before the SDK's auth would see it,
    and an unanswered client (headers and one byte of its body) would hold a connection and a file
    descriptor as long as it liked. The check is the SDK's (`BearerAuthBackend` over the same token
    verifier the SDK app is configured with); the SDK app checks again, as it always does.
    """

    def __init__(self, app: ASGIApp, verifier: TokenVerifier, auth: AuthSettings, paths: tuple[str, ...]) -> None:
        self.app, self.paths = app, paths
        self._backend = BearerAuthBackend(verifier, resource_server_url=auth.resource_server_url if auth.validate_token_resource else None)
        metadata = build_resource_metadata_url(auth.resource_server_url) if auth.resource_server_url else None
        self._refuse = RequireAuthMiddleware(app, auth.required_scopes or [], metadata)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not any(scope["path"] == path or scope["path"].startswith(path + "/") for path in self.paths):
            await self.app(scope, receive, send)
            return
        if await self._backend.authenticate(HTTPConnection(scope)) is not None:
            await self.app(scope, receive, send)
            return
        await self._refuse({**scope, "user": None}, receive, _closing(send))  # no user: the SDK answers 401


class BodyTimeout:
    """A request's body must arrive whole within `seconds` of its headers; a client still sending it then
    gets 408 and its connection is closed (uvicorn waits for a body as long as the client likes)."""

    seconds = BODY_TIMEOUT_SECONDS

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = anyio.current_time() + self.seconds
        body_done = started = late = False

        async def receiving() -> Message:
            nonlocal body_done, late
            if body_done or late:
                return await receive() if body_done else {"type": "http.disconnect"}
            with anyio.CancelScope(deadline=deadline):
                message = await receive()
                body_done = message["type"] != "http.request" or not message.get("more_body", False)
                return message
            late = True
            request.cancel()  # the app stops at its next await; whoever reads on sees the client gone
            return {"type": "http.disconnect"}

        async def sending(message: Message) -> None:
            nonlocal started
            if late:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        with anyio.CancelScope() as request:
            await self.app(scope, receiving, sending)
        if late:
            log.info("closed a connection that sent no complete request body within %g s", self.seconds)
            if not started:
                await _closing(send)({"type": "http.response.start", "status": 408, "headers": [(b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})


def _closing(send: Send) -> Send:
    """`send`, asking uvicorn to close the connection after this response."""

    async def closing(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
        await send(message)

    return closing


def guarded(app: ASGIApp, settings: Settings, auth: Auth | None) -> ASGIApp:
    """`app` behind the checks that come before any layer reads a request: its token (with `auth`, the
    verifier and settings `build_server` gave the SDK), then the time its body may take."""
    timed = BodyTimeout(app)
    if auth is None:
        return timed
    verifier, auth_settings = auth
    return AuthFirst(timed, verifier, auth_settings, AUTH_PATHS[settings.transport])


def http_app(server: MCPServer, settings: Settings, auth: Auth | None = None) -> ASGIApp:
    security = transport_security(settings)
    if settings.transport == "sse":
        sse = server.sse_app(max_request_body_size=MAX_BODY_BYTES, transport_security=security, host=settings.host)
        return QuietAfterAnswer(guarded(sse, settings, auth))
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
    limited = app if settings.stateless else SessionGuard(app, PATHS["streamable-http"], settings.max_sessions)
    return QuietAfterAnswer(guarded(limited, settings, auth))


def uvicorn_server(server: MCPServer, settings: Settings, auth: Auth | None = None) -> GracefulServer:
    """uvicorn serving `server` as `settings` say, with papercode's limits; `.serve(sockets=[sock])` runs it."""
    config = uvicorn.Config(
        http_app(server, settings, auth),
        http=HeaderTimeoutH11,
        lifespan="on",
        log_config=None,  # uvicorn's records go through papercode's stderr handler and its filter
        access_log=False,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        h11_max_incomplete_event_size=16 * 1024,
    )
    return GracefulServer(config)


async def serve_http(server: MCPServer, settings: Settings, sock: socket.socket, auth: Auth | None = None) -> None:
    """Serve `server` on the bound `sock` until SIGTERM/SIGINT (then return cleanly) or cancellation."""
    running = uvicorn_server(server, settings, auth)
    # The startup line names the real port (useful with --port 0); on stderr, like every diagnostic.
    sys.stderr.write(f"papercode: serving MCP over {settings.transport} on {url_of(sock, settings.transport)}\n")
    sys.stderr.flush()
    await running.serve(sockets=[sock])
