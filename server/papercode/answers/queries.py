"""What each tool answers, one function a tool, as plain functions of a `Corpus`, free of MCP.

Each checks its arguments (`checks`), finds what they name (`resolving`), asks the index, and shapes the answer
(`shaping`, `models`): the keyed tools as shown (JSON-ready dicts, `twins` gives their models), the others as their
answer models. Bad input raises `QueryError` with a machine code and the next step. The leaderboards' tools are in
`leaderboards`, the prompts in `prompts`, `corpus_stats` and the load report in `overview`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import orjson

from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from papercode.index.paper_index import PaperRow, SampleRow, best_status
from papercode.index.ranking import Ranking
from papercode.index.search_documents import paper_texts
from papercode.index.search_queries import SearchFilters
from papercode.index.text_analysis import query_terms
from papercode.verified.materialize import SampleOutcome

from . import leaderboards, models
from .checks import MAX_ID_CHARS, MAX_PAPERS_ASKED, check_count, check_limit, check_repo_kind, check_search, check_statuses
from .resolving import SEARCH_NEXT, FoundCode, archive_unserved, full_text, not_found, query_shown, resolve_paper, resolve_repo
from .shaping import (
    ABSTRACT_CHARS,
    CODE_LINKS_SHOWN,
    PAPER_ANSWER_ORDER,
    TITLE_CHARS,
    as_stored,
    attribution,
    attribution_of,
    authors_shown,
    code_links,
    grouped_samples,
    in_order,
    language_shown,
    list_entries,
    merged_tasks,
    page_cursor,
    paper_ref,
    repositories_instead,
    rest,
    sample_checks,
    sample_counts,
    shorten,
    shown,
)

AUTHORS_SHOWN = 10
METHODS_SHOWN = 10
SEARCH_AUTHORS = 3
SEARCH_TASKS = 5
LIST_AUTHORS = 3  # a paper in a list answer: its first authors and code links
LIST_CODE_LINKS = 3
# What a search that found nothing in the records alone suggests: the archive beneath them (576,261 papers on the Hub).
ARCHIVE_FOR_MORE = (
    "ask the operator to run `papercode archive fetch`, then `papercode serve --archive`, to search the 576k papers "
    "of the Papers-with-Code archive"
)


def harvested_code_shown(
    corpus: Corpus,
    arxiv_id: str,
    *,
    status: str | Sequence[str] | None = None,
    repo_kind: str | None = None,
    limit: int = 25,
    cursor: str | None = None,
    stored: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """One page of a paper's samples (`models.HarvestedCode`, as shown); `stored` says which codes the verified
    store holds."""
    paper, query = resolve_paper(corpus, arxiv_id)
    statuses = check_statuses(corpus, status) if status else None
    kind = check_repo_kind(corpus, repo_kind)
    check_limit(limit)
    page_query = {"tool": "harvested", "paper": paper.key, "status": statuses, "repo_kind": kind, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    columns = corpus.index.samples
    matching = columns.select(paper.samples, statuses, kind)
    page = matching[offset : offset + limit]
    note = repos = None
    if not paper.samples:
        repos, note = repositories_instead(paper)
    elif not matching:
        note = "no samples match these filters; counts shows what the paper has"
    return shown(
        query=query,
        paper=shown(**paper_ref(paper)),
        counts=sample_counts(corpus, paper),
        matched=len(matching) if len(matching) != len(paper.samples) else None,
        samples=list(grouped_samples(columns, page, stored=stored).values()),
        next_cursor=page_cursor(corpus, page_query, offset, len(page), len(matching)),
        repos=repos,
        note=note,
        elsewhere=models.HARVEST_ELSEWHERE,
        read_at=paper.read_at,
        attribution=attribution(corpus, paper),
    )


def samples_by_status_shown(
    corpus: Corpus,
    status: str | Sequence[str],
    *,
    repo_kind: str | None = None,
    language: str | None = None,
    licence: str | None = None,
    inline_only: bool = False,
    limit: int = 25,
    cursor: str | None = None,
) -> dict[str, Any]:
    """One page of the samples with these statuses across the corpus, by paper (`models.SampleList`, as shown);
    with one status, the samples leave it out."""
    statuses = check_statuses(corpus, status)
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
    total, page = corpus.index.list_sample_ids(
        statuses, repo_kind=kind, language=language, licence=licence, inline_only=inline_only, offset=offset, limit=limit
    )
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
        next_cursor=page_cursor(corpus, page_query, offset, len(page), total),
        attribution=models.ATTRIBUTION,
    )


def search_papers(
    corpus: Corpus,
    query: str = "",
    filters: SearchFilters | None = None,
    limit: int = 10,
    cursor: str | None = None,
) -> models.SearchResult:
    check_limit(limit)
    filters = check_search(corpus, query, filters or SearchFilters())
    page_query = {"tool": "search", "query": " ".join(query.split()), "filters": filters, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    engine = full_text(corpus)
    page = engine.search(query, filters, offset, limit, paper_texts(corpus.index))
    index = corpus.index
    results = []
    for hit in page.hits:
        paper = index.papers[hit.paper]
        details = paper.details()
        results.append(
            models.PaperHit(
                **paper_ref(paper),
                year=paper.year,
                authors=authors_shown(details.authors, SEARCH_AUTHORS),
                n_authors=paper.n_authors,
                tasks=merged_tasks(details.tasks)[:SEARCH_TASKS],
                samples=len(paper.samples),
                best_status=best_status(index, paper),
                snippet=hit.snippet,
            )
        )
    return models.SearchResult(
        query=query,
        match="any" if page.any_word else None,
        unmatched=list(page.unmatched) or None,
        total=page.total,
        hits=results,
        next_cursor=page_cursor(corpus, page_query, offset, len(results), page.total),
        note=None if page.total else _no_hits(corpus, engine, query, filters),
    )


def _no_hits(corpus: Corpus, engine: Ranking, query: str, filters: SearchFilters) -> str:
    """Why a search found nothing, and the call that fits: without the filter that emptied it, or, when its words
    match no paper, the archive's papers (when it is not served) or other words. (Fewer words never help: a search
    whose papers lack a word falls back to papers with any.)"""
    words = bool(query_terms(query))
    given = {field.name: value for field in fields(filters) if (value := getattr(filters, field.name)) is not None and value != ""}
    with_words = " with these words" if words else ""
    if given and engine.count(query, SearchFilters()):
        emptied = [name for name, value in given.items() if not engine.count(query, SearchFilters(**{name: value}))]
        if emptied:
            named = " or ".join(_filter_shown(name, given[name]) for name in emptied)
            return f"no paper{with_words} matches {named}. Next: call again without {' and '.join(emptied)}"
        together = ", ".join(_filter_shown(name, value) for name, value in given.items())
        return f"no paper{with_words} matches these filters together ({together}). Next: call again with fewer of them"
    papers = len(corpus.index.papers)
    what = f"no paper of this corpus of {papers:,} papers has any of these words" if words else "this corpus has no papers"
    if corpus.archive is not None:
        return f"{what}. Next: check the spelling, or search with other words (of a title, an author, a task or a method)"
    unserved = archive_unserved(corpus)
    if unserved is not None:  # asked for, not served: why, and what to run
        reason, archive_next = unserved
        return f"{what} ({reason}). Next: {archive_next + '; or ' if archive_next else ''}search with other words"
    return f"{what}. Next: {ARCHIVE_FOR_MORE}; or search with other words"


def _filter_shown(name: str, value: object) -> str:
    """A filter as a call writes it: statuses comma-separated, one form for one status or several."""
    return f"{name}={orjson.dumps(','.join(value) if isinstance(value, tuple) else value).decode()}"


def paper_detail_shown(corpus: Corpus, paper_id: str) -> dict[str, Any]:
    """One paper's metadata, abstract, code links, sample counts and the harvest's claim (`models.PaperAnswer`, as
    shown): its fields shown as stored (`shaping.as_stored`) and those the answer shapes, in the model's order."""
    paper, query = resolve_paper(corpus, paper_id)
    details = paper.details()
    abstract = full_text(corpus).abstract(paper.ordinal)
    truncated = abstract is not None and len(abstract) > ABSTRACT_CHARS
    results, more_results = leaderboards.paper_results(corpus, paper)
    return in_order(
        PAPER_ANSWER_ORDER,
        **paper_ref(paper),
        **as_stored(paper, details),
        query=query,
        authors=authors_shown(details.authors, AUTHORS_SHOWN),
        abstract=abstract[:ABSTRACT_CHARS] if abstract and truncated else abstract,
        abstract_truncated=True if truncated else None,
        tasks=merged_tasks(details.tasks),
        methods=details.methods[:METHODS_SHOWN],
        more_methods=rest(len(details.methods), METHODS_SHOWN),
        code_links=code_links(details.code_links, CODE_LINKS_SHOWN),
        more_code_links=rest(len(details.code_links), CODE_LINKS_SHOWN),
        samples=sample_counts(corpus, paper),
        results=results,
        more_results=more_results,
        attribution=attribution(corpus, paper),
    )


