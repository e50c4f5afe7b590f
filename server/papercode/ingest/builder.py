"""Builds a `PaperIndex` from validated records, streaming: one record in memory at a time.

Per record, the builder only appends to columns, with C-level loops (`map`, `zip`, `array.extend`
over the decoded structs) rather than a Python statement per sample. Everything that needs every
paper at once (counts, the code-hash order, repositories, the listing order and its buckets) is
computed by `corpus_wide` over whole columns when `IndexBuilder.finish` returns the immutable index.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from papercode.core.ids import GITHUB_URL
from papercode.core.load_report import LoadReport, Problem
from papercode.core.ordering import PAPER_ORDER, PAPER_TIES, group
from papercode.core.records import CodeLinkData, RecordData, SampleData
from papercode.index.columns import BLOB_PATH, PaperColumns, SampleColumns, StringIds, StringTable, ordered_links
from papercode.index.fields import (
    NO_LEVEL,
    NONE,
    PAPER_FIELDS,
    SAMPLE_ENDS,
    SAMPLE_FIELDS,
    SAMPLE_STARTS,
    CodeLinkRow,
    Details,
    Field,
    FileUrl,
    Flag,
    Hash,
    Int32,
    Int64,
    Interned,
    Ordinal,
    PaperSource,
    RecordSource,
    SampleIds,
    Text,
    details_blob,
    details_of_record,
    generated,
    link_row,
    paper_columns,
)
from papercode.index.paper_index import PaperIndex, PaperSources

from . import corpus_wide
from .admission import Admission, Admitted, RecordSink
from .arrays import Ints, pick, range_positions, range_starts, view
from .decode import LoadedRecord
from .duplicates import RecordFacts, facts
from .repositories import LinkRepos

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


def _value_expression(field: Field, namespace: dict[str, Any]) -> list[str]:
    """How a record's value of a paper field is read into its column(s) (`source`: the record's `PaperSource`, `ids`:
    the string table's), its reader put in `namespace`."""
    kind = field.kind
    if isinstance(kind, Ordinal):
        return []
    if isinstance(kind, SampleIds):
        return ["source.samples.start", "source.samples.stop"]
    if isinstance(kind, Details):
        return ["details_blob(details_of_record(source))"]
    if kind.record is None:
        raise TypeError(f"PaperRow.{field.name} has no record reader")
    namespace[f"read_{field.name}"] = kind.record
    read = f"read_{field.name}(source)"
    if isinstance(kind, Interned):
        return [f"ids[{read}]"]
    if isinstance(kind, Int32) and field.optional:
        return [f"(NONE if (value := {read}) is None else value)"]
    return [read]


def _paper_values() -> Callable[[RecordSource, StringIds], list[Any]]:
    """A record's value of each paper column (`fields.paper_columns`, in order), as `_put_paper` takes them:
    generated from the declaration, one expression a column, so that a record costs its readers' calls and no loop
    (1.1 µs a record more than the hand-written keyword call it replaces: docs/decisions/fields-declared-once.md)."""
    namespace: dict[str, Any] = {"NONE": NONE, "details_blob": details_blob, "details_of_record": details_of_record}
    expressions = [expression for field in PAPER_FIELDS for expression in _value_expression(field, namespace)]
    return generated(f"def paper_values(source, ids):\n    return [{', '.join(expressions)}]\n", namespace)


_PAPER_VALUES = _paper_values()
# The paper column whose value is admission's (a slug another paper has is dropped): a part's records carry their own,
# replaced by admission's as they are merged.
_ADMITTED = "slug"
_SAMPLE_READERS = {field.name: field.kind.record for field in SAMPLE_FIELDS}
_USUAL_URL = ("repo", "path")  # what a sample's usual file URL is made of (`columns.blob_url`)


