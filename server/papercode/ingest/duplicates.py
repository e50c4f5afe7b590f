"""Duplicates: one record per key (arXiv id, else slug); the later `read_at` wins, then the first by path."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from papercode.core.ids import duplicate_key
from papercode.core.load_report import LoadReport

from .decode import LoadedRecord


class RecordFacts(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """What admission needs to know of a record (see `DuplicateFilter`), without the record: what the child process of
    a cold build is sent of each record the other process read, as it is (msgpack, a bare array)."""

    path: str
    line: int | None
    arxiv_id: str | None
    slug: str | None
    read_at: str

    @property
    def duplicate_key(self) -> str:
        return duplicate_key(self.arxiv_id, self.slug)


def facts(item: LoadedRecord) -> RecordFacts:
    return RecordFacts(item.path, item.line, item.arxiv_id, item.slug, item.read_at)


class DuplicateFilter:
    """One record per key (arXiv id, else slug): the later `read_at` wins, then the first seen.

    Files are read in path order, so "first seen" is "first by path". Each loser is reported.
    """

    def __init__(self, report: LoadReport) -> None:
        self._report = report
        self._kept: dict[str, tuple[datetime, str, int | None]] = {}  # duplicate key -> (read_at, path, line)

    def admit(self, item: LoadedRecord | RecordFacts, key: str | None = None, read_at: str | None = None) -> bool:
        """True when `item` is new or replaces the record kept so far for its key (`key` and `read_at`: the item's,
        when the caller has them already)."""
        key = item.duplicate_key if key is None else key
        moment = _instant(item.read_at if read_at is None else read_at)
        current = self._kept.get(key)
        if current is not None:
            if moment <= current[0]:
                self._report_loser(key, (item.path, item.line), current[1:])
                return False
            self._report_loser(key, current[1:], (item.path, item.line))
        self._kept[key] = (moment, item.path, item.line)
        return True

    def _report_loser(self, key: str, drop: tuple[str, int | None], keep: tuple[str, int | None]) -> None:
        where = f"{keep[0]}:{keep[1]}" if keep[1] is not None else keep[0]
        reason = f"duplicate of {key}; kept the one in {where} (later read_at, else first by path)"
        self._report.add("error", "duplicate", drop[0], reason, drop[1])


# -- reading -------------------------------------------------------------------------------


_NEVER = datetime.min.replace(tzinfo=UTC)


def _instant(read_at: str) -> datetime:
    """`read_at` as an instant, so +02:00 and Z compare right; missing or unparseable is oldest."""
    if not read_at:  # an archive row has none: no exception per record
        return _NEVER
    try:
        moment = datetime.fromisoformat(read_at)
    except ValueError:
        return _NEVER
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
