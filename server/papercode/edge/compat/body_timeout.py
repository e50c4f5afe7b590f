"""A request's body must arrive whole within `BODY_TIMEOUT_SECONDS` of its headers; a client still sending it then
gets 408 and its connection is closed.

Works around: uvicorn 0.54.0 puts no time limit on a request's body: once the headers are in, the app's `receive()`
waits for the rest as long as the client takes (uvicorn's one timer on a connection, the keep-alive, runs only
between requests), so a client sending its body slowly holds a connection and a file descriptor.
Canary: `test_uvicorn_waits_for_a_request_body_as_long_as_the_client_takes` fails the day uvicorn times a body out.
Goes when: uvicorn bounds the time a request's body may take (an option or a default).
"""

from __future__ import annotations

import logging

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..asgi import closing

log = logging.getLogger(__name__)

BODY_TIMEOUT_SECONDS = 10.0  # from a request's headers to the end of its body


class BodyTimeout:
    """In front of `app`: cuts off a request whose body is not complete `seconds` after its headers (see the module docstring)."""

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
                await closing(send)({"type": "http.response.start", "status": 408, "headers": [(b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
