"""Every question papercode answers, as plain functions of a `Corpus`.

This is the whole behaviour of the tools, resources and prompts, free of MCP: each function
validates its arguments, asks the index, and shapes an answer from `models.py`. Bad input
raises `QueryError` with a machine code and the next step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, ParamSpec, TypedDict, TypeVar

from papercode.core.errors import QueryError
from papercode.core.ids import SHA_PREFIX_LENGTH, normalize_hex, normalize_repo, parse_arxiv_id, parse_slug
from papercode.core.load_report import Problem, relative_to_roots, shown_path
from papercode.core.records import MAX_WORD_CHARS, REPO_KINDS
from papercode.corpus.stages import Corpus
from papercode.index.columns import CodeLinkRow, PaperColumns
from papercode.index.paper_index import PaperIndex, PaperRow, SampleRow, task_key
from papercode.index.search import Ranking, SearchFilters, best_status, paper_texts
from papercode.verified.materialize import SampleOutcome

from . import leaderboards, models, prompts

MAX_LIMIT = 100
MAX_ID_CHARS = 300
MAX_QUERY_CHARS = 1_000
MAX_YEAR = 9999
MIN_SHA_PREFIX = 8
MAX_STATUSES = 20  # a list argument's bound: there are five statuses, and a few unknown ones at most
MAX_STATUS_CHARS = MAX_WORD_CHARS  # a status longer than the records allow cannot match
MAX_SHA_CHARS = 64  # a whole sha256 in hex: anything longer is not a code hash
AUTHORS_SHOWN = 10
METHODS_SHOWN = 10
CODE_LINKS_SHOWN = 10
ABSTRACT_CHARS = 2_000
TITLE_CHARS = 300  # real titles are far shorter; a hostile one must not flood every list
AUTHOR_CHARS = 100
SEARCH_AUTHORS = 3
SEARCH_TASKS = 5
FIRST_PROBLEMS = 5
LICENCES_SHOWN = 20

Params = ParamSpec("Params")
AnswerModel = TypeVar("AnswerModel", bound=models.Answer)

_SEARCH_NEXT = "use search_papers with words from the title"
_REPO_NEXT = "pass owner/name or a repository URL (GitHub, GitLab, Bitbucket or Hugging Face)"


# -- argument checks -----------------------------------------------------------------------


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(
            "invalid_argument", f"limit must be 1..{MAX_LIMIT}, got {limit}", f"call again with a limit between 1 and {MAX_LIMIT}"
        )
    return limit


def resolve_paper(corpus: Corpus, asked: str) -> tuple[PaperRow, dict[str, str]]:
    """The one id resolver: arXiv ids in every pasted form, and Papers-with-Code slugs. With the paper, the
    answer's `query` (`models.Query`, as shown)."""
    text = asked.strip()
    if not text or len(text) > MAX_ID_CHARS:
        raise QueryError(
            "invalid_argument",
            "paper id is empty" if not text else f"paper id is over {MAX_ID_CHARS} characters",
            "pass an arXiv id like 1902.04094 or a Papers-with-Code slug",
        )
    index = corpus.index
    arxiv = parse_arxiv_id(text)
    if arxiv is not None:
        paper = index.paper_by_arxiv(arxiv.canonical)
        if paper is None:
            raise QueryError(
                "not_found", f"no paper with arXiv id {arxiv.canonical} in this corpus of {len(index.papers):,} papers", _SEARCH_NEXT
            )
        return paper, {"asked": asked, "resolved": arxiv.canonical}
    slug = parse_slug(text)
    if slug is None:
        raise QueryError(
            "invalid_argument",
            f"{_quote(text)} is not an arXiv id or a paper slug",
            "pass an id like 1902.04094, arXiv:1902.04094v2, an arxiv.org URL or /paper/<slug>; or " + _SEARCH_NEXT,
        )
    paper = index.paper_by_slug(slug)
    if paper is None:
        raise QueryError("not_found", f"no paper with slug {slug} in this corpus of {len(index.papers):,} papers", _SEARCH_NEXT)
    return paper, {"asked": asked, "resolved": paper.key}


