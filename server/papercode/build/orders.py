"""The corpus-wide parts of an index, computed once at the end of a build over whole columns (numpy).

Per record, the builder only appends to columns; everything that needs every paper at once is
here: which samples are live (a duplicate's winner leaves the loser's samples unreferenced), the
counts, the code-hash order, the repository lists, and the listing order with its buckets. Each is
a sort or a count over integer columns, so it costs milliseconds per million samples instead of a
Python statement per sample. The results are plain `array`s, as the index serves and pickles them.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from papercode.core.ordering import LISTING_ORDER, STATUS_BEST_FIRST, status_order
from papercode.core.records import NO_LICENCE, OFFICIAL_KIND
from papercode.index.columns import NONE, PaperColumns, SampleColumns
from papercode.index.paper_index import BucketKey

Ints = npt.NDArray[np.int64]


class LinkRepos(NamedTuple):
    """Repositories named by code links, one entry per (paper, link) with a GitHub repository."""

    paper: array[int]
    repo: array[int]  # index into `names`
    official: bytearray
    start: array[int]  # per paper ordinal: its entries are start..end-1 (a replaced paper's old ones are left out)
    end: array[int]
    names: list[str]  # lower-case owner/name
    numbers: dict[str, int]  # name -> its index in `names`


class Orders(NamedTuple):
    live_samples: int
    status_counts: Counter[str]
    repo_kind_counts: Counter[str]
    licence_counts: Counter[str]
    language_counts: Counter[str]
    papers_with_samples: int
    sha_sorted: array[int]
    sha_samples: array[int]
    repo_names: list[str]
    repo_offsets: array[int]
    repo_papers: array[int]
    listing_order: array[int]
    buckets: dict[BucketKey, array[int]]


def view(column: array[int] | bytearray) -> npt.NDArray[Any]:
    if isinstance(column, bytearray):
        return np.frombuffer(column, dtype=np.uint8)
    return np.frombuffer(column, dtype=np.dtype(column.typecode))


def _ints(values: npt.NDArray[Any]) -> array[int]:
    return array("i", values.astype(np.intc).tobytes())


def _live(starts: npt.NDArray[Any], ends: npt.NDArray[Any], owner: npt.NDArray[Any]) -> Ints | None:
    """Positions whose owner's current range holds them; None when that is every position."""
    if int((ends - starts).sum()) == len(owner):
        return None
    positions = np.arange(len(owner), dtype=np.int64)
    return np.flatnonzero((starts[owner] <= positions) & (positions < ends[owner]))


