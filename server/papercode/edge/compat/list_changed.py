"""`listChanged: false` for tools, prompts and resources, in both protocol eras: those lists never change while
papercode serves, and it sends no notice that they did.

Works around: mcp 2.3.0 derives `listChanged` in the 2026-07-28 era from whether `subscriptions/listen` is served,
which `MCPServer` always does, so its `server/discover` says `listChanged: true` for all three whatever the server
does (at `initialize`, handshake era, it says false).
Canary: `test_the_sdks_discover_says_every_list_may_change` fails the day the SDK says false.
Goes when: the SDK lets a server say its lists never change in the 2026-07-28 era (as `NotificationOptions` does
for the handshake era).
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

LISTS = ("tools", "prompts", "resources")


async def unchanging_lists(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """SDK middleware: `initialize` and `server/discover` say `listChanged: false` for every list."""
    result = await call_next(ctx)
    if ctx.method in ("initialize", "server/discover"):
        capabilities = result.get("capabilities") if isinstance(result, dict) else None
        if isinstance(capabilities, dict):
            for kind in LISTS:
                if isinstance(capabilities.get(kind), dict) and "listChanged" in capabilities[kind]:
                    capabilities[kind]["listChanged"] = False
    return result
