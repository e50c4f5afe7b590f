"""Builds a `PaperIndex` from validated records, streaming: one record in memory at a time.

Per record, the builder only appends to columns, with C-level loops (`map`, `zip`, `array.extend`
over the decoded structs) rather than a Python statement per sample. Everything that needs every
paper at once (counts, the code-hash order, repositories, the listing order and its buckets) is
computed by `corpus_wide` over whole columns when `IndexBuilder.finish` returns the immutable index.
"""

from __future__ import annotations

import inspect
import operator
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from papercode.core.days import year_of
from papercode.core.ids import GITHUB_URL
from papercode.core.load_report import LoadReport, Problem
from papercode.core.ordering import PAPER_ORDER, PAPER_TIES, group
from papercode.core.records import CodeLinkData, RecordData, SampleData
from papercode.index.columns import (
    BLOB_PATH,
    NO_LEVEL,
    NONE,
    CodeLinkRow,
    PaperColumns,
    SampleColumns,
    StringTable,
    details_blob,
    link_row,
    ordered_links,
)
from papercode.index.paper_index import PaperIndex, PaperSources

from . import corpus_wide
from .admission import Admission, Admitted, RecordSink
from .arrays import Ints, pick, range_positions, range_starts, view
from .decode import LoadedRecord
from .duplicates import RecordFacts, facts
from .repositories import LinkRepos

_SHA = operator.attrgetter("code_sha256_prefix")
_ENTRY = operator.attrgetter("entry")
_REPO = operator.attrgetter("repo")
_KIND = operator.attrgetter("repo_kind")
_PATH = operator.attrgetter("path")
_LANGUAGE = operator.attrgetter("language")
_STATUS = operator.attrgetter("status")
_CONTRACT = operator.attrgetter("contract_check")
_LEVEL = operator.attrgetter("verification_level")
_LICENCE = operator.attrgetter("licence")
_INLINE = operator.attrgetter("inline_ok")
_FILE_URL = operator.attrgetter("file_url")
_ORDER_FIELDS = operator.attrgetter(*(criterion.field for criterion in PAPER_ORDER))
# Unpacked (it fails here if PAPER_TIES grows): a getter per tie in a tuple would cost a generator per paper.
_FIRST_TIE, _SECOND_TIE, _THIRD_TIE = map(operator.attrgetter, PAPER_TIES)
_LAST = operator.itemgetter(-1)
_NO_LEVEL = {None: NO_LEVEL}.get  # (level, level): the level, or NO_LEVEL for None
_HEXADECIMAL = repeat(16)  # the base of int(sha, 16)


class _PaperGroups(dict[tuple[Any, ...], int]):
    """The values of a sample's `PAPER_ORDER` fields -> its `ordering.group`, the first part of its
    key in its paper's order (computed once per distinct values)."""

    def __missing__(self, values: tuple[Any, ...]) -> int:
        found = self[values] = group(PAPER_ORDER, values)
        return found


_paper_group = _PaperGroups().__getitem__


def default_order(samples: list[SampleData]) -> list[SampleData]:
    """A paper's samples in `ordering.PAPER_ORDER`, then by `PAPER_TIES`, then as listed (input order)."""
    if len(samples) < 2:
        return samples
    keyed = sorted(
        zip(
            map(_paper_group, map(_ORDER_FIELDS, samples)),
            map(_FIRST_TIE, samples),
            map(_SECOND_TIE, samples),
            map(_THIRD_TIE, samples),
            range(len(samples)),
            strict=False,
        )
    )
    return list(map(samples.__getitem__, map(_LAST, keyed)))


def _link_rows(links: list[CodeLinkData]) -> list[CodeLinkRow]:
    """A paper's code links as the details blob keeps them, in their order (`columns.ordered_links`)."""
    return ordered_links(
        [
            link_row(
                link.repo_url,
                bool(link.is_official),
                None if link.mentioned_in_paper is None else bool(link.mentioned_in_paper),
                link.framework,
                reach=None if link.reach is None else link.reach.status,
                licence=None if link.reach is None else link.reach.spdx,
            )
            for link in links
        ]
    )


