"""Builds a `PaperIndex` from validated records, streaming: one record in memory at a time.

The per-sample work is done by C-level loops (`map`, `zip`, `array.extend` over the decoded
structs) rather than a Python statement per sample, and the corpus-wide orders are sorts on small
integer keys: the listing order is the papers in key order, each paper's samples in their
default order, stably sorted by one small int per sample (status, official, showable), which
gives the same order as sorting on all eight fields. `IndexBuilder.finish` returns the
immutable index.
"""

from __future__ import annotations

import functools
import hashlib
import operator
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, compress, repeat
from typing import Any, NamedTuple, cast

import orjson

from .columns import BLOB_URL, NO_LEVEL, NONE, CodeLinkRow, PaperColumns, SampleColumns, StringTable
from .ids import normalize_repo
from .index import STATUS_RANK, UNKNOWN_STATUS_RANK, BucketKey, PaperIndex, status_rank
from .loading import DuplicateFilter, LoadedRecord, LoadReport
from .records import CodeLinkData, RecordData, SampleData
from .search import SearchDocument

DocumentSink = Callable[[SearchDocument], None]
RepoEntry = tuple[str, bool, int, str, int]


class _Numbering(dict[Any, int]):
    """value -> 0, 1, 2... in order of first sight (a C-level lookup on a hit)."""

    def __missing__(self, value: Any) -> int:
        number = self[value] = len(self)
        return number


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
_FIRST = operator.itemgetter(0)
_LAST = operator.itemgetter(-1)
_OFFICIAL_FIRST = {"official": 0}.get  # (kind, 1): 0 for official, else 1
_NO_LEVEL = {None: NO_LEVEL}.get  # (level, level): the level, or NO_LEVEL for None
_HEX = repeat(16)


def _year(date: str | None) -> int | None:
    if date and len(date) >= 4 and date[:4].isdigit():
        return int(date[:4])
    return None


def default_order(samples: list[SampleData]) -> list[SampleData]:
    """A paper's samples best first: official, status, showable, then repo/path/entry (input order breaks ties)."""
    if len(samples) < 2:
        return samples
    keyed = sorted(
        zip(
            map(_OFFICIAL_FIRST, map(_KIND, samples), repeat(1)),
            map(STATUS_RANK.get, map(_STATUS, samples), repeat(UNKNOWN_STATUS_RANK)),
            map(operator.not_, map(_INLINE, samples)),
            map(_REPO, samples),
            map(_PATH, samples),
            map(_ENTRY, samples),
            range(len(samples)),
            strict=False,
        )
    )
    return list(map(samples.__getitem__, map(_LAST, keyed)))


_normalize_repo = functools.lru_cache(maxsize=1 << 16)(normalize_repo)  # popular repositories recur


def _code_link_row(link: CodeLinkData) -> CodeLinkRow:
    reach = link.reach
    return CodeLinkRow(
        repo=_normalize_repo(link.repo_url),
        repo_url=link.repo_url,
        is_official=bool(link.is_official),
        mentioned_in_paper=None if link.mentioned_in_paper is None else bool(link.mentioned_in_paper),
        framework=link.framework,
        reach_status=reach.status if reach else None,
        licence=reach.spdx if reach else None,
    )


def _link_order(link: CodeLinkRow) -> tuple[bool, bool, str]:
    return (not link.is_official, not link.mentioned_in_paper, link.repo_url.lower())


class Admitted(NamedTuple):
    ordinal: int
    replacing: bool  # it takes the place of a duplicate it beat
    slug: str | None  # None when another paper has its slug already