def _sample_statements(field: Field) -> list[str]:
    """How a paper's samples' values of `field` are appended to its column (`columns`: the sample columns, `samples`:
    the paper's, `ordinal`: its number, `ids`: the string table's, `start`: the first sample's id; `read_<name>`: the
    field's reader, `<name>`: its values already read, for those a file URL is made of)."""
    name, kind = field.name, field.kind
    column = f"columns.{name}"
    if kind.record is None:  # the sample's paper
        return [f"{column}.extend(repeat(ordinal, len(samples)))"]
    read = name if name in _USUAL_URL else f"map(read_{name}, samples)"
    if isinstance(kind, Hash):
        return [f"{column}.extend(map(int, {read}, HEXADECIMAL))"]
    if isinstance(kind, Interned):
        return [f"{column}.extend(map(ids, {read}))"]
    if isinstance(kind, Int64):
        return [f"levels = list({read})", f"{column}.extend(map(NO_LEVEL, levels, levels))"]
    if isinstance(kind, FileUrl):
        return [f"append_file_urls({column}, list({read}), {', '.join(_USUAL_URL)}, start)"]
    if isinstance(kind, Text):  # packed: extended by a list
        return [f"{column}.extend({read if name in _USUAL_URL else f'list({read})'})"]
    return [f"{column}.extend({read})"]


def _samples_appender() -> Callable[[SampleColumns, list[SampleData], int, Callable[[str | None], int], int], None]:
    """`_RecordColumns._append_samples`'s work, generated from the declaration: a statement a field, each a C-level
    loop over the decoded structs (`map`), the values a file URL is made of read once: the statements the hand-written
    code it replaces had, and its time (a call a field would add one a field to every paper)."""
    lines = [f"{name} = list(map(read_{name}, samples))" for name in _USUAL_URL]
    lines += [line for field in SAMPLE_FIELDS for line in _sample_statements(field)]
    namespace: dict[str, Any] = {f"read_{name}": read for name, read in _SAMPLE_READERS.items() if read is not None}
    namespace.update(repeat=repeat, HEXADECIMAL=_HEXADECIMAL, NO_LEVEL=_NO_LEVEL, append_file_urls=_append_file_urls)
    body = "".join(f"    {line}\n" for line in lines)
    return generated(f"def append_samples(columns, samples, ordinal, ids, start):\n{body}", namespace)


def _append_file_urls(column: dict[int, str], urls: list[str | None], repos: list[str], paths: list[str], start: int) -> None:
    """The file URLs of a paper's samples that are not their usual blob/HEAD URL (`columns.blob_url`, at C level)."""
    usual = map("".join, zip(repeat(GITHUB_URL), repos, repeat(BLOB_PATH), paths, strict=False))
    for offset in compress(range(len(urls)), map(operator.ne, urls, usual)):
        url = urls[offset]
        if url is not None:
            column[start + offset] = url


_APPEND_SAMPLES = _samples_appender()


