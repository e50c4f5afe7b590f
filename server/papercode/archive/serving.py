"""The archive's serving form, written as its papers stream in: what every server maps at start instead of building.

For each paper the build keeps (`ServingWriter.add`), in order: its paper columns (`index.mapped`, as
`index.mapped_archive` reads them), its abstract, and its search document, handed to tantivy's indexing threads at once
(they index on both cores while this thread reads the next rows). What needs every paper (the arXiv id and slug keys,
sorted; the repositories' paper lists) is written at the end, from a few compact arrays.

A paper's columns are those `index.fields` declares with an archive reader, each read from the record the build made
of the paper's row; its values are those a server would have made of the same record (`index.fields.details_blob`,
`ordered_links`, the keys as `core.ids` lower-cases them), so an archive paper answers exactly as a record of it would.
"""

from __future__ import annotations

import threading
from array import array
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

import orjson

from papercode.core.ids import paper_key
from papercode.core.names import title_key
from papercode.index.columns import ordered_links
from papercode.index.fields import (
    NONE,
    CodeLinkRow,
    Details,
    Field,
    Int32,
    PaperSource,
    RowSource,
    Text,
    details_blob,
    details_of_row,
    readers,
)
from papercode.index.mapped import ColumnWriter, FileFacts, PackedWriter, file_facts
from papercode.index.mapped_archive import ARCHIVE_BASE, ARCHIVED, COLUMNS, KEY_COLUMNS, REPO_COLUMNS, SEARCH
from papercode.index.search_documents import INDEXED_LIST_SEPARATOR, SearchDocument
from papercode.index.search_schema import LOCK_FILES
from papercode.index.search_writer import IndexWriting

# tantivy's indexing memory for the archive: a budget, split between its two threads; each thread writes a segment
# whenever its half fills, so the archive's index has a few segments (an overlay never merges them: see
# `index.overlay`), and the build's memory stays bounded whatever the archive's size.
INDEX_HEAP: Final = 640 << 20
INDEX_THREADS: Final = 2
_FLUSH_EVERY: Final = 4096  # papers whose packed values wait in memory before they are written

Json = dict[str, Any]


_FIRST = itemgetter(0)
_NO_SAMPLES = range(0)  # an archive paper's
# The paper columns (`ARCHIVED`), by how they are written: packed as they grow, int32 whole at the end, and the details
# (read once a paper, for their column and the search document).
_TEXTS = tuple(field for field in ARCHIVED if isinstance(field.kind, Text))
_INTS = tuple(field for field in ARCHIVED if isinstance(field.kind, Int32))
_YEAR = [field.name for field in _INTS].index("year")  # its column's value is the search document's year too
(_DETAILS,) = (field for field in ARCHIVED if isinstance(field.kind, Details))


def _int_value(field: Field) -> Callable[[RowSource], int]:
    """How an `Int32` field of a paper is read into its column (none: `NONE`)."""
    (read,) = readers((field,), "row")
    if not field.optional:
        return read
    return lambda source: NONE if (value := read(source)) is None else value


AMBIGUOUS: Final = -1  # a title key several papers share: `PaperKeys.by_title` names none of them


@dataclass(frozen=True, slots=True)
class PaperKeys:
    """What tables read after the papers join against: each paper's archive ordinal by arXiv id, by (lower-case) slug,
    and by title (`core.names.title_key`; `AMBIGUOUS` where several papers share it), how many papers name each task
    (by its slug, as the papers' own `tasks` give it), and which papers have code."""

    by_arxiv: Mapping[str, int]
    by_slug: Mapping[str, int]
    by_title: Mapping[str, int]
    task_papers: Mapping[str, int]
    repo_papers: Sequence[int]  # the paper of each code link that names a repository


@dataclass(frozen=True, slots=True)
class Written:
    """What a finished build wrote: every file (relative to the build, with its size and sha256), the search index's
    segments, and the papers."""

    files: dict[str, FileFacts]
    search_segments: int
    papers: int


