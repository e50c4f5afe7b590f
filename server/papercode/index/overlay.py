"""One search over the records and the archive: the archive's index, built once, with the records' papers laid over it.

At each start a small overlay index is made in the scratch area: a symlink to every file of the archive's index (its
segments are never rewritten: deletes go to new files), a copy of its `meta.json`, then one commit that deletes the
archive papers the records replace and adds the records' papers. One searcher then serves both, ranked with one set
of statistics, so a paper scores the same whether the archive or a record holds its text, but for one thing tantivy
does not let a reader change: a deleted document still counts in a term's document frequency until its segment is
merged, so each word of a paper whose archive row a record replaces counts one paper more (a word only that paper has
weighs about 4 % less at 600,000 papers; a common word, nothing measurable). The overlay directory is removed as soon
as the searcher is open (its files stay mapped), so nothing of it outlives the process.

Guards: tantivy must find the archive's index compatible and of this schema, and the commit must add one segment and
merge none (the archive is built with few segments, so its segments never reach a merge level; a merge would not harm
its files, only cost time): otherwise `OverlayProblem`, and the server serves the records alone, saying why. (An archive
segment whose every paper a record replaces is dropped by the commit: that is no merge.) The same when tantivy cannot
read the index (nor its schema): only then are its files checked against the manifest's sha256, and the reason says
"damaged" only when that check finds a file that is not the build's, else what stopped it (too many open files, a
permission).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Final

import orjson
import tantivy

from papercode.core import scratch
from papercode.core.holds import hold

from .abstracts import ABSTRACTS
from .mapped import first_damage
from .mapped_archive import ARCHIVE_BASE, SEARCH, UNOPENABLE_NEXT, ArchiveUnavailable, MappedArchive
from .overlaid import Ordinals
from .paper_index import PaperIndex
from .ranking import Ranking
from .search import SearchEngine
from .search_documents import FacetTerms, documents_of, tantivy_document
from .search_schema import LOCK_FILES, SCHEMA, open_index

log = logging.getLogger(__name__)

OVERLAY_PREFIX: Final = "papercode-overlay-"  # the scratch directory of an overlay being made (see `core.scratch`)
_MEMORY_FILES: Final = Path("/dev/shm")  # tmpfs, where a commit's fsyncs cost nothing
_OVERLAY_HEAP: Final = 64 << 20  # the records are few: one small segment
_NOT_LINKED: Final = frozenset({"meta.json", ".managed.json", ABSTRACTS, *LOCK_FILES})  # copied, tantivy's own, or not tantivy's


class OverlayProblem(ArchiveUnavailable):
    """The archive's index cannot take an overlay (damaged, another schema or tantivy version, or it would be merged),
    or cannot be read."""


def overlay_parent() -> Path | None:
    """Where overlays are made: in memory where the system has a tmpfs for it (the commit's fsyncs, which durability
    needs and a directory removed a moment later does not, cost a tenth of a second on a disk), unless `TMPDIR` says
    where scratch files go; else the temporary directory (None)."""
    if os.environ.get("TMPDIR") or not (_MEMORY_FILES.is_dir() and os.access(_MEMORY_FILES, os.W_OK | os.X_OK)):
        return None
    return _MEMORY_FILES


class OverlaidSearch(Ranking):
    """Search over the archive's index with the records' papers laid over it (see the module docstring)."""

    def __init__(self, archive: MappedArchive, records: PaperIndex, records_search: SearchEngine, ordinals: Ordinals) -> None:
        self._archive, self._records_search, self._numbering = archive, records_search, ordinals
        overlay = scratch.directory(OVERLAY_PREFIX, overlay_parent())
        try:
            self._searcher = _overlay(archive, overlay.path, records, records_search, ordinals)
        except OverlayProblem:  # a guard's verdict (or one checked already): no need to read the files
            raise
        except (OSError, ValueError) as exc:  # tantivy's errors are ValueErrors
            raise _checked(archive, exc) from None
        finally:
            overlay.remove()  # the searcher has every file open and mapped

    def abstract(self, paper: int) -> str | None:
        if paper < self._numbering.records:
            return self._records_search.abstract(paper)
        if paper >= len(self._numbering):
            return None
        abstracts = self._archive.abstracts
        return None if abstracts is None else abstracts.get(self._numbering.archive_paper(paper))

    def _ordinals(self, values: list[int]) -> list[int]:
        of_archive = self._numbering.of_archive
        return [value if value < ARCHIVE_BASE else of_archive(value - ARCHIVE_BASE) for value in values]


def _overlay(
    archive: MappedArchive, directory: Path, records: PaperIndex, records_search: SearchEngine, ordinals: Ordinals
) -> tantivy.Searcher:
    source = archive.search_dir
    archive_segments = _segments(source)
    for entry in os.scandir(source):
        if entry.name not in _NOT_LINKED and entry.is_file():
            os.symlink(os.path.join(source, entry.name), directory / entry.name)
    shutil.copyfile(source / "meta.json", directory / "meta.json")
    if not tantivy.Index.is_compatible(str(directory)):
        raise OverlayProblem("the archive's search index was written by another tantivy version")
    try:
        index = open_index(tantivy.Index(SCHEMA, path=str(directory)))
    except ValueError as exc:  # tantivy refused it: another schema, unless its files are not the build's
        raise _checked(archive, OverlayProblem(f"the archive's search index has another schema ({exc})")) from None
    writer = index.writer(heap_size=_OVERLAY_HEAP, num_threads=1)
    if ordinals.replaced:
        values = [ARCHIVE_BASE + a for a in sorted(ordinals.replaced)]
        writer.delete_documents_by_query(tantivy.Query.term_set_query(SCHEMA, "paper", values))
    terms = FacetTerms()
    added = 0
    for document in documents_of(records, records_search.abstract):
        writer.add_document(tantivy_document(document, terms))
        added += 1
    writer.commit()
    writer.wait_merging_threads()
    del writer
    hold("overlay-written")
    opened = open_index(tantivy.Index.open(str(directory)))
    opened.config_reader(reload_policy="Manual")
    searcher = opened.searcher()
    new = [documents for segment, documents in _segments(directory).items() if segment not in archive_segments]
    if new != ([added] if added else []):
        raise OverlayProblem(
            f"laying the records over the archive's index merged its segments (new segments of {new} documents, not one of {added})"
        )
    return searcher


def _segments(directory: Path) -> dict[str, int]:
    """The segments of the index in `directory`, as its `meta.json` lists them: id -> documents (deleted ones too)."""
    try:
        return {segment["segment_id"]: segment["max_doc"] for segment in orjson.loads((directory / "meta.json").read_bytes())["segments"]}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"meta.json lists no segments ({exc!r})") from None


def _checked(archive: MappedArchive, failure: OverlayProblem | OSError | ValueError) -> OverlayProblem:
    """Why the overlay failed where tantivy (or the system) raised, as a check of the search index's files against the
    manifest tells it: damaged when a file is not the build's; else the failure itself (the reason it was given, or
    the error that stopped tantivy). The check hashes the whole index: a guard's verdict (another tantivy version, a
    merge) does without it."""
    files = {
        name: facts for name, facts in archive.manifest.files.items() if name.startswith(f"{SEARCH}/") and name != f"{SEARCH}/{ABSTRACTS}"
    }
    try:
        damage = first_damage(archive.build, files)
    except OSError:  # the check could not read them either: no verdict
        damage = None
    if damage is not None:
        return OverlayProblem(f"the archive's build {archive.build_id} is damaged: {damage}")
    if isinstance(failure, OverlayProblem):
        return failure
    reason = failure.strerror if isinstance(failure, OSError) and failure.strerror else str(failure)
    return OverlayProblem(f"the search index of the archive's build {archive.build_id} cannot be opened: {reason}", UNOPENABLE_NEXT)
