"""With tokens, a request's token is checked before any middleware reads the request, and a request without a valid one
is refused from its headers alone, with the SDK's own 401, and its connection closed.

Works around: mcp 2.3.0 checks bearer tokens inside its ASGI app (`RequireAuthMiddleware` on its MCP routes), so
the middleware papercode puts in front of that app (`session_limit`, `in_flight_ids`) read a request's body before its
token is checked; and its 401 leaves the connection open (no `Connection: close`), with the body unread, so an
unauthenticated client that sent its headers and one byte of its body holds a connection and a file descriptor as
long as it keeps sending.
Canary: `test_the_sdks_401_leaves_the_connection_open` fails the day the SDK's 401 closes the connection.
Goes when: the SDK's 401 closes the connection and no middleware of papercode's reads a request before the SDK's app
(`session_limit` and `in_flight_ids` gone, see theirs).

The check is the SDK's (`BearerAuthBackend` over the token verifier the SDK's app is configured with), and the
refusal its `RequireAuthMiddleware`; the SDK's app checks again, as it always does.
"""

from __future__ import annotations

from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from ..asgi import closing


class AuthFirst:
    """In front of everything on `paths`: a request without a valid token gets the SDK's 401 and its connection closed."""

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
        await self._refuse({**scope, "user": None}, receive, closing(send))  # no user: the SDK answers 401
