"""Before HTTP serving starts: what would keep `papercode serve` from serving as asked, each a `StartupError` whose
message says what and what to do (one line): the tokens in `--auth-token-env`'s variable, a public address without
them, and the socket, bound before uvicorn starts (a busy port is one clear error, and `--port 0` serves on a free
port that the startup line names)."""

from __future__ import annotations

import errno
import socket
from collections.abc import Mapping

from papercode.settings import Settings

from .access import LOOPBACK

MIN_TOKEN_CHARS = 16


class StartupError(Exception):
    """papercode cannot start as asked; the message says what and what to do (one line)."""


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
