"""The live corpus: built in the background while the server already answers, reloaded without a restart.

`LiveCorpus` is the server's corpus source. It starts empty ("loading") and takes the stages of
`corpus.open_stages` as they come: an older snapshot to serve meanwhile ("stale"), the keyed index
("keyed": every lookup but full-text search works), then the complete corpus ("complete"). A call
that needs more than is ready waits for it, bounded, and otherwise gets a coded `loading` error that
says when to come back. Every request reads the corpus once and keeps it for the whole call, so
calls in flight finish on the old index while a reload builds the next one in a worker thread; the
swap is one reference assignment. A failed reload keeps the old corpus and says why; a failed first load
keeps whatever stage it reached (the keyed index, if any) and every call it cannot answer says why at once
(`load_failed`) until a reload succeeds.
"""

from __future__ import annotations

import logging
import math
import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Literal, TypeVar

import anyio
import anyio.abc
import anyio.to_thread

from papercode.core.errors import QueryError
from papercode.core.load_report import without_paths

from .stages import Corpus, Stage

log = logging.getLogger(__name__)

StagesBuilder = Callable[[bytes | None], Iterator[Stage]]
"""The stages of opening the records whose fingerprint it is given (None: it works it out)."""
SwapListener = Callable[[Corpus], Awaitable[None]]
FailureListener = Callable[[str], Awaitable[None]]
ProgressReport = Callable[[float, float | None, str], Awaitable[None]]
"""(progress, total, message), as MCP progress notifications carry them."""
Need = Literal["index", "search"]
# The tools that need the full-text index: search, and get_paper, whose abstract lives beside it. The others answer
# from the keyed index as soon as it is served.
FULL_TEXT_TOOLS = ("search_papers", "get_paper")
_WAITING = f"{' and '.join(FULL_TEXT_TOOLS)} wait for it"
State = Literal["loading", "stale", "keyed", "complete"]
T = TypeVar("T")

# Problems that mean the records could not be read at all: serving an empty corpus would lose
# everything the old one had, so the rebuild counts as failed.
_FATAL_CODES = frozenset({"missing_directory"})
_PROGRESS_EVERY_SECONDS = 1.0
# What is left once keyed-ready, as a share of the time to keyed-ready: the full-text index is built after the keyed
# one, and takes longer (docs/decisions/cold-build.md), so a `loading` answer's wait is estimated from this share.
_SEARCH_AFTER_KEYED = 0.4


