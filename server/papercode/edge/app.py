"""The MCP edge: tools, resources, prompts and completions over `queries`.

Each handler validates nothing itself: it calls one function in `queries.py` and turns the
answer into compact JSON (text) plus structured content. Errors are shaped here, once:
every tool error the model reads starts with a machine code and ends with the next step.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import anyio
import anyio.to_thread
import orjson
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from papercode import __version__
from papercode.answers import models, queries
from papercode.core.errors import QueryError
from papercode.core.ids import arxiv_id_from_number
from papercode.core.records import REPO_KIND_CHOICES_TEXT, STATUS_CHOICES_TEXT, STATUS_ORDER_TEXT
from papercode.corpus.reload import LiveCorpus, Need
from papercode.corpus.stages import Corpus
from papercode.index.search import SearchFilters
from papercode.verified.materialize import VerifiedCode
from papercode.verified.store import CodeStore

from . import stdio
from .codes import LOADING
from .notices import ClientLog

log = logging.getLogger(__name__)

CorpusSource = Callable[[], Corpus]
"""Returns the corpus to answer from; a reload swaps what it returns."""

INSTRUCTIONS = (
    "papercode answers from an offline corpus of Code-with-Papers records: papers (Papers-with-Code archive) "
    "with their repositories and function-level code samples, each with an execution status "
    f"({STATUS_ORDER_TEXT}) and a licence. Usual path: "
    "search_papers -> get_harvested_code_for_paper (official repos and working code first) -> get_code. "
    "Samples with inline_ok false are pointer-only: link to them, never reproduce their code. "
    "Data is CC BY-SA 4.0: attribute it."
)

MAX_URI_CHARS = 1_000
CODE_TEMPLATE = "code://{code_sha256}"
CORPUS_RESOURCES = ("corpus://stats", "corpus://load-report")
READY_TIMEOUT_SECONDS = 20.0
# What needs the full text (search, and the abstract, which lives in the search database); the rest needs the index.
TOOL_NEEDS: dict[str, Need] = {"search_papers": "search", "get_paper": "search"}
STALE_NOTE = "answered from the last snapshot: the records changed since and are being reloaded; a fresh answer follows the swap"

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

def _id_from_number(value: object) -> object:
    # The Inspector CLI and some models send ids unquoted; a JSON number becomes the id it spells.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return arxiv_id_from_number(value)
    return value


def _text_from_number(value: object) -> object:
    # An all-digit hash prefix arrives as an integer, exactly; a float has lost digits and reads as what it is.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value) if isinstance(value, int) else repr(value)
    return value


PaperId = Annotated[
    str,
    BeforeValidator(_id_from_number),
    Field(description="arXiv id in any form (1902.04094, arXiv:1902.04094v2, URL, hep-th/9901001) or paper slug"),
]
Limit = Annotated[int, Field(ge=1, le=queries.MAX_LIMIT)]
Cursor = Annotated[str | None, Field(description="From next_cursor")]
Statuses = Annotated[
    str | list[str],
    Field(description=f"{STATUS_CHOICES_TEXT}; several: a list or comma-separated"),
]
RepoKind = Annotated[str | None, Field(description=REPO_KIND_CHOICES_TEXT)]


def _reply(answer: BaseModel) -> CallToolResult:
    structured = answer.model_dump(mode="json", exclude_none=True)
    text = orjson.dumps(structured).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


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


def _compact_schema(schema: Any, *, output: bool = False) -> Any:
    """What the model sees for a schema: no titles, no `null` branches for optional values, and
    for an output schema no defaults (they describe arguments, not answers).

    Answers never contain nulls (they are omitted), and optional arguments are simply left out,
    so `anyOf [T, null]` says nothing the model needs; dropping it keeps tools/list small.
    """
    if isinstance(schema, list):
        return [_compact_schema(item, output=output) for item in schema]
    if not isinstance(schema, dict):
        return schema
    dropped = {"title", "default"} if output else {"title"}
    compact = {key: _compact_schema(value, output=output) for key, value in schema.items() if key not in dropped or not _is_keyword(value)}
    if "properties" in schema:  # property names are data, not keywords: keep a property called "title"
        compact["properties"] = {name: _compact_schema(value, output=output) for name, value in schema["properties"].items()}
    branches = compact.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        rest = [branch for branch in branches if branch != {"type": "null"}]
        compact.pop("anyOf")
        if compact.get("default", "") is None:
            compact.pop("default")
        compact = {**rest[0], **compact} if len(rest) == 1 else {"anyOf": rest, **compact}
    return compact


def _is_keyword(value: Any) -> bool:
    # `title` and `default` as schema keywords hold plain values, never a nested schema object.
    return not isinstance(value, dict) or "type" not in value


class PapercodeServer(MCPServer):
    """MCPServer whose tool errors read `<code>: … Next: …` instead of `Error executing tool …`,
    and which tells connected clients about reloads the way each protocol era allows (`notices`)."""

    def __init__(self, *args: Any, live: LiveCorpus | None = None, ready_timeout: float = READY_TIMEOUT_SECONDS, **kwargs: Any) -> None:
        self.events = InMemorySubscriptionBus()
        super().__init__(*args, subscriptions=self.events, **kwargs)
        self.client_log = ClientLog()
        self.middleware.append(self.client_log)
        self.live = live  # None: the corpus is ready from the start
        self.ready_timeout = ready_timeout

    async def _ready(self, need: Need, context: Context | None) -> None:
        """Wait (bounded, with progress notifications) until the live corpus can answer `need`;
        QueryError(`loading`) when it cannot yet."""
        if self.live is None or self.live.ready_for(need) is not None:
            return
        report = context.report_progress if context is not None else None
        await self.live.wait_for(need, self.ready_timeout, report)

    async def _ready_or_refuse(self, need: Need, context: Context | None) -> None:
        """`_ready` for resources and prompts, whose errors are protocol errors (`LOADING`)."""
        try:
            await self._ready(need, context)
        except QueryError as error:
            raise MCPError(LOADING, str(error)) from None

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While serving: the live corpus loads in the background (clients are answered meanwhile)."""
        async with anyio.create_task_group() as tasks:
            if self.live is not None and self.live.state == "loading":
                tasks.start_soon(self._load)
            yield
            tasks.cancel_scope.cancel()

    async def _load(self) -> None:
        """The first load; then the load summary for clients that set a log level meanwhile."""
        if self.live is not None:
            await self.live.load()
            await self.client_log.greet_waiting()

    async def run_stdio_async(self) -> None:
        # `papercode serve` and `mcp run` both come through here; `stdio` answers malformed lines and stops on signals.
        async with self.running():
            await stdio.serve(super().run_stdio_async)

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

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        try:
            if self.live is not None and self.live.state != "complete" and name in {tool.name for tool in await self.list_tools()}:
                await self._ready(TOOL_NEEDS.get(name, "index"), context)
            result = await super().call_tool(name, arguments, context)
        except QueryError as error:  # loading: answered once the corpus is ready
            return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)
        except ToolError as error:
            if str(error).startswith("Unknown tool"):  # a protocol error (the spec's -32602), not a failed call
                raise MCPError(INVALID_PARAMS, f"not_found: unknown tool {repr(name)[:80]}; call tools/list for the available tools") from None
            if isinstance(error, UnexpectedToolError) and not isinstance(error.__cause__, QueryError):
                log.error("tool %s crashed", name, exc_info=error.__cause__ or error)
            return CallToolResult(content=[TextContent(type="text", text=tool_error_text(name, error))], is_error=True)
        except Exception:  # a bug of ours outside the tool body: never leak its text
            log.exception("tool %s failed outside its body", name)
            return CallToolResult(content=[TextContent(type="text", text=tool_error_text(name, UnexpectedToolError(name)))], is_error=True)
        stale = self.live.stale_since if self.live is not None else None
        if stale is not None and isinstance(result, CallToolResult):  # said beside the answer, so no schema changes
            result.content.append(TextContent(type="text", text=orjson.dumps({"stale": True, "snapshot": stale, "note": STALE_NOTE}).decode()))
        return result

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        # The SDK's unknown-resource error echoes the whole URI: refuse a huge one before matching.
        if len(str(uri)) > MAX_URI_CHARS:
            raise MCPError(
                INVALID_PARAMS, f"invalid_argument: resource URI is over {MAX_URI_CHARS:,} characters; see resources/templates/list"
            )
        await self._ready_or_refuse("search" if str(uri).startswith("paper://") else "index", context)  # paper:// has the abstract
        contents = await super().read_resource(uri, context)
        if str(uri).startswith(CODE_TEMPLATE.split("{")[0]) and isinstance(contents, list):
            # The answer is JSON; verified code also comes as its own text/x-python content.
            code = orjson.loads(contents[0].content).get("code") if contents else None
            if isinstance(code, str):
                contents.append(ReadResourceContents(content=code, mime_type="text/x-python"))
        return contents

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None) -> Any:
        # Bad prompt arguments are the client's mistake: invalid params, never an internal error.
        prompt = next((listed for listed in await self.list_prompts() if listed.name == name), None)
        if prompt is None:
            raise MCPError(INVALID_PARAMS, f"not_found: unknown prompt {name!r}; see prompts/list")
        missing = [arg.name for arg in prompt.arguments or [] if arg.required and not (arguments or {}).get(arg.name)]
        if missing:
            raise MCPError(INVALID_PARAMS, f"invalid_argument: missing required argument(s): {', '.join(missing)}")
        known = {arg.name for arg in prompt.arguments or []}
        unknown = sorted(set(arguments or {}) - known)
        if unknown:  # the SDK would fail to render and answer with an internal error
            listed = ", ".join(repr(key[:40]) for key in unknown[:5])
            raise MCPError(INVALID_PARAMS, f"invalid_argument: unknown argument(s) {listed}; {name} takes {', '.join(sorted(known))}")
        await self._ready_or_refuse("search" if name == "implement_paper" else "index", context)  # it quotes the abstract
        return await super().get_prompt(name, arguments, context)


