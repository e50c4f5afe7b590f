"""The records above the archive, as one index: a record replaces the archive's row for the same paper.

`compose(records, archive)` makes the `PaperIndex` a server answers from: the records' index (`PaperIndex`, built from
Code-with-Papers records, with every sample) as it is, and the archive (`MappedArchive`, opened read-only) beneath
it. Papers are numbered as one index would number them: the records' papers first (0..R-1), then the archive's, in
its order, without those a record replaces (`Ordinals`). A record replaces the archive's row with its arXiv id or its
slug: that row is never returned, and its arXiv id and slug lead to the record (`OverlaidKeys`). Samples, counts and
listings are the records' own: archive papers have none.

Nothing here copies the archive: a paper is read from its mapped columns when a query asks for it.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import heapq
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, NoReturn

import numpy as np

from .columns import PaperColumns
from .fields import PaperRow
from .mapped_archive import MappedArchive
from .paper_index import PaperIndex, PaperSources


class Ordinals:
    """The numbering of the overlaid papers: the records' R papers, then every archive paper no record replaces.

    `replaced` maps each replaced archive paper to the record that replaces it. A visible archive paper `a` is paper
    `R + a - (replaced papers below a)`; the inverse finds `a` by bisection over `replaced[i] - i`, the number of
    visible papers before each replaced one.
    """

    def __init__(self, records: int, archive: int, replaced: dict[int, int]) -> None:
        self.records = records
        self.archive = archive
        self.replaced = replaced
        self._sorted = sorted(replaced)
        self._visible_before = [a - i for i, a in enumerate(self._sorted)]

    def __len__(self) -> int:
        return self.records + self.archive - len(self.replaced)

    @functools.cached_property
    def replaced_sorted(self) -> np.ndarray:
        """The archive papers a record replaces, sorted, as an int32 array (for `np.isin`): made on first use, kept with
        the numbering (so let go with its corpus)."""
        return np.array(self._sorted, dtype=np.int32)

    def of_archive(self, a: int) -> int:
        """The paper that archive paper `a` is: its own ordinal, or the record's that replaces it."""
        record = self.replaced.get(a)
        if record is not None:
            return record
        return self.records + a - bisect.bisect_left(self._sorted, a)

    def visible(self, a: int) -> bool:
        return a not in self.replaced

    def archive_paper(self, ordinal: int) -> int:
        """The archive paper behind an overlaid ordinal at or after `records`."""
        k = ordinal - self.records
        return k + bisect.bisect_right(self._visible_before, k)


class OverlaidPapers:
    """Every paper, records' first: `papers[i]` for ordinals 0..len-1, as `PaperColumns` answers them."""

    def __init__(self, records: PaperColumns, archive: PaperColumns, ordinals: Ordinals) -> None:
        self._records, self._archive, self._ordinals = records, archive, ordinals
        self.title = _OverlaidColumn(records, archive, ordinals, "title")

    def __len__(self) -> int:
        return len(self._ordinals)

    def __getitem__(self, i: int) -> PaperRow:
        if i < 0:
            i += len(self)
        records = self._ordinals.records
        if i < records:
            return self._records[i]
        if i >= len(self):
            raise IndexError(i)
        return self._archive[self._ordinals.archive_paper(i)]._replace(ordinal=i)

    def __iter__(self) -> Iterator[PaperRow]:
        return (self[i] for i in range(len(self)))

    def key(self, i: int) -> str:
        records = self._ordinals.records
        return self._records.key(i) if i < records else self._archive.key(self._ordinals.archive_paper(i))


class _OverlaidColumn(Sequence[Any]):
    """One paper column across the records and the archive (the ones answers read directly: `title`).

    It holds the two, not the `OverlaidPapers` it belongs to: a reference back would make a cycle, which only a full
    collection frees, and the replaced archive's maps (and their descriptors) would outlive a reload until one ran."""

    def __init__(self, records: PaperColumns, archive: PaperColumns, ordinals: Ordinals, name: str) -> None:
        self._records, self._archive, self._ordinals, self._name = records, archive, ordinals, name

    def __len__(self) -> int:
        return len(self._ordinals)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        ordinals = self._ordinals
        if 0 <= i < ordinals.records:
            return getattr(self._records, self._name)[i]  # looked up each time: the records' columns are packed after a build
        return getattr(self._archive, self._name)[ordinals.archive_paper(i if i >= 0 else i + len(self))]


