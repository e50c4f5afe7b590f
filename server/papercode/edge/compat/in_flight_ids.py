"""A request reusing the id of one still in flight in its session is answered with a JSON-RPC error (409).

Works around: mcp 2.3.0 keeps the requests in flight by id alone (its `JSONRPCDispatcher` lets a duplicate id
overwrite the first, a known gap it leaves open), so the answer of the first of two requests sharing an id in one
streamable HTTP session goes to the second's stream, and the first is never answered (an empty 200 or a hang).
Canary: `test_the_sdk_never_answers_the_first_of_two_requests_sharing_an_id` fails the day the SDK tells them apart
or refuses the second.
Goes when: the SDK refuses a request whose id is in flight (`invalid_request`), or answers each request by its own
stream.
"""

from __future__ import annotations

import orjson
from mcp.types import INVALID_REQUEST
from starlette.types import ASGIApp, Receive, Scope, Send

from ..asgi import buffered, header, json_rpc_requests


class InFlightIds:
    """In front of the SDK's streamable HTTP app on `path`: refuses a request whose id is in flight in its session;
    a request's body is read up to `body_bytes`."""

    def __init__(self, app: ASGIApp, path: str, body_bytes: int) -> None:
        self.app, self.path, self.body_bytes = app, path, body_bytes
        self._in_flight: set[tuple[bytes, str]] = set()  # (session, request id as JSON)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session = header(scope["headers"], b"mcp-session-id") if scope["type"] == "http" and scope["method"] == "POST" else None
        if session is None or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        body, replay = await buffered(receive, self.body_bytes)
        ids = [(session, orjson.dumps(request["id"]).decode()) for request in json_rpc_requests(body)]
        duplicate = next((key[1] for key in ids if key in self._in_flight), None)
        if duplicate is not None:
            await _refuse(
                send,
                duplicate,
                f"invalid_request: request id {duplicate[:40]} is already in flight in this session. Next: give each request its own id",
            )
            return
        self._in_flight.update(ids)
        try:
            await self.app(scope, replay, send)
        finally:
            self._in_flight.difference_update(ids)


async def _refuse(send: Send, request_id: str, message: str) -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": orjson.loads(request_id), "error": {"code": INVALID_REQUEST, "message": message}})
    await send(
        {
            "type": "http.response.start",
            "status": 409,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
