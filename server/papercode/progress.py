"""Progress on stderr for long loads: counts, rate and ETA on a terminal, silence otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class LoadProgress:
    """A `ProgressCallback` that redraws one stderr line at most every `interval` seconds.

    When stderr is not a terminal (a host launching the stdio server, CI) it stays quiet:
    the loader's one-line summary in the log says what was loaded.
    """

    def __init__(self, label: str = "loading records", stream: TextIO | None = None, interval: float = 0.25) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._label = label
        self._interval = interval
        self._started = time.monotonic()
        self._last_draw = 0.0
        self.enabled = self._stream.isatty()

    def __call__(self, done: int, total: int, records: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = done >= total
        if not finished and now - self._last_draw < self._interval:
            return
        self._last_draw = now
        self._stream.write("\r" + self.line(done, total, records, now - self._started) + ("\n" if finished else ""))
        self._stream.flush()

    def line(self, done: int, total: int, records: int, elapsed: float) -> str:
        rate = records / elapsed if elapsed > 0 else 0.0
        remaining = (total - done) * (elapsed / done) if done else 0.0
        eta = "done" if done >= total else f"ETA {_duration(remaining)}"
        return f"{self._label}: {done:,}/{total:,} files, {records:,} records, {rate:,.0f} records/s, {eta}   "


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
