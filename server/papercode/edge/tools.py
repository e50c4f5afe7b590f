"""The tools: typed methods over `queries` and `leaderboards`, each turning one answer into compact JSON (text) plus
structured content. The keyed tools and the leaderboard tools get theirs already as shown (JSON-ready dicts,
`shaping.shown`), so `reply` only serialises them; the others' answer models are dumped here.

Where a tool runs follows what it costs. Lookups in the in-memory index take microseconds, so those tools are `async`
and answer on the event loop: a hop to a worker thread and back costs more than the lookup (the figures are in
docs/decisions/stdio-edge.md). They are get_harvested_code_for_paper (its `stored` flags come from the
hashes the code store holds in memory, `CodeStore.holds`, once its start-up scan is done; before, they are a file
check per showable sample, so the call runs in a worker thread), get_paper (its abstract is a slice of the abstracts file kept beside the
full-text index, a memory map: a few microseconds), both when an id names the paper (a title is a search of the
index: in a worker thread), find_papers_for_repo, corpus_stats (unless the code store has bad files to look at again: then in a worker thread), and
the first page of list_samples_by_status, describe and an unfiltered get_leaderboard (a page of a board's stored
order, mapped). What can take longer runs in a
worker thread: search_papers (a plain function, which the SDK runs in one), a later page of list_samples_by_status
(filtered by language or licence, skipping to its offset walks every listing rank before it: tens of milliseconds
deep into a large corpus), get_paper for a list of ids, get_leaderboard with has_code or status (it looks at the whole
board), and get_code's store reads and downloads (for a list of hashes, side by side).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

import anyio.to_thread
import orjson
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, Field

from papercode.answers import checks, leaderboards, models, overview, queries, resolving
from papercode.core.ids import arxiv_id_from_number
from papercode.core.records import REPO_KIND_CHOICES_TEXT, STATUS_CHOICES_TEXT, STATUS_ORDER_TEXT
from papercode.corpus.stages import Corpus
from papercode.index.paper_index import SampleRow
from papercode.index.search_queries import SearchFilters
from papercode.verified.materialize import SampleOutcome, VerifiedCode

from .server import CorpusSource

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

HARVESTED_CODE_DESCRIPTION = (
    "Code samples (functions) harvested for one paper, best first: official repos, then status "
    f"{STATUS_ORDER_TEXT}. Returns counts and a page of samples by repository and file (stored: code ready). "
    "Next: get_code(code_sha256); inline_ok false means link only."
)


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


def _each(read: Callable[[object], object]) -> Callable[[object], object]:
    """`read` for one value, or for each value of a list."""
    return lambda value: [read(item) for item in value] if isinstance(value, list) else read(value)


def _several(values: checks.SeveralValues, item: Callable[[object], object] | None = None, *, optional: bool = False) -> BeforeValidator:
    """How an argument that takes several values is read: each item as `item` reads it, then `values.read` (a JSON list,
    or a comma-separated string of ids); a bad one is refused naming both forms. Null is an optional one left out."""
    each = _each(item) if item is not None else None

    def read(value: object) -> object:
        if value is None and optional:
            return None
        return values.read(each(value) if each is not None else value)

    return BeforeValidator(read)


# The one schema shape of an argument that takes several values: a string (comma-separated) or a list of strings.
Several = str | list[str]
SEVERAL = "; several: a list or comma-separated"
_ID_TEXT = "arXiv id in any form (1902.04094, arXiv:1902.04094v2, URL, hep-th/9901001) or paper slug"
PaperId = Annotated[str, BeforeValidator(_id_from_number), Field(description=_ID_TEXT)]
PaperIds = Annotated[
    Several,
    _several(checks.PAPERS, _id_from_number),
    Field(description=f"{_ID_TEXT}{SEVERAL} (up to {checks.MAX_PAPERS_ASKED})"),
]
Limit = Annotated[int, Field(ge=1, le=checks.MAX_LIMIT)]
Cursor = Annotated[str | None, Field(description="From next_cursor")]
Statuses = Annotated[Several, _several(checks.STATUSES), Field(description=f"{STATUS_CHOICES_TEXT}{SEVERAL}")]
RepoKind = Annotated[str | None, Field(description=REPO_KIND_CHOICES_TEXT)]
CodeHashes = Annotated[
    Several,
    _several(checks.CODE_HASHES, _text_from_number),
    Field(description=f"A sample's code_sha256 (16 hex), or a unique prefix of 8+{SEVERAL} (up to {checks.MAX_CODES_ASKED})"),
]


StatusFilter = Annotated[Several | None, _several(checks.STATUSES, optional=True)]  # its description says what it keeps


SearchQuery = Annotated[
    str, BeforeValidator(_id_from_number), Field(description="Plain words, e.g. 'bert generative in-context'; empty to browse newest first")
]


def reply(answer: BaseModel | dict[str, Any]) -> CallToolResult:
    """An answer as structured content and the same as compact JSON text. A dict is an answer already as shown
    (`shaping.shown`: the keyed tools build theirs so, and skip the model and its dump; `answers` says which tools
    build which)."""
    structured = answer if isinstance(answer, dict) else answer.model_dump(mode="json", exclude_none=True)
    text = orjson.dumps(structured).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


async def obtain_code_answer(corpus: Corpus, code: VerifiedCode, code_sha256: str | list[str]) -> models.CodeAnswer:
    """get_code's answer: find the samples (in a thread: index work), obtain their verified code
    (from the store, or downloaded and verified), and shape both into the answer; for a list of hashes, each
    hash's answer, their code obtained side by side."""
    if isinstance(code_sha256, str):
        found = await anyio.to_thread.run_sync(resolving.find_code, corpus, code_sha256)
        return queries.code_answer(corpus, found, await code.obtain(found.rows), code.materialize_flags)
    each = await anyio.to_thread.run_sync(resolving.find_codes, corpus, code_sha256)
    obtained: list[SampleOutcome | None] = [None] * len(each)

    async def obtain(position: int, rows: list[SampleRow]) -> None:
        obtained[position] = await code.obtain(rows)

    async with anyio.create_task_group() as tasks:
        for position, item in enumerate(each):
            if isinstance(item, resolving.FoundCode):
                tasks.start_soon(obtain, position, item.rows)
    return queries.code_list_answer(corpus, code_sha256, each, obtained, code.materialize_flags)


