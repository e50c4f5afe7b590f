"""What an argument names, found in the corpus: a paper by any of its ids, a repository, a code hash, the search engine.

Identifiers are parsed by `core.ids`, the one resolver; here they are looked up, and what finds nothing raises
`QueryError` (`not_found`, `ambiguous`, or `loading` while the search index is still being built) with the next step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from papercode.core.errors import QueryError
from papercode.core.ids import SHA_PREFIX_LENGTH, normalize_hex, normalize_repo, parse_arxiv_id, parse_slug
from papercode.corpus.stages import Corpus
from papercode.index.paper_index import PaperRow, SampleRow
from papercode.index.ranking import Ranking
from papercode.index.text_analysis import title_words

from . import models
from .checks import MAX_CODES_ASKED, MAX_ID_CHARS, check_count, is_unicode_text, quote

MIN_SHA_PREFIX = 8
MAX_SHA_CHARS = 64  # a whole sha256 in hex: anything longer is not a code hash
SEARCH_NEXT = "use search_papers with words from the title"
# A title's words as a phrase of the title field: the papers compared whole (BM25 ranks a title of just these words
# before longer titles holding them).
MAX_TITLE_CANDIDATES = 32
_TITLES_LISTED = 5
_REPO_NEXT = "pass owner/name or a repository URL (GitHub, GitLab, Bitbucket or Hugging Face)"


def resolve_paper(corpus: Corpus, asked: str) -> tuple[PaperRow, dict[str, Any]]:
    """The one paper resolver: arXiv ids in every pasted form, Papers-with-Code slugs, and, for text that names no
    paper by an id, a paper's whole title (`_paper_titled`). With the paper, the answer's `query`
    (`models.PaperQuery`, as shown)."""
    found = _id_of(corpus, asked)
    if isinstance(found, _Title):
        return _paper_titled(corpus, asked, found)
    index = corpus.index
    if found.slug:
        paper = index.paper_by_slug(found.key)
        assert paper is not None  # `_id_of` found it
        return paper, query_shown(asked, paper.key)
    paper = index.paper_by_arxiv(found.key)
    if paper is None:
        raise not_found(corpus, f"no paper with arXiv id {found.key} in this corpus of {len(index.papers):,} papers", SEARCH_NEXT)
    return paper, query_shown(asked, found.key)


def searches_titles(corpus: Corpus, asked: str) -> bool:
    """Whether resolving `asked` searches the titles (it names no paper by an id): the edge resolves it off the event
    loop then, since a search is not a keyed lookup. A parse and at most one key looked up: no paper's row is read."""
    try:
        return isinstance(_id_of(corpus, asked), _Title)
    except QueryError:
        return False


@dataclass(frozen=True, slots=True)
class _Id:
    """An arXiv id (canonical: its paper looked up next), or the slug of a paper."""

    key: str
    slug: bool


@dataclass(frozen=True, slots=True)
class _Title:
    """Text that names no paper by an id, to be looked up as a title: as given, or a slug's (which found no paper)."""

    text: str
    slug: str | None


def _id_of(corpus: Corpus, asked: str) -> _Id | _Title:
    """The id `asked` is (an arXiv id is never a title, found or not), or the text to look up as a title."""
    text = asked.strip()
    if not text or len(text) > MAX_ID_CHARS:
        raise QueryError(
            "invalid_argument",
            "paper id is empty" if not text else f"paper id is over {MAX_ID_CHARS} characters",
            "pass an arXiv id like 1902.04094, a Papers-with-Code slug or a paper's title",
        )
    arxiv = parse_arxiv_id(text)
    if arxiv is not None:
        return _Id(arxiv.canonical, slug=False)
    slug = parse_slug(text)
    if slug is not None and corpus.index.by_slug.get(slug) is not None:
        return _Id(slug, slug=True)
    # A slug of a URL or a path is looked up as its words, anything else as written.
    return _Title(slug if slug is not None and slug != text.lower() else text, slug)


