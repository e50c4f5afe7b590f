"""An error raised after the response went out is logged in one line at INFO, not as a traceback.

Works around: mcp 2.3.0's SSE transport raises after it has answered: its SSE endpoint answers a request that fails
its Host/Origin checks (421/403) and then raises `ValueError("Request validation failed")`, and its message
endpoint answers a malformed POST with 400 and then fails to forward the error to a stream that has closed.
uvicorn logs a traceback for each (and cuts the answer short), so a client could fill the log just by sending bad
requests.
Canary: `test_the_sdks_sse_endpoint_raises_after_refusing_a_host` fails the day the SDK returns after answering.
Goes when: the SDK's SSE endpoints return once they have answered.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)


class QuietAfterAnswer:
    """Around `app`: an exception after the response's last byte becomes one line at INFO; one before it is raised."""

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