def resolve_statuses(corpus: Corpus, status: str | Sequence[str]) -> list[str]:
    """One status or several (a list, or comma-separated); statuses seen in the corpus count."""
    raw = status.split(",", MAX_STATUSES) if isinstance(status, str) else list(status[: MAX_STATUSES + 1])
    if len(raw) > MAX_STATUSES or any(isinstance(value, str) and len(value) > MAX_STATUS_CHARS for value in raw):
        raise QueryError(
            "invalid_argument",
            f"status takes at most {MAX_STATUSES} values of at most {MAX_STATUS_CHARS} characters",
            f"call again with one or more of: {', '.join(corpus.index.statuses())}",
        )
    wanted = [value.strip().lower() for value in raw if isinstance(value, str) and value.strip()]
    valid = corpus.index.statuses()
    unknown = [value for value in wanted if value not in valid]
    if not wanted or unknown:
        what = f"unknown status {_quote(', '.join(unknown))}" if unknown else "no status given"
        raise QueryError("invalid_argument", f"{what}; valid: {', '.join(valid)}", "call again with one or more of the valid statuses")
    return list(dict.fromkeys(wanted))


def resolve_repo(asked: str, longest: int | None = None) -> str:
    """The repository key (`core.ids.normalize_repo`) of a name or URL (of at most `longest` characters)."""
    name = normalize_repo(asked) if longest is None or len(asked) <= longest else None
    if name is None:
        raise QueryError("invalid_argument", f"{_quote(asked)} is not a repository", _REPO_NEXT)
    return name


def check_repo_kind(corpus: Corpus, repo_kind: str | None) -> str | None:
    if repo_kind is None:
        return None
    valid = sorted(set(REPO_KINDS) | corpus.index.repo_kind_counts.keys())
    value = repo_kind.strip().lower()
    if value not in valid:
        raise QueryError(
            "invalid_argument",
            f"unknown repo_kind {_quote(repo_kind)}; valid: {', '.join(valid)}",
            "call again with a valid repo_kind, or without it",
        )
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _quote(text: str, most: int = 60) -> str:
    return repr(text if len(text) <= most else text[:most] + "…")


def full_text(corpus: Corpus) -> Ranking:
    """The corpus's search engine (and abstracts); `loading` while it is still being built."""
    if corpus.search is None:
        raise QueryError("loading", "the full-text index is still being built", "call again in a few seconds")
    return corpus.search


# -- shaping -------------------------------------------------------------------------------


def shorten(text: str, most: int) -> str:
    """Display text cut to `most` characters, marked with an ellipsis when cut."""
    return text if len(text) <= most else text[: most - 1] + "…"


def _authors(authors: list[str], most: int) -> list[str]:
    return [shorten(name, AUTHOR_CHARS) for name in authors[:most]]


def _paper_ref(paper: PaperRow) -> PaperRefFields:
    return {"arxiv_id": paper.arxiv_id, "slug": None if paper.arxiv_id else paper.slug, "title": shorten(paper.title, TITLE_CHARS)}


class PaperRefFields(TypedDict):
    arxiv_id: str | None
    slug: str | None
    title: str


def shown(**fields: Any) -> dict[str, Any]:
    """An answer (or a part of one) as the model receives it: the fields given, in their answer model's order,
    those that are None left out.

    The three keyed tools build their answers this way, once, instead of building the answer models and dumping
    them (`model_dump(mode="json", exclude_none=True)`), which cost them a third of their time; each has a model
    twin (`harvested_code` for `harvested_code_shown`, ...) that validates this into the answer model, and
    tests/test_fast_paths.py proves the two agree, byte for byte, over every paper and listing page of the test
    corpora. The SDK validates what a tool answers against its output model on every call, too."""
    return {name: value for name, value in fields.items() if value is not None}


# What an answer shows of a sample: exactly the fields of the `Sample` answer model, which `SampleColumns.shown`
# reads (and a `SampleRow` holds first) in the same order, so they are zipped with their names.
_SAMPLE_FIELDS = tuple(models.Sample.model_fields)
if SampleRow._fields[: len(_SAMPLE_FIELDS)] != _SAMPLE_FIELDS:
    raise ImportError(f"SampleRow must begin with the fields of models.Sample, in order: {_SAMPLE_FIELDS}")


def _sample_fields(row: SampleRow) -> dict[str, Any]:
    return dict(zip(_SAMPLE_FIELDS, row, strict=False))  # a row's other fields (paper, file_url) come after


def _shown_sample(values: Sequence[Any]) -> dict[str, Any]:
    """A sample's `Sample` fields (`SampleColumns.shown`) as shown: named, the ones it lacks left out."""
    return {name: value for name, value in zip(_SAMPLE_FIELDS, values, strict=True) if value is not None}


