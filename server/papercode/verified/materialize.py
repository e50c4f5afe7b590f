"""Verified code: get a sample's source file, rebuild its harvested module, check the hash, store it.

`Materializer` does this for the samples of one source file (one read or download, one parse,
however many samples the file holds); `materialize_corpus` runs it over a corpus for
`papercode materialize`; `VerifiedCode` serves `get_code`: the store first, then (unless
offline) an on-demand download, remembering what failed so a bad file is not fetched again.
Code is stored and served only when its rebuilt hash equals the sample's `code_sha256`, and
never for a sample whose licence allows only a pointer. Nothing here imports MCP.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import anyio
import anyio.to_thread

from papercode.core.records import NO_LICENCE
from papercode.index.paper_index import SampleRow

from .harvest import HarvestedModule, SourceModule, interpreter, requires_of, unsupported_language
from .sources import MAX_SOURCE_SIZE_TEXT, ConnectFailure, LocalClones, SourceFetcher, SourceFile, SourceLocation, locate
from .store import CodeStore

log = logging.getLogger(__name__)

Outcome = Literal[
    "verified",
    "already_stored",
    "licence_restricted",
    "not_materialized",
    "unsupported_language",
    "invalid_location",
    "file_missing",
    "fetch_failed",
    "too_large",
    "syntax_error",
    "entry_missing",
    "hash_mismatch",
]
# What each outcome means, for docs/verified-code.md, the CLI summary and the agent's `note`.
OUTCOMES: dict[Outcome, str] = {
    "verified": "rebuilt from its source file; the hash matches; stored",
    "already_stored": "a verified copy was already in the store",
    "licence_restricted": "the licence allows only a pointer: never fetched, stored or shown",
    "not_materialized": "no verified copy is stored and fetching is off (--offline)",
    "unsupported_language": "not a Python sample; only Python can be rebuilt",
    "invalid_location": "the sample's repo or path is not a plain owner/name and relative path; nothing was requested",
    "file_missing": "the source file is not in the repository (or the local clone) any more",
    "fetch_failed": (
        "the download failed: the host cannot be reached from here (a name that does not resolve, a refused connection) or"
        " TLS to it fails (a certificate not trusted here), or it timed out or answered an error"
    ),
    "too_large": f"the source file is over the {MAX_SOURCE_SIZE_TEXT} cap",
    "syntax_error": "the source file does not parse",
    "entry_missing": "the source file no longer has the sample's top-level function",
    "hash_mismatch": "the rebuilt code does not hash to code_sha256: the file changed since the harvest, or this Python renders it differently",
}
# Failures that say something about the file or this interpreter, not about the network: remembered.
_LASTING: frozenset[Outcome] = frozenset(
    {"unsupported_language", "invalid_location", "file_missing", "too_large", "syntax_error", "entry_missing", "hash_mismatch"}
)
CodeSource = Literal["store", "fetched", "local"]
STORE_RESCAN_SECONDS = 30.0  # how soon a sample's `stored` sees a file another process added to or removed from the store


@dataclass(frozen=True, slots=True)
class SampleOutcome:
    """What happened to one sample's code; `code` only when it is verified."""

    sha: str
    repo: str
    path: str
    entry: str
    outcome: Outcome
    reason: str = ""
    code: str | None = None
    requires: tuple[str, ...] = ()
    source: CodeSource | None = None
    connect_failed: ConnectFailure | None = None  # fetch_failed because this machine cannot connect to the host (see `SourceFile`)

    @property
    def verified(self) -> bool:
        return self.code is not None


def outcome_for(row: SampleRow, outcome: Outcome, reason: str = "", **found: object) -> SampleOutcome:
    return SampleOutcome(row.code_sha256, row.repo, row.path, row.entry, outcome, reason or OUTCOMES[outcome], **found)  # type: ignore[arg-type]


