"""The corpus-wide listing (`list_samples_by_status`): every live sample in `ordering.LISTING_ORDER`,
and its buckets, so that a filtered listing never scans samples the filters leave out."""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from papercode.core.ordering import LISTING_ORDER, STATUS_BEST_FIRST, status_order
from papercode.index.columns import PaperColumns, SampleColumns
from papercode.index.fields import NONE
from papercode.index.paper_index import BucketKey

from .arrays import Ints, as_ints, dense, narrow, range_positions, view


def listing(samples: SampleColumns, papers: PaperColumns, by_key: list[int]) -> tuple[array[int], dict[BucketKey, array[int]]]:
    """The listing order (`ordering.LISTING_ORDER`, then paper key, then each paper's own order)
    and its buckets: a stable sort of the papers' samples, in key order, by one small int per sample."""
    values = samples.strings.values
    ordered = np.asarray(by_key, dtype=np.int64)
    # Each paper's sample ids start..end-1, papers in key order.
    base = range_positions(view(papers.start)[ordered].astype(np.int64), view(papers.end)[ordered].astype(np.int64))
    # `ordering.group` over whole columns: one digit per criterion, from the few distinct values of its field.
    place = np.zeros(len(base), dtype=np.int64)
    for criterion in LISTING_ORDER:
        column = getattr(samples, criterion.field)
        found, codes = dense(view(column)[base])
        named: list[Any] = [bool(value) if isinstance(column, bytearray) else values[value] for value in found.tolist()]
        if criterion is STATUS_BEST_FIRST:  # every status present gets a part of its own (unknown ones by name)
            digit = np.zeros(len(named), dtype=np.int64)
            digit[sorted(range(len(named)), key=lambda code: status_order(named[code]))] = np.arange(len(named), dtype=np.int64)
            levels = len(named)
        else:
            digit = np.asarray([criterion.rank(value) for value in named], dtype=np.int64)
            levels = criterion.levels
        place = place * levels + digit[codes]
    order = base[np.argsort(narrow(place), kind="stable")]
    return as_ints(order), _buckets(samples, order)


def _buckets(samples: SampleColumns, order: Ints) -> dict[BucketKey, array[int]]:
    """The listing ranks of each (status, kind, language, licence, inline), in rank order; a missing
    language or licence is "", and spellings that differ only in case share a bucket."""
    values = samples.strings.values
    columns = [view(column)[order] for column in (samples.status, samples.repo_kind, samples.language, samples.licence)]
    combined = np.zeros(len(order), dtype=np.int64)
    for column in [*columns, view(samples.inline_ok)[order]]:
        found, codes = dense(column)
        combined = combined * len(found) + codes
        if len(combined) and int(combined.max()) >= 1 << 22:  # keep it small: count, not sort, and never overflow
            combined = np.unique(combined, return_inverse=True)[1].astype(np.int64)
    _, bucket_of = dense(combined - 1)
    by_bucket = np.argsort(narrow(bucket_of), kind="stable")  # ranks grouped by bucket, each group in rank order
    bounds = np.concatenate(([0], np.cumsum(np.bincount(bucket_of)))) if len(order) else np.zeros(1, dtype=np.int64)
    first = by_bucket[bounds[:-1]]  # the first (lowest) rank of each bucket
    buckets: dict[BucketKey, array[int]] = {}

    def text(string_id: int) -> str:
        return values[string_id] if string_id != NONE else ""

    for bucket in np.argsort(first, kind="stable").tolist():  # in order of first appearance in the listing
        rank = int(first[bucket])
        status, kind, language, licence = (int(column[rank]) for column in columns)
        ranks = as_ints(by_bucket[bounds[bucket] : bounds[bucket + 1]])
        key = (values[status], values[kind], text(language).lower(), text(licence).lower(), bool(samples.inline_ok[int(order[rank])]))
        buckets[key] = array("i", sorted(buckets[key] + ranks)) if key in buckets else ranks
    return buckets