_STRING_COLUMNS = ("repo", "repo_kind", "language", "status", "contract_check", "licence")  # sample columns of string ids


class _RecordColumns:
    """Records as columns: samples in the sample columns, papers in the paper columns, and the
    repositories of code links among the link entries. A paper is set by ordinal: appended, or put
    in place of the paper it replaces (whose samples and link entries stay, unreferenced)."""

    def __init__(self) -> None:
        self._strings = StringTable()
        self._ids = self._strings.ids
        self._samples = SampleColumns(self._strings)
        self._papers = PaperColumns(self._strings)
        self._paper_columns: tuple[Any, ...] = tuple(getattr(self._papers, name) for name in _PAPER_FIELDS)
        self._paper_appends: tuple[Callable[[Any], None], ...] = tuple(column.append for column in self._paper_columns)
        # Repositories named by code links: lower-case owner/name numbered, one entry per link, ranges per paper.
        self._links = LinkRepos(array("i"), array("i"), bytearray(), array("i"), array("i"), [], {})

    def _put_record(self, ordinal: int, record: RecordData, arxiv_id: str | None, slug: str | None) -> None:
        harvest = record.syntology
        start = len(self._samples)
        if harvest is not None and harvest.samples:
            self._append_samples(default_order(harvest.samples), ordinal)
        links = _link_rows(record.code_links) if record.code_links else []
        self._start_links(ordinal)
        if links:
            self._append_links(ordinal, links)
        year = year_of(record.date)
        self._put_paper(
            ordinal,
            arxiv_id=arxiv_id,
            slug=slug,
            title=record.title,
            date=record.date,
            url_abs=record.url_abs,
            read_at=harvest.read_at if harvest else None,
            blob=_details_blob(record, links),
            snapshot=self._ids[record.source.snapshot if record.source else None],
            claim=self._ids[harvest.claim if harvest else None],
            year=NONE if year is None else year,
            n_authors=len(record.authors or ()),
            start=start,
            end=len(self._samples),
        )

    def _append_samples(self, samples: list[SampleData], ordinal: int) -> None:
        """Append a paper's samples (already in default order) to the columns."""
        n = len(samples)
        columns, ids = self._samples, self._ids.__getitem__
        start = len(columns)
        repos, paths = list(map(_REPO, samples)), list(map(_PATH, samples))
        columns.sha.extend(map(int, map(_SHA, samples), _HEXADECIMAL))
        columns.entry.extend(list(map(_ENTRY, samples)))
        columns.repo.extend(map(ids, repos))
        columns.repo_kind.extend(map(ids, map(_KIND, samples)))
        columns.path.extend(paths)
        columns.language.extend(map(ids, map(_LANGUAGE, samples)))
        columns.status.extend(map(ids, map(_STATUS, samples)))
        columns.contract_check.extend(map(ids, map(_CONTRACT, samples)))
        levels = list(map(_LEVEL, samples))
        columns.verification_level.extend(map(_NO_LEVEL, levels, levels))
        columns.licence.extend(map(ids, map(_LICENCE, samples)))
        columns.inline_ok.extend(map(_INLINE, samples))
        columns.paper.extend(repeat(ordinal, n))
        urls = list(map(_FILE_URL, samples))
        usual = map("".join, zip(repeat(GITHUB_URL), repos, repeat(BLOB_PATH), paths, strict=False))  # columns.blob_url, at C level
        for offset in compress(range(n), map(operator.ne, urls, usual)):
            url = urls[offset]
            if url is not None:
                columns.file_url[start + offset] = url

    def _start_links(self, ordinal: int) -> None:
        """Paper `ordinal`'s link entries start afresh (a replaced paper's old ones are left out)."""
        entries = self._links
        if ordinal == len(entries.start):
            entries.start.append(len(entries.paper))
            entries.end.append(len(entries.paper))
        else:
            entries.start[ordinal] = entries.end[ordinal] = len(entries.paper)

    def _append_links(self, ordinal: int, links: list[CodeLinkRow]) -> None:
        """Record the GitHub repositories (lower-case owner/name) a paper's code links name (for `find_papers_for_repo`)."""
        entries, names = self._links, self._links.numbers
        for row in links:
            repo = row.repo
            if repo is not None:
                code = names.get(repo)
                if code is None:
                    code = names[repo] = len(names)
                    entries.names.append(repo)
                entries.paper.append(ordinal)
                entries.repo.append(code)
                entries.official.append(row.is_official)
        entries.end[ordinal] = len(entries.paper)

    def _put_paper(
        self,
        i: int,
        *,
        arxiv_id: str | None,
        slug: str | None,
        title: str,
        date: str | None,
        url_abs: str | None,
        read_at: str | None,
        blob: bytes,  # the display details (see `_details_blob`)
        snapshot: int,  # a string id
        claim: int,  # a string id
        year: int,  # NONE when unknown
        n_authors: int,
        start: int,  # its samples are start..end-1
        end: int,
    ) -> None:
        """Set paper `i`, a value per paper column (named here once: see `_PAPER_FIELDS`): append
        when `i` is the next ordinal, else replace it. Keyword arguments rather than a named tuple:
        this runs per record, and building a named tuple by keyword costs five times as much."""
        values = (arxiv_id, slug, title, date, url_abs, read_at, blob, snapshot, claim, year, n_authors, start, end)
        if i == len(self._papers):
            for append, value in zip(self._paper_appends, values, strict=True):
                append(value)
        else:
            for column, value in zip(self._paper_columns, values, strict=True):
                column[i] = value

    def _copy_part(self, part: IndexPart, kept: list[tuple[int, Admitted]]) -> None:
        """Copy the kept records of `part` (`kept`: each one's number in the part, and its admission)
        into the columns: samples in bulk (string ids mapped to this table), then each kept record's
        paper and link entries under its ordinal."""
        samples = self._samples
        # Index -1 (NONE) maps to NONE: it is the last entry.
        to_ids = np.array([*map(self._ids.__getitem__, part.strings), NONE], dtype=np.intc)
        numbers = np.fromiter((number for number, _ in kept), dtype=np.int64, count=len(kept))
        starts, ends = (view(part.papers[name])[numbers].astype(np.int64) for name in ("start", "end"))
        lengths = ends - starts
        base = len(samples)
        every = len(kept) == len(part.facts) and int(lengths.sum()) == len(part.samples["paper"])
        take = None if every else range_positions(starts, ends)
        samples.sha.frombytes(pick(part.samples["sha"], take).tobytes())
        samples.entry.extend_packed(part.samples["entry"], None if take is None else take.tolist())
        samples.path.extend_packed(part.samples["path"], None if take is None else take.tolist())
        for name in _STRING_COLUMNS:
            getattr(samples, name).frombytes(to_ids[pick(part.samples[name], take)].tobytes())
        samples.verification_level.frombytes(pick(part.samples["verification_level"], take).tobytes())
        samples.inline_ok.extend(pick(part.samples["inline_ok"], take).tobytes())
        ordinals = np.fromiter((admitted.ordinal for _, admitted in kept), dtype=np.intc, count=len(kept))
        samples.paper.frombytes(np.repeat(ordinals, lengths).tobytes())
        urls: dict[int, str] = part.samples["file_url"]
        if urls:
            moved = None if take is None else {old: new for new, old in enumerate(take.tolist())}
            for old, url in urls.items():
                new = old if moved is None else moved.get(old)
                if new is not None:
                    samples.file_url[base + new] = url
        first = len(self._papers)
        if int(ordinals[0]) == first and int(ordinals[-1]) == first + len(kept) - 1 and bool(np.all(np.diff(ordinals) == 1)):
            self._append_part_papers(part, kept, numbers, to_ids, starts=base + range_starts(lengths), lengths=lengths)
        else:
            self._put_part_papers(part, kept, to_ids, base + range_starts(lengths), lengths)
        self._copy_part_links(part, numbers, ordinals)

    def _append_part_papers(
        self,
        part: IndexPart,
        kept: list[tuple[int, Admitted]],
        numbers: npt.NDArray[np.int64],
        to_ids: npt.NDArray[np.intc],
        *,
        starts: Ints,
        lengths: Ints,
    ) -> None:
        """Every kept record of `part` is a new paper, in order (the usual case): each paper column extended in one
        pass, as `_put_paper` would have appended them one by one."""
        papers, columns, listed = part.papers, self._papers, numbers.tolist()
        for name in ("arxiv_id", "title", "date", "url_abs", "read_at", "blob"):
            cast(list[Any], getattr(columns, name)).extend(map(papers[name].__getitem__, listed))
        cast(list[str | None], columns.slug).extend([admitted.slug for _, admitted in kept])
        for name in ("snapshot", "claim"):
            getattr(columns, name).frombytes(to_ids[view(papers[name])[numbers]].astype(np.intc).tobytes())
        for name in ("year", "n_authors"):
            getattr(columns, name).frombytes(view(papers[name])[numbers].astype(np.intc).tobytes())
        columns.start.frombytes(starts.astype(np.intc).tobytes())
        columns.end.frombytes((starts + lengths).astype(np.intc).tobytes())

    def _put_part_papers(
        self, part: IndexPart, kept: list[tuple[int, Admitted]], to_ids: npt.NDArray[np.intc], starts: Ints, lengths: Ints
    ) -> None:
        """The kept records of `part`, each put under its ordinal (appended, or in place of the paper it replaces)."""
        papers = part.papers
        for (number, admitted), start, length in zip(kept, starts.tolist(), lengths.tolist(), strict=True):
            self._put_paper(
                admitted.ordinal,
                arxiv_id=papers["arxiv_id"][number],
                slug=admitted.slug,
                title=papers["title"][number],
                date=papers["date"][number],
                url_abs=papers["url_abs"][number],
                read_at=papers["read_at"][number],
                blob=papers["blob"][number],
                snapshot=int(to_ids[papers["snapshot"][number]]),
                claim=int(to_ids[papers["claim"][number]]),
                year=papers["year"][number],
                n_authors=papers["n_authors"][number],
                start=start,
                end=start + length,
            )

    def _copy_part_links(self, part: IndexPart, numbers: npt.NDArray[np.int64], ordinals: npt.NDArray[np.intc]) -> None:
        """The link entries of the kept records (`numbers` in the part), under their ordinals, in bulk."""
        entries, numbers_of = self._links, self._links.numbers
        codes = np.empty(len(part.link_names), dtype=np.intc)
        for position, name in enumerate(part.link_names):
            code = numbers_of.get(name)
            if code is None:
                code = numbers_of[name] = len(entries.names)
                entries.names.append(name)
            codes[position] = code
        starts, ends = (view(column)[numbers].astype(np.int64) for column in (part.link_start, part.link_end))
        lengths = ends - starts
        take = range_positions(starts, ends)
        first = len(entries.paper)
        entries.paper.frombytes(np.repeat(ordinals, lengths).tobytes())
        entries.repo.frombytes(codes[pick(part.link_repo, take)].tobytes())
        entries.official.extend(pick(part.link_official, take).tobytes())
        for ordinal, start, length in zip(ordinals.tolist(), (first + range_starts(lengths)).tolist(), lengths.tolist(), strict=True):
            if ordinal == len(entries.start):
                entries.start.append(start)
                entries.end.append(start + length)
            else:
                entries.start[ordinal], entries.end[ordinal] = start, start + length


