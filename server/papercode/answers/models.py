"""What each tool answers: lean pydantic models, dumped without nulls.

These are the output schemas the model sees, so every field earns its place. Optional fields
are omitted from answers when empty (never sent as null).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from papercode.core.ids import SHA_PREFIX_LENGTH

ATTRIBUTION = "CC BY-SA 4.0, Code-with-Papers (codewithpapers.app/attribution); not affiliated with Papers with Code"
ARCHIVE_ATTRIBUTION = "CC BY-SA 4.0, the Papers-with-Code archive (pwc-archive, Hugging Face); not affiliated with Papers with Code"
BOTH_ATTRIBUTION = (
    "CC BY-SA 4.0, Code-with-Papers (codewithpapers.app/attribution) and the Papers-with-Code archive (pwc-archive, Hugging Face); "
    "not affiliated with Papers with Code"
)


class Answer(BaseModel):
    pass


class Query(Answer):
    asked: str
    resolved: str


class PaperRef(Answer):
    arxiv_id: str | None = None
    slug: str | None = Field(default=None, description="When there is no arXiv id")
    title: str


class PaperHead(PaperRef):
    date: str | None = None
    url_abs: str | None = None


class Sample(Answer):
    code_sha256: str = Field(description="Pass to get_code")
    entry: str = Field(description="Function name")
    repo: str
    repo_kind: str
    path: str
    language: str | None = None
    status: str
    contract_check: str | None = None
    verification_level: int | None = None
    licence: str | None = None
    inline_ok: bool = Field(description="false: pointer only, never show the code")


class ListedSample(Sample):
    paper: str = Field(description="Paper id")
    title: str


class SampleCounts(Answer):
    total: int
    by_status: dict[str, int]
    by_repo_kind: dict[str, int]
    pointer_only: int


class HarvestedSample(Sample):
    stored: bool | None = None


class HarvestedCode(Answer):
    query: Query
    paper: PaperHead
    counts: SampleCounts
    matched: int
    samples: list[HarvestedSample]
    next_cursor: str | None = None
    repos: list[str] | None = None  # only for a paper without samples: its first repositories, official first (the note counts them)
    note: str | None = None
    claim: str | None = None
    read_at: str | None = None
    attribution: str = ATTRIBUTION


class SampleList(Answer):
    statuses: list[str]
    total: int
    samples: list[ListedSample]
    next_cursor: str | None = None
    attribution: str = ATTRIBUTION


class SearchHit(PaperRef):
    year: int | None = None
    authors: list[str]
    n_authors: int
    tasks: list[str]
    samples: int
    best_status: str | None = None
    snippet: str | None = None


class SearchResult(Answer):
    query: str
    total: int
    hits: list[SearchHit]
    next_cursor: str | None = None


class CodeLink(Answer):
    repo: str
    official: bool
    framework: str | None = None
    mentioned_in_paper: bool | None = None
    reach: str | None = None
    licence: str | None = None


class PaperResult(Answer):
    task: str
    dataset: str
    model: str | None = None
    values: dict[str, str]
    rank: int | None = Field(default=None, description="By the board's first metric")
    of: int


class PaperDetail(PaperRef):
    query: Query
    authors: list[str]
    n_authors: int
    date: str | None = None
    proceeding: str | None = None
    abstract: str | None = None
    abstract_truncated: bool | None = None
    url_abs: str | None = None
    url_pdf: str | None = None
    tasks: list[str]
    methods: list[str]
    more_methods: int | None = None
    code_links: list[CodeLink]
    more_code_links: int | None = None
    samples: SampleCounts
    results: list[PaperResult] | None = Field(default=None, description="On the archive's leaderboards: get_leaderboard")
    more_results: int | None = None
    snapshot: str | None = None
    read_at: str | None = None
    attribution: str = ATTRIBUTION


class RepoPaper(PaperRef):
    is_official: bool
    framework: str | None = None
    samples: int
    statuses: dict[str, int]


class RepoPapers(Answer):
    query: Query
    total: int
    papers: list[RepoPaper]
    next_cursor: str | None = None


class CodeMatch(Sample):
    file_url: str
    papers: list[PaperRef]


class CodeAnswer(Answer):
    query: Query
    code: str | None = Field(default=None, description=f"The harvested module; sha256(code)[:{SHA_PREFIX_LENGTH}] == code_sha256")
    verified: bool | None = None
    source: Literal["store", "fetched"] | None = None
    requires: list[str] | None = Field(default=None, description="Non-stdlib imports")
    repo: str | None = None
    path: str | None = None
    licence: str | None = None
    withheld: str | None = Field(default=None, description="Why there is no code, e.g. licence_restricted: link only")
    matches: list[CodeMatch]
    note: str | None = None


class LoadSummary(Answer):
    files_seen: int
    files_read: int
    records_read: int
    records_indexed: int
    rejected: int
    warnings: int
    by_reason: dict[str, int]
    first_problems: list[str]


class CorpusStats(Answer):
    papers: int
    papers_with_samples: int
    by_source: dict[str, int] | None = None  # with the archive: records, archive (papers only it has), archive_rows_replaced
    samples: int
    by_status: dict[str, int]
    by_repo_kind: dict[str, int]
    by_licence: dict[str, int]
    by_language: dict[str, int]
    snapshots: list[str]
    read_at_range: list[str]
    load: LoadSummary
    ready: str | None = None  # what is not ready yet; absent once everything is
    attribution: str = ATTRIBUTION


# -- leaderboards (get_leaderboard, describe, get_paper's results) ------------------------------


class ResultPaper(PaperRef):
    date: str | None = None


class RowCode(Answer):
    repo: str
    official: bool
    more: int | None = Field(default=None, description="Other repositories")


class RowHarvest(Answer):
    samples: int
    best_status: str


class BoardRow(Answer):
    rank: int | None = Field(default=None, description="None: value missing or not a number")
    model: str | None = None
    values: list[str] = Field(description='As typed, in the order of metrics; "": not reported')
    paper: ResultPaper | None = None
    extra_data: bool | None = None
    code: RowCode | None = None
    harvest: RowHarvest | None = Field(default=None, description="Code with Papers samples; pass paper to get_harvested_code_for_paper")


class BoardBest(Answer):
    model: str | None = None
    value: str
    paper: str | None = None


class BoardSummary(Answer):
    dataset: str
    metrics: list[str]
    rows: int
    best: BoardBest | None = Field(default=None, description="By the first metric")


class Leaderboard(Answer):
    task: str
    dataset: str | None = None
    metric: str | None = None
    direction: str | None = None
    order: Literal["desc", "asc"] | None = None
    metrics: list[str] | None = None
    other_metrics: list[str] | None = Field(default=None, description="Not shown; pass as metric to rank by one")
    total: int
    rows: list[BoardRow] | None = None
    benchmarks: list[BoardSummary] | None = Field(default=None, description="Without dataset: pick one")
    subtasks: list[str] | None = None
    next_cursor: str | None = None
    note: str | None = None
    attribution: str = ARCHIVE_ATTRIBUTION


class BenchmarkRef(Answer):
    task: str | None = None
    dataset: str
    rows: int


class Description(Answer):
    kind: Literal["task", "method", "dataset"]
    name: str
    full_name: str | None = None
    description: str | None = None
    area: str | None = None
    parent: str | None = None
    subtasks: list[str] | None = None
    benchmarks: list[BenchmarkRef] | None = None
    more_benchmarks: int | None = None
    papers: int | None = None
    year: int | None = None
    paper: PaperRef | None = None
    collections: list[str] | None = None
    modalities: list[str] | None = None
    tasks: list[str] | None = None
    homepage: str | None = None
    attribution: str = ARCHIVE_ATTRIBUTION