class ToolRegistration(NamedTuple):
    fn: Callable[..., Any]
    title: str
    annotations: ToolAnnotations
    description: str | None = None  # None: the function's docstring


class PapercodeTools:
    """The tools over whatever corpus `source` returns, with verified code from `code`;
    `readiness` says what is not ready yet (for corpus_stats)."""

    def __init__(self, source: CorpusSource, code: VerifiedCode, readiness: Callable[[], str | None]) -> None:
        self.source, self.code, self.readiness = source, code, readiness

    def registrations(self) -> list[ToolRegistration]:
        """Every tool, in the order tools/list shows them."""
        fetching = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=self.code.fetching)
        return [
            ToolRegistration(self.get_harvested_code_for_paper, "Code for a paper", READ_ONLY, HARVESTED_CODE_DESCRIPTION),
            ToolRegistration(self.list_samples_by_status, "Samples by status", READ_ONLY),
            ToolRegistration(self.search_papers, "Search papers", READ_ONLY),
            ToolRegistration(self.get_paper, "Paper details", READ_ONLY),
            ToolRegistration(self.find_papers_for_repo, "Papers of a repository", READ_ONLY),
            ToolRegistration(self.get_code, "Verified code", fetching),
            ToolRegistration(self.corpus_stats, "Corpus statistics", READ_ONLY),
            ToolRegistration(self.get_leaderboard, "Leaderboard", READ_ONLY),
            ToolRegistration(self.describe, "Task, method or dataset", READ_ONLY),
        ]

    def register(self, server: MCPServer, meta: Mapping[str, dict[str, Any]] | None = None) -> None:
        """Each tool added to `server`, with its `_meta` from `meta` by name (the views': `views.tool_meta`)."""
        named = meta or {}
        for tool in self.registrations():
            server.add_tool(
                tool.fn, title=tool.title, description=tool.description, annotations=tool.annotations, meta=named.get(tool.fn.__name__)
            )

    async def get_harvested_code_for_paper(
        self,
        *,
        arxiv_id: PaperId,
        status: Annotated[StatusFilter, Field(description=f"Only samples of this status{SEVERAL}")] = None,
        repo_kind: RepoKind = None,
        limit: Limit = 25,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.HarvestedCode]:
        # Described by HARVESTED_CODE_DESCRIPTION, which spells the status order from `records`.
        corpus, stored = self.source(), self.code.stored_lookup

        def answer(stored: Callable[[str], bool]) -> dict[str, Any]:
            return queries.harvested_code_shown(
                corpus, arxiv_id, status=status, repo_kind=repo_kind, limit=limit, cursor=cursor, stored=stored
            )

        # Until the store has been scanned, `stored` is a file check per sample, and a title is a search: in a worker thread.
        if stored is not None and not resolving.searches_titles(corpus, arxiv_id):
            return reply(answer(stored))
        return reply(await anyio.to_thread.run_sync(answer, stored or self.code.is_stored))

    async def list_samples_by_status(
        self,
        *,
        status: Statuses,
        repo_kind: RepoKind = None,
        language: Annotated[str | None, Field(description="e.g. python")] = None,
        licence: Annotated[str | None, Field(description="SPDX id, e.g. MIT; NONE = no licence found")] = None,
        inline_only: Annotated[bool, Field(description="Only samples whose code may be shown")] = False,
        limit: Limit = 25,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.SampleList]:
        """Samples across the corpus with the given status(es), by paper, repository and file, and the total.
        Next: get_code(code_sha256)."""

        def listing() -> dict[str, Any]:
            return queries.samples_by_status_shown(
                self.source(),
                status,
                repo_kind=repo_kind,
                language=language,
                licence=licence,
                inline_only=inline_only,
                limit=limit,
                cursor=cursor,
            )

        return reply(listing() if cursor is None else await anyio.to_thread.run_sync(listing))

    def search_papers(
        self,
        *,
        query: SearchQuery = "",
        task: Annotated[str | None, Field(description="Task name or slug, e.g. language-modeling")] = None,
        method: Annotated[str | None, Field(description="Method name, e.g. BERT")] = None,
        framework: Annotated[str | None, Field(description="pytorch, tf, jax, ...")] = None,
        has_samples: Annotated[bool | None, Field(description="Only papers with (true) or without (false) code samples")] = None,
        status: Annotated[StatusFilter, Field(description=f"Only papers with a sample of this status{SEVERAL}")] = None,
        official_code: Annotated[bool | None, Field(description="Only papers with (true) or without (false) an official repo")] = None,
        year_from: int | None = None,
        year_to: int | None = None,
        limit: Annotated[int, Field(ge=1, le=checks.MAX_LIMIT)] = 10,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.SearchResult]:
        """Ranked full-text search of titles, abstracts, authors, tasks and methods; filters combine.
        Next: get_harvested_code_for_paper or get_paper."""
        statuses = tuple([status] if isinstance(status, str) else status) if status else None  # as read: one, or a list
        filters = SearchFilters(task, method, framework, has_samples, statuses, official_code, year_from, year_to)
        return reply(queries.search_papers(self.source(), query, filters, limit, cursor))

    async def get_paper(self, *, paper: PaperIds) -> Annotated[CallToolResult, models.PaperAnswer]:
        """One paper: metadata, abstract, tasks, methods, code links (official first, framework,
        licence), a summary of its samples and what their statuses claim. A list of ids: each paper
        in brief, in order. Next: get_harvested_code_for_paper."""
        corpus = self.source()
        if isinstance(paper, str):
            if resolving.searches_titles(corpus, paper):  # a title, not an id: a search, in a worker thread
                return reply(await anyio.to_thread.run_sync(queries.paper_detail_shown, corpus, paper))
            return reply(queries.paper_detail_shown(corpus, paper))
        # Up to 25 papers, each a lookup and its display fields decoded: in a worker thread.
        return reply(await anyio.to_thread.run_sync(queries.paper_list_shown, corpus, paper))

    async def find_papers_for_repo(
        self,
        *,
        repo: Annotated[str, Field(description="owner/name or a GitHub, GitLab, Bitbucket or Hugging Face URL")],
        limit: Limit = 25,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.RepoPapers]:
        """Papers whose code links or samples name a repository, official first, with framework
        and the statuses of that repo's samples. Next: get_harvested_code_for_paper."""
        return reply(queries.papers_for_repo(self.source(), repo, limit, cursor))

    async def get_code(self, *, code_sha256: CodeHashes) -> Annotated[CallToolResult, models.CodeAnswer]:
        """A sample's verified code: its function plus what it needs from its file, proven by its
        hash. Never when inline_ok is false; then, or when unverifiable, `withheld` says why. A list
        of hashes: each answered so, in order."""
        return reply(await obtain_code_answer(self.source(), self.code, code_sha256))

    async def corpus_stats(self) -> Annotated[CallToolResult, models.CorpusStats]:
        """What the corpus holds: papers, samples, counts by status, repo kind, licence and
        language, snapshots, harvest dates and load problems."""
        corpus, store, readiness = self.source(), self.code.store, self.readiness()

        def stats() -> models.CorpusStats:
            return overview.corpus_stats(corpus, store.problems, readiness)

        # With bad files reported, `problems` looks at each again (a stat, a hash if it changed): in a worker thread.
        return reply(await anyio.to_thread.run_sync(stats) if store.has_problems else stats())

    async def get_leaderboard(
        self,
        *,
        task: Annotated[str, Field(description="As written, e.g. semantic segmentation")],
        dataset: Annotated[str | None, Field(description="Omit to list the task's benchmarks")] = None,
        metric: Annotated[str | None, Field(description="Default: the benchmark's first")] = None,
        order: Annotated[str | None, Field(description="asc or desc; default: the metric's direction")] = None,
        has_code: Annotated[bool | None, Field(description="Only rows with (true) or without (false) code")] = None,
        status: Annotated[StatusFilter, Field(description=f"Only rows whose paper has a harvested sample of this status{SEVERAL}")] = None,
        limit: Annotated[int, Field(ge=1, le=leaderboards.MAX_ROWS)] = 10,
        cursor: Cursor = None,
    ) -> Annotated[CallToolResult, models.Leaderboard]:
        """Results on a benchmark, best first: metric values, paper, code (official first) and how the paper's harvested
        code ran. Without dataset: the task's benchmarks. Next: get_harvested_code_for_paper(paper)."""

        def board() -> dict[str, Any]:
            return leaderboards.leaderboard_shown(
                self.source(), task, dataset, metric=metric, order=order, has_code=has_code, status=status, limit=limit, cursor=cursor
            )

        # Unfiltered, a page is read from the board's stored order: microseconds. A filter looks at the whole board.
        return reply(board() if has_code is None and not status else await anyio.to_thread.run_sync(board))

    async def describe(
        self,
        *,
        kind: Annotated[str, Field(description="task, method or dataset")],
        name: Annotated[str, Field(description="As written: any case, a slug, a synonym")],
    ) -> Annotated[CallToolResult, models.Description]:
        """A task (description, parent, subtasks, benchmarks), method (full name, year, introducing paper) or dataset
        (modalities, tasks, benchmarks) of the Papers-with-Code archive. Next: get_leaderboard."""
        return reply(leaderboards.describe_shown(self.source(), kind, name))
