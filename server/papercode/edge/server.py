"""`PapercodeServer`: the SDK's `MCPServer`, changed only through its public methods.

- tools/list shows each tool compacted (`schema.compact_tool`), listed once per set of tools;
- a tool error reads `<code>: … Next: …` instead of `Error executing tool …`; an unknown tool, a prompt's mistaken
  arguments and an overlong resource URI are protocol errors (invalid params), before anything is called
  (`compat.unknown_tool`, `compat.prompt_arguments`, `compat.resource_uri_length`); an argument a tool does not take
  is refused, not dropped as the SDK would; both name the nearest names and the call to make (`guesses`);
- a call that arrives while the live corpus is loading waits for what it needs (bounded, with progress);
- connected clients hear about reloads the way each protocol era allows (`notices`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from typing import Any

import anyio
import orjson
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import INTERNAL_ERROR, CallToolResult, TextContent, Tool
from pydantic import ValidationError

from papercode.core.errors import QueryError
from papercode.corpus.reload import FULL_TEXT_TOOLS, LiveCorpus, Need
from papercode.corpus.stages import Corpus

from . import stdio
from .codes import LOADING
from .compat.list_changed import unchanging_lists
from .compat.prompt_arguments import check_prompt_arguments
from .compat.resource_uri_length import check_uri_length
from .compat.set_level import SetLevelRoute
from .compat.unknown_tool import unknown_tool
from .guesses import unknown_arguments, unknown_tool_message
from .notices import ClientLog
from .schema import compact_tool

log = logging.getLogger(__name__)

CorpusSource = Callable[[], Corpus]
"""Returns the corpus to answer from; a reload swaps what it returns."""

CORPUS_RESOURCES = ("corpus://stats", "corpus://load-report")
READY_TIMEOUT_SECONDS = 20.0
# What needs the full text (search, and the abstract, which lives beside the search index); the rest needs the index.
TOOL_NEEDS: dict[str, Need] = dict.fromkeys(FULL_TEXT_TOOLS, "search")
_FULL_TEXT = f"full-text search ({', '.join(FULL_TEXT_TOOLS)})"
STALE_NOTE = "answered from the last snapshot: the records changed since and are being reloaded; a fresh answer follows the swap"


class CodeAnswerText(str):
    """A resource's JSON text that also carries the verified code it holds (None: withheld), so
    `read_resource` can add the code as its own content without parsing the JSON back."""

    code: str | None

    def __new__(cls, text: str, code: str | None) -> CodeAnswerText:
        made = super().__new__(cls, text)
        made.code = code
        return made


def tool_error_text(tool: str, error: Exception) -> str:
    """What the model reads for a failed call: machine code first, next step last."""
    cause = error.__cause__
    if isinstance(cause, QueryError):
        return str(cause)
    if isinstance(cause, ValidationError):
        problems = "; ".join(f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}" for item in cause.errors()[:3])
        return f"invalid_argument: {problems}. Next: fix the argument (see the input schema of {tool}) and call again."
    if isinstance(error, UnexpectedToolError):
        return f"internal_error: {tool} failed unexpectedly. Next: retry once; if it fails again, report it to the server's operator."
    message = str(error)
    return f"invalid_argument: {message}. Next: check the arguments against the input schema and call again."


def _failed(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class PapercodeServer(MCPServer):
    """MCPServer with papercode's tool listing, errors, readiness and notices (see the module docstring)."""

    def __init__(self, *args: Any, live: LiveCorpus | None = None, ready_timeout: float = READY_TIMEOUT_SECONDS, **kwargs: Any) -> None:
        self.events = InMemorySubscriptionBus()
        super().__init__(*args, subscriptions=self.events, **kwargs)
        self.client_log = ClientLog()
        self.middleware.extend([SetLevelRoute(self.client_log.set_level), unchanging_lists])
        self.live = live  # None: the corpus is ready from the start
        self.ready_timeout = ready_timeout
        self.background: list[Callable[[], Coroutine[Any, Any, None]]] = []  # run while serving (`running`), e.g. keeping `stored` current
        self._listed: list[Tool] | None = None  # tools/list as the model sees it; rebuilt when the tools change
        self._takes: dict[str, tuple[str, ...]] = {}  # each listed tool's arguments, in its schema's order

    # -- tools/list and what it names -------------------------------------------------------------

    def add_tool(self, *args: Any, **kwargs: Any) -> None:
        super().add_tool(*args, **kwargs)
        self._listed = None

    def remove_tool(self, name: str) -> None:
        super().remove_tool(name)
        self._listed = None

    async def list_tools(self) -> list[Tool]:
        if self._listed is None:
            self._listed = [compact_tool(tool) for tool in await super().list_tools()]
            self._takes = {tool.name: tuple(tool.input_schema.get("properties", {})) for tool in self._listed}
        return list(self._listed)

    async def tools_taking(self) -> dict[str, tuple[str, ...]]:
        """Each tool tools/list names, with the arguments its input schema lists (the SDK would answer an unknown name
        with a failed call, and drop an argument a tool does not take)."""
        if self._listed is None:
            await self.list_tools()
        return self._takes

    # -- readiness --------------------------------------------------------------------------------

    async def _ready(self, need: Need, context: Context | None) -> None:
        """Wait (bounded, with progress notifications) until the live corpus can answer `need`;
        QueryError(`loading`) when it cannot yet."""
        if self.live is None or self.live.ready_for(need) is not None:
            return
        report = context.report_progress if context is not None else None
        await self.live.wait_for(need, self.ready_timeout, report)

    async def _ready_or_refuse(self, need: Need, context: Context | None) -> None:
        """`_ready` for resources and prompts, whose errors are protocol errors (`LOADING`; a failed load is the
        server's own failure, JSON-RPC's internal error, with the same `load_failed: …` text a tool gives)."""
        try:
            await self._ready(need, context)
        except QueryError as error:
            raise MCPError(LOADING if error.code == "loading" else INTERNAL_ERROR, str(error)) from None

    def readiness(self) -> str | None:
        """What is not ready yet, for corpus_stats; None once everything is."""
        live = self.live
        if live is None or live.state == "complete":
            return None
        if live.load_error is not None:
            if live.state == "stale":
                return (
                    f"stale: answers come from the snapshot of {live.stale_since}; loading the changed records failed ({live.load_error})"
                )
            return f"lookups only: {_FULL_TEXT} could not be built ({live.load_error})"
        if live.state == "stale":
            return f"stale: answers come from the snapshot of {live.stale_since} while the changed records are reloaded"
        return f"lookups only: {_FULL_TEXT} is still being built"

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While serving: the live corpus loads in the background (clients are answered meanwhile), and
        the `background` jobs run."""
        async with anyio.create_task_group() as tasks:
            if self.live is not None and self.live.state == "loading":
                tasks.start_soon(self._load)
            for job in self.background:
                tasks.start_soon(job)
            yield
            tasks.cancel_scope.cancel()

    async def _load(self) -> None:
        """The first load; then the load summary for clients that set a log level meanwhile."""
        if self.live is not None:
            await self.live.load()
            await self.client_log.greet_waiting()
            if self.live.load_error is not None:
                await self.client_log.send("error", f"loading the records failed: {self.live.load_error}")

    async def run_stdio_async(self) -> None:
        # `papercode serve` and `mcp run` both come through here; `stdio` answers malformed lines and stops on signals.
        async with self.running():
            await stdio.serve(super().run_stdio_async)

    # -- notices ----------------------------------------------------------------------------------

    async def notify_corpus_changed(self, corpus: Corpus) -> None:
        """After a reload swapped `corpus` in: what it holds now."""
        for uri in CORPUS_RESOURCES:
            await self.events.publish(ResourceUpdated(uri=uri))
        index = corpus.index
        await self.client_log.send(
            "info", f"records reloaded: {len(index.papers):,} papers, {len(index.samples):,} samples ({index.report.rejected:,} rejected)"
        )

    async def notify_reload_failed(self, reason: str) -> None:
        await self.client_log.send("error", f"reload failed, still serving the previous records: {reason}")

    # -- calls ------------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        tools = await self.tools_taking()
        if name not in tools:
            raise unknown_tool(unknown_tool_message(name, arguments or {}, tools))
        refused = unknown_arguments(name, tools[name], arguments or {})
        if refused is not None:  # seen here, in the raw arguments: the SDK's validation drops what a tool does not take
            return _failed(refused)
        try:
            if self.live is not None and self.live.state != "complete":
                await self._ready(TOOL_NEEDS.get(name, "index"), context)
            result = await super().call_tool(name, arguments, context)
        except QueryError as error:  # loading: answered once the corpus is ready
            return _failed(str(error))
        except ToolError as error:
            if isinstance(error, UnexpectedToolError) and not isinstance(error.__cause__, QueryError):
                log.error("tool %s crashed", name, exc_info=error.__cause__ or error)
            return _failed(tool_error_text(name, error))
        except Exception:  # a bug of ours outside the tool body: never leak its text
            log.exception("tool %s failed outside its body", name)
            return _failed(tool_error_text(name, UnexpectedToolError(name)))
        stale = self.live.stale_since if self.live is not None else None
        if stale is not None and isinstance(result, CallToolResult):  # said beside the answer, so no schema changes
            result.content.append(
                TextContent(type="text", text=orjson.dumps({"stale": True, "snapshot": stale, "note": STALE_NOTE}).decode())
            )
        return result

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        check_uri_length(uri)
        if not str(uri).startswith("ui://"):  # a view is static: it never waits for the corpus
            await self._ready_or_refuse("search" if str(uri).startswith("paper://") else "index", context)  # paper:// has the abstract
        contents = await super().read_resource(uri, context)
        if isinstance(contents, list):
            contents.extend(_verified_code(contents))
        return contents

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None) -> Any:
        check_prompt_arguments(await self.list_prompts(), name, arguments)
        await self._ready_or_refuse("search" if name == "implement_paper" else "index", context)  # it quotes the abstract
        return await super().get_prompt(name, arguments, context)


def _verified_code(contents: Iterable[ReadResourceContents]) -> list[ReadResourceContents]:
    """A code answer's verified code, as its own text/x-python content (none when withheld)."""
    return [
        ReadResourceContents(content=item.content.code, mime_type="text/x-python")
        for item in contents
        if isinstance(item.content, CodeAnswerText) and item.content.code is not None
    ]
