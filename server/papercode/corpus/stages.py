"""A loaded corpus: the index, its search engine and its cursor pager, and the stages of getting one.

`open_stages` is the whole story of a start: a current snapshot is served at once; otherwise the
records are built, and the corpus is handed over twice: as soon as keyed lookups work (the
search index is still being built, in another process for a large corpus), then complete.
An intact snapshot of other records (they changed since) is served meanwhile, marked stale.
This is the only module that composes a `Corpus` from its parts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from papercode.build.builder import IndexBuilder
from papercode.build.decode import iter_records
from papercode.build.files import check_archive, find_record_files
from papercode.build.parallel import SearchBuildFailed, start_search_build
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport, ProgressCallback
from papercode.core.paging import Pager
from papercode.index.paper_index import PaperIndex
from papercode.index.search import SearchEngine

from . import snapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Corpus:
    index: PaperIndex
    search: SearchEngine | None  # None while the full text is still being built (a "keyed" stage)
    pager: Pager
    records_key: bytes | None = None  # what the records looked like when it was built (see `snapshot`)

    @classmethod
    def compose(cls, index: PaperIndex, search: SearchEngine | None, records_key: bytes | None = None) -> Corpus:
        return cls(index=index, search=search, pager=Pager(index.fingerprint), records_key=records_key)

    @classmethod
    def load(
        cls, roots: list[Path], limits: Limits | None = None, progress: ProgressCallback | None = None, *, archive: Path | None = None
    ) -> Corpus:
        """Build from the records (cold start), search included; `archive` is the root served beneath the others."""
        *_, complete = build_stages(roots, limits or Limits(), progress, archive=archive)
        return complete

    @classmethod
    def open(
        cls,
        roots: list[Path],
        limits: Limits | None = None,
        cache_dir: Path | None = None,
        progress: ProgressCallback | None = None,
        key: bytes | None = None,
        *,
        archive: Path | None = None,
    ) -> Corpus:
        """Warm start from a current snapshot in `cache_dir` when there is one; else build and save one.

        `key` is `snapshot.records_key(roots, limits)` when the caller has it already.
        """
        *_, last = _stages(roots, limits or Limits(), cache_dir, progress, key, stale=False, archive=archive)
        return last.corpus


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
    archive: Path | None = None,
) -> Iterator[Stage]:
    """Blocking generator, run in a worker thread.

    - current snapshot: yields one "complete" stage.
    - intact snapshot built from other records (they changed since): yields "stale" (the old
      corpus) at once, then builds: "keyed" as soon as keyed lookups work, then "complete" (and
      writes the new snapshot).
    - no usable snapshot (none, corrupt, foreign format): "keyed" then "complete".
    A corrupt or foreign snapshot is never yielded. `archive`, when given, is one of `roots`: the
    Papers-with-Code archive, served beneath the other records (see `build.builder.Admission`).
    """
    return _stages(roots, limits, cache_dir, progress, key, stale=True, archive=archive)


def _stages(
    roots: list[Path],
    limits: Limits,
    cache_dir: Path | None,
    progress: ProgressCallback | None,
    key: bytes | None,
    *,
    stale: bool,
    archive: Path | None,
) -> Iterator[Stage]:
    if cache_dir is None:
        for corpus in build_stages(roots, limits, progress, archive=archive):
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
    for corpus in build_stages(roots, limits, progress, archive=archive):
        corpus = replace(corpus, records_key=key)
        if corpus.search is None:
            yield Stage("keyed", corpus, None)
        else:
            yield Stage("complete", corpus, None)  # served first; the snapshot is written when the caller asks for more
            snapshot.save(path, key, corpus.index, corpus.search)


def build_stages(
    roots: list[Path], limits: Limits, progress: ProgressCallback | None = None, *, child: bool = True, archive: Path | None = None
) -> Iterator[Corpus]:
    """Build from the records: the corpus without search as soon as keyed lookups work, then complete."""
    report = LoadReport()
    files = [found for root in roots for found in find_record_files(root, report)]
    if archive is not None:
        check_archive(archive, files, report)
    search = start_search_build(roots, limits, files, child=child, archive=archive)
    try:
        builder = IndexBuilder(report, search.records, archive=archive)
        builder.add_all(iter_records(roots, report, limits, search.progress(progress, len(files)), files=search.here))
        part = search.part()
        if part is not None:
            builder.add_part(part)
            report.files_seen = len(files)
            if progress is not None:
                progress(len(files), len(files), report.records_read)
        index = builder.finish()
    except SearchBuildFailed as exc:
        log.warning("%s; building here", exc)
        yield from build_stages(roots, limits, progress, child=False, archive=archive)
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
        log.warning("%s; building the index and its search again in this process", exc)
        *_, complete = build_stages(roots, limits, progress, child=False, archive=archive)
        yield complete
        return
    yield Corpus.compose(index, engine)
