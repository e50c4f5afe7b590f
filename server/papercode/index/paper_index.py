"""The in-memory index: papers, samples and repositories, with every keyed lookup a dict hit or a
binary search.

A `PaperIndex` is immutable: `builder.IndexBuilder` makes one from validated records, and a
snapshot restores one. Its storage is in `columns` (laid out for 100k+ papers and millions of
samples); the abstract is kept once, by the search engine. Nothing here imports MCP.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import operator
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, cast

from papercode.core.ids import SHA_PREFIX_FORMAT, SHA_PREFIX_LENGTH
from papercode.core.load_report import LoadReport
from papercode.core.names import task_key
from papercode.core.ordering import status_order
from papercode.core.records import KNOWN_STATUSES, OFFICIAL_KIND

from .columns import PaperColumns, SampleColumns
from .fields import CodeLinkRow, PaperDetails, PaperRow, SampleRow
from .packed import PackedStrings, SortedKeys

__all__ = [
    "BucketKey",
    "CodeLinkRow",
    "PaperDetails",
    "PaperIndex",
    "PaperRow",
    "SampleRow",
    "task_key",
]

# A listing bucket: samples sharing (status, repo_kind, language, licence, inline_ok); a missing
# language or licence is "" (the filters compare lower case, so the key holds lower case too).
BucketKey = tuple[str, str, str, str, bool]


class KeyLookup(Protocol):
    """An identifier's paper: what `PaperIndex` needs of its lookups (a dict, or `SortedKeys` from a snapshot)."""

    def get(self, key: str, /) -> int | None: ...


@dataclass(frozen=True, slots=True)
class PaperSources:
    """Where the papers came from: Code-with-Papers records first (ordinals below `archive_start`), then
    the papers only the Papers-with-Code archive has; `archive_replaced` archive rows had a record already."""

    archive_start: int
    archive_replaced: int = 0

    def from_archive(self, ordinal: int) -> bool:
        return ordinal >= self.archive_start


@dataclass(frozen=True, slots=True)
class CorpusWide:
    """The parts of an index that need every paper at once: computed over whole columns at the end of a build
    (`ingest.corpus_wide`)."""

    live_samples: int
    status_counts: Counter[str]
    repo_kind_counts: Counter[str]
    licence_counts: Counter[str]
    language_counts: Counter[str]
    papers_with_samples: int
    # Code hashes in order, with their sample ids, for exact and prefix lookups.
    sha_sorted: array[int]
    sha_samples: array[int]
    # Repositories: lower-case owner/name -> papers, official first, then by samples from it
    # (CSR layout: sorted names, offsets, papers).
    repo_names: Sequence[str]
    repo_offsets: array[int]
    repo_papers: array[int]
    # Corpus-wide listing order, bucketed so a filtered listing never scans other samples.
    listing_order: array[int]
    buckets: dict[BucketKey, array[int]]

    def parts(self) -> dict[str, Any]:
        """These parts by name, as `PaperIndex` takes them (not copied)."""
        return {spec.name: getattr(self, spec.name) for spec in fields(CorpusWide)}