def paper_list_shown(corpus: Corpus, asked: Sequence[str]) -> dict[str, Any]:
    """Several papers at once (`models.PaperAnswer` with `papers`, as shown): a compact entry each, in the order asked
    (with its `query` when a title named it); an id that finds no paper is marked in place (`error`, with the next step once in `note`). The entries end
    before `shaping.LIST_ENTRY_BYTES`: those after are counted in `left_out`."""
    check_count(asked, MAX_PAPERS_ASKED, "paper ids")
    papers: list[PaperRow] = []

    def entry(position: int) -> dict[str, Any]:
        paper, query = resolve_paper(corpus, asked[position])
        papers.append(paper)
        return _paper_entry(corpus, paper, query if "by_title" in query else None)

    entries, left_out, note = list_entries(asked, entry, "get_paper")
    return shown(papers=entries, left_out=left_out or None, note=note, attribution=attribution_of(corpus, papers))


def _paper_entry(corpus: Corpus, paper: PaperRow, query: dict[str, Any] | None) -> dict[str, Any]:
    """A paper in a list answer, in brief; `query` only when the paper was named by its title."""
    details = paper.details()
    return shown(
        **paper_ref(paper),
        query=query,
        authors=authors_shown(details.authors, LIST_AUTHORS) or None,
        n_authors=paper.n_authors,
        date=paper.date,
        code_links=code_links(details.code_links, LIST_CODE_LINKS) or None,
        more_code_links=rest(len(details.code_links), LIST_CODE_LINKS),
        samples=sample_counts(corpus, paper) if paper.samples else None,
    )


