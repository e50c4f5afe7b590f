"""`GET /healthz` on the HTTP server: readiness and counts for load balancers; no auth, no corpus details."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

Health = Callable[[], Mapping[str, object]]
"""What `/healthz` answers: `{"status": "ok" | "degraded" | "loading" | "failed", …}` (200 while it serves the
complete corpus: ok, or degraded when the last reload failed and the corpus before it still serves; else 503)."""
SERVING = frozenset({"ok", "degraded"})


def add_health_route(server: MCPServer, health: Health) -> None:
    """`GET /healthz` on `server`, answering what `health` says."""

    @server.custom_route("/healthz", methods=["GET"])  # type: ignore[untyped-decorator]  # the SDK leaves it untyped
    async def healthz(request: Request) -> Response:
        answer = dict(health())
        return JSONResponse(answer, status_code=200 if answer.get("status") in SERVING else 503)