# The paper columns, in the order `_put_paper` takes them.
_PAPER_FIELDS = tuple(
    name for name, parameter in inspect.signature(_RecordColumns._put_paper).parameters.items() if parameter.kind is parameter.KEYWORD_ONLY
)


@dataclass(frozen=True, slots=True)
class IndexPart:
    """Records indexed in another process, each as its own paper in reading order, for `IndexBuilder.add_part`
    (which admits them then, as if it had read them itself). Plain lists and arrays: it is pickled."""

    facts: list[RecordFacts]
    problems: list[Problem]
    problems_before: array[int]  # per record: how many of `problems` came before it
    files_read: int
    records_read: int
    strings: list[str]  # what the string ids in the columns stand for
    samples: dict[str, Any]  # the attributes of `SampleColumns`, with local string ids and paper numbers
    papers: dict[str, Any]  # the attributes of `PaperColumns`, one per record
    link_paper: array[int]
    link_repo: array[int]
    link_official: bytearray
    link_start: array[int]
    link_end: array[int]
    link_names: list[str]


class PartBuilder(_RecordColumns):
    """Builds an `IndexPart`: every valid record, in reading order, as its own paper; which become
    papers, and under which ordinal, is decided when the part is merged."""

    def __init__(self, report: LoadReport) -> None:
        super().__init__()
        self.report = report
        self._facts: list[RecordFacts] = []
        self._problems_before = array("i")

    def add(self, item: LoadedRecord) -> None:
        self._problems_before.append(len(self.report.problems))
        self._facts.append(facts(item))
        self._put_record(len(self._facts) - 1, item.record, item.arxiv_id, item.slug)

    def part(self) -> IndexPart:
        samples = {name: value for name, value in vars(self._samples).items() if name != "strings"}
        papers = {name: getattr(self._papers, name) for name in _PAPER_FIELDS}
        links = self._links
        return IndexPart(
            facts=self._facts,
            problems=self.report.problems,
            problems_before=self._problems_before,
            files_read=self.report.files_read,
            records_read=self.report.records_read,
            strings=list(self._strings.values),
            samples=samples,
            papers=papers,
            link_paper=links.paper,
            link_repo=links.repo,
            link_official=links.official,
            link_start=links.start,
            link_end=links.end,
            link_names=list(links.names),
        )