class Admission:
    """Which records become which papers: one per key (see `DuplicateFilter`), a duplicate's
    winner taking the loser's ordinal, a taken slug dropped (or the record, without an arXiv id).

    The index builder and the search builder's process both run it over the same records, so
    they agree on every ordinal; `fingerprint` proves it (it covers every admitted record).
    """

    def __init__(self, report: LoadReport) -> None:
        self.report = report
        self.by_arxiv: dict[str, int] = {}
        self.by_slug: dict[str, int] = {}
        self.slugs: list[str | None] = []  # per ordinal
        self._ordinals: dict[str, int] = {}  # duplicate key -> paper ordinal
        self._duplicates = DuplicateFilter(report)
        self._fingerprint = hashlib.sha256()

    @property
    def fingerprint(self) -> bytes:
        return self._fingerprint.digest()

    def admit(self, item: LoadedRecord) -> Admitted | None:
        if not self._duplicates.admit(item):
            return None
        self._fingerprint.update(f"{item.key}\0{item.read_at}\0{item.path}\0{item.line}\0".encode())
        by_slug, key = self.by_slug, item.key
        ordinal = self._ordinals.get(key, len(self.slugs))
        arxiv_id, slug = item.arxiv_id, item.slug
        replacing = ordinal < len(self.slugs)
        if replacing:
            old_slug = self.slugs[ordinal]
            if old_slug is not None and by_slug.get(old_slug) == ordinal:
                del by_slug[old_slug]
        if slug is not None and slug in by_slug:
            if arxiv_id is None:
                self.report.add("error", "duplicate", item.path, f"slug {slug} is already taken and the record has no arXiv id", item.line)
                return None
            self.report.add("warning", "duplicate_slug", item.path, f"slug {slug} is already taken; reachable by arXiv id only", item.line)
            slug = None
        if replacing:
            self.slugs[ordinal] = slug
        else:
            self.slugs.append(slug)
        self._ordinals[key] = ordinal
        if arxiv_id:
            self.by_arxiv[arxiv_id] = ordinal
        if slug:
            by_slug[slug] = ordinal
        return Admitted(ordinal, replacing, slug)


def search_document(record: RecordData, admitted: Admitted) -> SearchDocument:
    """What the search engine indexes for a record."""
    harvest = record.syntology
    samples = (harvest.samples or []) if harvest else []
    links = record.code_links or ()
    return SearchDocument(
        paper=admitted.ordinal,
        replacing=admitted.replacing,
        title=record.title,
        abstract=record.abstract or "",
        authors=" ; ".join(record.authors or ()),
        tasks=[(task.task_slug, task.task_name or task.task_slug) for task in record.tasks or ()],
        methods=[method.method_name for method in record.methods or ()],
        frameworks=sorted({link.framework for link in links if link.framework}),
        statuses=sorted(set(map(_STATUS, samples))),
        date=record.date,
        year=_year(record.date),
        samples=len(samples),
        official=any(link.is_official for link in links),
    )


