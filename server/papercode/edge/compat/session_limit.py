"""At most so many streamable HTTP sessions: opening one more first closes the least recently used.

Works around: mcp 2.3.0's `StreamableHTTPSessionManager`, at its `max_sessions`, refuses every new session (503,
"Too many open sessions") until old ones time out, so one client opening sessions in a loop locks every other
client out for as long as the idle timeout.
Canary: `test_the_sdk_refuses_a_session_past_its_cap` fails the day the SDK makes room instead.
Goes when: the SDK closes the least recently used session at its cap (or lets the server choose which to close);
the SDK's own `max_sessions` then takes `--max-sessions`, and this middleware goes.

Closing goes through the protocol itself: a DELETE for that session, with the new request's credentials. The SDK's
cap stays as a backstop, set above this one.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..asgi import buffered, header, json_rpc_requests

log = logging.getLogger(__name__)


class SessionLimit:
    """In front of the SDK's streamable HTTP app on `path`: at most `most` sessions (see the module docstring);
    a request's body is read up to `body_bytes` to tell a handshake."""

    def __init__(self, app: ASGIApp, path: str, most: int, body_bytes: int) -> None:
        self.app, self.path, self.most, self.body_bytes = app, path, most, body_bytes
        self._sessions: OrderedDict[bytes, None] = OrderedDict()  # least recently used first

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        session = header(scope["headers"], b"mcp-session-id")
        if session is None:
            if scope["method"] == "POST":
                body, receive = await buffered(receive, self.body_bytes)
                if any(request["method"] == "initialize" for request in json_rpc_requests(body)):
                    await self._make_room(scope)  # only a handshake opens a session (2026-07-28 requests have none)
        elif scope["method"] == "DELETE":
            self._sessions.pop(session, None)
        elif session in self._sessions:
            self._sessions.move_to_end(session)
        await self.app(scope, receive, self._tracking(send, session))

    def _tracking(self, send: Send, session: bytes | None) -> Send:
        async def tracked(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = header(message.get("headers", []), b"mcp-session-id")
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
