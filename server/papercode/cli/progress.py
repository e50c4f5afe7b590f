"""Progress on stderr for long work: counts, rate and ETA on a terminal, silence otherwise."""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TextIO


class TerminalProgress:
    """Redraws one stderr line at most every `interval` seconds.

    When stderr is not a terminal (a host launching the stdio server, CI) it stays quiet: the
    one-line summary in the log or on stdout says what was done.
    """

    def __init__(self, label: str, stream: TextIO | None = None, interval: float = 0.25) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._label = label
        self._interval = interval
        self._started = time.monotonic()
        self._last_draw = 0.0
        self.enabled = self._stream.isatty()

    def draw(self, done: int, total: int, detail: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = done >= total
        if not finished and now - self._last_draw < self._interval:
            return
        self._last_draw = now
        self._stream.write("\r" + self.render(detail, done, total, now - self._started) + ("\n" if finished else ""))
        self._stream.flush()

    def render(self, detail: str, done: int, total: int, elapsed: float) -> str:
        remaining = (total - done) * (elapsed / done) if done else 0.0
        eta = "done" if done >= total else f"ETA {_duration(remaining)}"
        return f"{self._label}: {detail}, {eta}   "

    def elapsed(self) -> float:
        return time.monotonic() - self._started


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


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