def _paper_titled(corpus: Corpus, asked: str, title: _Title) -> tuple[PaperRow, dict[str, Any]]:
    """The one paper whose title is `title`'s words (case, accents, punctuation and spacing aside), found through the
    search index's title field; `not_found` or `ambiguous` otherwise, with the search to make."""
    words = title_words(title.text) if is_unicode_text(title.text) else []
    if not words:
        raise QueryError(
            "invalid_argument",
            f"{quote(title.text)} is not an arXiv id, a paper slug or a title",
            "pass an id like 1902.04094, arXiv:1902.04094v2, an arxiv.org URL or /paper/<slug>; or " + SEARCH_NEXT,
        )
    papers = corpus.index.papers
    named = [paper for paper in full_text(corpus).titled(title.text, MAX_TITLE_CANDIDATES) if title_words(papers.title[paper]) == words]
    search_next = f"call search_papers(query={json.dumps(title.text, ensure_ascii=False)})"
    if not named:
        what = f"slug {title.slug} or title" if title.slug is not None else "title"
        raise not_found(corpus, f"no paper with {what} {quote(title.text)} in this corpus of {len(papers):,} papers", search_next)
    if len(named) > 1:
        keys = [papers.key(paper) for paper in named]
        listed = ", ".join(keys[:_TITLES_LISTED]) + (" …" if len(keys) > _TITLES_LISTED else "")
        raise QueryError(
            "ambiguous",
            f"{len(keys)} papers have the title {quote(title.text)}: {listed}",
            f"call again with one of these ids, or {search_next}",
        )
    paper = papers[named[0]]
    return paper, {"asked": asked, "resolved": paper.key, "by_title": True}


def not_found(corpus: Corpus, what: str, next_step: str) -> QueryError:
    """A lookup found nothing; when the archive asked for is not served (it might have had it), the answer says why
    and what to run."""
    unserved = archive_unserved(corpus)
    if unserved is None:
        return QueryError("not_found", what, next_step)
    reason, archive_next = unserved
    return QueryError("not_found", f"{what} ({reason})", f"{archive_next}; or {next_step}")


def archive_unserved(corpus: Corpus) -> tuple[str, str] | None:
    """Why the archive asked for is not served (`ArchiveNotServed.why`), and what to run; None when it is served or
    was not asked for."""
    unserved = corpus.archive_unserved
    return None if unserved is None else (unserved.why, unserved.next_step)


def query_shown(asked: str, resolved: str) -> dict[str, str]:
    """An answer's `query` (`models.Query`, as shown): what was asked, and what it resolved to when that differs."""
    return {"asked": asked} if asked == resolved else {"asked": asked, "resolved": resolved}


def resolve_repo(asked: str, longest: int | None = None) -> str:
    """The repository key (`core.ids.normalize_repo`) of a name or URL (of at most `longest` characters)."""
    name = normalize_repo(asked) if longest is None or len(asked) <= longest else None
    if name is None:
        raise QueryError("invalid_argument", f"{quote(asked)} is not a repository", _REPO_NEXT)
    return name


def full_text(corpus: Corpus) -> Ranking:
    """The corpus's search engine (and abstracts); `loading` while it is still being built."""
    if corpus.search is None:
        raise QueryError("loading", "the full-text index is still being built", "call again in a few seconds")
    return corpus.search


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
            f"{quote(text)} is not a hex code hash",
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


def find_codes(corpus: Corpus, hashes: Sequence[str]) -> list[FoundCode | QueryError]:
    """`find_code` for each of a list of hashes; a hash that finds none gives its error, in its place."""
    check_count(hashes, MAX_CODES_ASKED, "code hashes")
    found: list[FoundCode | QueryError] = []
    for code_sha256 in hashes:
        try:
            found.append(find_code(corpus, code_sha256))
        except QueryError as error:
            found.append(error)
    return found
