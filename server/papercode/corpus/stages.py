"""A loaded corpus: the index, its search engine and its cursor pager, and the stages of getting one.

`open_stages` is the whole story of a start: a current snapshot is served at once; otherwise the
records are built, and the corpus is handed over twice: as soon as keyed lookups work (the
search index is still being built, in another process for a large corpus), then complete.
An intact snapshot of other records (they changed since) is served meanwhile, marked stale.
With an archive, each stage of the records is laid over it (`index.overlaid`, `index.overlay`): the archive is opened,
never built, and an archive that cannot be served leaves the records served alone, with the reason (`ArchiveNotServed`).
This is the only module that composes a `Corpus` from its parts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from papercode.core import scratch
from papercode.core.holds import hold
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport, ProgressCallback
from papercode.core.paging import Pager
from papercode.index.mapped_archive import ArchiveUnavailable, MappedArchive, current_build_id, open_archive
from papercode.index.overlaid import OverlaidIndex, compose
from papercode.index.overlay import OverlaidSearch, OverlayProblem
from papercode.index.paper_index import PaperIndex
from papercode.index.ranking import Ranking
from papercode.index.search import SearchEngine
from papercode.ingest.builder import IndexBuilder
from papercode.ingest.decode import iter_records
from papercode.ingest.files import find_record_files
from papercode.ingest.parallel import SearchBuildFailed, start_search_build

from . import snapshot

log = logging.getLogger(__name__)


ARCHIVE_NEXT = "run `papercode archive fetch` (downloads it) or `papercode archive build SOURCE...` (from files you have)"
NOT_SERVED = "the archive is not served: "


@dataclass(frozen=True, slots=True)
class ArchiveNotServed:
    """Why the archive asked for is not served (`reason`, one line) and what to do about it (`next_step`), kept apart
    so that each answer words them its own way."""

    reason: str
    next_step: str

    @classmethod
    def of(cls, problem: ArchiveUnavailable) -> ArchiveNotServed:
        return cls(str(problem), problem.next_step or ARCHIVE_NEXT)

    @property
    def why(self) -> str:
        """The reason as an answer says it: "the archive is not served: <reason>"."""
        return NOT_SERVED + self.reason

    @property
    def note(self) -> str:
        """The reason and the next step in one line, as `corpus_stats`, the load notice, `check` and the log say it."""
        return f"{self.why}. Next: {self.next_step}"


@dataclass(frozen=True, slots=True)
class Corpus:
    index: PaperIndex
    search: Ranking | None  # None while the full text is still being built (a "keyed" stage)
    pager: Pager
    records_key: bytes | None = None  # what the records looked like when it was built (see `snapshot`)
    archive_unserved: ArchiveNotServed | None = None  # why the archive asked for is not served; None when it is

    @classmethod
    def compose(cls, index: PaperIndex, search: Ranking | None, records_key: bytes | None = None) -> Corpus:
        return cls(index=index, search=search, pager=Pager(index.fingerprint), records_key=records_key)

    @property
    def archive(self) -> MappedArchive | None:
        """The archive served beneath the records, if any."""
        return self.index.archive if isinstance(self.index, OverlaidIndex) else None

    @property
    def archive_note(self) -> str | None:
        """Why the archive asked for is not served, with what to run, in one line (`ArchiveNotServed.note`)."""
        return None if self.archive_unserved is None else self.archive_unserved.note

    @classmethod
    def load(
        cls, roots: list[Path], limits: Limits | None = None, progress: ProgressCallback | None = None, *, archive_dir: Path | None = None
    ) -> Corpus:
        """Build from the records (cold start), search included, above the archive in `archive_dir` (if given)."""
        *_, complete = build_stages(roots, limits or Limits(), progress)
        return over_archive(complete, _open_archive(archive_dir))

    @classmethod
    def open(
        cls,
        roots: list[Path],
        limits: Limits | None = None,
        cache_dir: Path | None = None,
        progress: ProgressCallback | None = None,
        key: bytes | None = None,
        *,
        archive_dir: Path | None = None,
    ) -> Corpus:
        """Warm start from a current snapshot in `cache_dir` when there is one; else build and save one; above the
        archive in `archive_dir` (if given).

        `key` is `snapshot.records_key(roots, limits)` when the caller has it already.
        """
        *_, last = _stages(roots, limits or Limits(), cache_dir, progress, key, stale=False)
        return over_archive(last.corpus, _open_archive(archive_dir))


StageKind = Literal["stale", "keyed", "complete"]


@dataclass(frozen=True, slots=True)
class Stage:
    kind: StageKind
    corpus: Corpus  # "keyed": corpus.search is None (full text not built yet); others: complete
    built_at: str | None  # ISO time the snapshot was written, for "stale" (and for "complete" from a snapshot)


def open_stages(
    roots: list[Path],
    limits: Limits,
    cache_dir: Path | None,
    progress: ProgressCallback | None = None,
    key: bytes | None = None,
    *,
    archive_dir: Path | None = None,
) -> Iterator[Stage]:
    """Blocking generator, run in a worker thread.

    - current snapshot: yields one "complete" stage.
    - intact snapshot built from other records (they changed since): yields "stale" (the old
      corpus) at once, then builds: "keyed" as soon as keyed lookups work, then "complete" (and
      writes the new snapshot).
    - no usable snapshot (none, corrupt, foreign format): "keyed" then "complete".
    A corrupt or foreign snapshot is never yielded. With `archive_dir`, every stage is laid over the archive there
    (opened first: a start pays nothing more for it).
    """
    archive = _open_archive(archive_dir)
    for stage in _stages(roots, limits, cache_dir, progress, key, stale=True):
        yield replace(stage, corpus=over_archive(stage.corpus, archive))


@dataclass(frozen=True, slots=True)
class _Archive:
    """The archive asked for, as a start found it: opened, or why not; and the build `current` named."""

    mapped: MappedArchive | None = None
    unserved: ArchiveNotServed | None = None
    build_id: str | None = None


def _open_archive(archive_dir: Path | None) -> _Archive | None:
    """The archive in `archive_dir` (None: none asked for)."""
    if archive_dir is None:
        return None
    build_id = current_build_id(archive_dir)
    try:
        mapped = open_archive(archive_dir)
    except ArchiveUnavailable as exc:
        return _Archive(None, _not_served(exc), build_id)
    log.info("archive build %s opened (%d papers)", mapped.build_id, len(mapped))
    hold("archive-opened")
    return _Archive(mapped, None, mapped.build_id)


def over_archive(records: Corpus, archive: _Archive | None) -> Corpus:
    """The records' corpus laid over the archive (as it is when none was asked for; with the reason when it cannot be
    served). Its `records_key` names the build too, as `snapshot.served_key` does."""
    if archive is None:
        return records
    key = None if records.records_key is None else snapshot.with_archive(records.records_key, archive.build_id)
    if archive.mapped is None:
        return replace(records, records_key=key, archive_unserved=archive.unserved)
    index = compose(records.index, archive.mapped)
    search = None
    if records.search is not None:
        assert isinstance(index, OverlaidIndex) and index.ordinals is not None and isinstance(records.search, SearchEngine)
        try:
            search = OverlaidSearch(archive.mapped, records.index, records.search, index.ordinals)
        except OverlayProblem as exc:
            return replace(records, records_key=key, archive_unserved=_not_served(exc))
    return Corpus.compose(index, search, key)


def _not_served(problem: ArchiveUnavailable) -> ArchiveNotServed:
    """Why a corpus is without the archive asked for (logged here once)."""
    unserved = ArchiveNotServed.of(problem)
    log.warning("%s", unserved.note)
    return unserved


def _stages(
    roots: list[Path],
    limits: Limits,
    cache_dir: Path | None,
    progress: ProgressCallback | None,
    key: bytes | None,
    *,
    stale: bool,
) -> Iterator[Stage]:
    if cache_dir is None:
        for corpus in build_stages(roots, limits, progress):
            yield Stage("complete" if corpus.search is not None else "keyed", corpus, None)
        return
    path = snapshot.snapshot_path(cache_dir, roots)
    # With a snapshot on disk, the records are checked on the other core while it is restored.
    pending = snapshot.PendingKey(roots, limits, background=path.exists()) if key is None else None
    # Not keeping a stale one: a known key rejects it before the index is even read.
    found = snapshot.load(path, None if stale or key is None else key)
    # The key is taken before the build: records changed during it must not look current.
    key = key or (pending.result() if pending else snapshot.records_key(roots, limits))
    if found is not None:
        restored = Corpus.compose(found.index, found.search, found.key)
        if found.key == key:
            log.info("warm start from %s (%d papers)", path, len(found.index.papers))
            yield Stage("complete", restored, found.built_at)
            return
        log.warning("snapshot %s was built from other records (they changed); rebuilding", path)
        if stale:
            yield Stage("stale", restored, found.built_at)
    for corpus in build_stages(roots, limits, progress):
        corpus = replace(corpus, records_key=key)
        if corpus.search is None:
            yield Stage("keyed", corpus, None)
        else:
            yield Stage("complete", corpus, None)  # served first; the snapshot is written when the caller asks for more
            assert isinstance(corpus.search, SearchEngine)  # the records' own: an overlaid one is never snapshotted
            snapshot.save(path, key, corpus.index, corpus.search)


def build_stages(roots: list[Path], limits: Limits, progress: ProgressCallback | None = None, *, child: bool = True) -> Iterator[Corpus]:
    """Build from the records: the corpus without search as soon as keyed lookups work, then complete."""
    report = LoadReport()
    files = [found for root in roots for found in find_record_files(root, report)]
    search = start_search_build(roots, limits, files, child=child)
    try:
        builder = IndexBuilder(report, search.records)
        builder.add_all(iter_records(roots, report, limits, search.progress(progress, len(files)), files=search.here))
        part = search.part()
        if part is not None:
            builder.add_part(part)
            report.files_seen = len(files)
            if progress is not None:
                progress(len(files), len(files), report.records_read)
        index = builder.finish()
    except SearchBuildFailed as exc:
        if scratch.exiting():  # the process is ending and stopped the child itself: nothing more to build
            return
        log.warning("%s; building here", exc)
        yield from build_stages(roots, limits, progress, child=False)
        return
    except BaseException:
        search.cancel()
        raise
    log.info(
        "indexed %d papers, %d samples from %d files (%d rejected, %d warnings)",
        len(index.papers),
        len(index.samples),
        report.files_read,
        report.rejected,
        report.warnings,
    )
    try:
        yield Corpus.compose(index, None)
    except GeneratorExit:  # nobody waits for the full text
        search.cancel()
        raise
    # While the full text is built (in the child, for a large corpus), the papers' columns are packed as a snapshot
    # holds them: the same values in about half the memory, and the snapshot then writes them as they are.
    index.papers.pack()
    try:
        engine = search.result(index.fingerprint)
    except SearchBuildFailed as exc:  # build both again, here, from one read of the records
        if scratch.exiting():  # the process is ending and stopped the child itself: nothing more to build
            return
        log.warning("%s; building the index and its search again in this process", exc)
        *_, complete = build_stages(roots, limits, progress, child=False)
        yield complete
        return
    yield Corpus.compose(index, engine)
