"""`logging/setLevel` from handshake-era clients, answered as SDK middleware, and the `logging` capability at
`initialize` that says it is.

Works around: mcp 2.3.0's `MCPServer` offers no public way to register a request handler (the low-level
`Server.add_request_handler` is behind a private attribute) and advertises a capability only for the handlers
registered, so a bare `MCPServer` answers `logging/setLevel` with -32601 (method not found) and advertises no
`logging`.
Canary: `test_mcpserver_answers_no_set_level_and_advertises_no_logging` fails the day that changes.
Goes when: `MCPServer` lets a `logging/setLevel` handler be registered through its public API; the handler given
here is registered there, and the capability follows from it.

SDK middleware is the SDK's public, per-request hook (`MCPServer.middleware`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

SetLevel = Callable[[ServerSession, object], Awaitable[None]]
"""Handles a client's `logging/setLevel`: its session and the `level` it sent (unchecked; None when absent)."""


class SetLevelRoute:
    """SDK middleware: `logging/setLevel` (handshake era) to `handler`, answered `{}`; `logging` added at `initialize`."""

    def __init__(self, handler: SetLevel) -> None:
        self.handler = handler

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize":
            result = await call_next(ctx)
            capabilities = result.get("capabilities") if isinstance(result, dict) else None
            if isinstance(capabilities, dict):
                capabilities["logging"] = {}
            return result
        if ctx.method == "logging/setLevel" and ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.handler(ctx.session, (ctx.params or {}).get("level"))
            return {}
        return await call_next(ctx)