def papers_for_repo(corpus: Corpus, repo: str, limit: int = 25, cursor: str | None = None) -> models.RepoPapers:
    check_limit(limit)
    name = resolve_repo(repo, longest=MAX_ID_CHARS)
    ordered = corpus.index.papers_for_repo(name)
    query = models.Query(**query_shown(repo, name))
    if ordered is None:
        raise not_found(corpus, f"no paper in this corpus links to or has samples from {name}", "check the spelling, or " + SEARCH_NEXT)
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
                **paper_ref(paper),
                is_official=(link.is_official if link else False) or any(row.is_official for row in samples),
                framework=link.framework if link else None,
                samples=len(samples),
                statuses=dict(Counter(row.status for row in samples)),
            )
        )
    return models.RepoPapers(
        query=query, total=len(ordered), papers=papers, next_cursor=page_cursor(corpus, page_query, offset, len(page), len(ordered))
    )


# -- get_code ------------------------------------------------------------------------------

# What the agent should do when code is withheld, by reason (`_withheld_next` writes those that name a command).
_WITHHELD_NEXT = {
    "licence_restricted": "do not copy or reproduce this code; link to file_url",
    "fetch_failed": "call again in a minute, or read it at file_url (unverified)",
}
_UNVERIFIABLE_NEXT = "the code at file_url is not provably the harvested code; read it there only as unverified"


