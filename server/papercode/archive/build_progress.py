"""Progress of an archive build on stderr: one redrawn line on a terminal, silence otherwise (`core.terminal`)."""

from __future__ import annotations

from typing import TextIO

from papercode.core.terminal import TerminalProgress, duration


class ArchiveBuildProgress(TerminalProgress):
    """Share of the source bytes done (the current file counted by its rows done), counts, and an ETA."""

    def __init__(self, total_bytes: int, stream: TextIO | None = None, interval: float = 0.25) -> None:
        super().__init__("building archive", stream, interval)
        self._total = max(total_bytes, 1)

    def update(self, done_bytes: float, what: str, papers: int, links: int) -> None:
        if self.enabled:
            done = min(int(done_bytes), self._total - 1)  # the line ends with `finish`, not when the bytes are in
            self.draw(done, self._total, f"{done / self._total:4.0%} {what}, {papers:,} papers, {links:,} links")

    def stage(self, what: str) -> None:
        """A stage after the rows are read (its length unknown): its name, and the time so far."""
        self.show(f"{what} ({duration(self.elapsed())} so far)")

    def finish(self) -> None:
        self.clear()
