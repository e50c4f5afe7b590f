"""Progress of an archive build on stderr: one redrawn line on a terminal (`core.terminal`); elsewhere (a pipe, a log
file, CI) one line as each phase starts (each table file read, then each step after the rows), so a build that takes
minutes is never silent."""

from __future__ import annotations

from typing import TextIO

from papercode.core.terminal import TerminalProgress, duration


class ArchiveBuildProgress(TerminalProgress):
    """Share of the source bytes done (the current file counted by its rows done), counts, and an ETA."""

    def __init__(self, total_bytes: int, stream: TextIO | None = None, interval: float = 0.25) -> None:
        super().__init__("building archive", stream, interval)
        self._total = max(total_bytes, 1)
        self._phase = ""  # when not on a terminal: the phase last said

    def update(self, done_bytes: float, what: str, papers: int, links: int) -> None:
        if self.enabled:
            done = min(int(done_bytes), self._total - 1)  # the line ends with `finish`, not when the bytes are in
            self.draw(done, self._total, f"{done / self._total:4.0%} {what}, {papers:,} papers, {links:,} links")
        else:
            self._phase_line(what if what.startswith("reading ") else f"reading {what}", f"{papers:,} papers, {links:,} links")

    def stage(self, what: str) -> None:
        """A stage after the rows are read (its length unknown): its name, and the time so far."""
        if self.enabled:
            self.show(f"{what} ({duration(self.elapsed())} so far)")
        else:
            self._phase_line(what)

    def finish(self) -> None:
        self.clear()

    def _phase_line(self, phase: str, counts: str = "") -> None:
        """One line as a phase starts, off a terminal; nothing while it goes on."""
        if phase == self._phase:
            return
        self._phase = phase
        self.say(", ".join(part for part in (phase, counts, f"{duration(self.elapsed())} so far") if part))
