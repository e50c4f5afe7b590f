"""What the benchmarks measure: the one module of papercode that `benchmarks/` imports, their stable entry point.

A benchmark asks this module, never papercode's own modules, for what it runs and times, so the code can move without
the benchmarks following it: when a function moves, its line here moves with it. Each name loads its module on first
use (as `papercode.archive` loads its exports), so a benchmark's process imports only what it measures: an archive
build's never loads the MCP SDK (`load_sdk` loads it on purpose, before a baseline). Nothing in the server calls this
module; `tests/product/test_benchmark_imports.py` checks that the benchmarks use every name it gives, and no other.

An older commit has no `papercode.bench`: it is measured by that commit's own harness, and the report compares the
JSON files the two runs wrote (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from papercode.core.lazy import loaded_on_first_use

if TYPE_CHECKING:  # what `__getattr__` loads on first use, named for the type checker and linters
    from papercode.answers.leaderboards import describe_shown, leaderboard_shown
    from papercode.answers.queries import paper_detail_shown
    from papercode.archive.build import build_archive
    from papercode.cli.main import gc_policy
    from papercode.core.limits import Limits
    from papercode.core.load_report import LoadReport
    from papercode.core.names import facet_value, task_key
    from papercode.corpus.stages import Corpus, build_stages, open_stages
    from papercode.edge.app import build_server
    from papercode.index.abstracts import ABSTRACTS
    from papercode.index.mapped_archive import current_build, open_archive
    from papercode.index.ranking import SearchHit
    from papercode.index.search import SearchEngine
    from papercode.index.search_documents import SearchDocument, document_texts
    from papercode.index.search_queries import SearchFilters
    from papercode.index.search_writer import SearchBuilder, write_index
    from papercode.index.text_analysis import text_analyzer
    from papercode.ingest.admission import Admission
    from papercode.ingest.decode import iter_records
    from papercode.ingest.documents import search_document
    from papercode.ingest.files import RECORD_SUFFIXES
    from papercode.settings import bundled_records_dir

# Each name, and the module that declares it.
_LAZY = {
    # a process as `papercode` runs it, and its inputs
    "gc_policy": "papercode.cli.main",
    "bundled_records_dir": "papercode.settings",
    "Limits": "papercode.core.limits",
    "LoadReport": "papercode.core.load_report",
    "RECORD_SUFFIXES": "papercode.ingest.files",
    # a corpus: its cold build, its stages, a start
    "Corpus": "papercode.corpus.stages",
    "build_stages": "papercode.corpus.stages",
    "open_stages": "papercode.corpus.stages",
    "build_server": "papercode.edge.app",
    # the answers
    "paper_detail_shown": "papercode.answers.queries",
    "leaderboard_shown": "papercode.answers.leaderboards",
    "describe_shown": "papercode.answers.leaderboards",
    # the archive: its build, a build opened
    "build_archive": "papercode.archive.build",
    "open_archive": "papercode.index.mapped_archive",
    "current_build": "papercode.index.mapped_archive",
    # full-text search: the documents it indexes, its index written and searched
    "iter_records": "papercode.ingest.decode",
    "Admission": "papercode.ingest.admission",
    "search_document": "papercode.ingest.documents",
    "SearchDocument": "papercode.index.search_documents",
    "document_texts": "papercode.index.search_documents",
    "SearchBuilder": "papercode.index.search_writer",
    "write_index": "papercode.index.search_writer",
    "ABSTRACTS": "papercode.index.abstracts",
    "text_analyzer": "papercode.index.text_analysis",
    "SearchEngine": "papercode.index.search",
    "SearchFilters": "papercode.index.search_queries",
    "SearchHit": "papercode.index.ranking",
    "facet_value": "papercode.core.names",
    "task_key": "papercode.core.names",
}

# search_papers's filters, by the names tools/list gives them (`SearchFilters`'s fields)
_SEARCH_FILTERS = ("task", "method", "framework", "has_samples", "status", "official_code", "year_from", "year_to")


__getattr__ = loaded_on_first_use(__name__, _LAZY)


def load_sdk() -> None:
    """The MCP SDK and papercode's edge, imported as `papercode serve` imports them: before a measurement's baseline,
    so that what it measures leaves them out."""
    import_module("papercode.edge.app")


# -- the records: a cold build's phases, the snapshot, a warm start --------------------------------------------------


def cold_build_phases() -> list[tuple[object, str, str]]:
    """What a records' cold build calls per record and once, each `(owner, attribute, label)`, for a benchmark's
    timing wrappers (`benchmarks.harness.Timer.wrap_all`): records stream through the build, so its phases interleave."""
    from papercode.ingest import builder, decode, parallel

    return [
        (decode, "_decode", "decode + checks (loading._decode, this process's records)"),
        (builder.IndexBuilder, "add", "index, per record (IndexBuilder.add, with shipping)"),
        (parallel.ChildSearchBuild, "part", "wait for the child's part (ChildSearchBuild.part)"),
        (builder.IndexBuilder, "add_part", "merge the child's part (IndexBuilder.add_part)"),
        (builder.IndexBuilder, "finish", "index, corpus-wide orders (IndexBuilder.finish)"),
    ]


def records_key(roots: list[Path]) -> bytes:
    """What a start proves of the records before it serves a snapshot of them (a `stat` of every record file)."""
    from papercode.core.limits import Limits
    from papercode.corpus import snapshot

    return snapshot.records_key(roots, Limits())


def save_snapshot(corpus: Corpus, roots: list[Path], cache_dir: Path) -> None:
    """Write `corpus`'s snapshot into `cache_dir`, as a start writes it after a cold build."""
    from papercode.corpus import snapshot
    from papercode.index.search import SearchEngine

    assert isinstance(corpus.search, SearchEngine), "only the records' own corpus, complete, has a snapshot"
    snapshot.save(snapshot.snapshot_path(cache_dir, roots), records_key(roots), corpus.index, corpus.search)


