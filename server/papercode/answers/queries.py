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

import orjson

from papercode.core.errors import QueryError
from papercode.core.ids import SHA_PREFIX_LENGTH, normalize_hex, normalize_repo, parse_arxiv_id, parse_slug
from papercode.core.load_report import Problem, relative_to_roots, shown_path
from papercode.core.records import MAX_WORD_CHARS, REPO_KINDS
from papercode.corpus.stages import Corpus
from papercode.index.columns import CodeLinkRow, SampleColumns
from papercode.index.paper_index import PaperIndex, PaperRow, SampleRow, best_status, task_key
from papercode.index.ranking import Ranking
from papercode.index.search_documents import paper_texts
from papercode.index.search_queries import SearchFilters
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
MAX_PAPERS_ASKED = 25  # get_paper's list of ids
MAX_CODES_ASKED = 10  # get_code's list of hashes
LIST_AUTHORS = 3  # a paper in a list answer: its first authors and code links
LIST_CODE_LINKS = 3
# A list answer's entries end before this many bytes, so that with its note and attribution it keeps within the
# 4,000 tokens (16,000 bytes) every default answer does; the ids or hashes after are left out, and counted.
LIST_ENTRY_BYTES = 14_000

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
            raise _not_found(
                corpus, f"no paper with arXiv id {arxiv.canonical} in this corpus of {len(index.papers):,} papers", _SEARCH_NEXT
            )
        return paper, query_shown(asked, arxiv.canonical)
    slug = parse_slug(text)
    if slug is None:
        raise QueryError(
            "invalid_argument",
            f"{_quote(text)} is not an arXiv id or a paper slug",
            "pass an id like 1902.04094, arXiv:1902.04094v2, an arxiv.org URL or /paper/<slug>; or " + _SEARCH_NEXT,
        )
    paper = index.paper_by_slug(slug)
    if paper is None:
        raise _not_found(corpus, f"no paper with slug {slug} in this corpus of {len(index.papers):,} papers", _SEARCH_NEXT)
    return paper, query_shown(asked, paper.key)


def _not_found(corpus: Corpus, what: str, next_step: str) -> QueryError:
    """A lookup found nothing; when the archive asked for is not served (it might have had it), the answer says why
    and what to run."""
    if corpus.archive_note is None:
        return QueryError("not_found", what, next_step)
    reason, _, archive_next = corpus.archive_note.partition(". Next: ")
    return QueryError("not_found", f"{what} ({reason})", f"{archive_next}; or {next_step}" if archive_next else next_step)


def query_shown(asked: str, resolved: str) -> dict[str, str]:
    """An answer's `query` (`models.Query`, as shown): what was asked, and what it resolved to when that differs."""
    return {"asked": asked} if asked == resolved else {"asked": asked, "resolved": resolved}


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


_NOTHING_IMPLIED: tuple[None, None] = (None, None)  # what an unknown status implies


def sample_checks(status: str, contract_check: str | None, verification_level: int | None) -> tuple[str | None, int | None]:
    """A sample's contract check and verification level as answers show them: each left out (None) when it is what
    the status implies (`models.STATUS_IMPLIES`), or when the record has none."""
    implied_check, implied_level = models.STATUS_IMPLIES.get(status, _NOTHING_IMPLIED)
    return (
        None if contract_check == implied_check else contract_check,
        None if verification_level == implied_level else verification_level,
    )


def language_shown(language: str | None) -> str | None:
    """A sample's language as answers show it: left out when it is the default, "" when the record names none."""
    return None if language == models.DEFAULT_LANGUAGE else language or ""


SampleGroupKey = tuple[
    int, str, str, str | None, str | None, bool
]  # paper (-1: not grouped by paper), repo, kind, language, licence, inline_ok