@dataclass(frozen=True, slots=True)
class PaperIndex(CorpusWide):
    """Read-only lookups over one loaded corpus (built by `builder.IndexBuilder`), with its corpus-wide parts."""

    report: LoadReport
    papers: PaperColumns
    samples: SampleColumns
    by_arxiv: KeyLookup  # arXiv id -> paper: a dict when built, `SortedKeys` when restored
    by_slug: KeyLookup  # slug -> paper, likewise
    fingerprint: bytes  # identifies what was indexed: cursors are bound to it
    snapshots: frozenset[str]
    read_at_range: tuple[str, str] | None
    arxiv_ids_sorted: Sequence[str]
    sources: PaperSources
    # Derived from the fields above whenever an index is made or restored (never pickled): every valid status, best
    # first (`statuses`); the listing's buckets by status, so that a listing looks only at its statuses' buckets;
    # and by status, each (official or not, inline_ok) group of buckets with the one run of listing ranks it fills,
    # or None when its ranks are not one run (see `list_sample_ids`).
    _statuses: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _buckets_by_status: dict[str, list[tuple[BucketKey, array[int]]]] = field(init=False, repr=False, compare=False)
    _runs_by_status: dict[str, list[tuple[bool, bool, range | None]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_statuses", tuple(sorted({*KNOWN_STATUSES, *self.status_counts}, key=status_order)))
        by_status: dict[str, list[tuple[BucketKey, array[int]]]] = {}
        groups: dict[tuple[str, bool, bool], list[array[int]]] = {}
        for key, ranks in self.buckets.items():
            by_status.setdefault(key[0], []).append((key, ranks))
            groups.setdefault((key[0], key[1] == OFFICIAL_KIND, key[4]), []).append(ranks)
        object.__setattr__(self, "_buckets_by_status", by_status)
        runs: dict[str, list[tuple[bool, bool, range | None]]] = {}
        for (status, official, inline), parts in groups.items():
            total, low, high = sum(map(len, parts)), min(part[0] for part in parts), max(part[-1] for part in parts) + 1
            runs.setdefault(status, []).append((official, inline, range(low, high) if high - low == total else None))
        object.__setattr__(self, "_runs_by_status", runs)

    def __reduce__(self) -> tuple[object, ...]:
        # Packed for a snapshot: restored as two buffers each instead of one object per string.
        values = {spec.name: getattr(self, spec.name) for spec in fields(self) if spec.init}
        values["by_arxiv"], values["by_slug"] = (
            SortedKeys(lookup) if isinstance(lookup, dict) else lookup for lookup in (self.by_arxiv, self.by_slug)
        )
        values["repo_names"] = PackedStrings(self.repo_names)
        values["arxiv_ids_sorted"] = PackedStrings(self.arxiv_ids_sorted)
        return (_restore, (values,))

    def paper_by_arxiv(self, arxiv_id: str) -> PaperRow | None:
        ordinal = self.by_arxiv.get(arxiv_id)
        return None if ordinal is None else self.papers[ordinal]

    def paper_by_slug(self, slug: str) -> PaperRow | None:
        ordinal = self.by_slug.get(slug)
        return None if ordinal is None else self.papers[ordinal]

    def samples_of(self, paper: PaperRow) -> list[SampleRow]:
        return self.samples.rows(paper.samples)

    def statuses_of(self, paper: PaperRow) -> set[str]:
        return {self.samples.status_of(i) for i in paper.samples}

    def statuses(self) -> list[str]:
        """Every valid status: the known ones, then any others seen in the corpus, best first (`status_order`)."""
        return list(self._statuses)

    def sample_ids_for_sha(self, sha: str) -> list[int]:
        """Samples whose code hash is exactly `sha` (`SHA_PREFIX_LENGTH` hex characters)."""
        value = int(sha, 16)
        start = bisect.bisect_left(self.sha_sorted, value)
        end = bisect.bisect_right(self.sha_sorted, value, lo=start)
        return sorted(self.sha_samples[start:end])

    def shas_with_prefix(self, prefix: str, most: int = 10) -> list[str]:
        """Distinct code hashes starting with `prefix` (hex, at most `SHA_PREFIX_LENGTH`), in order."""
        shift = 4 * (SHA_PREFIX_LENGTH - len(prefix))
        low = int(prefix, 16) << shift if prefix else 0
        high = low + (1 << shift)
        start = bisect.bisect_left(self.sha_sorted, low)
        found: list[str] = []
        # Index from `start`: islice would walk every hash below the prefix first.
        for position in range(start, len(self.sha_sorted)):
            value = self.sha_sorted[position]
            if value >= high or len(found) >= most:
                break
            text = format(value, SHA_PREFIX_FORMAT)
            if not found or found[-1] != text:
                found.append(text)
        return found

    def papers_for_repo(self, repo: str) -> list[int] | None:
        """Papers whose code links or samples name `repo` (lower-case owner/name), official
        links first, then those with the most samples from it."""
        position = bisect.bisect_left(self.repo_names, repo)
        if position == len(self.repo_names) or self.repo_names[position] != repo:
            return None
        return list(self.repo_papers[self.repo_offsets[position] : self.repo_offsets[position + 1]])

    def arxiv_ids_with_prefix(self, prefix: str, most: int = 20) -> list[str]:
        start = bisect.bisect_left(self.arxiv_ids_sorted, prefix)
        found = itertools.takewhile(lambda key: key.startswith(prefix), self.arxiv_ids_sorted[start : start + most])
        return list(found)

    def list_sample_ids(
        self,
        statuses: Iterable[str],
        *,
        repo_kind: str | None = None,
        language: str | None = None,
        licence: str | None = None,
        inline_only: bool = False,
        offset: int = 0,
        limit: int | None = None,
    ) -> tuple[int, list[int]]:
        """(total, the sample ids of one page in listing order) for the filters.

        Never scans non-matching samples. Filtered by nothing but status, inline_only and the official repo kind, the
        page is read from runs of listing ranks: the listing orders by status, then official first, then showable
        first, so each (status, official or not, inline_ok) group fills one run (checked as the index is made, not
        assumed), and a page is a slice of a few runs. Otherwise (or if a group were not one run) the chosen buckets
        are merged: skipping to `offset` walks listing ranks (ints), and not even those when one bucket matches.
        """
        order = self.listing_order
        if language is None and licence is None and (repo_kind is None or repo_kind == OFFICIAL_KIND):
            runs = [
                run
                for status in dict.fromkeys(statuses)
                for official, inline, run in self._runs_by_status.get(status, ())
                if (repo_kind is None or official) and (inline or not inline_only)
            ]
            if None not in runs:
                return _page_of_runs(cast(list[range], runs), offset, limit, order)
        language, licence = language and language.lower(), licence and licence.lower()
        chosen = [
            ranks
            for status in dict.fromkeys(statuses)
            for (_, kind, lang, lic, inline), ranks in self._buckets_by_status.get(status, ())
            if (repo_kind is None or kind == repo_kind)
            and (language is None or lang == language)
            and (licence is None or lic == licence)
            and (inline or not inline_only)
        ]
        total = sum(map(len, chosen))
        end = total if limit is None else offset + limit
        if len(chosen) == 1:
            ranks: Iterable[int] = chosen[0][offset:end]
        else:
            ranks = itertools.islice(heapq.merge(*chosen), offset, end)
        return total, [order[rank] for rank in ranks]


def _page_of_runs(runs: list[range], offset: int, limit: int | None, order: array[int]) -> tuple[int, list[int]]:
    """(total, the sample ids of one page) of the listing ranks in `runs`, which are disjoint: in order, they are the listing."""
    runs.sort(key=operator.attrgetter("start"))
    total = sum(map(len, runs))
    wanted = total - offset if limit is None else limit
    ranks: list[int] = []
    for run in runs:
        if offset >= len(run):
            offset -= len(run)
            continue
        part = run[offset : offset + wanted]
        ranks.extend(part)
        wanted -= len(part)
        offset = 0
        if wanted <= 0:
            break
    return total, [order[rank] for rank in ranks]


def _restore(values: dict[str, object]) -> PaperIndex:
    return PaperIndex(**values)  # type: ignore[arg-type]


def best_status(index: PaperIndex, paper: PaperRow) -> str | None:
    """The best status among a paper's samples (`status_order`), None when it has none."""
    statuses = index.statuses_of(paper)
    return min(statuses, key=status_order) if statuses else None
