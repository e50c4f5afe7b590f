"""Live reload: rebuild the corpus in the background and swap it in atomically.

`LiveCorpus` is the server's corpus source. Every request reads it once and keeps that corpus
for the whole call, so calls in flight finish on the old index while a rebuild runs in a worker
thread; the swap is one reference assignment. A failed rebuild keeps the old corpus and says why.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import anyio.to_thread

from .corpus import Corpus

log = logging.getLogger(__name__)

Builder = Callable[[bytes | None], Corpus]
"""Builds a corpus for the records whose fingerprint it is given (None: it works it out)."""
Listener = Callable[[], Awaitable[None]]

# Problems that mean the records could not be read at all: serving an empty corpus would lose
# everything the old one had, so the rebuild counts as failed.
_FATAL_CODES = frozenset({"missing_directory"})


class LiveCorpus:
    def __init__(self, build: Builder, fingerprint: Callable[[], bytes], initial: Corpus | None = None) -> None:
        self._build = build
        self._fingerprint = fingerprint
        self._current = initial if initial is not None else build(None)
        # A corpus from `Corpus.open` knows the fingerprint it was built from: no second walk.
        self._seen = self._current.records_key or fingerprint()
        self._rebuilding = anyio.Lock()
        self._listeners: list[Listener] = []
        self.last_error: str | None = None
        self.reloads = 0

    def __call__(self) -> Corpus:
        return self._current

    def on_swap(self, listener: Listener) -> None:
        """Call `listener` after each successful swap (e.g. to notify clients)."""
        self._listeners.append(listener)

    async def reload(self, why: str) -> bool:
        """Rebuild now; True when the new corpus was swapped in."""
        async with self._rebuilding:
            log.info("reloading records (%s)", why)
            self._seen = await anyio.to_thread.run_sync(self._fingerprint)
            try:
                fresh = await anyio.to_thread.run_sync(self._build, self._seen)
            except Exception as exc:  # keep serving the old corpus whatever went wrong
                return self._failed(f"{type(exc).__name__}: {exc}")
            fatal = [p for p in fresh.index.report.problems if p.code in _FATAL_CODES]
            if fatal:
                return self._failed("; ".join(f"{p.path}: {p.reason}" for p in fatal))
            self._current = fresh
            self.last_error = None
            self.reloads += 1
            log.info("reloaded: %d papers, %d samples", len(fresh.index.papers), len(fresh.index.samples))
        for listener in self._listeners:
            try:
                await listener()
            except Exception:
                log.exception("reload listener failed")
        return True

    def _failed(self, reason: str) -> bool:
        self.last_error = reason
        log.error("reload failed, still serving the previous index: %s", reason)
        return False

    async def watch(self, interval: float) -> None:
        """Poll the record files every `interval` seconds; rebuild when any changed."""
        while True:
            await anyio.sleep(interval)
            current = await anyio.to_thread.run_sync(self._fingerprint)
            if current != self._seen:
                await self.reload("records changed")

    async def reload_on_sighup(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Rebuild on each SIGHUP; `task_status` is set once the handler is installed."""
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            task_status.started()
            async for _ in signals:
                await self.reload("SIGHUP")
