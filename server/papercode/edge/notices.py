"""What connected clients are told, and only what the server says it does.

Handshake-era clients (protocol <= 2025-11-25) get the `logging` capability: their `logging/setLevel` comes here
(through `compat.set_level`), and from then on that client receives `notifications/message` at or above its level:
the load summary when the corpus has problems, and each reload or failed reload. Nothing else is pushed to them (the
resource list never changes, so `resources.listChanged` stays false, as advertised: `compat.list_changed`).
2026-07-28 clients learn of a reload on their `subscriptions/listen` stream (`resources/updated` for
`corpus://stats` and `corpus://load-report`, which the SDK advertises as `subscribe`), and get no log stream: that
era makes logging a per-request opt-in and papercode's tool calls have nothing to log.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable

from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, LoggingMessageNotification, LoggingMessageNotificationParams

from papercode.core.errors import QueryError

log = logging.getLogger(__name__)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
MAX_LISTENERS = 256  # sessions that set a level; the least recently heard from is dropped first
LOGGER = "papercode"


class ClientLog:
    """The clients that set a log level (handshake era), and the messages they asked for."""

    def __init__(self) -> None:
        # keyed by the identity of the client's initialize params: one entry per connection
        self._listeners: OrderedDict[int, tuple[ServerSession, int]] = OrderedDict()
        # What a client learns on setting a level; it raises QueryError(`loading`) while the records load.
        self.greeting: Callable[[], tuple[str, str] | None] | None = None
        self._waiting: set[int] = set()  # listeners to greet once the records are loaded

    async def set_level(self, session: ServerSession, level: object) -> None:
        """A client's `logging/setLevel`: from now on it hears what is at `level` or above."""
        if level not in LEVELS:
            raise MCPError(INVALID_PARAMS, f"invalid_argument: level must be one of {', '.join(LEVELS)}")
        await self._listen(session, LEVELS.index(level))

    async def _listen(self, session: ServerSession, level: int) -> None:
        key = id(session.client_params) if session.client_params is not None else id(session)
        self._listeners.pop(key, None)
        self._listeners[key] = (session, level)
        while len(self._listeners) > MAX_LISTENERS:
            self._waiting.discard(self._listeners.popitem(last=False)[0])
        await self._greet(key, session, level)

    async def _greet(self, key: int, session: ServerSession, level: int) -> None:
        try:
            greeting = self.greeting() if self.greeting else None
        except QueryError:  # the records are still loading: greeted once they are in (`greet_waiting`)
            self._waiting.add(key)
            return
        self._waiting.discard(key)
        if greeting is not None:
            await self._send(key, session, level, *greeting)

    async def greet_waiting(self) -> None:
        """Once the records are loaded: the greeting for the clients that set a level while they loaded."""
        for key in list(self._waiting):
            listener = self._listeners.get(key)
            if listener is None:
                self._waiting.discard(key)
            else:
                await self._greet(key, *listener)

    async def send(self, level: str, text: str) -> None:
        """Tell every client that asked for `level` or more."""
        for key, (session, wanted) in list(self._listeners.items()):
            await self._send(key, session, wanted, level, text)

    async def _send(self, key: int, session: ServerSession, wanted: int, level: str, text: str) -> None:
        if LEVELS.index(level) < wanted:
            return
        message = LoggingMessageNotification(params=LoggingMessageNotificationParams(level=level, logger=LOGGER, data=text))  # type: ignore[arg-type]
        try:
            await session.send_notification(message)
        except Exception:  # the client has gone: stop telling it
            log.debug("dropping a log listener that is gone", exc_info=True)
            self._listeners.pop(key, None)
