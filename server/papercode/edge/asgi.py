"""Raw ASGI messages, as the HTTP middleware in front of the SDK's app reads and writes them: a request's body read and
replayed, the JSON-RPC requests in it, a header, and a `send` that closes the connection after its response."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.types import Message, Receive, Send


async def buffered(receive: Receive, most: int) -> tuple[bytes, Receive]:
    """The request body (read up to just past `most` bytes, which the SDK then refuses) and a `receive` that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more and size <= most:
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


def json_rpc_requests(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC requests in a body (one message or a batch); none for anything else."""
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return []
    messages = payload if isinstance(payload, list) else [payload]
    return [message for message in messages if isinstance(message, dict) and "id" in message and "method" in message]


def header(headers: Any, name: bytes) -> bytes | None:
    """The value of header `name` (lower case) in a scope's or a response's headers; None when absent."""
    return next((value for key, value in headers if key.lower() == name), None)


def closing(send: Send) -> Send:
    """`send`, asking uvicorn to close the connection after this response."""

    async def closing(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
        await send(message)

    return closing
