"""What each tool answers: lean pydantic models, dumped without nulls.

These are the output schemas the model sees, so every field earns its place. A field is left out of an answer
when it is empty or at its default (none, false, 0, or what its description says), and every field shared by a
group of samples (their repository, its kind, licence and language; their file) is said once, by the group.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from papercode.core.ids import SHA_PREFIX_LENGTH
from papercode.core.records import KNOWN_STATUSES

ATTRIBUTION = "CC BY-SA 4.0, Code-with-Papers (codewithpapers.app/attribution); not affiliated with Papers with Code"
ARCHIVE_ATTRIBUTION = "CC BY-SA 4.0, the Papers-with-Code archive (pwc-archive, Hugging Face); not affiliated with Papers with Code"
BOTH_ATTRIBUTION = (
    "CC BY-SA 4.0, Code-with-Papers (codewithpapers.app/attribution) and the Papers-with-Code archive (pwc-archive, Hugging Face); "
    "not affiliated with Papers with Code"
)

# What a sample's status says of its contract check and verification level: answers leave those out when they say
# just that (a record where they disagree with its status shows them).
STATUS_IMPLIES: dict[str, tuple[str | None, int | None]] = {
    "ran_honours": ("HONOURS", 1),
    "ran": (None, 1),
    "ran_draft_wrong": ("OUTPUT_MISDECLARED", 1),
    "ran_violates": ("VIOLATES", 1),
    "unverified": (None, 0),
}
if tuple(STATUS_IMPLIES) != KNOWN_STATUSES:
    raise ImportError("STATUS_IMPLIES must name every known status, in order")
DEFAULT_LANGUAGE = "python"  # every real sample's; answers leave it out
HARVEST_ELSEWHERE = "get_paper: date, links and claim (what statuses mean)"

_CHECK_TEXT = "Absent: as its status says"
_LEVEL_TEXT = "Absent: 0 if unverified, else 1"
_INLINE_TEXT = "false: pointer only, never show the code. Absent: true"
_LANGUAGE_TEXT = f'Absent: {DEFAULT_LANGUAGE}; "": not recorded'


class Answer(BaseModel):
    pass


class Query(Answer):
    asked: str
    resolved: str | None = Field(default=None, description="Absent: as asked")


class PaperQuery(Query):
    by_title: bool | None = Field(default=None, description="true: asked is its title")


class PaperRef(Answer):
    arxiv_id: str | None = None
    slug: str | None = Field(default=None, description="When there is no arXiv id")
    title: str


class SampleCounts(Answer):
    total: int
    by_status: dict[str, int]
    by_repo_kind: dict[str, int]
    pointer_only: int | None = Field(default=None, description="Absent: 0")


class GroupedSample(Answer):
    # A sample in its file's list: what is its own.
    code_sha256: str = Field(description="Pass to get_code")
    entry: str = Field(description="Function name")
    status: str | None = Field(default=None, description="Absent: the listing's one status")
    contract_check: str | None = Field(default=None, description=_CHECK_TEXT)
    verification_level: int | None = Field(default=None, description=_LEVEL_TEXT)
    stored: bool | None = Field(default=None, description="true: get_code has its code ready")


class RepoSamples(Answer):
    # Samples of one repository, by file: every field here is each sample's.
    repo: str
    repo_kind: str
    language: str | None = Field(default=None, description=_LANGUAGE_TEXT)
    licence: str | None = None
    inline_ok: bool | None = Field(default=None, description=_INLINE_TEXT)
    files: dict[str, list[GroupedSample]] = Field(description="path: samples")


class HarvestedCode(Answer):
    query: PaperQuery
    paper: PaperRef
    counts: SampleCounts
    matched: int | None = Field(default=None, description="Absent: counts.total")
    samples: list[RepoSamples]
    next_cursor: str | None = None
    repos: list[str] | None = None  # only for a paper without samples: its first repositories, official first (the note counts them)
    note: str | None = None
    elsewhere: str = HARVEST_ELSEWHERE
    read_at: str | None = None
    attribution: str = ATTRIBUTION


class ListedPaper(Answer):
    paper: str = Field(description="Paper id")
    title: str
    samples: list[RepoSamples]


class SampleList(Answer):
    statuses: list[str]
    total: int
    papers: list[ListedPaper]
    next_cursor: str | None = None
    attribution: str = ATTRIBUTION


class PaperHit(PaperRef):
    year: int | None = None
    authors: list[str]
    n_authors: int
    tasks: list[str]
    samples: int
    best_status: str | None = None
    snippet: str | None = None


class SearchResult(Answer):
    query: str
    match: Literal["any"] | None = Field(default=None, description="any: no paper has all the words. Absent: all")
    unmatched: list[str] | None = Field(default=None, description="Words no paper has")
    total: int
    hits: list[PaperHit]
    next_cursor: str | None = None
    note: str | None = None  # with no hits: why, and the call to make next


class RepoLink(Answer):
    repo: str
    official: bool | None = Field(default=None, description="Absent: false")
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


def _one_or_list(one: str, many: str) -> ConfigDict:
    """The schema of an answer to one item or to a list of them: it has `one` (one item), `many` (a list: its
    entries are answers of this same shape) or `error` (an entry of the list that found nothing)."""
    return ConfigDict(json_schema_extra={"anyOf": [{"required": [one]}, {"required": [many]}, {"required": ["error"]}]})


def _check_one_or_list(answer: Answer, one: str, many: str) -> None:
    if sum(getattr(answer, name) is not None for name in (one, many, "error")) != 1:
        raise ValueError(f"an answer has one of {one} (one item), {many} (a list) or error (an entry that found nothing)")


_ERROR_TEXT = "not_found, ambiguous or invalid_argument; note: what next"


class PaperAnswer(Answer):
    # One paper (`title` and what follows it), or a list of ids (`papers`: one entry each, in order, in brief: id,
    # title, date, first authors, first code links, sample counts; or `asked` and `error`).
    model_config = _one_or_list("title", "papers")

    arxiv_id: str | None = None
    slug: str | None = Field(default=None, description="When there is no arXiv id")
    title: str | None = None
    query: PaperQuery | None = None
    authors: list[str] | None = None
    n_authors: int | None = None
    date: str | None = None
    proceeding: str | None = None
    abstract: str | None = None
    abstract_truncated: bool | None = None
    url_abs: str | None = None
    url_pdf: str | None = None
    tasks: list[str] | None = None
    methods: list[str] | None = None
    more_methods: int | None = None
    code_links: list[RepoLink] | None = None
    more_code_links: int | None = None
    samples: SampleCounts | None = Field(default=None, description="Absent: none")
    claim: str | None = Field(default=None, description="What the statuses mean")
    results: list[PaperResult] | None = Field(default=None, description="On leaderboards")
    more_results: int | None = None
    snapshot: str | None = None
    read_at: str | None = None
    papers: list[PaperAnswer] | None = Field(default=None, description="Each id's paper in brief, in order")
    asked: str | None = None
    error: str | None = Field(default=None, description=_ERROR_TEXT)
    left_out: int | None = Field(default=None, description="Ids at the end not answered (size bound)")
    note: str | None = None
    attribution: str | None = None

    @model_validator(mode="after")
    def _either(self) -> PaperAnswer:
        _check_one_or_list(self, "title", "papers")
        return self


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


class CodeMatch(Answer):
    # A sample with the code asked for (its code_sha256 is the query's).
    entry: str = Field(description="Function name")
    repo: str
    repo_kind: str
    path: str
    language: str | None = Field(default=None, description=_LANGUAGE_TEXT)
    status: str
    contract_check: str | None = Field(default=None, description=_CHECK_TEXT)
    verification_level: int | None = Field(default=None, description=_LEVEL_TEXT)
    licence: str | None = None
    inline_ok: bool | None = Field(default=None, description=_INLINE_TEXT)
    file_url: str
    papers: list[PaperRef]


class CodeAnswer(Answer):
    # One hash (`query` and what follows it), or a list of them (`codes`: each hash's answer, in order; or `asked`
    # and `error`).
    model_config = _one_or_list("query", "codes")

    query: Query | None = None
    code: str | None = Field(default=None, description=f"The harvested module; sha256(code)[:{SHA_PREFIX_LENGTH}] == code_sha256")
    verified: bool | None = None
    source: Literal["store", "fetched"] | None = None
    requires: list[str] | None = Field(default=None, description="Non-stdlib imports")
    repo: str | None = None
    path: str | None = None
    licence: str | None = None
    withheld: str | None = Field(default=None, description="Why there is no code, e.g. licence_restricted: link only")
    matches: list[CodeMatch] | None = None
    codes: list[CodeAnswer] | None = Field(default=None, description="Each hash's answer, in order")
    asked: str | None = None
    error: str | None = Field(default=None, description=_ERROR_TEXT)
    left_out: int | None = Field(default=None, description="Hashes at the end not answered (size bound)")
    note: str | None = None

    @model_validator(mode="after")
    def _either(self) -> CodeAnswer:
        _check_one_or_list(self, "query", "codes")
        return self


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
    archive: str | None = None  # why the archive asked for is not served, and what to run; absent when it is (or was not asked for)
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
    rank: int | None = Field(default=None, description="Absent: no number")
    model: str | None = None
    values: list[str] = Field(description='As typed, in the order of metrics; "": not reported')
    paper: ResultPaper | None = None
    extra_data: bool | None = None
    code: RowCode | None = None
    harvest: RowHarvest | None = Field(default=None, description="The paper's harvested samples")


class BoardSummary(Answer):
    dataset: str
    metrics: list[str]
    rows: int
    best: str | None = Field(default=None, description="By the first metric: value, model (paper)")


class Leaderboard(Answer):
    task: str
    dataset: str | None = None
    metric: str | None = None
    direction: str | None = None
    order: Literal["desc", "asc"] | None = None
    metrics: list[str] | None = None
    other_metrics: list[str] | None = Field(default=None, description="Not shown: rank by one with metric")
    total: int
    rows: list[BoardRow] | None = None
    benchmarks: list[BoardSummary] | None = None
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
