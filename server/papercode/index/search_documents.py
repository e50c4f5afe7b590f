"""What the search index holds of a paper: its `SearchDocument`, made as a build admits the paper or again from the
index's columns, and the tantivy document it becomes.

A paper's text fields are joined the same way wherever they are indexed or a snippet is cut from them
(`document_texts`), so a snippet's marks fall where the index found the words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING

import msgspec
import tantivy

from .search_schema import FACET_KEYS, HAS_SAMPLES_TERMS, OFFICIAL_CODE_TERMS, browse_value, facet_term

if TYPE_CHECKING:
    from .paper_index import PaperIndex

INDEXED_LIST_SEPARATOR = " ; "  # between the authors, the tasks, the methods of a paper, in the text indexed


class SearchDocument(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """What the search engine indexes for one paper; produced while the index is built.

    Plain values only: it crosses to the cold build's child process as it is (msgpack, a bare array: no field names).
    """

    paper: int  # the `paper` value: the paper's ordinal (an archive's papers: `ARCHIVE_BASE` + its ordinal there)
    replacing: bool  # supersedes a document added before for the same paper (a duplicate's winner)
    key: str  # the paper's id (arXiv id, else slug): with the date, its place in the browsing order
    title: str
    abstract: str
    authors: str
    tasks: list[tuple[str, str]]
    methods: list[str]
    frameworks: list[str]
    statuses: list[str]
    date: str | None
    year: int | None
    samples: int
    official: bool


def document_texts(title: str, authors: str, tasks: Iterable[tuple[str, str]], methods: Iterable[str]) -> dict[str, str]:
    """A paper's text fields, but its abstract, as they are indexed and as snippets are cut from them (`authors`
    joined already, by `INDEXED_LIST_SEPARATOR`)."""
    return {
        "title": title,
        "authors": authors,
        "tasks": INDEXED_LIST_SEPARATOR.join(name for _, name in tasks),
        "methods": INDEXED_LIST_SEPARATOR.join(methods),
    }


def paper_texts(index: PaperIndex) -> Callable[[int], dict[str, str]]:
    """`document_texts` of a paper of `index`, from its columns: what a search cuts snippets from."""

    def texts(paper: int) -> dict[str, str]:
        row = index.papers[paper]
        details = row.details()
        return document_texts(row.title, INDEXED_LIST_SEPARATOR.join(details.authors), details.tasks, details.methods)

    return texts


def documents_of(index: PaperIndex, abstract: Callable[[int], str | None]) -> Iterator[SearchDocument]:
    """Every paper's document as the build indexed it, from the index's columns and its abstracts (`abstract`): what an
    overlay lays over the archive's index (`index.overlay`). Proven equal to the built documents by the tests."""
    samples = index.samples
    for paper in index.papers:
        details = paper.details()
        links = details.code_links
        yield SearchDocument(
            paper=paper.ordinal,
            replacing=False,
            key=paper.key,
            title=paper.title,
            abstract=abstract(paper.ordinal) or "",
            authors=INDEXED_LIST_SEPARATOR.join(details.authors),
            tasks=details.tasks,
            methods=details.methods,
            frameworks=sorted({link.framework for link in links if link.framework}),
            statuses=sorted({samples.status_of(i) for i in paper.samples}),
            date=paper.date,
            year=paper.year,
            samples=len(paper.samples),
            official=any(link.is_official for link in links),
        )


def tantivy_document(document: SearchDocument, terms: FacetTerms) -> tantivy.Document:
    """The document tantivy indexes for `document` (its facet terms from `terms`, the build's)."""
    out = tantivy.Document()
    out.add_text("abstract", document.abstract)
    for field, text in document_texts(document.title, document.authors, document.tasks, document.methods).items():
        out.add_text(field, text)
    for facet in sorted(terms.of(document)):
        out.add_text("facet", facet)
    if document.year is not None:
        out.add_integer("year", document.year)
    out.add_unsigned("paper", document.paper)
    out.add_unsigned("browse", browse_value(document.date, document.key))
    return out


class _Terms(dict[str, str]):
    """A facet's values as written -> their terms, each worked out once (a C-level lookup after)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self._kind, self._key = kind, FACET_KEYS[kind]

    def __missing__(self, value: str) -> str:
        term = self[value] = facet_term(self._kind, self._key(value))
        return term


class FacetTerms:
    """The facet terms of documents, for one build (so what it learns goes with it)."""

    def __init__(self) -> None:
        self._task = _Terms("task").__getitem__
        self._method = _Terms("method").__getitem__
        self._framework = _Terms("framework").__getitem__
        self._status = _Terms("status").__getitem__

    def of(self, document: SearchDocument) -> set[str]:
        facets = {
            *map(self._task, chain.from_iterable(document.tasks)),
            *map(self._method, document.methods),
            *map(self._framework, document.frameworks),
            *map(self._status, document.statuses),
        }
        facets.add(HAS_SAMPLES_TERMS[document.samples > 0])
        facets.add(OFFICIAL_CODE_TERMS[document.official])
        return facets
