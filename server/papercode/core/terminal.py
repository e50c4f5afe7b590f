"""One redrawn line of progress on stderr for long work, on a terminal (off one, a line a phase where the work asks
for it: `say`): the CLI's load and materialize progress and the archive build draw through it."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class TerminalProgress:
    """Redraws one stderr line at most every `interval` seconds.

    When stderr is not a terminal (a host launching the stdio server, CI) it stays quiet: the
    one-line summary in the log or on stdout says what was done (an archive build, which takes minutes, writes a
    line as each phase starts instead (`say`): `archive.build_progress`).
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
        eta = "done" if done >= total else f"ETA {duration(remaining)}"
        return f"{self._label}: {detail}, {eta}   "

    def show(self, text: str) -> None:
        """Draw `text` after the label at once (a step whose length is unknown); the next `draw` or `clear` replaces it."""
        if self.enabled:
            self._stream.write(f"\r{self._label}: {text}" + " " * 10)
            self._stream.flush()
            self._last_draw = time.monotonic()

    def say(self, text: str) -> None:
        """Write `text` after the label as a whole line, whatever the stream (off a terminal, where nothing is redrawn)."""
        self._stream.write(f"{self._label}: {text}\n")
        self._stream.flush()

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def clear(self) -> None:
        """Wipe a line left unfinished (work that ends without reaching its total)."""
        if self.enabled and self._last_draw:
            self._stream.write("\r" + " " * 100 + "\r")
            self._stream.flush()


def duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
