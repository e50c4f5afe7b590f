"""A loaded corpus: the index, its search engine and its cursor pager, built together."""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass, replace
from pathlib import Path

from . import snapshot
from .index import PaperIndex
from .loading import Limits, LoadReport, ProgressCallback, iter_records
from .paging import Pager
from .search import SearchEngine

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Corpus:
    index: PaperIndex
    search: SearchEngine
    pager: Pager
    records_key: bytes | None = None  # what the records looked like when it was built (see `snapshot`)

    @classmethod
    def load(cls, roots: list[Path], limits: Limits | None = None, progress: ProgressCallback | None = None) -> Corpus:
        """Build from the records (cold start)."""
        # The build allocates millions of objects that all stay alive; the cyclic GC would walk
        # them again and again for nothing (a third of the load time, measured). Freeze what
        # survives so later collections skip the index too.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            report = LoadReport()
            search = SearchEngine()
            index = PaperIndex(iter_records(roots, report, limits, progress), report, search.add)
            corpus = cls(index=index, search=search.finish(), pager=Pager(index.fingerprint))
        finally:
            gc.freeze()
            if gc_was_enabled:
                gc.enable()
        log.info(
            "indexed %d papers, %d samples from %d files (%d rejected, %d warnings)",
            len(index.papers),
            len(index.samples),
            report.files_read,
            report.rejected,
            report.warnings,
        )
        return corpus

    @classmethod
    def open(
        cls,
        roots: list[Path],
        limits: Limits | None = None,
        cache_dir: Path | None = None,
        progress: ProgressCallback | None = None,
        key: bytes | None = None,
    ) -> Corpus:
        """Warm start from a current snapshot in `cache_dir` when there is one; else build and save one.

        `key` is `snapshot.records_key(roots, limits)` when the caller has it already.
        """
        limits = limits or Limits()
        if cache_dir is None:
            return cls.load(roots, limits, progress)
        path = snapshot.snapshot_path(cache_dir, roots)
        # With a snapshot on disk, the records are checked on the other core while it is restored.
        pending = snapshot.PendingKey(roots, limits, background=path.exists()) if key is None else None
        corpus = snapshot.load(path, pending or key or b"")
        if corpus is not None:
            log.info("warm start from %s (%d papers)", path, len(corpus.index.papers))
            return corpus
        # The key is taken before the build: records changed during it must not look current.
        key = key or (pending.result() if pending else snapshot.records_key(roots, limits))
        corpus = replace(cls.load(roots, limits, progress), records_key=key)
        snapshot.save(path, key, corpus)
        return corpus