def build_server(
    source: CorpusSource,
    code: VerifiedCode | None = None,
    *,
    auth: tuple[TokenVerifier, AuthSettings] | None = None,
    ready_timeout: float = READY_TIMEOUT_SECONDS,
) -> PapercodeServer:
    """The papercode MCP server answering from whatever corpus `source` returns, with verified
    code from `code` (by default none is stored and nothing is fetched).

    Tools that read the index are plain functions: the SDK runs them in worker threads, so a slow
    call never holds up the event loop. `get_code` may download, so it is async and hands its
    blocking parts to threads itself.
    """
    verifier, auth_settings = auth if auth else (None, None)
    server = PapercodeServer(
        "papercode",
        title="papercode",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        token_verifier=verifier,
        auth=auth_settings,
        live=source if isinstance(source, LiveCorpus) else None,
        ready_timeout=ready_timeout,
    )
    code = code or VerifiedCode(CodeStore(None))
    server.client_log.greeting = lambda: queries.load_notice(source(), code.store.problems)

    @server.tool(annotations=READ_ONLY)
    def get_harvested_code_for_paper(
        arxiv_id: PaperId,
        status: Annotated[Statuses | None, Field(description="Only these statuses (list or comma-separated)")] = None,
        repo_kind: RepoKind = None,
        limit: Limit = 25,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.HarvestedCode]:
        """Code samples (functions) harvested for one paper, best first: official repos, then status
        ran_honours > ran > ran_draft_wrong > ran_violates > unverified. Returns the paper, counts,
        a page of samples (stored: code ready) and what the statuses claim.
        Next: get_code(code_sha256); inline_ok false means link only."""
        return _reply(queries.harvested_code(source(), arxiv_id, status, repo_kind, limit, cursor, code.is_stored))

    @server.tool(annotations=READ_ONLY)
    def list_samples_by_status(
        status: Statuses,
        repo_kind: RepoKind = None,
        language: Annotated[str | None, Field(description="e.g. python")] = None,
        licence: Annotated[str | None, Field(description="SPDX id, e.g. MIT; NONE = no licence found")] = None,
        inline_only: Annotated[bool, Field(description="Only samples whose code may be shown")] = False,
        limit: Limit = 25,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.SampleList]:
        """Samples across the corpus with the given status(es), each with its paper, and the total.
        Next: get_code(code_sha256)."""
        return _reply(queries.samples_by_status(source(), status, repo_kind, language, licence, inline_only, limit, cursor))

    @server.tool(annotations=READ_ONLY)
    def search_papers(
        query: Annotated[
            str, BeforeValidator(_id_from_number), Field(description="Plain words, e.g. 'bert generative in-context'; empty to browse newest first")
        ] = "",
        task: Annotated[str | None, Field(description="Task name or slug, e.g. language-modeling")] = None,
        method: Annotated[str | None, Field(description="Method name, e.g. BERT")] = None,
        framework: Annotated[str | None, Field(description="pytorch, tf, jax, ...")] = None,
        has_samples: Annotated[bool | None, Field(description="Only papers with (true) or without (false) code samples")] = None,
        status: Annotated[str | None, Field(description="Only papers with a sample of this status (several: comma-separated)")] = None,
        official_code: Annotated[bool | None, Field(description="Only papers with (true) or without (false) an official repo")] = None,
        year_from: int | None = None,
        year_to: int | None = None,
        limit: Annotated[int, Field(ge=1, le=queries.MAX_LIMIT)] = 10,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.SearchResult]:
        """Ranked full-text search of titles, abstracts, authors, tasks and methods; filters combine.
        Next: get_harvested_code_for_paper or get_paper."""
        filters = SearchFilters(task, method, framework, has_samples, status, official_code, year_from, year_to)
        return _reply(queries.search_papers(source(), query, filters, limit, cursor))

    @server.tool(annotations=READ_ONLY)
    def get_paper(paper: PaperId) -> Annotated[CallToolResult, models.PaperDetail]:
        """One paper: metadata, abstract, tasks, methods, code links (official first, framework,
        licence) and a summary of its samples. Next: get_harvested_code_for_paper."""
        return _reply(queries.paper_detail(source(), paper))

    @server.tool(annotations=READ_ONLY)
    def find_papers_for_repo(
        repo: Annotated[str, Field(description="owner/name or a GitHub, GitLab, Bitbucket or Hugging Face URL")],
        limit: Limit = 25,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.RepoPapers]:
        """Papers whose code links or samples name a repository, official first, with framework
        and the statuses of that repo's samples. Next: get_harvested_code_for_paper."""
        return _reply(queries.papers_for_repo(source(), repo, limit, cursor))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=code.fetching))
    async def get_code(
        code_sha256: Annotated[
            str, BeforeValidator(_text_from_number), Field(description="A sample's code_sha256 (16 hex), or a unique prefix of 8+")
        ],
    ) -> Annotated[CallToolResult, models.CodeAnswer]:
        """A sample's verified code: its function plus what it needs from its file, proven by its
        hash. Never when inline_ok is false; then, or when unverifiable, `withheld` says why."""
        return _reply(await code_answer(source(), code, code_sha256))

    @server.tool(annotations=READ_ONLY)
    def corpus_stats() -> Annotated[CallToolResult, models.CorpusStats]:
        """What the corpus holds: papers, samples, counts by status, repo kind, licence and
        language, snapshots, harvest dates and load problems."""
        return _reply(queries.corpus_stats(source(), code.store.problems, _readiness(server.live)))

    _register_resources(server, source, code)
    _register_prompts(server, source)
    _register_completions(server, source)
    # SDK 2.3 derives schemas from the signatures but offers no public hook to trim them, so the
    # registered tools are compacted in place (mcp is pinned <2.4; the surface snapshot test
    # shows any drift).
    for tool in server._tool_manager.list_tools():
        tool.description = " ".join((tool.description or "").split())
        tool.parameters = _compact_schema(tool.parameters)
        tool.fn_metadata.output_schema = _compact_schema(tool.fn_metadata.output_schema, output=True)
    return server