def sample_counts(corpus: Corpus, paper: PaperRow) -> dict[str, Any]:
    """A paper's samples counted from the index's columns (get_paper's summary and get_harvested_code_for_paper's
    counts; `models.SampleCounts`, as shown): no sample row is built for it."""
    return corpus.index.samples.counts(paper.samples)._asdict()


def _page_cursor(corpus: Corpus, query: Mapping[str, object], offset: int, shown: int, total: int) -> str | None:
    end = offset + shown
    return corpus.pager.encode(query, end) if end < total else None


# -- tools ---------------------------------------------------------------------------------


def harvested_code_shown(
    corpus: Corpus,
    arxiv_id: str,
    status: str | Sequence[str] | None = None,
    repo_kind: str | None = None,
    limit: int = 25,
    cursor: str | None = None,
    stored: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """One page of a paper's samples (`models.HarvestedCode`, as shown); `stored` says which codes the verified
    store holds."""
    paper, query = resolve_paper(corpus, arxiv_id)
    statuses = resolve_statuses(corpus, status) if status else None
    kind = check_repo_kind(corpus, repo_kind)
    check_limit(limit)
    page_query = {"tool": "harvested", "paper": paper.key, "status": statuses, "repo_kind": kind, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    columns = corpus.index.samples
    matching = columns.select(paper.samples, statuses, kind)
    page = matching[offset : offset + limit]
    note = repos = None
    if not paper.samples:
        repos, note = _repositories_instead(paper)
    elif not matching:
        note = "no samples match these filters; counts shows what the paper has"
    return shown(
        query=query,
        paper=shown(**_paper_ref(paper), date=paper.date, url_abs=paper.url_abs),
        counts=sample_counts(corpus, paper),
        matched=len(matching),
        samples=[_harvested_sample(values, stored) for values in columns.shown(page)],
        next_cursor=_page_cursor(corpus, page_query, offset, len(page), len(matching)),
        repos=repos,
        note=note,
        claim=paper.claim,
        read_at=paper.read_at,
        attribution=attribution(corpus, paper),
    )


def _harvested_sample(values: Sequence[Any], stored: Callable[[str], bool] | None) -> dict[str, Any]:
    sample = _shown_sample(values)
    if stored is not None and sample["inline_ok"] and stored(sample["code_sha256"]):
        sample["stored"] = True
    return sample


def samples_by_status_shown(
    corpus: Corpus,
    status: str | Sequence[str],
    repo_kind: str | None = None,
    language: str | None = None,
    licence: str | None = None,
    inline_only: bool = False,
    limit: int = 25,
    cursor: str | None = None,
) -> dict[str, Any]:
    """One page of the samples with these statuses across the corpus, each with its paper (`models.SampleList`,
    as shown)."""
    statuses = resolve_statuses(corpus, status)
    kind = check_repo_kind(corpus, repo_kind)
    check_limit(limit)
    language = language.strip() if language else None
    licence = licence.strip() if licence else None
    page_query = {
        "tool": "by_status",
        "status": statuses,
        "repo_kind": kind,
        "language": language,
        "licence": licence,
        "inline_only": inline_only,
        "limit": limit,
    }
    offset = corpus.pager.decode(page_query, cursor)
    total, page = corpus.index.list_sample_ids(statuses, kind, language, licence, inline_only, offset, limit)
    columns, papers = corpus.index.samples, corpus.index.papers
    return shown(
        statuses=statuses,
        total=total,
        samples=[_listed_sample(values, papers, columns.paper[i]) for i, values in zip(page, columns.shown(page), strict=True)],
        next_cursor=_page_cursor(corpus, page_query, offset, len(page), total),
        attribution=models.ATTRIBUTION,
    )


def _listed_sample(values: Sequence[Any], papers: PaperColumns, paper: int) -> dict[str, Any]:
    sample = _shown_sample(values)
    sample["paper"] = papers.key(paper)
    sample["title"] = shorten(papers.title[paper], TITLE_CHARS)
    return sample


def search_papers(
    corpus: Corpus,
    query: str = "",
    filters: SearchFilters | None = None,
    limit: int = 10,
    cursor: str | None = None,
) -> models.SearchResult:
    filters = filters or SearchFilters()
    check_limit(limit)
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError("invalid_argument", f"query is over {MAX_QUERY_CHARS} characters", "search with a few distinctive words")
    if filters.status:
        filters = replace(filters, status=",".join(resolve_statuses(corpus, filters.status)))
    for name, text in (("query", query), ("task", filters.task), ("method", filters.method), ("framework", filters.framework)):
        if text is not None and not text.isascii() and not _encodable(text):  # lone surrogates: only in-process, never on the wire
            raise QueryError("invalid_argument", f"{name} is not valid Unicode text", f"call again with {name} as plain text")
    for name, year in (("year_from", filters.year_from), ("year_to", filters.year_to)):
        if year is not None and not 0 <= year <= MAX_YEAR:  # the year filter holds 4 digits
            raise QueryError("invalid_argument", f"{name} must be a year between 0 and {MAX_YEAR}", f"call again with a 4-digit {name}")
    if filters.year_from is not None and filters.year_to is not None and filters.year_from > filters.year_to:
        raise QueryError("invalid_argument", f"year_from {filters.year_from} is after year_to {filters.year_to}", "swap them or drop one")
    page_query = {"tool": "search", "query": " ".join(query.split()), "filters": filters, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    total, hits = full_text(corpus).search(query, filters, offset, limit, paper_texts(corpus.index))
    index = corpus.index
    results = []
    for hit in hits:
        paper = index.papers[hit.paper]
        details = paper.details()
        results.append(
            models.SearchHit(
                **_paper_ref(paper),
                year=paper.year,
                authors=_authors(details.authors, SEARCH_AUTHORS),
                n_authors=paper.n_authors,
                tasks=merged_tasks(details.tasks)[:SEARCH_TASKS],
                samples=len(paper.samples),
                best_status=best_status(index, paper),
                snippet=hit.snippet,
            )
        )
    return models.SearchResult(
        query=query, total=total, hits=results, next_cursor=_page_cursor(corpus, page_query, offset, len(results), total)
    )


def paper_detail_shown(corpus: Corpus, paper_id: str) -> dict[str, Any]:
    """One paper's metadata, abstract, code links and sample counts (`models.PaperDetail`, as shown)."""
    paper, query = resolve_paper(corpus, paper_id)
    details = paper.details()
    abstract = full_text(corpus).abstract(paper.ordinal)
    truncated = abstract is not None and len(abstract) > ABSTRACT_CHARS
    results, more_results = leaderboards.paper_results(corpus, paper)
    return shown(
        **_paper_ref(paper),
        query=query,
        authors=_authors(details.authors, AUTHORS_SHOWN),
        n_authors=paper.n_authors,
        date=paper.date,
        proceeding=details.proceeding,
        abstract=abstract[:ABSTRACT_CHARS] if abstract and truncated else abstract,
        abstract_truncated=True if truncated else None,
        url_abs=paper.url_abs,
        url_pdf=details.url_pdf,
        tasks=merged_tasks(details.tasks),
        methods=details.methods[:METHODS_SHOWN],
        more_methods=_rest(len(details.methods), METHODS_SHOWN),
        code_links=code_links(details.code_links),
        more_code_links=_rest(len(details.code_links), CODE_LINKS_SHOWN),
        samples=sample_counts(corpus, paper),
        results=results,
        more_results=more_results,
        snapshot=paper.snapshot,
        read_at=paper.read_at,
        attribution=attribution(corpus, paper),
    )


def _as_model(model: type[AnswerModel], shown: Callable[Params, dict[str, Any]]) -> Callable[Params, AnswerModel]:
    """The twin of a tool's shown answer that returns its answer model: the shown answer, validated."""

    def answer(*args: Params.args, **kwargs: Params.kwargs) -> AnswerModel:
        return model.model_validate(shown(*args, **kwargs))

    answer.__name__ = answer.__qualname__ = shown.__name__.removesuffix("_shown")
    answer.__doc__ = f"`{shown.__name__}`, as its answer model (`models.{model.__name__}`)."
    return answer


harvested_code = _as_model(models.HarvestedCode, harvested_code_shown)
samples_by_status = _as_model(models.SampleList, samples_by_status_shown)
paper_detail = _as_model(models.PaperDetail, paper_detail_shown)


def _repositories_instead(paper: PaperRow) -> tuple[list[str] | None, str]:
    """For a paper without samples: its first repositories (official first) and a note that counts them."""
    links = paper.details().code_links  # stored official first
    if not links:
        return None, "no harvested code samples and no known repositories for this paper. Next: search_papers for related work"
    shown = links[:CODE_LINKS_SHOWN]
    official = sum(link.is_official for link in links)
    which = f"the first {official} official" if official else "none marked official"
    rest = f" ({len(links) - len(shown)} more not listed)" if len(links) > len(shown) else ""
    note = f"no harvested code samples for this paper; repos: {len(shown)} of its {len(links)} repositories, {which}{rest}. "
    return [link.repo_url for link in shown], note + "Next: read a repository's code, or search_papers for related papers with samples"


def code_links(links: Sequence[CodeLinkRow]) -> list[dict[str, Any]]:
    """The first of a paper's code links as answers show them (`models.CodeLink`; they are stored official first)."""
    return [
        shown(
            repo=link.repo_url,
            official=link.is_official,
            framework=link.framework,
            mentioned_in_paper=link.mentioned_in_paper,
            reach=link.reach_status,
            licence=link.licence,
        )
        for link in links[:CODE_LINKS_SHOWN]
    ]


def attribution(corpus: Corpus, paper: PaperRow) -> str:
    """Whose material an answer about `paper` carries: its Code-with-Papers record, or the archive's row."""
    return models.ARCHIVE_ATTRIBUTION if corpus.index.sources.from_archive(paper.ordinal) else models.ATTRIBUTION


def _rest(count: int, shown: int) -> int | None:
    return count - shown if count > shown else None


def merged_tasks(tasks: list[tuple[str, str]]) -> list[str]:
    names: dict[str, str] = {}
    for slug, name in tasks:
        names.setdefault(task_key(slug), name)
    return list(names.values())


def papers_for_repo(corpus: Corpus, repo: str, limit: int = 25, cursor: str | None = None) -> models.RepoPapers:
    check_limit(limit)
    name = resolve_repo(repo, longest=MAX_ID_CHARS)
    ordered = corpus.index.papers_for_repo(name)
    query = models.Query(asked=repo, resolved=name)
    if ordered is None:
        raise QueryError(
            "not_found", f"no paper in this corpus links to or has samples from {name}", "check the spelling, or " + _SEARCH_NEXT
        )
    page_query = {"tool": "repo", "repo": name, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    page = ordered[offset : offset + limit]
    papers = []
    for ordinal in page:
        paper = corpus.index.papers[ordinal]
        link = next((link for link in paper.details().code_links if link.repo == name), None)
        samples = [row for row in corpus.index.samples_of(paper) if row.repo.lower() == name]
        papers.append(
            models.RepoPaper(
                **_paper_ref(paper),
                is_official=(link.is_official if link else False) or any(row.is_official for row in samples),
                framework=link.framework if link else None,
                samples=len(samples),
                statuses=dict(Counter(row.status for row in samples)),
            )
        )
    return models.RepoPapers(
        query=query, total=len(ordered), papers=papers, next_cursor=_page_cursor(corpus, page_query, offset, len(page), len(ordered))
    )


@dataclass(frozen=True, slots=True)
class FoundCode:
    """The samples one code hash names: what `get_code` answers about."""

    query: models.Query
    sha: str
    rows: list[SampleRow]


def find_code(corpus: Corpus, code_sha256: str) -> FoundCode:
    """The samples with this code hash (`SHA_PREFIX_LENGTH` hex characters, or a unique prefix of `MIN_SHA_PREFIX`+)."""
    text = code_sha256.strip()
    prefix = normalize_hex(text) if len(text) <= MAX_SHA_CHARS else None
    if prefix is None:
        raise QueryError(
            "invalid_argument",
            f"{_quote(text)} is not a hex code hash",
            f"pass the code_sha256 of a sample ({SHA_PREFIX_LENGTH} hex characters) as a string: a bare number loses digits",
        )
    prefix = prefix[:SHA_PREFIX_LENGTH]
    if len(prefix) < MIN_SHA_PREFIX:
        raise QueryError(
            "invalid_argument",
            f"hash prefix {prefix} is shorter than {MIN_SHA_PREFIX} characters",
            f"pass the full {SHA_PREFIX_LENGTH}-character code_sha256",
        )
    candidates = corpus.index.shas_with_prefix(prefix, most=11)
    if not candidates:
        raise QueryError(
            "not_found",
            f"no sample with code hash {prefix}",
            "take a code_sha256 from get_harvested_code_for_paper or list_samples_by_status",
        )
    if len(candidates) > 1:
        listed = ", ".join(candidates[:10]) + (" …" if len(candidates) > 10 else "")
        raise QueryError(
            "ambiguous",
            f"{prefix} matches several samples: {listed}",
            f"call again with one full {SHA_PREFIX_LENGTH}-character code_sha256",
        )
    sha = candidates[0]
    index = corpus.index
    rows = index.samples.rows(index.sample_ids_for_sha(sha))
    return FoundCode(models.Query(asked=code_sha256, resolved=sha), sha, rows)


# What the agent should do when code is withheld, by reason.
_WITHHELD_NEXT = {
    "licence_restricted": "do not copy or reproduce this code; link to file_url",
    "not_materialized": "read it at file_url (it may have changed since the harvest), or ask the operator to run papercode materialize",
    "fetch_failed": "call again in a minute, or read it at file_url (unverified)",
}
_UNVERIFIABLE_NEXT = "the code at file_url is not provably the harvested code; read it there only as unverified"


def code_answer(corpus: Corpus, found: FoundCode, obtained: SampleOutcome) -> models.CodeAnswer:
    """get_code's answer: the verified code, or the samples and why their code is withheld."""
    index = corpus.index
    matches = []
    for row in _distinct_samples(found.rows):
        carriers = [
            models.PaperRef(**_paper_ref(index.papers[r.paper]))
            for r in found.rows
            if (r.repo, r.path, r.entry) == (row.repo, row.path, row.entry)
        ]
        matches.append(models.CodeMatch(**_sample_fields(row), file_url=row.file_url, papers=carriers))
    if obtained.verified:
        origin = next(row for row in found.rows if (row.repo, row.path) == (obtained.repo, obtained.path))
        return models.CodeAnswer(
            query=found.query,
            code=obtained.code,
            verified=True,
            source="store" if obtained.source == "store" else "fetched",
            requires=list(obtained.requires),
            repo=origin.repo,
            path=origin.path,
            licence=origin.licence,
            matches=matches,
        )
    reason = obtained.outcome
    next_step = _WITHHELD_NEXT.get(reason, _UNVERIFIABLE_NEXT)
    return models.CodeAnswer(
        query=found.query, withheld=reason, matches=matches, note=f"{reason}: {obtained.reason.rstrip('.')}. Next: {next_step}."
    )


def _distinct_samples(rows: list[SampleRow]) -> list[SampleRow]:
    seen: dict[tuple[str, str, str], SampleRow] = {}
    for row in rows:
        seen.setdefault((row.repo, row.path, row.entry), row)
    return list(seen.values())


def corpus_stats(corpus: Corpus, code_problems: Sequence[Problem] = (), ready: str | None = None) -> models.CorpusStats:
    index = corpus.index
    licences = index.licence_counts
    top = dict(licences.most_common(LICENCES_SHOWN))
    if len(licences) > LICENCES_SHOWN:
        top["(other)"] = sum(licences.values()) - sum(top.values())
    return models.CorpusStats(
        papers=len(index.papers),
        papers_with_samples=index.papers_with_samples,
        samples=len(index.samples),
        by_status=dict(index.status_counts.most_common()),
        by_repo_kind=dict(index.repo_kind_counts.most_common()),
        by_licence=top,
        by_language=dict(index.language_counts.most_common()),
        by_source=by_source(index),
        snapshots=sorted(index.snapshots),
        read_at_range=list(index.read_at_range or ()),
        load=load_summary(corpus, code_problems),
        ready=ready,
        attribution=models.ATTRIBUTION if by_source(index) is None else models.BOTH_ATTRIBUTION,
    )


def by_source(index: PaperIndex) -> dict[str, int] | None:
    """Papers by where they came from, when the archive is served beneath the records (else None)."""
    sources = index.sources
    archive_only = len(index.papers) - sources.archive_start  # the papers before it came from the records
    if not archive_only and not sources.archive_replaced:
        return None
    return {"records": sources.archive_start, "archive": archive_only, "archive_rows_replaced": sources.archive_replaced}


def shown_problems(corpus: Corpus, code_problems: Sequence[Problem], most: int) -> list[Problem]:
    """The first `most` load problems as answers show them: record paths relative to their records
    directory (in reasons too) and code store files by name, so no answer reveals where the server keeps its files."""
    roots = corpus.index.report.roots
    records = corpus.index.report.problems[:most]
    shown = [replace(problem, path=shown_path(problem.path, roots), reason=relative_to_roots(problem.reason, roots)) for problem in records]
    return shown + [replace(problem, path=f"code store: {PurePath(problem.path).name}") for problem in code_problems[: most - len(shown)]]


def load_summary(corpus: Corpus, code_problems: Sequence[Problem] = ()) -> models.LoadSummary:
    """The load report's counts; bad files found in the code store count as rejected too."""
    report = corpus.index.report
    return models.LoadSummary(
        files_seen=report.files_seen,
        files_read=report.files_read,
        records_read=report.records_read,
        records_indexed=report.records_indexed,
        rejected=report.rejected + len(code_problems),
        warnings=report.warnings,
        by_reason=dict(Counter(problem.code for problem in [*report.problems, *code_problems])),
        first_problems=[f"{p.severity} {p.code} {p.where()}: {p.reason}" for p in shown_problems(corpus, code_problems, FIRST_PROBLEMS)],
    )


def load_notice(corpus: Corpus, code_problems: Sequence[Problem] = ()) -> tuple[str, str] | None:
    """(level, text) telling a client that loading found problems; None when it found none."""
    summary = load_summary(corpus, code_problems)
    if not summary.rejected and not summary.warnings:
        return None
    return (
        "warning",
        f"loaded {summary.records_indexed:,} papers; {summary.rejected:,} records, samples or files rejected and "
        f"{summary.warnings:,} warnings: read corpus://load-report",
    )


LOAD_REPORT_PROBLEMS = 500


def load_report(corpus: Corpus, code_problems: Sequence[Problem] = ()) -> dict[str, object]:
    """The full load report (problems capped, with the count of the rest)."""
    shown = [
        {"severity": p.severity, "code": p.code, "path": p.path, "line": p.line, "reason": p.reason}
        for p in shown_problems(corpus, code_problems, LOAD_REPORT_PROBLEMS)
    ]
    return {
        "summary": load_summary(corpus, code_problems).model_dump(exclude={"first_problems"}),
        "problems": [{key: value for key, value in item.items() if value is not None} for item in shown],
        "more_problems": max(0, len(corpus.index.report.problems) + len(code_problems) - LOAD_REPORT_PROBLEMS),
    }


# -- prompts and completions ---------------------------------------------------------------


def implement_prompt(corpus: Corpus, arxiv_id: str) -> str:
    paper, _ = resolve_paper(corpus, arxiv_id)
    abstract = full_text(corpus).abstract(paper.ordinal)
    samples = corpus.index.samples_of(paper)
    return prompts.implement(
        shorten(paper.title, TITLE_CHARS),
        paper.key,
        abstract[:ABSTRACT_CHARS] if abstract else None,
        samples,
        paper.claim,
        attribution(corpus, paper),
    )


def compare_prompt(corpus: Corpus, arxiv_id: str) -> str:
    paper, _ = resolve_paper(corpus, arxiv_id)
    samples = corpus.index.samples_of(paper)
    return prompts.compare(
        shorten(paper.title, TITLE_CHARS), paper.key, samples, paper.details().code_links, CODE_LINKS_SHOWN, attribution(corpus, paper)
    )


COMPLETIONS = 20


def complete(corpus: Corpus, argument: str, value: str) -> list[str] | None:
    """Completion values for an argument by prefix; None for arguments we do not complete."""
    text = value.strip()
    if argument in ("arxiv_id", "paper"):
        parsed = parse_arxiv_id(text)
        prefix = parsed.canonical if parsed else _strip_arxiv_prefix(text)
        return corpus.index.arxiv_ids_with_prefix(prefix, COMPLETIONS)
    if argument == "status":
        return [status for status in corpus.index.statuses() if status.startswith(text.lower())]
    if argument == "code_sha256":
        if not text:
            return corpus.index.shas_with_prefix("", COMPLETIONS)
        hex_prefix = normalize_hex(text)
        return [] if hex_prefix is None else corpus.index.shas_with_prefix(hex_prefix[:SHA_PREFIX_LENGTH], COMPLETIONS)
    return None


def _strip_arxiv_prefix(text: str) -> str:
    return text[6:].strip() if text.lower().startswith("arxiv:") else text