class ServingWriter:
    """One archive build, written into `build` (a new directory) as papers are added."""

    def __init__(self, build: Path, *, heap: int = INDEX_HEAP, threads: int = INDEX_THREADS, results: bool = False) -> None:
        """`results`: tables of results follow the papers (`paper_keys`), so their titles and tasks are kept too."""
        self._build = build
        self._columns = ColumnWriter(build / COLUMNS)
        self._texts = [self._columns.strings(field.name) for field in _TEXTS]
        self._text_values = readers(_TEXTS, "row")
        self._ints = [array("i") for _ in _INTS]
        self._int_values = tuple(map(_int_value, _INTS))
        self._blob: PackedWriter = self._columns.blobs(_DETAILS.name)
        self._packed = (*self._texts, self._blob)
        self._keys: list[str] = []  # each paper's key (arXiv id, else slug): the repositories' order
        self._by_arxiv: dict[str, int] = {}
        self._by_slug: dict[str, int] = {}
        self._repo_names: dict[str, int] = {}  # repository key -> its number
        self._repo_paper, self._repo_number = array("i"), array("i")
        self._repo_official = bytearray()
        self._search = IndexWriting(build / SEARCH, threads=threads, heap=heap, base=ARCHIVE_BASE)
        self._results = results
        self._by_title: dict[str, int] = {}
        self._task_slugs: list[str] = []  # each paper's task slugs, counted once every paper is in (`paper_keys`)
        self.papers = 0

    def add(self, *, slug: str, arxiv_id: str | None, record: Json, links: list[CodeLinkRow]) -> None:
        """The next paper: its (lower-case) slug, its arXiv id, the record the build made of its row (`url`, `title`,
        `date`, `proceeding`, `authors`, `abstract`, `url_abs`, `url_pdf`, `tasks`, `methods`: those it has) and its code
        links (`columns.link_row`)."""
        a = self.papers
        links = ordered_links(links)
        source = PaperSource(record, arxiv_id, slug, links, _NO_SAMPLES)  # not RowSource: an alias is slow to call
        for writer, read in zip(self._texts, self._text_values, strict=True):
            writer.append(read(source))
        for column, value in zip(self._ints, self._int_values, strict=True):
            column.append(value(source))
        details = details_of_row(source)
        self._blob.append(details_blob(details))
        date, authors, title, tasks, methods = record.get("date"), details.authors, record["title"], details.tasks, details.methods
        year = self._ints[_YEAR][-1]
        key = paper_key(arxiv_id, slug)
        self._keys.append(key)
        if arxiv_id:
            self._by_arxiv[arxiv_id] = a
        self._by_slug[slug] = a
        if self._results:
            by_title, title_of = self._by_title, title_key(title)
            by_title[title_of] = AMBIGUOUS if title_of in by_title else a
            if len(tasks) == 1:
                self._task_slugs.append(tasks[0][0])
            elif tasks:
                self._task_slugs.extend(set(map(_FIRST, tasks)))  # a paper counts once for a slug it names twice
        for link in links:
            repo = link.repo
            if repo is not None:
                number = self._repo_names.setdefault(repo, len(self._repo_names))
                self._repo_paper.append(a)
                self._repo_number.append(number)
                self._repo_official.append(link.is_official)
        self._search.add(
            SearchDocument(
                paper=ARCHIVE_BASE + a,
                replacing=False,
                key=key,
                title=title,
                abstract=record.get("abstract") or "",
                authors=INDEXED_LIST_SEPARATOR.join(authors),
                tasks=tasks,
                methods=methods,
                frameworks=sorted({link.framework for link in links if link.framework}),
                statuses=[],
                date=date,
                year=None if year == NONE else year,
                samples=0,
                official=any(link.is_official for link in links),
            )
        )
        self.papers += 1
        if not self.papers % _FLUSH_EVERY:
            for writer in self._packed:
                writer.flush()

    def paper_keys(self) -> PaperKeys:
        """The papers added so far, keyed for the tables read after them (titles and tasks only with `results`)."""
        return PaperKeys(self._by_arxiv, self._by_slug, self._by_title, Counter(self._task_slugs), self._repo_paper)

    def finish(
        self, stage: Callable[[str], None] = lambda what: None, meanwhile: Callable[[], Mapping[str, FileFacts]] | None = None
    ) -> Written:
        """Write what needs every paper, commit the search index, sync everything: the build is complete. `stage` is
        told of each step (they take seconds at the real archive's size). `meanwhile` (the tables read after the
        papers, which join them) runs while the search index commits, on tantivy's threads without the GIL; the files
        it returns (relative path -> facts) are listed with the rest."""
        columns = self._columns
        stage("writing the keys and the repositories' papers")
        for field, values in zip(_INTS, self._ints, strict=True):
            columns.ints(field.name, values)
        for name, mapping in zip(KEY_COLUMNS, (self._by_arxiv, self._by_slug), strict=True):
            keys = sorted(mapping)
            columns.packed(f"{name}.keys", keys)
            columns.ints(f"{name}.values", array("q", map(mapping.__getitem__, keys)))
        self._write_repositories()
        self._keys = []
        stage("indexing the last papers and committing the search index")
        more: Mapping[str, FileFacts] = {}
        if meanwhile is not None:
            more = self._commit_beside(meanwhile)
        else:
            self._search.finish()
        stage("checksumming and syncing the files")
        files = {f"{COLUMNS}/{name}": facts for name, facts in columns.close().items()}
        search = self._build / SEARCH
        files.update({f"{SEARCH}/{path.name}": file_facts(path) for path in sorted(search.iterdir()) if path.name not in LOCK_FILES})
        files.update(more)
        self._by_title, self._task_slugs = {}, []
        return Written(files, segment_count(search), self.papers)

    def _commit_beside(self, meanwhile: Callable[[], Mapping[str, FileFacts]]) -> Mapping[str, FileFacts]:
        """`meanwhile()` while the search index commits in a thread of its own; its files. The commit is always
        waited for, whatever `meanwhile` raises, so that nothing discards the index while it is written."""
        failed: list[BaseException] = []

        def commit() -> None:
            try:
                self._search.finish()
            except BaseException as exc:  # raised in the caller's thread, below
                failed.append(exc)

        thread = threading.Thread(target=commit, name="papercode-search-commit", daemon=True)
        thread.start()
        try:
            added = meanwhile()
        finally:
            thread.join()
        if failed:
            raise failed[0]
        return added

    def _write_repositories(self) -> None:
        """Each repository's papers, official first, then by paper key; the names sorted (`MappedArchive.papers_for_repo`)."""
        names = sorted(self._repo_names, key=self._repo_names.__getitem__)  # by number
        keys = self._keys
        entries = sorted(
            zip(self._repo_number, self._repo_official, self._repo_paper, strict=True),
            key=lambda entry: (names[entry[0]], not entry[1], keys[entry[2]], entry[2]),
        )
        listed: list[str] = []
        offsets, papers, officials = array("q", [0]), array("i"), array("i")
        for number, official, paper in entries:
            if not listed or listed[-1] != names[number]:
                if listed:
                    offsets.append(len(papers))
                listed.append(names[number])
                officials.append(0)
            officials[-1] += official
            papers.append(paper)
        if listed:
            offsets.append(len(papers))
        columns = self._columns
        columns.packed(REPO_COLUMNS[0], listed)
        columns.ints(REPO_COLUMNS[1], offsets)
        columns.ints(REPO_COLUMNS[2], papers)
        columns.ints(REPO_COLUMNS[3], officials)

    def discard(self) -> None:
        """Stop without finishing (the build failed or was interrupted): the caller removes the directory."""
        self._columns.discard()
        self._search.abandon()


def segment_count(directory: Path) -> int:
    """How many segments the tantivy index in `directory` has (its `meta.json` lists them)."""
    return len(orjson.loads((directory / "meta.json").read_bytes())["segments"])