class IndexBuilder(_RecordColumns):
    """Adds records one at a time (duplicates resolve in place, see `Admission`), then `finish`."""

    def __init__(self, report: LoadReport, records: RecordSink | None = None) -> None:
        """`records` is told of each record as it is read (the search side takes its full text from
        there, so it is never held here)."""
        super().__init__()
        self.report = report
        self._admission = Admission(report)
        self._records = records

    def add_all(self, loaded: Iterable[LoadedRecord]) -> IndexBuilder:
        for item in loaded:
            self.add(item)
        return self

    def add(self, item: LoadedRecord) -> None:
        """Add a record, or replace the one it beat as a duplicate (keeping that ordinal)."""
        admitted = self._admission.admit(item)
        if self._records is not None:
            self._records(item, admitted)
        if admitted is not None:
            self._put_record(admitted.ordinal, item.record, item.arxiv_id, admitted.slug)

    def add_part(self, part: IndexPart) -> None:
        """Add the records of a part, read after every record added so far, as `add` would have:
        admitted in order, their problems reported in order, their columns copied in bulk."""
        report, kept = self.report, []
        done = 0
        for number, (record, before) in enumerate(zip(part.facts, part.problems_before, strict=True)):
            report.problems.extend(part.problems[done:before])
            done = before
            admitted = self._admission.admit(record)
            if admitted is not None:
                kept.append((number, admitted))
        report.problems.extend(part.problems[done:])
        report.files_read += part.files_read
        report.records_read += part.records_read
        if kept:
            self._copy_part(part, kept)

    def finish(self) -> PaperIndex:
        """Everything derived from the papers' live samples: counts, hashes, repositories, listings."""
        papers, strings = self._papers, self._strings
        self.report.records_indexed = len(papers)
        derived = corpus_wide.compute(self._samples, papers, self._links)
        read_ats = [value for value in papers.read_at if value]
        index = PaperIndex(
            report=self.report,
            papers=papers,
            samples=self._samples,
            by_arxiv=self._admission.by_arxiv,
            by_slug=self._admission.by_slug,
            fingerprint=self._admission.fingerprint,
            snapshots=frozenset(strings.values[i] for i in set(papers.snapshot) if i != NONE),
            read_at_range=(min(read_ats), max(read_ats)) if read_ats else None,
            arxiv_ids_sorted=sorted(self._admission.by_arxiv),
            sources=PaperSources(archive_start=len(papers)),
            **derived.parts(),
        )
        strings.seal()
        del self._links, self._admission, self._records
        return index


def _details_blob(record: RecordData, links: list[CodeLinkRow]) -> bytes:
    return details_blob(
        authors=record.authors or [],
        tasks=[(task.task_slug, task.task_name or task.task_slug) for task in record.tasks or ()],
        methods=[method.method_name for method in record.methods or ()],
        links=links,
        proceeding=record.proceeding,
        url_pdf=record.url_pdf,
    )
