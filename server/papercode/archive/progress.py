"""Progress of an archive build on stderr: one redrawn line on a terminal, silence otherwise (the house way,
as `papercode.progress` does it for loading; kept here so the archive package stands alone)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class BuildProgress:
    """Share of the source bytes done (the current file counted by its rows done), counts, and an ETA."""

    def __init__(self, total_bytes: int, stream: TextIO | None = None, interval: float = 0.25) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._total = max(total_bytes, 1)
        self._interval = interval
        self._started = time.monotonic()
        self._last = 0.0
        self._drawn = False
        self.enabled = self._stream.isatty()

    def update(self, done_bytes: float, what: str, papers: int, links: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < self._interval:
            return
        self._last = now
        share = min(done_bytes / self._total, 1.0)
        elapsed = now - self._started
        eta = f"ETA {_duration(elapsed * (1 - share) / share)}" if share > 0.01 else "ETA …"
        line = f"building archive: {share:4.0%} {what}, {papers:,} papers, {links:,} links, {eta}"
        self._stream.write(f"\r{line:<100}")
        self._stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self.enabled and self._drawn:
            self._stream.write("\r" + " " * 100 + "\r")
            self._stream.flush()


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
