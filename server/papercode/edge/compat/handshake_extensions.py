"""The extensions papercode serves (MCP Apps, `io.modelcontextprotocol/ui`), advertised at `initialize` too, so a
handshake-era client (protocol 2025-11-25 and before, what most hosts speak) sees the capability a 2026-07-28 client
sees in `server/discover`.

Works around: mcp 2.3.0 writes the `initialize` answer through the 2025-11-25 wire model, whose server capabilities
have no `extensions` field, so the extensions an `MCPServer` takes are advertised in the 2026-07-28 era only.
Canary: `test_the_sdks_handshake_advertises_no_extensions` fails the day the SDK advertises them at `initialize`.
Goes when: the SDK advertises a server's extensions at `initialize` as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext


def handshake_extensions(extensions: Mapping[str, Mapping[str, Any]]) -> ServerMiddleware[Any]:
    """SDK middleware: `initialize` answers with `capabilities.extensions` holding `extensions` (identifier: settings)."""

    async def advertise(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict) and "extensions" not in capabilities:
                capabilities["extensions"] = {identifier: dict(settings) for identifier, settings in extensions.items()}
        return result

    return advertise