def warm_start(roots: list[Path], cache_dir: Path, *, archive_dir: Path | None = None) -> Corpus:
    """A start that serves the current snapshot in `cache_dir` (over the archive in `archive_dir`), as `papercode
    serve` starts, and nothing else: without a current snapshot it raises rather than building the records, so that a
    cold build never passes for a warm start."""
    from papercode.core.limits import Limits
    from papercode.corpus.stages import open_stages

    # From a current snapshot: "complete" at once; else "stale", or a cold build's "keyed". The rest is never asked for.
    first = next(iter(open_stages(roots, Limits(), cache_dir, archive_dir=archive_dir)))
    if first.kind != "complete" or first.built_at is None:
        raise RuntimeError(f"no current snapshot in {cache_dir} for these records: a cold build would have run")
    return first.corpus


# -- the tools ---------------------------------------------------------------------------------------------------------

ToolAnswer = Callable[["Corpus", dict[str, Any]], Any]


def tool_answers() -> dict[str, ToolAnswer]:
    """Each of the records' tools as `answers` answers it (what the edge calls, with no MCP), called with the corpus and
    the tool's arguments as tools/list names them: the keyed tools' answers as shown (JSON-ready dicts), the others'
    as their models. `get_code` answers offline with nothing stored: the index's work and the answer."""
    from papercode.answers import overview, queries, resolving
    from papercode.index.search_queries import SearchFilters
    from papercode.verified.materialize import outcome_for

    def get_code(corpus: Corpus, arguments: dict[str, Any]) -> Any:
        found = resolving.find_code(corpus, arguments["code_sha256"])
        return queries.code_answer(corpus, found, outcome_for(found.rows[0], "not_materialized"))

    def search(corpus: Corpus, arguments: dict[str, Any]) -> Any:
        filters = SearchFilters(**{name: arguments[name] for name in _SEARCH_FILTERS if name in arguments})
        return queries.search_papers(corpus, arguments.get("query", ""), filters, arguments.get("limit", 10), None)

    return {
        "get_harvested_code_for_paper": lambda corpus, arguments: queries.harvested_code_shown(
            corpus,
            arguments["arxiv_id"],
            status=arguments.get("status"),
            repo_kind=arguments.get("repo_kind"),
            limit=arguments.get("limit", 25),
        ),
        "list_samples_by_status": lambda corpus, arguments: queries.samples_by_status_shown(
            corpus,
            arguments["status"],
            repo_kind=arguments.get("repo_kind"),
            inline_only=arguments.get("inline_only", False),
            limit=arguments.get("limit", 25),
        ),
        "search_papers": search,
        "get_paper": lambda corpus, arguments: queries.paper_detail_shown(corpus, arguments["paper"]),
        "find_papers_for_repo": lambda corpus, arguments: queries.papers_for_repo(
            corpus, arguments["repo"], arguments.get("limit", 25), None
        ),
        "get_code": get_code,
        "corpus_stats": lambda corpus, arguments: overview.corpus_stats(corpus),
    }


