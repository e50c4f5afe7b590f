"""Live reload: rebuild the corpus in the background and swap it in atomically.

`LiveCorpus` is the server's corpus source. Every request reads it once and keeps that corpus
for the whole call, so calls in flight finish on the old index while a rebuild runs in a worker
thread; the swap is one reference assignment. A failed rebuild keeps the old corpus and says why.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.abc
import anyio.to_thread

from .corpus import Corpus

log = logging.getLogger(__name__)

Builder = Callable[[bytes | None], Corpus]
"""Builds a corpus for the records whose fingerprint it is given (None: it works it out)."""
SwapListener = Callable[[Corpus], Awaitable[None]]
FailureListener = Callable[[str], Awaitable[None]]
T = TypeVar("T")

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
        self._on_swap: list[SwapListener] = []
        self._on_failure: list[FailureListener] = []
        self.last_error: str | None = None
        self.reloads = 0

    def __call__(self) -> Corpus:
        return self._current

    def health(self) -> dict[str, object]:
        """What `GET /healthz` says: readiness and counts only (no paths, no corpus details)."""
        return {"status": "ok", "papers": len(self._current.index.papers), "last_reload_error": self.last_error}

    def on_swap(self, listener: SwapListener) -> None:
        """Call `listener` with the new corpus after each successful swap (e.g. to notify clients)."""
        self._on_swap.append(listener)

    def on_failure(self, listener: FailureListener) -> None:
        """Call `listener` with the reason after each failed reload."""
        self._on_failure.append(listener)

    async def reload(self, why: str) -> bool:
        """Rebuild now; True when the new corpus was swapped in."""
        async with self._rebuilding:
            log.info("reloading records (%s)", why)
            self._seen = await anyio.to_thread.run_sync(self._fingerprint)
            try:
                fresh = await anyio.to_thread.run_sync(self._build, self._seen)
            except Exception as exc:  # keep serving the old corpus whatever went wrong
                failure: str | None = f"{type(exc).__name__}: {exc}"
            else:
                fatal = [p for p in fresh.index.report.problems if p.code in _FATAL_CODES]
                failure = "; ".join(f"{p.path}: {p.reason}" for p in fatal) or None
            if failure is None:
                self._current = fresh
                self.last_error = None
                self.reloads += 1
                log.info("reloaded: %d papers, %d samples", len(fresh.index.papers), len(fresh.index.samples))
            else:
                self.last_error = failure
                log.error("reload failed, still serving the previous index: %s", failure)
        if failure is None:
            await _tell(self._on_swap, fresh)
        else:
            await _tell(self._on_failure, failure)
        return failure is None

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


async def _tell(listeners: list[Callable[[T], Awaitable[None]]], value: T) -> None:
    for listener in listeners:
        try:
            await listener(value)
        except Exception:
            log.exception("reload listener failed")
