"""The MCP edge: `build_server`, the one factory of papercode's MCP server.

Each handler validates nothing itself: it calls one function in `answers` and turns the answer
into compact JSON (text) plus structured content. Errors are shaped once, in `server`: every tool
error the model reads starts with a machine code and ends with the next step. One module per
concern: `server` (the server class), `tools`, `resources`, `prompt_handlers`, `completion_handlers`, `schema`
(what tools/list shows), `views` (the MCP Apps views).
"""

from __future__ import annotations

import base64

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.types import Icon

from papercode import __version__
from papercode.answers import overview
from papercode.core.records import STATUS_ORDER_TEXT
from papercode.corpus.reload import LiveCorpus
from papercode.verified.materialize import VerifiedCode
from papercode.verified.store import CodeStore

from .compat.handshake_extensions import handshake_extensions
from .completion_handlers import register_completions
from .prompt_handlers import register_prompts
from .resources import register_resources
from .server import READY_TIMEOUT_SECONDS, CorpusSource, PapercodeServer
from .tools import PapercodeTools
from .views import tool_meta, views_extension

INSTRUCTIONS = (
    "papercode answers from an offline corpus of Code-with-Papers records: papers (Papers-with-Code archive) "
    "with their repositories and function-level code samples, each with an execution status "
    f"({STATUS_ORDER_TEXT}) and a licence. Usual path: "
    "search_papers -> get_harvested_code_for_paper (official repos and working code first) -> get_code. "
    "From a problem: get_leaderboard(task, dataset, has_code=true): best results with code. "
    "Samples with inline_ok false are pointer-only: link to them, never reproduce their code. "
    "Data is CC BY-SA 4.0: attribute it."
)
TITLE = "papercode"
# A page with a folded corner and code brackets: what hosts show beside the server's name.
ICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" fill="none" stroke-width="2" stroke-linejoin="round">'
    '<path d="M7 3h13l6 6v20H7z" fill="#fff" stroke="#334"/><path d="M20 3v6h6" stroke="#334"/>'
    '<path d="M14 14l-4 4 4 4M18 14l4 4-4 4" stroke="#2a7" stroke-linecap="round"/></svg>'
)
ICON = Icon(src="data:image/svg+xml;base64," + base64.b64encode(ICON_SVG.encode()).decode(), mime_type="image/svg+xml", sizes=["any"])


def build_server(
    source: CorpusSource,
    code: VerifiedCode | None = None,
    *,
    auth: tuple[TokenVerifier, AuthSettings] | None = None,
    ready_timeout: float = READY_TIMEOUT_SECONDS,
    views: bool = True,
) -> PapercodeServer:
    """The papercode MCP server answering from whatever corpus `source` returns, with verified
    code from `code` (by default none is stored and nothing is fetched), and the MCP Apps views unless `views` is
    False (`--no-views`)."""
    verifier, auth_settings = auth if auth else (None, None)
    extensions = [views_extension()] if views else []
    server = PapercodeServer(
        "papercode",
        title=TITLE,
        icons=[ICON],
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        token_verifier=verifier,
        auth=auth_settings,
        live=source if isinstance(source, LiveCorpus) else None,
        ready_timeout=ready_timeout,
        extensions=extensions,
    )
    if extensions:  # a handshake-era client sees them too
        server.middleware.append(handshake_extensions({extension.identifier: extension.settings() for extension in extensions}))
    verified = code or VerifiedCode(CodeStore(None))
    server.client_log.greeting = lambda: overview.load_notice(source(), verified.store.problems)
    server.background.append(verified.keep_current)
    PapercodeTools(source, verified, server.readiness).register(server, tool_meta() if views else None)
    register_resources(server, source, verified)
    register_prompts(server, source)
    register_completions(server, source)
    return server


__all__ = ["INSTRUCTIONS", "PapercodeServer", "build_server"]