def tool_registrations() -> list[Any]:
    """papercode's tools as the server registers them (`edge.tools.ToolRegistration`: the function, whose signature
    and output model are the tool's, its title and annotations), over no corpus: for what they declare, never called."""
    from papercode.edge.tools import PapercodeTools
    from papercode.verified.materialize import VerifiedCode
    from papercode.verified.store import CodeStore

    def no_corpus() -> Corpus:
        raise RuntimeError("these tools are for their signatures: they have no corpus")

    return list(PapercodeTools(no_corpus, VerifiedCode(CodeStore(None)), lambda: None).registrations())


# -- the archive: a build's phases, what a benchmark asks of a build opened ----------------------------------------


def archive_build_phases() -> list[tuple[object, str, str]]:
    """What an archive build calls once that a benchmark times apart, each `(owner, attribute, label)`: the
    leaderboards' phase (for a large archive, the child's tables waited for and the results joined to the papers;
    else the three tables read, sorted, written and joined)."""
    from papercode.archive import build

    return [(build, "_boards", "the leaderboards' phase (build._boards)")]


class BoardNames(NamedTuple):
    """The names a leaderboards' benchmark asks for: each board with rows as (task, dataset), in the boards' order;
    every method's and every dataset's name."""

    boards: list[tuple[str, str]]
    methods: list[str]
    datasets: list[str]


def board_names(corpus: Corpus) -> BoardNames:
    """The leaderboards' names in the archive `corpus` serves (it must serve one, with its leaderboards)."""
    archive = corpus.archive
    assert archive is not None and archive.boards is not None, "the corpus serves no archive with leaderboards"
    boards, names = archive.boards, archive.boards.strings
    with_rows = [
        (str(names["task.name"][boards.board(b).task]), str(names["board.dataset"][b]))
        for b in range(boards.boards)
        if len(boards.board(b).rows)
    ]
    return BoardNames(with_rows, [str(name) for name in names["method.name"]], [str(name) for name in names["dataset.name"]])


def papers_with_results(archive_dir: Path) -> list[tuple[str | None, str]]:
    """(arXiv id, slug) of each paper of the archive in `archive_dir` that a leaderboard's result names, in the
    archive's order."""
    from papercode.index.mapped_archive import open_archive

    mapped = open_archive(archive_dir)
    try:
        assert mapped.boards is not None, f"the archive in {archive_dir} has no leaderboards"
        papers = sorted(set(mapped.boards.ints["paper.papers"]))
        return [(mapped.papers.arxiv_id[a], str(mapped.papers.slug[a])) for a in papers]
    finally:
        mapped.close()


__all__ = [
    "ABSTRACTS",
    "RECORD_SUFFIXES",
    "Admission",
    "Corpus",
    "Limits",
    "LoadReport",
    "SearchBuilder",
    "SearchDocument",
    "SearchEngine",
    "SearchFilters",
    "SearchHit",
    "archive_build_phases",
    "board_names",
    "build_archive",
    "build_server",
    "build_stages",
    "bundled_records_dir",
    "cold_build_phases",
    "current_build",
    "describe_shown",
    "document_texts",
    "facet_value",
    "gc_policy",
    "iter_records",
    "leaderboard_shown",
    "load_sdk",
    "open_archive",
    "open_stages",
    "paper_detail_shown",
    "papers_with_results",
    "records_key",
    "save_snapshot",
    "search_document",
    "task_key",
    "text_analyzer",
    "tool_answers",
    "tool_registrations",
    "warm_start",
    "write_index",
]