def grouped_samples(
    columns: SampleColumns,
    ids: Sequence[int],
    papers: Sequence[int] | None = None,
    stored: Callable[[str], bool] | None = None,
    status_shown: bool = True,
) -> dict[SampleGroupKey, dict[str, Any]]:
    """Samples `ids` as answers show them: by repository (`models.RepoSamples`, as shown), then by file; each group
    where its first sample comes (so, best first) and the samples of a file in their order. A repository's fields
    (kind, language, licence, inline_ok) are said by the group, so samples of one repository that differ in them
    make a group each; with `papers` (each sample's paper) the groups are by paper too (keyed by it first).

    One pass over the page, read from the columns (`SampleColumns.shown`), with no row built: this is the
    keyed tools' hot path."""
    groups: dict[SampleGroupKey, dict[str, Any]] = {}
    owners = papers if papers is not None else [-1] * len(ids)
    implies = models.STATUS_IMPLIES
    for paper, (sha, entry, repo, kind, path, language, status, check, level, licence, inline) in zip(
        owners, columns.shown(ids), strict=True
    ):
        key = (paper, repo, kind, language, licence, inline)
        group = groups.get(key)
        if group is None:
            group = groups[key] = shown(
                repo=repo, repo_kind=kind, language=language_shown(language), licence=licence, inline_ok=None if inline else False
            )
            group["files"] = {}
        # Built field by field (the order of `models.GroupedSample`), not through `shown`: this runs once a sample.
        sample = {"code_sha256": sha, "entry": entry}
        if status_shown:
            sample["status"] = status
        implied_check, implied_level = implies.get(status, _NOTHING_IMPLIED)
        if check is not None and check != implied_check:
            sample["contract_check"] = check
        if level is not None and level != implied_level:
            sample["verification_level"] = level
        if stored is not None and inline and stored(sha):
            sample["stored"] = True
        files = group["files"]
        if path in files:
            files[path].append(sample)
        else:
            files[path] = [sample]
    return groups


def sample_counts(corpus: Corpus, paper: PaperRow) -> dict[str, Any]:
    """A paper's samples counted from the index's columns (get_paper's summary and get_harvested_code_for_paper's
    counts; `models.SampleCounts`, as shown): no sample row is built for it."""
    counts = corpus.index.samples.counts(paper.samples)._asdict()
    if not counts["pointer_only"]:
        del counts["pointer_only"]
    return counts


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
        paper=shown(**_paper_ref(paper)),
        counts=sample_counts(corpus, paper),
        matched=len(matching) if len(matching) != len(paper.samples) else None,
        samples=list(grouped_samples(columns, page, stored=stored).values()),
        next_cursor=_page_cursor(corpus, page_query, offset, len(page), len(matching)),
        repos=repos,
        note=note,
        elsewhere=models.HARVEST_ELSEWHERE,
        read_at=paper.read_at,
        attribution=attribution(corpus, paper),
    )


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
    """One page of the samples with these statuses across the corpus, by paper (`models.SampleList`, as shown);
    with one status, the samples leave it out."""
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
    listed: dict[int, dict[str, Any]] = {}
    for (paper, *_), group in grouped_samples(columns, page, [columns.paper[i] for i in page], status_shown=len(statuses) > 1).items():
        if paper not in listed:
            listed[paper] = {"paper": papers.key(paper), "title": shorten(papers.title[paper], TITLE_CHARS), "samples": []}
        listed[paper]["samples"].append(group)
    return shown(
        statuses=statuses,
        total=total,
        papers=list(listed.values()),
        next_cursor=_page_cursor(corpus, page_query, offset, len(page), total),
        attribution=models.ATTRIBUTION,
    )


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
    """One paper's metadata, abstract, code links, sample counts and the harvest's claim (`models.PaperAnswer`, as
    shown)."""
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
        code_links=code_links(details.code_links, CODE_LINKS_SHOWN),
        more_code_links=_rest(len(details.code_links), CODE_LINKS_SHOWN),
        samples=sample_counts(corpus, paper),
        claim=paper.claim,
        results=results,
        more_results=more_results,
        snapshot=paper.snapshot,
        read_at=paper.read_at,
        attribution=attribution(corpus, paper),
    )


def paper_list_shown(corpus: Corpus, asked: Sequence[str]) -> dict[str, Any]:
    """Several papers at once (`models.PaperAnswer` with `papers`, as shown): a compact entry each, in the order asked;
    an id that finds no paper is marked in place (`error`, with the next step once in `note`). The entries end
    before `LIST_ENTRY_BYTES`: those after are counted in `left_out`."""
    _check_count(asked, MAX_PAPERS_ASKED, "paper ids")
    papers: list[PaperRow] = []

    def entry(position: int) -> dict[str, Any]:
        paper, _ = resolve_paper(corpus, asked[position])
        papers.append(paper)
        return _paper_entry(corpus, paper)

    entries, left_out, note = _list_entries(asked, entry, "get_paper")
    return shown(papers=entries, left_out=left_out or None, note=note, attribution=attribution_of(corpus, papers))