def _small(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`values` (0 or more) in the narrowest unsigned type: a stable sort of 16-bit keys is a radix sort."""
    top = int(values.max()) if len(values) else 0
    return values.astype(np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.int64)


def _dense(values: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """(the distinct values, in order; each value's position among them), by counting, not sorting:
    the values are string ids (-1 and up), few and small."""
    shifted = values.astype(np.int64) + 1
    present = np.flatnonzero(np.bincount(shifted)) if len(values) else np.zeros(0, dtype=np.int64)
    position = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.int64)
    position[present] = np.arange(len(present), dtype=np.int64)
    return present - 1, position[shifted]


def compute(samples: SampleColumns, papers: PaperColumns, links: LinkRepos) -> Orders:
    """Everything derived from the papers' live samples (and their code links)."""
    values = samples.strings.values
    official_id = samples.strings.ids.get(OFFICIAL_KIND, -2)  # -2: no sample is official
    starts, ends = view(papers.start), view(papers.end)
    live = _live(starts, ends, view(samples.paper))

    def live_view(column: array[int] | bytearray) -> npt.NDArray[Any]:
        whole = view(column)
        return whole if live is None else whole[live]

    def counts(column: array[int], missing: str) -> Counter[str]:
        found, codes = _dense(live_view(column))
        count = np.bincount(codes, minlength=len(found))
        first = np.argsort(_small(codes), kind="stable")[np.cumsum(count) - count] if len(codes) else count
        seen = np.argsort(first, kind="stable")  # in order of first appearance, as a Counter over the column would be
        return Counter({(missing if string_id == NONE else values[string_id]): n for string_id, n in zip(found[seen].tolist(), count[seen].tolist(), strict=True)})

    sha = live_view(samples.sha)
    by_sha = np.argsort(sha, kind="stable")
    sample_ids = by_sha if live is None else live[by_sha]
    by_key, key_rank = key_ranks(papers)
    listing_order, buckets = _listing(samples, papers, by_key)
    repo_names, repo_offsets, repo_papers = _repositories(samples, key_rank, links, live, official_id)
    return Orders(
        live_samples=len(samples) if live is None else len(live),
        status_counts=counts(samples.status, "unknown"),
        repo_kind_counts=counts(samples.repo_kind, "unknown"),
        licence_counts=counts(samples.licence, NO_LICENCE),
        language_counts=counts(samples.language, "unknown"),
        papers_with_samples=int(np.count_nonzero(ends > starts)),
        sha_sorted=array("Q", sha[by_sha].astype(np.uint64).tobytes()),
        sha_samples=_ints(sample_ids),
        repo_names=repo_names,
        repo_offsets=repo_offsets,
        repo_papers=repo_papers,
        listing_order=listing_order,
        buckets=buckets,
    )


def key_ranks(papers: PaperColumns) -> tuple[list[int], Ints]:
    """Paper ordinals in key order, and each paper's rank in it."""
    keys = list(map(papers.key, range(len(papers))))
    by_key = sorted(range(len(papers)), key=keys.__getitem__)
    ranks = np.empty(len(papers), dtype=np.int64)
    ranks[by_key] = np.arange(len(papers), dtype=np.int64)
    return by_key, ranks


def _listing(samples: SampleColumns, papers: PaperColumns, by_key: list[int]) -> tuple[array[int], dict[BucketKey, array[int]]]:
    """The listing order (`ordering.LISTING_ORDER`, then paper key, then each paper's own order)
    and its buckets: a stable sort of the papers' samples, in key order, by one small int per sample."""
    values = samples.strings.values
    ordered = np.asarray(by_key, dtype=np.int64)
    starts, ends = view(papers.start)[ordered].astype(np.int64), view(papers.end)[ordered].astype(np.int64)
    lengths = ends - starts
    # Each paper's sample ids start..end-1, papers in key order.
    base = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    # `ordering.group` over whole columns: one digit per criterion, from the few distinct values of its field.
    place = np.zeros(len(base), dtype=np.int64)
    for criterion in LISTING_ORDER:
        column = getattr(samples, criterion.field)
        found, codes = _dense(view(column)[base])
        named: list[Any] = [bool(value) if isinstance(column, bytearray) else values[value] for value in found.tolist()]
        if criterion is STATUS_BEST_FIRST:  # every status present gets a part of its own (unknown ones by name)
            digit = np.zeros(len(named), dtype=np.int64)
            digit[sorted(range(len(named)), key=lambda code: status_order(named[code]))] = np.arange(len(named), dtype=np.int64)
            levels = len(named)
        else:
            digit = np.asarray([criterion.key(value) for value in named], dtype=np.int64)
            levels = criterion.levels
        place = place * levels + digit[codes]
    order = base[np.argsort(_small(place), kind="stable")]
    return _ints(order), _buckets(samples, order)


def _buckets(samples: SampleColumns, order: Ints) -> dict[BucketKey, array[int]]:
    """The listing ranks of each (status, kind, language, licence, inline), in rank order; a missing
    language or licence is "", and spellings that differ only in case share a bucket."""
    values = samples.strings.values
    columns = [view(column)[order] for column in (samples.status, samples.repo_kind, samples.language, samples.licence)]
    combined = np.zeros(len(order), dtype=np.int64)
    for column in [*columns, view(samples.inline_ok)[order]]:
        found, codes = _dense(column)
        combined = combined * len(found) + codes
        if len(combined) and int(combined.max()) >= 1 << 22:  # keep it small: count, not sort, and never overflow
            combined = np.unique(combined, return_inverse=True)[1].astype(np.int64)
    _, bucket_of = _dense(combined - 1)
    by_bucket = np.argsort(_small(bucket_of), kind="stable")  # ranks grouped by bucket, each group in rank order
    bounds = np.concatenate(([0], np.cumsum(np.bincount(bucket_of)))) if len(order) else np.zeros(1, dtype=np.int64)
    first = by_bucket[bounds[:-1]]  # the first (lowest) rank of each bucket
    buckets: dict[BucketKey, array[int]] = {}

    def text(string_id: int) -> str:
        return values[string_id] if string_id != NONE else ""

    for bucket in np.argsort(first, kind="stable").tolist():  # in order of first appearance in the listing
        rank = int(first[bucket])
        status, kind, language, licence = (int(column[rank]) for column in columns)
        ranks = _ints(by_bucket[bounds[bucket] : bounds[bucket + 1]])
        key = (values[status], values[kind], text(language).lower(), text(licence).lower(), bool(samples.inline_ok[int(order[rank])]))
        buckets[key] = array("i", sorted(buckets[key] + ranks)) if key in buckets else ranks
    return buckets


def _repositories(
    samples: SampleColumns, key_rank: Ints, links: LinkRepos, live: Ints | None, official_id: int
) -> tuple[list[str], array[int], array[int]]:
    """Lower-case owner/name -> papers that name it (in a code link or a sample), official first,
    then most samples from it, then paper key (CSR: sorted names, offsets, papers)."""
    values = samples.strings.values
    names, number = links.names, links.numbers

    def code_of(name: str) -> int:
        found = number.get(name)
        if found is None:
            found = number[name] = len(names)
            names.append(name)
        return found

    def pick(column: array[int] | bytearray) -> npt.NDArray[Any]:
        whole = view(column)
        return whole if live is None else whole[live]

    repo_ids, repo_of = _dense(pick(samples.repo))
    sample_code = np.asarray([code_of(values[string_id].lower()) for string_id in repo_ids.tolist()], dtype=np.int64)[repo_of]
    link_live = _live(view(links.start), view(links.end), view(links.paper))
    link_paper, link_code, link_official = (
        view(column) if link_live is None else view(column)[link_live] for column in (links.paper, links.repo, links.official)
    )
    width = max(len(names), 1)
    # One entry per (paper, repository) named by a sample or a link: how many samples, whether any is official.
    keys = np.concatenate((pick(samples.paper).astype(np.int64) * width + sample_code, link_paper.astype(np.int64) * width + link_code))
    entries, entry_of = np.unique(keys, return_inverse=True)
    from_samples = len(keys) - len(link_paper)
    count = np.bincount(entry_of[:from_samples], minlength=len(entries))
    officials = np.concatenate((pick(samples.repo_kind) == official_id, link_official.astype(bool)))
    official = np.bincount(entry_of, weights=officials, minlength=len(entries)) > 0
    paper, code = entries // width, entries % width

    name_rank = np.empty(len(names), dtype=np.int64)
    name_rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names), dtype=np.int64)
    order = np.lexsort((paper, key_rank[paper], -count, ~official, name_rank[code]))
    codes = code[order]
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1]))) if len(codes) else np.zeros(0, dtype=np.int64)
    offsets = np.append(starts, len(codes))
    return list(map(names.__getitem__, codes[starts].tolist())), _ints(offsets), _ints(paper[order])
