"""The orders samples are shown in, each declared once: a tuple of criteria, most significant first.

A paper's samples are kept in `PAPER_ORDER` (the builder stores them so; `get_harvested_code_for_paper`
and the prompts show them so); `list_samples_by_status` pages through the whole corpus in
`LISTING_ORDER`. Both sort keys are derived from these tuples: one int per sample, criterion by
criterion (`group`: a mixed-radix number), by `ingest.builder.default_order` for one paper at a time
and by `ingest.listing` over whole columns. What the prompts say of the order is generated here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .records import KNOWN_STATUSES, OFFICIAL_KIND

STATUS_RANK: dict[str, int] = {status: rank for rank, status in enumerate(KNOWN_STATUSES)}
UNKNOWN_STATUS_RANK = len(KNOWN_STATUSES)  # every status not in KNOWN_STATUSES ranks here, after them


def status_rank(status: str) -> int:
    """Best first: the rank of a known status, `UNKNOWN_STATUS_RANK` for any other."""
    return STATUS_RANK.get(status, UNKNOWN_STATUS_RANK)


def status_order(status: str) -> tuple[int, str]:
    """Statuses in order, best first, with none tied: by rank, and unknown ones by name."""
    return status_rank(status), status


def _not_official(repo_kind: str) -> int:
    return repo_kind != OFFICIAL_KIND


def _not_showable(inline_ok: bool) -> int:
    return not inline_ok


@dataclass(frozen=True, slots=True)
class Criterion:
    """One way a sample comes before another: a lower `rank` of its `field` first (equal ranks tie)."""

    field: str  # the sample field it reads
    rank: Callable[[Any], int]  # 0 .. levels-1
    levels: int
    words: str  # what comes first by it, as prose names it


OFFICIAL_FIRST = Criterion("repo_kind", _not_official, 2, "official repositories")
STATUS_BEST_FIRST = Criterion("status", status_rank, UNKNOWN_STATUS_RANK + 1, "working code")
SHOWABLE_FIRST = Criterion("inline_ok", _not_showable, 2, "showable code")

PAPER_ORDER: tuple[Criterion, ...] = (OFFICIAL_FIRST, STATUS_BEST_FIRST, SHOWABLE_FIRST)
"""A paper's samples; ties go by `PAPER_TIES`, then as the record lists them."""
PAPER_TIES: tuple[str, ...] = ("repo", "path", "entry")

LISTING_ORDER: tuple[Criterion, ...] = (STATUS_BEST_FIRST, OFFICIAL_FIRST, SHOWABLE_FIRST)
"""The corpus-wide listing; ties go by paper key, then in each paper's own order (`PAPER_ORDER`).
The listing never interleaves two statuses: those that tie on rank (unknown ones) come by name
(`status_order`)."""

PAPER_ORDER_GIST = f"{' and '.join(criterion.words for criterion in PAPER_ORDER[:2])} first"
"""What the prompts say of a paper's order: its two leading criteria (that code may be shown is a
licence matter the prompts spell out on their own)."""


def group(order: Iterable[Criterion], values: Iterable[Any]) -> int:
    """A sample's place by the criteria in `order` (its fields' `values`, in that order), as one int
    that sorts as the criteria do: a mixed-radix number with one digit per criterion."""
    place = 0
    for criterion, value in zip(order, values, strict=True):
        place = place * criterion.levels + criterion.rank(value)
    return place