class IndexBuilder:
    """Adds records one at a time (duplicates resolve in place, see `Admission`), then `finish`."""

    def __init__(self, report: LoadReport, documents: DocumentSink | None = None) -> None:
        """`documents` receives each paper's search document as it is indexed, so the full text
        goes straight to the search side and is never held here."""
        self.report = report
        self._strings = StringTable()
        self._ids = self._strings.ids
        self._samples = SampleColumns(self._strings)
        self._papers = PaperColumns(self._strings)
        self._admission = Admission(report)
        self._documents = documents
        # Per paper, one entry per repository its code links or samples name:
        # (lower-case owner/name, not official, -samples from it, paper key, ordinal), the order it is listed in.
        self._repos: list[list[RepoEntry]] = []
        self._replaced = False

    def add_all(self, loaded: Iterable[LoadedRecord]) -> IndexBuilder:
        for item in loaded:
            self.add(item)
        return self

    def add(self, item: LoadedRecord) -> None:
        """Add a record, or replace the one it beat as a duplicate (keeping that ordinal)."""
        admitted = self._admission.admit(item)
        if admitted is None:
            return
        record = item.record
        ordinal, replacing = admitted.ordinal, admitted.replacing
        harvest = record.syntology
        samples = default_order(harvest.samples or []) if harvest else []
        start = len(self._samples)
        stats = self._append_samples(samples, ordinal)
        links = sorted(map(_code_link_row, record.code_links or ()), key=_link_order)
        for link in links:
            if link.repo:
                found = stats.get(link.repo)
                if found is None:
                    stats[link.repo] = [link.is_official, 0]
                elif link.is_official:
                    found[0] = True
        self._put_paper(ordinal, record, item.arxiv_id, admitted.slug, _details_blob(record, links), start, len(self._samples))
        paper_key = item.arxiv_id or admitted.slug or ""
        repos = [(repo, not official, -count, paper_key, ordinal) for repo, (official, count) in stats.items()]
        if replacing:
            self._repos[ordinal] = repos
            self._replaced = True
        else:
            self._repos.append(repos)
        if self._documents is not None:
            self._documents(search_document(record, admitted))

    def _append_samples(self, samples: list[SampleData], ordinal: int) -> dict[str, list[Any]]:
        """Append a paper's samples (already in default order) to the columns; per repository
        (lower case) they come from: [any official, how many]."""
        n = len(samples)
        if not n:
            return {}
        columns, ids = self._samples, self._ids.__getitem__
        start = len(columns)
        repos, paths, kinds = list(map(_REPO, samples)), list(map(_PATH, samples)), list(map(_KIND, samples))
        columns.sha.extend(map(int, map(_SHA, samples), _HEX))
        entries, paths_column = cast(list[str], columns.entry), cast(list[str], columns.path)
        entries.extend(map(_ENTRY, samples))
        columns.repo.extend(map(ids, repos))
        columns.repo_kind.extend(map(ids, kinds))
        paths_column.extend(paths)
        columns.language.extend(map(ids, map(_LANGUAGE, samples)))
        columns.status.extend(map(ids, map(_STATUS, samples)))
        columns.contract_check.extend(map(ids, map(_CONTRACT, samples)))
        levels = list(map(_LEVEL, samples))
        columns.verification_level.extend(map(_NO_LEVEL, levels, levels))
        columns.licence.extend(map(ids, map(_LICENCE, samples)))
        columns.inline_ok.extend(map(_INLINE, samples))
        columns.paper.extend(repeat(ordinal, n))
        urls = list(map(_FILE_URL, samples))
        for offset in compress(range(n), map(operator.ne, urls, map(BLOB_URL, repos, paths))):
            url = urls[offset]
            if url is not None:
                columns.file_url[start + offset] = url
        stats: dict[str, list[Any]] = {}
        for (repo, official), count in Counter(
            zip(map(str.lower, repos), map(operator.eq, kinds, repeat("official")), strict=True)
        ).items():
            found = stats.get(repo)
            if found is None:
                stats[repo] = [official, count]
            else:
                found[0] |= official
                found[1] += count
        return stats

    def _put_paper(self, i: int, record: RecordData, arxiv_id: str | None, slug: str | None, blob: bytes, start: int, end: int) -> None:
        """Set paper `i`: append when `i` is the next ordinal, else replace it."""
        papers, ids = self._papers, self._ids
        harvest = record.syntology
        year = _year(record.date)
        values = (
            ("arxiv_id", arxiv_id),
            ("slug", slug),
            ("title", record.title),
            ("date", record.date),
            ("url_abs", record.url_abs),
            ("read_at", harvest.read_at if harvest else None),
            ("blob", blob),
            ("snapshot", ids[record.source.snapshot if record.source else None]),
            ("claim", ids[harvest.claim if harvest else None]),
            ("year", NONE if year is None else year),
            ("n_authors", len(record.authors or ())),
            ("start", start),
            ("end", end),
        )
        if i == len(papers):
            for name, value in values:
                getattr(papers, name).append(value)
        else:
            for name, value in values:
                getattr(papers, name)[i] = value

    # -- finish ----------------------------------------------------------------------------

    def finish(self) -> PaperIndex:
        """Everything derived from the papers' live samples: counts, hashes, repositories, listings."""
        columns, papers, strings = self._samples, self._papers, self._strings
        values = strings.values
        self.report.records_indexed = len(papers)
        live: Sequence[int] = range(len(columns))
        if self._replaced:  # a replaced paper's old samples stay in the columns, unreferenced
            live = array("i")
            for ordinal in range(len(papers)):
                live.extend(range(papers.start[ordinal], papers.end[ordinal]))

        def counts(column: array[int], missing: str) -> Counter[str]:
            by_id = Counter(column) if not self._replaced else Counter(map(column.__getitem__, live))
            return Counter({(missing if string_id == NONE else values[string_id]): n for string_id, n in by_id.items()})

        status_counts = counts(columns.status, "unknown")
        read_ats = [value for value in papers.read_at if value]
        # Code hashes: sorted values with their sample ids.
        by_sha = sorted(live, key=columns.sha.__getitem__)
        repo_names, repo_offsets, repo_papers = self._repositories()
        listing_order, buckets = self._listing()
        index = PaperIndex(
            report=self.report,
            papers=papers,
            samples=columns,
            by_arxiv=self._admission.by_arxiv,
            by_slug=self._admission.by_slug,
            fingerprint=self._admission.fingerprint,
            live_samples=len(live),
            status_counts=status_counts,
            repo_kind_counts=counts(columns.repo_kind, "unknown"),
            licence_counts=counts(columns.licence, "NONE"),
            language_counts=counts(columns.language, "unknown"),
            papers_with_samples=sum(map(operator.gt, papers.end, papers.start)),
            snapshots=frozenset(values[i] for i in set(papers.snapshot) if i != NONE),
            read_at_range=(min(read_ats), max(read_ats)) if read_ats else None,
            sha_sorted=array("Q", map(columns.sha.__getitem__, by_sha)),
            sha_samples=array("i", by_sha),
            repo_names=repo_names,
            repo_offsets=repo_offsets,
            repo_papers=repo_papers,
            listing_order=listing_order,
            buckets=buckets,
            arxiv_ids_sorted=sorted(self._admission.by_arxiv),
        )
        strings.seal()
        del self._repos, self._admission, self._documents
        return index

    def _repositories(self) -> tuple[list[str], array[int], array[int]]:
        """Lower-case owner/name -> papers, official first, then most samples from it, then paper key."""
        entries = list(chain.from_iterable(self._repos))
        entries.sort()
        names: list[str] = []
        offsets = array("i")
        for position, name in enumerate(map(_FIRST, entries)):
            if not names or names[-1] != name:
                names.append(name)
                offsets.append(position)
        offsets.append(len(entries))
        return names, offsets, array("i", map(_LAST, entries))

    def _listing(self) -> tuple[array[int], dict[BucketKey, array[int]]]:
        """The corpus-wide listing order (status, official first, showable first, then paper key,
        repo, path, entry) and its buckets, from two sorts on integer keys."""
        columns, papers, strings = self._samples, self._papers, self._strings
        values, ids = strings.values, self._ids
        keys = list(map(papers.key, range(len(papers))))
        base = array("i")
        for ordinal in sorted(range(len(papers)), key=keys.__getitem__):
            base.extend(range(papers.start[ordinal], papers.end[ordinal]))
        # One small int per sample: status order, then official first, then showable first.
        status_ids = set(columns.status)  # a replaced paper's old samples too: every id needs a part
        statuses = sorted((values[i] for i in status_ids), key=lambda status: (status_rank(status), status))
        status_part = {ids[status]: position * 4 for position, status in enumerate(statuses)}
        official = ids.get("official", -2)
        group = array(
            "i",
            map(
                operator.add,
                map(status_part.__getitem__, columns.status),
                map(
                    operator.add,
                    map(operator.mul, map(operator.ne, columns.repo_kind, repeat(official)), repeat(2)),
                    map(operator.xor, columns.inline_ok, repeat(1)),
                ),
            ),
        )
        order = array("i", sorted(base, key=group.__getitem__))
        # Buckets: the listing ranks of each (status, kind, language, licence, inline) in rank order.
        raw_ids = _Numbering()
        bucket_of = array(
            "i",
            map(
                raw_ids.__getitem__,
                zip(
                    map(columns.status.__getitem__, order),
                    map(columns.repo_kind.__getitem__, order),
                    map(columns.language.__getitem__, order),
                    map(columns.licence.__getitem__, order),
                    map(columns.inline_ok.__getitem__, order),
                    strict=True,
                ),
            ),
        )
        by_bucket = sorted(range(len(order)), key=bucket_of.__getitem__)
        sizes = Counter(bucket_of)
        buckets: dict[BucketKey, array[int]] = {}
        position = 0
        for (status, kind, language, licence, inline), number in sorted(raw_ids.items(), key=lambda item: item[1]):
            ranks = array("i", by_bucket[position : position + sizes[number]])
            position += sizes[number]
            key = (
                values[status],
                values[kind],
                (values[language] if language != NONE else "").lower(),
                (values[licence] if licence != NONE else "").lower(),
                bool(inline),
            )
            # Spellings that differ only in case share a bucket: merge their ranks in order.
            buckets[key] = array("i", sorted(buckets[key] + ranks)) if key in buckets else ranks
        return order, buckets


def _details_blob(record: RecordData, links: list[CodeLinkRow]) -> bytes:
    details: dict[str, object] = {
        "a": record.authors or [],
        "t": [(task.task_slug, task.task_name or task.task_slug) for task in record.tasks or ()],
        "m": [method.method_name for method in record.methods or ()],
        "l": [list(link) for link in links],
    }
    for key, value in (("p", record.proceeding), ("pdf", record.url_pdf)):
        if value is not None:
            details[key] = value
    return orjson.dumps(details)


def build_index(loaded: Iterable[LoadedRecord], report: LoadReport, documents: DocumentSink | None = None) -> PaperIndex:
    """Index `loaded` as it streams in."""
    return IndexBuilder(report, documents).add_all(loaded).finish()
