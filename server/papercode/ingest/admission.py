"""Which records become which papers (`Admission`): one paper per key, a duplicate's winner in the loser's place.

The index builder and the search builder's child process both run it over the same records, so both number every paper
alike.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import NamedTuple

from papercode.core.load_report import LoadReport

from .decode import LoadedRecord
from .duplicates import DuplicateFilter, RecordFacts

RecordSink = Callable[[LoadedRecord, "Admitted | None"], None]
"""Told of every record the index builder reads, and what admission made of it (None: not admitted)."""


class Admitted(NamedTuple):
    ordinal: int
    replacing: bool  # it takes the place of a duplicate it beat
    slug: str | None  # None when another paper has its slug already


class Admission:
    """Which records become which papers: one per key (see `DuplicateFilter`), a duplicate's
    winner taking the loser's ordinal, a taken slug dropped (or the record, without an arXiv id).

    The index builder and the search builder's process both run it over the same records, so
    they agree on every ordinal; `fingerprint` proves it (it covers every admitted record).
    """

    def __init__(self, report: LoadReport) -> None:
        self.report = report
        self.by_arxiv: dict[str, int] = {}
        self.by_slug: dict[str, int] = {}
        self.slugs: list[str | None] = []  # per ordinal
        self._ordinals: dict[str, int] = {}  # duplicate key -> paper ordinal
        self._duplicates = DuplicateFilter(report)
        self._fingerprint = hashlib.sha256()

    @property
    def fingerprint(self) -> bytes:
        return self._fingerprint.digest()

    def admit(self, item: LoadedRecord | RecordFacts) -> Admitted | None:
        key, read_at = item.duplicate_key, item.read_at  # each worked out once: this runs per record
        if not self._duplicates.admit(item, key, read_at):
            return None
        self._fingerprint.update(f"{key}\0{read_at}\0{item.path}\0{item.line}\0".encode())
        by_slug = self.by_slug
        ordinal = self._ordinals.get(key, len(self.slugs))
        arxiv_id, slug = item.arxiv_id, item.slug
        replacing = ordinal < len(self.slugs)
        if replacing:
            old_slug = self.slugs[ordinal]
            if old_slug is not None and by_slug.get(old_slug) == ordinal:
                del by_slug[old_slug]
        if slug is not None and slug in by_slug:
            if arxiv_id is None:
                self.report.add("error", "duplicate", item.path, f"slug {slug} is already taken and the record has no arXiv id", item.line)
                return None
            self.report.add("warning", "duplicate_slug", item.path, f"slug {slug} is already taken; reachable by arXiv id only", item.line)
            slug = None
        if replacing:
            self.slugs[ordinal] = slug
        else:
            self.slugs.append(slug)
        self._ordinals[key] = ordinal
        if arxiv_id:
            self.by_arxiv[arxiv_id] = ordinal
        if slug:
            by_slug[slug] = ordinal
        return Admitted(ordinal, replacing, slug)