class Materializer:
    """Source file -> harvested modules -> hash check -> store, for the samples of one file."""

    def __init__(self, store: CodeStore, *, clones: LocalClones | None = None, fetcher: SourceFetcher | None = None) -> None:
        self.store = store
        self.clones = clones
        self.fetcher = fetcher

    async def materialize_file(self, rows: Sequence[SampleRow]) -> list[SampleOutcome]:
        """Outcomes for samples that share one (repo, path), in order."""
        pending = [row for row in rows if row.inline_ok and _is_python(row)]
        refused = {id(row): _refusal(row) for row in rows if not (row.inline_ok and _is_python(row))}
        found: dict[int, SampleOutcome] = {}
        if pending:
            location = locate(pending[0].repo, pending[0].path)
            if isinstance(location, str):
                found = {id(row): outcome_for(row, "invalid_location", f"not requested: {location}") for row in pending}
            else:
                source, origin = await self._source(location)
                if source.outcome != "ok" or source.content is None:
                    failed: Outcome = source.outcome if source.outcome != "ok" else "fetch_failed"
                    found = {id(row): outcome_for(row, failed, source.reason, connect_failed=source.connect_failed) for row in pending}
                else:
                    verified = await anyio.to_thread.run_sync(self._verify_and_store, source.content, pending, origin)
                    found = {id(row): outcome for row, outcome in zip(pending, verified, strict=True)}
        return [refused.get(id(row)) or found[id(row)] for row in rows]

    async def _source(self, location: SourceLocation) -> tuple[SourceFile, CodeSource]:
        """The file from the local clones when they have it, else downloaded (when fetching is on)."""
        if self.clones is not None:
            local = await anyio.to_thread.run_sync(self.clones.read, location)
            if local.outcome != "file_missing" or self.fetcher is None:
                return local, "local"
        if self.fetcher is None:
            return SourceFile("file_missing", reason="no local clone has this file and fetching is off"), "local"
        return await self.fetcher.fetch(location), "fetched"

    def _verify_and_store(self, content: bytes, rows: Sequence[SampleRow], origin: CodeSource) -> list[SampleOutcome]:
        """Parse once, rebuild each sample's entry, store the ones whose hash matches (blocking)."""
        module = SourceModule.parse(content)
        outcomes = []
        for row in rows:
            rebuilt = module if not isinstance(module, SourceModule) else module.rebuild(row.entry)
            if not isinstance(rebuilt, HarvestedModule):
                outcomes.append(outcome_for(row, rebuilt.outcome, rebuilt.reason))
            elif rebuilt.sha256_prefix != row.code_sha256:
                reason = (
                    f"rebuilt code hashes to {rebuilt.sha256_prefix}, not {row.code_sha256}: the file changed since the harvest, "
                    f"or {interpreter()} renders it differently (CPython 3.11 reproduces the harvest)"
                )
                outcomes.append(outcome_for(row, "hash_mismatch", reason))
            else:
                try:
                    self.store.write(rebuilt.code)
                except OSError as exc:  # still verified: it is served from memory this once
                    log.warning("could not store verified code %s: %s", row.code_sha256, exc)
                outcomes.append(outcome_for(row, "verified", code=rebuilt.code, requires=rebuilt.requires, source=origin))
        return outcomes


def _is_python(row: SampleRow) -> bool:
    return (row.language or "python").lower() == "python"


def _refusal(row: SampleRow) -> SampleOutcome:
    # Licence first: a pointer-only sample is refused whatever else is true of it.
    if not row.inline_ok:
        return outcome_for(row, "licence_restricted", f"licence {row.licence or NO_LICENCE} allows only a pointer: link to file_url")
    return outcome_for(row, "unsupported_language", unsupported_language(row.language).reason)


def by_source_file(rows: Iterable[SampleRow]) -> list[list[SampleRow]]:
    """Samples grouped by (repo, path), each code hash once, in first-seen order."""
    groups: dict[tuple[str, str], dict[tuple[str, str], SampleRow]] = {}
    for row in rows:
        groups.setdefault((row.repo, row.path), {}).setdefault((row.code_sha256, row.entry), row)
    return [list(group.values()) for group in groups.values()]


# -- the whole corpus: `papercode materialize` ----------------------------------------------

MaterializeProgress = Callable[[int, int, Counter[str]], None]
"""Called as (samples done, samples in all, outcomes so far)."""


@dataclass(slots=True)
class MaterializeSummary:
    outcomes: list[SampleOutcome] = field(default_factory=list)

    @property
    def counts(self) -> Counter[str]:
        return Counter(outcome.outcome for outcome in self.outcomes)

    @property
    def usable(self) -> int:
        """Samples whose verified code is in the store now."""
        counts = self.counts
        return counts["verified"] + counts["already_stored"]