async def code_answer(corpus: Corpus, code: VerifiedCode, code_sha256: str) -> models.CodeAnswer:
    """get_code's answer: find the samples (in a thread: index work), then their verified code."""
    found = await anyio.to_thread.run_sync(queries.find_code, corpus, code_sha256)
    obtained = await code.obtain(found.rows)
    return queries.code_answer(corpus, found, obtained)


def _readiness(live: LiveCorpus | None) -> str | None:
    """What is not ready yet, for corpus_stats; None once everything is."""
    if live is None or live.state == "complete":
        return None
    if live.state == "stale":
        return f"stale: answers come from the snapshot of {live.stale_since} while the changed records are reloaded"
    return "lookups only: full-text search (search_papers, get_paper) is still being built"


def _json(answer: BaseModel) -> str:
    return orjson.dumps(answer.model_dump(mode="json", exclude_none=True)).decode()


def _not_found(error: QueryError) -> ResourceNotFoundError:
    return ResourceNotFoundError(str(error))


def _register_resources(server: PapercodeServer, source: CorpusSource, code: VerifiedCode) -> None:
    @server.resource("paper://{+arxiv_id}", mime_type="application/json", title="Paper", description="get_paper's view of one paper")
    def paper_resource(arxiv_id: str) -> str:
        try:
            return _json(queries.paper_detail(source(), arxiv_id))
        except QueryError as error:
            raise _not_found(error) from error

    @server.resource(
        CODE_TEMPLATE,
        mime_type="application/json",
        title="Code sample",
        description="get_code's answer for one code hash; verified code follows as text/x-python",
    )
    async def code_resource(code_sha256: str) -> str:
        try:
            return _json(await code_answer(source(), code, code_sha256))
        except QueryError as error:
            raise _not_found(error) from error

    @server.resource("corpus://stats", mime_type="application/json", title="Corpus statistics")
    def stats_resource() -> str:
        return _json(queries.corpus_stats(source(), code.store.problems, _readiness(server.live)))

    @server.resource(
        "corpus://load-report",
        mime_type="application/json",
        title="Load report",
        description="Every rejected or suspect record, with path, line and reason",
    )
    def load_report_resource() -> str:
        return orjson.dumps(queries.load_report(source(), code.store.problems)).decode()