def _paper_entry(corpus: Corpus, paper: PaperRow) -> dict[str, Any]:
    details = paper.details()
    return shown(
        **_paper_ref(paper),
        authors=_authors(details.authors, LIST_AUTHORS) or None,
        n_authors=paper.n_authors,
        date=paper.date,
        code_links=code_links(details.code_links, LIST_CODE_LINKS) or None,
        more_code_links=_rest(len(details.code_links), LIST_CODE_LINKS),
        samples=sample_counts(corpus, paper) if paper.samples else None,
    )


def _check_count(asked: Sequence[object], most: int, what: str) -> None:
    if not 1 <= len(asked) <= most:
        raise QueryError("invalid_argument", f"a list takes 1 to {most} {what}, got {len(asked)}", f"call again with at most {most}")


def _list_entries(asked: Sequence[str], entry: Callable[[int], dict[str, Any]], tool: str) -> tuple[list[dict[str, Any]], int, str | None]:
    """A list answer's entries, in the order asked: `entry(position)`, or, when that raises a QueryError about the item,
    the item marked in place (`asked`, `error`). The entries end before `LIST_ENTRY_BYTES`; returns them, how many
    items were left out, and a note with the next step for each error and for what was left out."""
    entries: list[dict[str, Any]] = []
    next_steps: dict[str, str] = {}
    size = 0
    for position, item in enumerate(asked):
        try:
            answered = entry(position)
        except QueryError as error:
            if error.code in ("loading", "load_failed"):  # about the corpus, not the item: the whole call fails
                raise
            next_steps.setdefault(error.code, error.next_step)
            answered = {"asked": shorten(item, MAX_ID_CHARS), "error": error.code}
        size += len(orjson.dumps(answered)) + 1
        if size > LIST_ENTRY_BYTES and entries:
            left_out = len(asked) - position
            next_steps["left_out"] = f"the last {left_out} were left out to keep this answer small: call {tool} again with them"
            return entries, left_out, _note(next_steps)
        entries.append(answered)
    return entries, 0, _note(next_steps)


def _note(next_steps: dict[str, str]) -> str | None:
    return "; ".join(f"{code}: {step}" for code, step in next_steps.items()) or None


def _as_model(model: type[AnswerModel], shown: Callable[Params, dict[str, Any]]) -> Callable[Params, AnswerModel]:
    """The twin of a tool's shown answer that returns its answer model: the shown answer, validated."""

    def answer(*args: Params.args, **kwargs: Params.kwargs) -> AnswerModel:
        return model.model_validate(shown(*args, **kwargs))

    answer.__name__ = answer.__qualname__ = shown.__name__.removesuffix("_shown")
    answer.__doc__ = f"`{shown.__name__}`, as its answer model (`models.{model.__name__}`)."
    return answer


harvested_code = _as_model(models.HarvestedCode, harvested_code_shown)
samples_by_status = _as_model(models.SampleList, samples_by_status_shown)
paper_detail = _as_model(models.PaperAnswer, paper_detail_shown)
paper_list = _as_model(models.PaperAnswer, paper_list_shown)


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


def code_links(links: Sequence[CodeLinkRow], most: int) -> list[dict[str, Any]]:
    """The first `most` of a paper's code links as answers show them (`models.CodeLink`; they are stored official
    first)."""
    return [
        shown(
            repo=link.repo_url,
            official=True if link.is_official else None,
            framework=link.framework,
            mentioned_in_paper=link.mentioned_in_paper,
            reach=link.reach_status,
            licence=link.licence,
        )
        for link in links[:most]
    ]


def attribution(corpus: Corpus, paper: PaperRow) -> str:
    """Whose material an answer about `paper` carries: its Code-with-Papers record, or the archive's row."""
    return models.ARCHIVE_ATTRIBUTION if corpus.index.sources.from_archive(paper.ordinal) else models.ATTRIBUTION


def attribution_of(corpus: Corpus, papers: Sequence[PaperRow]) -> str:
    """Whose material an answer about several papers carries: the records', the archive's, or both."""
    sources = {attribution(corpus, paper) for paper in papers}
    return sources.pop() if len(sources) == 1 else models.BOTH_ATTRIBUTION if sources else models.ATTRIBUTION


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
    query = models.Query(**query_shown(repo, name))
    if ordered is None:
        raise _not_found(corpus, f"no paper in this corpus links to or has samples from {name}", "check the spelling, or " + _SEARCH_NEXT)
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
    return FoundCode(models.Query(**query_shown(code_sha256, sha)), sha, rows)


