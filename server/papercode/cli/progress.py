"""Progress on stderr for long work: counts, rate and ETA on a terminal, silence otherwise."""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from papercode.core.terminal import TerminalProgress


class LoadProgress(TerminalProgress):
    """A loader `ProgressCallback`: files done of all, records read and their rate."""

    def __init__(self, label: str = "loading records", stream: TextIO | None = None, interval: float = 0.25) -> None:
        super().__init__(label, stream, interval)

    def __call__(self, done: int, total: int, records: int) -> None:
        if self.enabled:
            self.draw(done, total, self.detail(done, total, records, self.elapsed()))

    def line(self, done: int, total: int, records: int, elapsed: float) -> str:
        return self.render(self.detail(done, total, records, elapsed), done, total, elapsed)

    @staticmethod
    def detail(done: int, total: int, records: int, elapsed: float) -> str:
        rate = records / elapsed if elapsed > 0 else 0.0
        return f"{done:,}/{total:,} files, {records:,} records, {rate:,.0f} records/s"


class MaterializeProgress(TerminalProgress):
    """`papercode materialize`: samples done of all, and how many verified so far."""

    def __init__(self, stream: TextIO | None = None, interval: float = 0.25) -> None:
        super().__init__("materializing", stream, interval)

    def __call__(self, done: int, total: int, outcomes: Counter[str]) -> None:
        usable = outcomes["verified"] + outcomes["already_stored"]
        self.draw(done, total, f"{done:,}/{total:,} samples, {usable:,} verified")
