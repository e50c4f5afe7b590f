"""Writing a search index: a tantivy index (a directory) and its abstracts file beside it.

`IndexWriting` takes each paper's document in paper order, as the archive build streams them; `SearchBuilder`
collects a cold build's documents (a duplicate's winner replacing what came before) and writes them at the end
(`write_index`); for a large corpus the cold build runs one in a child process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from stat import S_IMODE

import tantivy

from .abstracts import ABSTRACTS, AbstractsWriter
from .search_documents import FacetTerms, SearchDocument, tantivy_document
from .search_schema import SCHEMA, open_index

_WRITER_HEAP = 1 << 30  # a budget, not an allocation: large enough that each indexing thread makes one segment
_TWO_THREADS_FROM = 20_000  # documents


class IndexWriting:
    """An index being written: `add` each paper's document, in paper order, then `finish`.

    The abstracts go into their own file beside the index (`ABSTRACTS`), each at its paper's place. With `base`, the
    papers are those from `base` on (an archive's: `ARCHIVE_BASE`), and the file holds theirs only."""

    def __init__(self, directory: Path, *, threads: int, heap: int = _WRITER_HEAP, base: int = 0) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._directory, self._base = directory, base
        self._index = open_index(tantivy.Index(SCHEMA, path=str(directory)))
        self._writer = self._index.writer(heap_size=heap, num_threads=threads)
        self._terms = FacetTerms()
        self._abstracts = AbstractsWriter(directory / ABSTRACTS)

    def add(self, document: SearchDocument) -> None:
        abstracts, place = self._abstracts, document.paper - self._base
        if place < len(abstracts):
            raise ValueError(
                f"the documents must come one per paper, in paper order: paper {document.paper} came after {len(abstracts) - 1}"
            )
        self._writer.add_document(tantivy_document(document, self._terms))
        abstracts.add(place, document.abstract)

    def finish(self) -> None:
        """Commit, wait for merges, close the abstracts file: the index is complete."""
        self._abstracts.finish()
        self._writer.commit()
        self._writer.wait_merging_threads()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._directory / ".tantivy-writer.lock")
        _readable_as_the_rest(self._directory)

    def abandon(self) -> None:
        self._abstracts.close()
        with contextlib.suppress(Exception):
            self._writer.rollback()


def _readable_as_the_rest(directory: Path) -> None:
    """tantivy writes `meta.json` and `.managed.json` through temporary files, which are made 0600: each file of the
    index gets the mode of the abstracts file beside it, made as any file is (0666 less the umask), so that a server
    run by another user can read an archive's index as it reads the rest of the build."""
    mode = S_IMODE(os.stat(directory / ABSTRACTS).st_mode)
    for entry in os.scandir(directory):
        if entry.is_file(follow_symlinks=False) and S_IMODE(entry.stat(follow_symlinks=False).st_mode) != mode:
            os.chmod(entry.path, mode)


def write_index(directory: Path, documents: Iterable[SearchDocument], count: int) -> None:
    """Write the index of `documents` (`count` of them, one per paper, in paper order) into `directory` (created empty).

    Documents go in by paper, so equal scores rank by paper. A small corpus is indexed on one
    thread (one segment: the same order in every build); a large one on two (two segments, each
    in paper order: equal scores rank by segment, then by paper).
    """
    writing = IndexWriting(directory, threads=2 if count >= _TWO_THREADS_FROM else 1)
    try:
        for document in documents:
            writing.add(document)
    except BaseException:
        writing.abandon()
        raise
    writing.finish()


class SearchBuilder:
    """Collects each paper's document (`add`, as the index is built), then writes the index (`write`)."""

    def __init__(self) -> None:
        self._documents: dict[int, SearchDocument] = {}

    def add(self, document: SearchDocument) -> None:
        """Index one paper's document (a replacing one supersedes what was added for its paper)."""
        self._documents[document.paper] = document

    def write(self, directory: Path) -> None:
        """Write the index into `directory` (created empty); the builder is then spent."""
        documents, self._documents = self._documents, {}
        write_index(directory, [documents[paper] for paper in sorted(documents)], len(documents))

    def close(self) -> None:
        self._documents.clear()