def _register_prompts(server: MCPServer, source: CorpusSource) -> None:
    @server.prompt(title="Implement a paper")
    def implement_paper(arxiv_id: str) -> str:
        """Start implementing a paper from its best harvested code samples."""
        return _prompt_text(lambda corpus: queries.implement_prompt(corpus, arxiv_id), source)

    @server.prompt(title="Compare implementations")
    def compare_implementations(arxiv_id: str) -> str:
        """Choose among a paper's repositories using their samples' statuses and licences."""
        return _prompt_text(lambda corpus: queries.compare_prompt(corpus, arxiv_id), source)


def _prompt_text(render: Callable[[Corpus], str], source: CorpusSource) -> str:
    try:
        return render(source())
    except QueryError as error:
        raise MCPError(INVALID_PARAMS, str(error)) from error


def _register_completions(server: PapercodeServer, source: CorpusSource) -> None:
    @server.completion()  # type: ignore[untyped-decorator,no-untyped-call]  # the SDK leaves it untyped
    async def complete(
        ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
    ) -> Completion | None:
        known = {prompt.name for prompt in await server.list_prompts()} | {
            template.uri_template for template in await server.list_resource_templates()
        }
        if (ref.name if isinstance(ref, PromptReference) else ref.uri) not in known:
            return None
        if server.live is not None and server.live.ready_for("index") is None:  # still loading: nothing to offer yet
            return Completion(values=[], total=0, has_more=False)
        values = await anyio.to_thread.run_sync(queries.complete, source(), argument.name, argument.value)
        return Completion(values=values, total=len(values), has_more=False) if values is not None else None


__all__ = ["INSTRUCTIONS", "PapercodeServer", "build_server"]