class OverlaidKeys:
    """An arXiv id or slug to its overlaid paper: a record's first, then the archive's (a replaced row leads to the record)."""

    def __init__(self, records: Any, archive: Any, ordinals: Ordinals) -> None:
        self._records, self._archive, self._ordinals = records, archive, ordinals

    def get(self, key: str, /) -> int | None:
        found: int | None = self._records.get(key)
        if found is not None:
            return found
        a = self._archive.get(key)
        return None if a is None else self._ordinals.of_archive(a)


@dataclass(frozen=True, slots=True)
class OverlaidIndex(PaperIndex):
    """A `PaperIndex` over the records and the archive beneath them (see the module docstring)."""

    records: PaperIndex | None = None
    archive: MappedArchive | None = None
    ordinals: Ordinals | None = None

    def __reduce__(self) -> NoReturn:
        raise TypeError("an overlaid index is composed when the archive is opened; snapshot the records' own index instead")

    def papers_for_repo(self, repo: str) -> list[int] | None:
        """Papers whose code links or samples name `repo`: the records' and the visible archive papers', official
        first, then those with the most samples from it, then by paper key (as one index orders them)."""
        assert self.records is not None and self.archive is not None and self.ordinals is not None
        ordinals = self.ordinals
        from_records = self.records.papers_for_repo(repo) or []
        archived = self.archive.papers_for_repo(repo)
        if archived is None:
            return from_records or None
        official = self.archive.officials_for_repo(repo)
        visible = [(position < official, ordinals.of_archive(a)) for position, a in enumerate(archived) if ordinals.visible(a)]
        if not from_records:
            return [ordinal for _, ordinal in visible] or None
        return self._merged(repo, from_records, visible)

    def _merged(self, repo: str, from_records: list[int], visible: list[tuple[bool, int]]) -> list[int]:
        """Both lists in one order: (official first, most samples first, paper key), the order each is already in."""
        papers = self.papers
        records: list[tuple[bool, int, str, int]] = []
        for ordinal in from_records:
            row = papers[ordinal]
            details = row.details()
            linked = any(link.repo == repo and link.is_official for link in details.code_links)
            mine = [sample for sample in self.samples.rows(row.samples) if sample.repo.lower() == repo]
            records.append((not (linked or any(sample.is_official for sample in mine)), -len(mine), row.key, ordinal))
        archived = ((not official, 0, papers.key(ordinal), ordinal) for official, ordinal in visible)
        return [entry[3] for entry in heapq.merge(records, archived, key=operator.itemgetter(0, 1, 2))]

    def arxiv_ids_with_prefix(self, prefix: str, most: int = 20) -> list[str]:
        assert self.records is not None and self.archive is not None
        both = {*self.records.arxiv_ids_with_prefix(prefix, most), *self.archive.arxiv_ids_with_prefix(prefix, most)}
        return sorted(both)[:most]


def replacements(records: PaperIndex, archive: MappedArchive) -> dict[int, int]:
    """Archive paper -> the record paper that replaces it (the same arXiv id, else the same slug)."""
    replaced: dict[int, int] = {}
    papers = records.papers
    by_slug: list[tuple[int, int]] = []
    for ordinal in range(len(papers)):
        arxiv_id, slug = papers.arxiv_id[ordinal], papers.slug[ordinal]
        if arxiv_id:
            a = archive.by_arxiv.get(arxiv_id)
            if a is not None:
                replaced.setdefault(a, ordinal)
        if slug:
            a = archive.by_slug.get(slug)
            if a is not None:
                by_slug.append((a, ordinal))
    for a, ordinal in by_slug:  # an arXiv id match wins over a slug match for the same archive row
        replaced.setdefault(a, ordinal)
    return replaced


def compose(records: PaperIndex, archive: MappedArchive | None) -> PaperIndex:
    """The index a server answers from: `records` alone, or above `archive`."""
    if archive is None:
        return records
    replaced = replacements(records, archive)
    ordinals = Ordinals(len(records.papers), len(archive), replaced)
    values = {spec.name: getattr(records, spec.name) for spec in fields(PaperIndex) if spec.init}
    fingerprint = hashlib.sha256(b"layered\0" + records.fingerprint + b"\0" + archive.build_id.encode()).digest()
    values.update(
        papers=OverlaidPapers(records.papers, archive.papers, ordinals),
        by_arxiv=OverlaidKeys(records.by_arxiv, archive.by_arxiv, ordinals),
        by_slug=OverlaidKeys(records.by_slug, archive.by_slug, ordinals),
        fingerprint=fingerprint,
        snapshots=records.snapshots | {archive.manifest.data_date},
        sources=PaperSources(archive_start=len(records.papers), archive_replaced=len(replaced)),
    )
    return OverlaidIndex(**values, records=records, archive=archive, ordinals=ordinals)