def _withheld_next(obtained: SampleOutcome, materialize_flags: tuple[str, ...]) -> str:
    """The one way to the code withheld: for code that can be stored on the server's machine, the command that
    stores it there (with the server's own flags it needs, named: `materialize_flags`)."""
    command = f"`papercode materialize {{}} --repo {obtained.repo}`"
    clone = f"a clone at DIR/{obtained.repo}"
    server = " and ".join(materialize_flags)
    if obtained.outcome == "not_materialized":
        flags = f"; with the server's {server}" if server else ""
        return (
            f"store it where this server runs: {command.format('--fetch')} (or `--repos DIR` over {clone}{flags}),"
            " or serve without --offline; then call again. file_url has it meanwhile, unverified"
        )
    if obtained.outcome == "fetch_failed" and obtained.connect_failed is not None:
        flags = f" (with the server's {server})" if server else ""
        store = f"store it from {clone} with {command.format('--repos DIR')}{flags}, then call again; or read it at file_url (unverified)"
        if obtained.connect_failed == "tls":
            return (
                "calling again does not help while TLS to the host fails here: if a proxy intercepts TLS or the CA bundle is"
                " missing where this server runs, set SSL_CERT_FILE to the bundle to trust and restart the server; or " + store
            )
        return f"calling again does not help while this machine cannot reach the host: {store}"
    return _WITHHELD_NEXT.get(obtained.outcome, _UNVERIFIABLE_NEXT)


def code_answer(corpus: Corpus, found: FoundCode, obtained: SampleOutcome, materialize_flags: tuple[str, ...] = ()) -> models.CodeAnswer:
    """get_code's answer: the verified code, or the samples and why their code is withheld (`materialize_flags`: the
    server's flags `papercode materialize` needs too, for the command the answer names)."""
    return models.CodeAnswer(**_code_fields(corpus, found, obtained, materialize_flags))


def _code_fields(corpus: Corpus, found: FoundCode, obtained: SampleOutcome, materialize_flags: tuple[str, ...]) -> dict[str, Any]:
    """One hash's answer (`models.CodeAnswer`'s fields)."""
    matches = [_code_match(corpus, found, row) for row in _distinct_samples(found.rows)]
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
    next_step = _withheld_next(obtained, materialize_flags)
    return {
        "query": found.query,
        "withheld": reason,
        "matches": matches,
        "note": f"{reason}: {obtained.reason.rstrip('.')}. Next: {next_step}.",
    }


def _code_match(corpus: Corpus, found: FoundCode, row: SampleRow) -> models.CodeMatch:
    """One distinct sample with the code, with every paper that carries it."""
    carriers = [
        models.PaperRef(**paper_ref(corpus.index.papers[r.paper]))
        for r in found.rows
        if (r.repo, r.path, r.entry) == (row.repo, row.path, row.entry)
    ]
    check, level = sample_checks(row.status, row.contract_check, row.verification_level)
    return models.CodeMatch(
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


def code_list_answer(
    corpus: Corpus,
    hashes: Sequence[str],
    found: Sequence[FoundCode | QueryError],
    obtained: Sequence[SampleOutcome | None],
    materialize_flags: tuple[str, ...] = (),
) -> models.CodeAnswer:
    """get_code's answer to a list of hashes: each one's answer in order (`codes`), as for one (`obtained`: its
    verified code, None for a hash that found no sample); a hash that finds none is marked in place."""

    def entry(position: int) -> dict[str, Any]:
        item, outcome = found[position], obtained[position]
        if isinstance(item, QueryError):
            raise item
        assert outcome is not None  # every hash found has been obtained
        return models.CodeAnswer(**_code_fields(corpus, item, outcome, materialize_flags)).model_dump(mode="json", exclude_none=True)

    entries, left_out, note = list_entries(hashes, entry, "get_code")
    return models.CodeAnswer.model_validate(shown(codes=entries, left_out=left_out or None, note=note))


def _distinct_samples(rows: list[SampleRow]) -> list[SampleRow]:
    seen: dict[tuple[str, str, str], SampleRow] = {}
    for row in rows:
        seen.setdefault((row.repo, row.path, row.entry), row)
    return list(seen.values())