class _RecordColumns:
    """Records as columns: samples in the sample columns, papers in the paper columns, and the
    repositories of code links among the link entries. A paper is set by ordinal: appended, or put
    in place of the paper it replaces (whose samples and link entries stay, unreferenced)."""

    def __init__(self) -> None:
        self._strings = StringTable()
        self._ids = self._strings.ids
        self._samples = SampleColumns(self._strings)
        self._papers = PaperColumns(self._strings)
        self._paper_columns: tuple[Any, ...] = tuple(map(self._papers.column, paper_columns()))
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
        source = PaperSource(record, arxiv_id, slug, links, range(start, len(self._samples)))  # not RecordSource: an alias is slow to call
        self._put_paper(ordinal, _PAPER_VALUES(source, self._ids))

    def _append_samples(self, samples: list[SampleData], ordinal: int) -> None:
        """Append a paper's samples (already in default order) to the columns, a field at a time."""
        _APPEND_SAMPLES(self._samples, samples, ordinal, self._ids.__getitem__, len(self._samples))

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

    def _put_paper(self, i: int, values: Sequence[Any]) -> None:
        """Set paper `i`, a value a paper column (`fields.paper_columns`, in order): append when `i` is the next
        ordinal, else replace it. Positional, in the declaration's order: this runs per record, and for its 13 values
        a named tuple built by keyword costs 566 ns, positionally 201 ns, a keyword call (as before) 110 ns, a list
        57 ns (2026-12-07: docs/decisions/fields-declared-once.md)."""
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
        starts, ends = (view(part.papers[name])[numbers].astype(np.int64) for name in (SAMPLE_STARTS, SAMPLE_ENDS))
        lengths = ends - starts
        base = len(samples)
        every = len(kept) == len(part.facts) and int(lengths.sum()) == len(part.samples["paper"])
        ordinals = np.fromiter((admitted.ordinal for _, admitted in kept), dtype=np.intc, count=len(kept))
        copy = _PartSamples(part, None if every else range_positions(starts, ends), to_ids, np.repeat(ordinals, lengths), base)
        for field in SAMPLE_FIELDS:
            copy.field(field, samples.column(field.name))
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
        columns.start.frombytes(starts.astype(np.intc).tobytes())  # the samples' ids
        columns.end.frombytes((starts + lengths).astype(np.intc).tobytes())
        for field in PAPER_FIELDS:
            name, kind = field.name, field.kind
            if isinstance(kind, Ordinal | SampleIds):
                continue
            column = columns.column(name)
            if name == _ADMITTED:
                column.extend([admitted.slug for _, admitted in kept])
            elif isinstance(kind, Text | Details):
                column.extend(map(papers[name].__getitem__, listed))
            elif isinstance(kind, Interned):
                column.frombytes(to_ids[view(papers[name])[numbers]].astype(np.intc).tobytes())
            elif isinstance(kind, Int32):
                column.frombytes(view(papers[name])[numbers].astype(np.intc).tobytes())

    def _put_part_papers(
        self, part: IndexPart, kept: list[tuple[int, Admitted]], to_ids: npt.NDArray[np.intc], starts: Ints, lengths: Ints
    ) -> None:
        """The kept records of `part`, each put under its ordinal (appended, or in place of the paper it replaces)."""
        papers = part.papers
        for (number, admitted), start, length in zip(kept, starts.tolist(), lengths.tolist(), strict=True):
            values: list[Any] = []
            for field in PAPER_FIELDS:
                name, kind = field.name, field.kind
                if isinstance(kind, SampleIds):
                    values += [start, start + length]
                elif name == _ADMITTED:
                    values.append(admitted.slug)
                elif isinstance(kind, Interned):
                    values.append(int(to_ids[papers[name][number]]))
                elif not isinstance(kind, Ordinal):
                    values.append(papers[name][number])
            self._put_paper(admitted.ordinal, values)

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


class _PartSamples:
    """How the samples of a part's kept records are copied into the columns, a field at a time, in bulk: `take` (the
    positions of those samples in the part; None: all of them), `to_ids` (the part's string ids to this table's),
    `papers` (each sample's paper ordinal) and `base` (where they start in the columns)."""

    def __init__(self, part: IndexPart, take: Ints | None, to_ids: npt.NDArray[np.intc], papers: npt.NDArray[np.intc], base: int) -> None:
        self.part, self.take, self.to_ids, self.papers, self.base = part, take, to_ids, papers, base

    def field(self, field: Field, column: Any) -> None:
        kind, values, take = field.kind, self.part.samples[field.name], self.take
        if _SAMPLE_READERS[field.name] is None:  # the sample's paper
            column.frombytes(self.papers.tobytes())
        elif isinstance(kind, Text):
            column.extend_packed(values, None if take is None else take.tolist())
        elif isinstance(kind, Interned):
            column.frombytes(self.to_ids[pick(values, take)].tobytes())
        elif isinstance(kind, Flag):
            column.extend(pick(values, take).tobytes())
        elif isinstance(kind, FileUrl):
            self._file_urls(values, column)
        else:
            column.frombytes(pick(values, take).tobytes())

    def _file_urls(self, urls: dict[int, str], column: dict[int, str]) -> None:
        if not urls:
            return
        moved = None if self.take is None else {old: new for new, old in enumerate(self.take.tolist())}
        for old, url in urls.items():
            new = old if moved is None else moved.get(old)
            if new is not None:
                column[self.base + new] = url


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
    samples: dict[str, Any]  # the sample columns, with local string ids and paper numbers
    papers: dict[str, Any]  # the paper columns (`fields.paper_columns`), one per record
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
        samples = {field.name: self._samples.column(field.name) for field in SAMPLE_FIELDS}
        papers = {name: self._papers.column(name) for name in paper_columns()}
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