async def materialize_corpus(
    rows: Sequence[SampleRow], materializer: Materializer, progress: MaterializeProgress | None = None, files_at_once: int = 8
) -> MaterializeSummary:
    """Materialize every sample in `rows`; what is already stored (and verifies) is skipped."""
    summary = MaterializeSummary()
    counts: Counter[str] = Counter()
    groups = by_source_file(rows)
    total = sum(map(len, groups))
    limiter = anyio.CapacityLimiter(files_at_once)

    def record(outcomes: Iterable[SampleOutcome]) -> None:
        for outcome in outcomes:
            summary.outcomes.append(outcome)
            counts[outcome.outcome] += 1
        if progress is not None:
            progress(len(summary.outcomes), total, counts)

    async def one_file(group: list[SampleRow]) -> None:
        async with limiter:
            stored = await anyio.to_thread.run_sync(lambda: {row.code_sha256 for row in group if materializer.store.read(row.code_sha256)})
            record(outcome_for(row, "already_stored") for row in group if row.code_sha256 in stored and row.inline_ok)
            rest = [row for row in group if row.code_sha256 not in stored or not row.inline_ok]
            if rest:
                record(await materializer.materialize_file(rest))

    async with anyio.create_task_group() as tasks:
        for group in groups:
            tasks.start_soon(one_file, group)
    return summary


# -- one code hash, on demand: `get_code` ---------------------------------------------------


class VerifiedCode:
    """Verified code for `get_code`: from the store, else (unless offline) downloaded on demand.

    A lasting failure (the file is gone, changed, or renders differently here) is remembered for
    the life of the process, so asking again answers at once; network failures are not (the
    fetcher stops asking a failing base for a while by itself).
    """

    def __init__(
        self, store: CodeStore, materializer: Materializer | None = None, remember: int = 10_000, materialize_flags: tuple[str, ...] = ()
    ) -> None:
        self.store = store
        # The flags this server was started with that `papercode materialize` needs too, to store code where the
        # server reads it (`--records`, `--code-dir`): named, never their values (an answer shows no server path).
        self.materialize_flags = materialize_flags
        self._materializer = materializer
        self._failures: OrderedDict[str, SampleOutcome] = OrderedDict()
        self._remember = remember

    @property
    def fetching(self) -> bool:
        return self._materializer is not None and self._materializer.fetcher is not None

    async def aclose(self) -> None:
        if self._materializer is not None and self._materializer.fetcher is not None:
            await self._materializer.fetcher.aclose()

    def is_stored(self, sha: str) -> bool:
        """A verified copy is in the store, served as it stands (blocking: a `stat`; the first time, a read)."""
        return self.store.contains(sha)

    @property
    def stored_lookup(self) -> Callable[[str], bool] | None:
        """`is_stored` from memory (`CodeStore.holds`: no file touched, fit for the event loop) once the store
        has been scanned (`keep_current`); None before, when only `is_stored` (blocking) can say."""
        return self.store.holds if self.store.scanned else None

    async def keep_current(self, every: float = STORE_RESCAN_SECONDS) -> None:
        """While serving: scan the store in a worker thread (every file verified, the first time), then again
        every `every` seconds (a `stat` of each directory; a changed one is listed again), so `stored_lookup`
        sees what other processes add or remove."""
        while True:
            await anyio.to_thread.run_sync(self.store.scan)
            await anyio.sleep(every)

    async def obtain(self, rows: Sequence[SampleRow]) -> SampleOutcome:
        """The code all of `rows` (samples sharing one code hash) point at, or why it is withheld."""
        first = rows[0]
        restricted = next((row for row in rows if not row.inline_ok), None)
        if restricted is not None:  # the same code under a pointer-only licence anywhere: never shown
            return _refusal(restricted)
        stored = await anyio.to_thread.run_sync(self.store.read, first.code_sha256)
        if stored is not None:
            requires = await anyio.to_thread.run_sync(requires_of, stored.code)
            return outcome_for(first, "verified", "", code=stored.code, requires=requires, source="store")
        if self._materializer is None:
            return outcome_for(first, "not_materialized")
        remembered = self._failures.get(first.code_sha256)
        if remembered is not None:
            return remembered
        failures: list[SampleOutcome] = []
        for group in by_source_file(rows):
            for outcome in await self._materializer.materialize_file(group):
                if outcome.verified:
                    return outcome
                failures.append(outcome)
        failure = failures[0]
        if all(outcome.outcome in _LASTING for outcome in failures):
            self._failures[first.code_sha256] = failure
            if len(self._failures) > self._remember:
                self._failures.popitem(last=False)
        return failure
