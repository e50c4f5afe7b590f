"""Serving the MCP server over HTTP (streamable HTTP or SSE) with uvicorn, safe to expose to a team.

The SDK's app is served behind papercode's middleware, outermost first, each a workaround of `compat` (whose docstring
says what it works around and what would let it go):

- `quiet_after_answer`: an error raised after the answer went out is one line in the log;
- `auth_first` (with tokens, `access`): a request without a valid token is refused from its headers, its connection
  closed, before anything reads it;
- `body_timeout`: a request's body must be complete 10 s after its headers (uvicorn's protocol, `header_timeout`,
  gives the headers 10 s);
- streamable HTTP with sessions: `session_limit` (at most `--max-sessions`, the least recently used closed first) and
  `in_flight_ids` (a request id already in flight in its session is refused).

The SDK's app itself caps bodies at 64 KiB and keeps its Host/Origin checks on for every host (`access`); slow tools
run in worker threads (`tools`). SIGTERM and SIGINT stop accepting, let calls in flight finish (bounded) and return
(`graceful_stop`). What is checked before serving (tokens, exposure, the socket) is in `startup`.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

from papercode.settings import Settings

from .access import Auth, transport_security
from .compat.auth_first import AuthFirst
from .compat.body_timeout import BodyTimeout
from .compat.graceful_stop import GracefulServer
from .compat.header_timeout import HeaderTimeoutH11
from .compat.in_flight_ids import InFlightIds
from .compat.quiet_after_answer import QuietAfterAnswer
from .compat.session_limit import SessionLimit

PATHS = {"streamable-http": "/mcp", "sse": "/sse"}
AUTH_PATHS = {"streamable-http": ("/mcp",), "sse": ("/sse", "/messages")}  # what the SDK protects with tokens
MAX_BODY_BYTES = 64 * 1024  # the largest real tool call is well under 2 KiB
SHUTDOWN_GRACE_SECONDS = 10


def url_of(sock: socket.socket, transport: str) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATHS[transport]}"


def guarded(app: ASGIApp, settings: Settings, auth: Auth | None) -> ASGIApp:
    """`app` behind the checks that come before any middleware reads a request: its token (with `auth`, the
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
    path = PATHS["streamable-http"]
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=path,
        json_response=settings.stateless,
        stateless_http=settings.stateless,
        max_request_body_size=MAX_BODY_BYTES,
        session_idle_timeout=settings.session_idle_timeout,
        max_sessions=settings.max_sessions + 16,  # `SessionLimit` closes sessions first; this is a backstop
        transport_security=security,
        host=settings.host,
    )
    if not settings.stateless:
        app = SessionLimit(InFlightIds(app, path, MAX_BODY_BYTES), path, settings.max_sessions, MAX_BODY_BYTES)
    return QuietAfterAnswer(guarded(app, settings, auth))


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