# What the agent should do when code is withheld, by reason.
_WITHHELD_NEXT = {
    "licence_restricted": "do not copy or reproduce this code; link to file_url",
    "not_materialized": "read it at file_url (it may have changed since the harvest), or ask the operator to run papercode materialize",
    "fetch_failed": "call again in a minute, or read it at file_url (unverified)",
}
_UNVERIFIABLE_NEXT = "the code at file_url is not provably the harvested code; read it there only as unverified"


def code_answer(corpus: Corpus, found: FoundCode, obtained: SampleOutcome) -> models.CodeAnswer:
    """get_code's answer: the verified code, or the samples and why their code is withheld."""
    return models.CodeAnswer(**_code_fields(corpus, found, obtained))


def _code_fields(corpus: Corpus, found: FoundCode, obtained: SampleOutcome) -> dict[str, Any]:
    """One hash's answer (`models.CodeAnswer`'s fields)."""
    index = corpus.index
    matches = []
    for row in _distinct_samples(found.rows):
        carriers = [
            models.PaperRef(**_paper_ref(index.papers[r.paper]))
            for r in found.rows
            if (r.repo, r.path, r.entry) == (row.repo, row.path, row.entry)
        ]
        check, level = sample_checks(row.status, row.contract_check, row.verification_level)
        matches.append(
            models.CodeMatch(
                entry=row.entry,
                repo=row.repo,
                repo_kind=row.repo_kind,
                path=row.path,
                language=language_shown(row.language),
                status=row.status,
                contract_check=check,
                verification_level=level,
                licence=row.licence,
                inline_ok=None if row.inline_ok else False,
                file_url=row.file_url,
                papers=carriers,
            )
        )
    if obtained.verified:
        origin = next(row for row in found.rows if (row.repo, row.path) == (obtained.repo, obtained.path))
        return {
            "query": found.query,
            "code": obtained.code,
            "verified": True,
            "source": "store" if obtained.source == "store" else "fetched",
            "requires": list(obtained.requires),
            "repo": origin.repo,
            "path": origin.path,
            "licence": origin.licence,
            "matches": matches,
        }
    reason = obtained.outcome
    next_step = _WITHHELD_NEXT.get(reason, _UNVERIFIABLE_NEXT)
    return {
        "query": found.query,
        "withheld": reason,
        "matches": matches,
        "note": f"{reason}: {obtained.reason.rstrip('.')}. Next: {next_step}.",
    }


def find_codes(corpus: Corpus, hashes: Sequence[str]) -> list[FoundCode | QueryError]:
    """`find_code` for each of a list of hashes; a hash that finds none gives its error, in its place."""
    _check_count(hashes, MAX_CODES_ASKED, "code hashes")
    found: list[FoundCode | QueryError] = []
    for code_sha256 in hashes:
        try:
            found.append(find_code(corpus, code_sha256))
        except QueryError as error:
            found.append(error)
    return found


def code_list_answer(
    corpus: Corpus, hashes: Sequence[str], found: Sequence[FoundCode | QueryError], obtained: Sequence[SampleOutcome | None]
) -> models.CodeAnswer:
    """get_code's answer to a list of hashes: each one's answer in order (`codes`), as for one (`obtained`: its
    verified code, None for a hash that found no sample); a hash that finds none is marked in place."""

    def entry(position: int) -> dict[str, Any]:
        item, outcome = found[position], obtained[position]
        if isinstance(item, QueryError):
            raise item
        assert outcome is not None  # every hash found has been obtained
        return models.CodeAnswer(**_code_fields(corpus, item, outcome)).model_dump(mode="json", exclude_none=True)

    entries, left_out, note = _list_entries(hashes, entry, "get_code")
    return models.CodeAnswer.model_validate(shown(codes=entries, left_out=left_out or None, note=note))


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
        archive=corpus.archive_note,
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
    """(level, text) telling a client that loading found problems (or that the archive asked for is not served); None
    when it found none."""
    summary = load_summary(corpus, code_problems)
    archive = f"; {corpus.archive_note}" if corpus.archive_note else ""
    if not summary.rejected and not summary.warnings:
        return ("warning", f"loaded {summary.records_indexed:,} papers{archive}") if archive else None
    return (
        "warning",
        f"loaded {summary.records_indexed:,} papers; {summary.rejected:,} records, samples or files rejected and "
        f"{summary.warnings:,} warnings: read corpus://load-report{archive}",
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
