"""Serving the MCP server over HTTP (streamable HTTP or SSE) with uvicorn.

The socket is bound here, before uvicorn starts, so a busy port is one clear error instead of
uvicorn's traceback, and `--port 0` serves on a free port that the startup line names. The app
comes from the SDK's public `streamable_http_app` / `sse_app`.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

from .settings import Settings

log = logging.getLogger(__name__)

PATHS = {"streamable-http": "/mcp", "sse": "/sse"}


class StartupError(Exception):
    """papercode cannot start as asked; the message says what and what to do (one line)."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or StartupError saying why not."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
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
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}. Next: check --host and --port") from None
    sock.setblocking(False)
    return sock


def url_of(sock: socket.socket, transport: str) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATHS[transport]}"


async def serve_http(server: MCPServer, settings: Settings, sock: socket.socket) -> None:
    """Serve `server` on the bound `sock` until cancelled or signalled."""
    if settings.transport == "sse":
        app = server.sse_app(host=settings.host)
    else:
        app = server.streamable_http_app(host=settings.host)
    config = uvicorn.Config(app, log_level=settings.log_level.lower(), lifespan="on")
    # The startup line names the real port (useful with --port 0); stderr, since stdout is not ours here either.
    sys.stderr.write(f"papercode: serving MCP over {settings.transport} on {url_of(sock, settings.transport)}\n")
    sys.stderr.flush()
    await uvicorn.Server(config).serve(sockets=[sock])
