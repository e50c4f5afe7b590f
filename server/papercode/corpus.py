"""A loaded corpus: the index, its search engine and its cursor pager, built together."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from .index import PaperIndex
from .loading import Limits, ProgressCallback, load_records
from .paging import Pager
from .search import SearchEngine

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Corpus:
    index: PaperIndex
    search: SearchEngine
    pager: Pager

    @classmethod
    def load(cls, roots: list[Path], limits: Limits | None = None, progress: ProgressCallback | None = None) -> Corpus:
        loaded, report = load_records(roots, limits, progress)
        index = PaperIndex(loaded, report)
        corpus = cls(index=index, search=SearchEngine(index), pager=Pager(index.fingerprint))
        log.info(
            "indexed %d papers, %d samples from %d files (%d rejected, %d warnings)",
            len(index.papers),
            len(index.samples),
            report.files_read,
            report.rejected,
            report.warnings,
        )
        return corpus