class ColdBuildProgress:
    """How far the records' cold build is (files done and in all, records read), and estimates from it (not the archive
    build's: `archive.build_progress.ArchiveBuildProgress`).

    Written by the build thread, read by the event loop: plain assignments of immutable values.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.started = clock()
        self.files = (0, 0)
        self.records = 0
        self.keyed_after: float | None = None  # seconds from start to keyed-ready

    def __call__(self, done: int, total: int, records: int) -> None:
        self.files, self.records = (done, total), records

    def restart(self) -> None:
        self.started, self.files, self.records, self.keyed_after = self._clock(), (0, 0), 0, None

    def keyed(self) -> None:
        self.keyed_after = self._clock() - self.started

    def estimate(self) -> tuple[int, int | None, int]:
        """(records indexed, records in all (estimated from the files read so far), seconds still to go)."""
        elapsed = self._clock() - self.started
        done, total = self.files
        if self.keyed_after is not None:  # only the full-text index is left
            return self.records, self.records, max(1, math.ceil(self.keyed_after * (1 + _SEARCH_AFTER_KEYED) - elapsed))
        if not done:
            return self.records, None, 0
        in_all = round(self.records * total / done)
        return self.records, in_all, max(1, math.ceil(elapsed * (total - done) / done))


class LiveCorpus:
    def __init__(self, stages: StagesBuilder, fingerprint: Callable[[], bytes], progress: ColdBuildProgress | None = None) -> None:
        self._stages = stages
        self._fingerprint = fingerprint
        self.progress = progress or ColdBuildProgress()
        self._stage: Stage | None = None
        self._changed = anyio.Event()
        self._seen = b""
        self._rebuilding = anyio.Lock()
        self._on_swap: list[SwapListener] = []
        self._on_failure: list[FailureListener] = []
        self._on_stage: list[Callable[[Stage, float], None]] = []
        self.last_error: str | None = None
        self.load_error: str | None = None  # why the first load stopped short (no paths); cleared by a reload that succeeds
        self.reloads = 0  # reloads swapped in
        self.failed_reloads = 0

    # -- what is ready ------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return "loading" if self._stage is None else self._stage.kind

    @property
    def stale_since(self) -> str | None:
        """When the snapshot being served (the records changed since) was written; None unless stale."""
        return self._stage.built_at if self._stage is not None and self._stage.kind == "stale" else None

    def ready_for(self, need: Need) -> Corpus | None:
        stage = self._stage
        if stage is None or (need == "search" and stage.corpus.search is None):
            return None
        return stage.corpus

    def __call__(self) -> Corpus:
        """The corpus for keyed lookups (call `wait_for` first where loading may not be done)."""
        corpus = self.ready_for("index")
        if corpus is None:
            raise self.not_ready("index")
        return corpus

    def not_ready(self, need: Need) -> QueryError:
        if self.load_error is not None:
            return self._load_failed()
        indexed, in_all, seconds = self.progress.estimate()
        if self._stage is not None:  # keyed lookups work; the full-text index is still being built
            return QueryError(
                "loading",
                f"the full-text index is still being built ({indexed:,} records indexed), ready in about {seconds} s; "
                f"{_WAITING}, every other tool already answers",
                f"call again in {seconds} s",
            )
        of = f" of {in_all:,}" if in_all is not None else ""
        when = f"ready in about {seconds} s" if seconds else "starting"
        return QueryError("loading", f"{indexed:,}{of} records indexed, {when}", f"call again in {max(seconds, 1)} s")

    def _load_failed(self) -> QueryError:
        what = "the records could not be loaded" if self._stage is None else "the full-text index could not be built"
        still = "" if self._stage is None else f"; every tool but {' and '.join(FULL_TEXT_TOOLS)} still answers"
        return QueryError(
            "load_failed", f"{what} ({self.load_error}){still}", "the server's log says why; after a fix, send it SIGHUP or restart it"
        )

    async def wait_for(self, need: Need, timeout: float, report: ProgressReport | None = None) -> Corpus:
        """The corpus once it can answer `need`; waits at most `timeout` seconds, reporting progress
        about every second, then raises the `loading` QueryError."""
        with anyio.move_on_after(timeout):
            while (corpus := self.ready_for(need)) is None:
                if self.load_error is not None:  # nothing more is coming: say so now, not after the wait
                    raise self._load_failed()
                if report is not None:
                    indexed, in_all, seconds = self.progress.estimate()
                    message = f"{indexed:,} records indexed" + (f", ready in about {seconds} s" if seconds else "")
                    await report(float(indexed), None if in_all is None else float(in_all), message)
                with anyio.move_on_after(_PROGRESS_EVERY_SECONDS):
                    await self._changed.wait()
            return corpus
        raise self.not_ready(need)

    def health(self) -> dict[str, object]:
        """What `GET /healthz` says: readiness and counts only (no paths, no corpus details). "degraded": complete, and
        serving what it served before the last reload, which failed."""
        stage = self._stage
        if stage is not None and stage.corpus.search is not None:
            status = "ok" if self.last_error is None else "degraded"
        else:
            status = "failed" if self.load_error is not None else "loading"
        return {
            "status": status,
            "papers": len(stage.corpus.index.papers) if stage is not None else 0,
            "reloads": self.reloads,
            "failed_reloads": self.failed_reloads,
            "last_reload_error": self.last_error,
            **({"load_error": self.load_error} if self.load_error is not None else {}),
        }

    # -- loading and reloading ----------------------------------------------------------------------

    async def load(self) -> None:
        """The first build, in a worker thread, taking each stage as it comes (run it in a task).

        Whatever goes wrong ends the load, never the server: what was served stays served, and `load_error` says why.
        """
        async with self._rebuilding:
            self.progress.restart()
            started = time.monotonic()
            served_stale = False
            try:
                stages = self._stages(None)
                while (stage := await anyio.to_thread.run_sync(next, stages, None, abandon_on_cancel=True)) is not None:
                    self._advance(stage)
                    for listener in self._on_stage:
                        listener(stage, time.monotonic() - started)
                    served_stale = served_stale or stage.kind == "stale"
                    if stage.kind == "complete" and served_stale:  # the fresh corpus replaces the stale one: a swap, as on reload
                        await _tell(self._on_swap, stage.corpus)
            except Exception as exc:
                log.exception("loading the records failed")  # the operator's log: the traceback, paths in full
                if self.state != "complete":  # else what failed came after (nothing a call waits for)
                    self.load_error = self._shown(f"{type(exc).__name__}: {exc}", None)
                    self._wake()
            if self._stage is not None:
                self._seen = self._stage.corpus.records_key or b""

    def _advance(self, stage: Stage) -> None:
        if stage.kind == "keyed":
            self.progress.keyed()
        self._stage = stage
        self._wake()

    def _wake(self) -> None:
        """Wake every call waiting in `wait_for` to look again."""
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    def on_stage(self, listener: Callable[[Stage, float], None]) -> None:
        """Call `listener` with each stage of the first load and the seconds since it started."""
        self._on_stage.append(listener)

    def on_swap(self, listener: SwapListener) -> None:
        """Call `listener` with the new corpus after each successful swap (e.g. to notify clients)."""
        self._on_swap.append(listener)

    def on_failure(self, listener: FailureListener) -> None:
        """Call `listener` with the reason after each failed reload."""
        self._on_failure.append(listener)

    async def reload(self, why: str) -> bool:
        """Rebuild now; True when the new corpus was swapped in (only once it is complete)."""
        async with self._rebuilding:
            log.info("reloading records (%s)", why)
            self._seen = await anyio.to_thread.run_sync(self._fingerprint)
            fresh: Corpus | None = None
            try:
                stages = self._stages(self._seen)
                while (stage := await anyio.to_thread.run_sync(next, stages, None, abandon_on_cancel=True)) is not None:
                    if stage.kind == "complete":
                        fresh = stage.corpus
            except Exception as exc:  # keep serving the old corpus whatever went wrong
                failure: str | None = f"{type(exc).__name__}: {exc}"
            else:
                failure = "no complete corpus" if fresh is None else self._why_not_served(fresh)
            if failure is None and fresh is not None:
                self._advance(Stage("complete", fresh, None))
                self.last_error = self.load_error = None
                self.reloads += 1
                log.info("reloaded: %d papers, %d samples", len(fresh.index.papers), len(fresh.index.samples))
            else:
                log.error("reload failed, still serving the previous index: %s", failure)  # the operator's log: paths in full
                self.last_error = failure = self._shown(failure or "", fresh)  # what /healthz and clients see: none
                self.failed_reloads += 1
        if failure is None and fresh is not None:
            await _tell(self._on_swap, fresh)
        else:
            await _tell(self._on_failure, failure or "")
        return failure is None

    def _why_not_served(self, fresh: Corpus) -> str | None:
        """Why `fresh` must not replace what is served (None: it may): the records could not be read at all, or the
        archive being served could not be opened again. Either would drop what the server serves and call it a success."""
        fatal = [problem for problem in fresh.index.report.problems if problem.code in _FATAL_CODES]
        if fatal:
            return "; ".join(f"{problem.path}: {problem.reason}" for problem in fatal)
        served = self._stage.corpus.archive if self._stage is not None else None
        if served is not None and fresh.archive is None:
            unserved = fresh.archive_unserved
            failure = f"the archive could not be opened again ({unserved.reason if unserved else 'it is no longer served'})"
            failure += f"; its build {served.build_id} is still served"
            return f"{failure}. Next: {unserved.next_step}" if unserved else failure
        return None

    def _shown(self, failure: str, fresh: Corpus | None) -> str:
        """`failure` as anyone outside may read it: records directories by name, no absolute path."""
        served = fresh or (self._stage.corpus if self._stage is not None else None)
        return without_paths(failure, served.index.report.roots if served is not None else ())

    async def watch(self, interval: float) -> None:
        """Poll the record files every `interval` seconds; rebuild when any changed."""
        while True:
            await anyio.sleep(interval)
            current = await anyio.to_thread.run_sync(self._fingerprint)
            if current != self._seen and (self._stage is not None or self.load_error is not None):
                await self.reload("records changed")

    async def reload_on_sighup(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Rebuild on each SIGHUP; `task_status` is set once the handler is installed."""
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            task_status.started()
            async for _ in signals:
                await self.reload("SIGHUP")


def ready_line(stage: Stage, seconds: float) -> str:
    """What a stage means for clients, in one line (the server prints it as each stage arrives)."""
    papers = f"{len(stage.corpus.index.papers):,} papers"
    if stage.kind == "stale":
        return f"answering from the snapshot of {stage.built_at} ({papers}; stale: the records changed since, rebuilding)"
    if stage.kind == "keyed":
        return f"lookups ready after {seconds:.1f} s ({papers}); full-text search is still being built"
    return f"ready after {seconds:.1f} s ({papers}, search included)"


async def _tell(listeners: list[Callable[[T], Awaitable[None]]], value: T) -> None:
    for listener in listeners:
        try:
            await listener(value)
        except Exception:
            log.exception("reload listener failed")
