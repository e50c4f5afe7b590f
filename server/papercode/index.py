"""The in-memory index: papers, samples and repositories, with every keyed lookup a dict hit or a
binary search.

Built once per process from validated records, and laid out for 100k+ papers and millions of
samples: samples live in columns (arrays of small ints into one string table), papers keep only
what lists and lookups need, and each paper's display details (authors, links, tasks, methods)
sit in one compact JSON blob decoded on demand; the abstract is kept once, by the search engine.
That keeps memory close to what is served and makes the index quick to snapshot and restore.
Nothing here imports MCP.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import heapq
import itertools
import re
import sys
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, cast

import orjson

from .ids import normalize_repo
from .loading import DuplicateFilter, LoadedRecord, LoadReport
from .packed import PackedBytes, PackedStrings
from .records import KNOWN_STATUSES, CodeLink, Record, Sample

STATUS_RANK: dict[str, int] = {status: rank for rank, status in enumerate(KNOWN_STATUSES)}
_UNKNOWN_STATUS_RANK = len(KNOWN_STATUSES)
_NONE = -1  # "no value" in an int column
_SHA_BYTES = 8


def status_rank(status: str) -> int:
    return STATUS_RANK.get(status, _UNKNOWN_STATUS_RANK)


_SPELLING = ((re.compile(r"(.)\1"), r"\1"), (re.compile(r"isation"), "ization"), (re.compile(r"our\b"), "or"))


@functools.lru_cache(maxsize=1 << 16)  # task names repeat across papers
def task_key(name: str) -> str:
    """Merges near-duplicate task names (language-modeling / language-modelling)."""
    key = re.sub(r"[\s_\-]+", "-", name.strip().lower())
    for pattern, replacement in _SPELLING:
        key = pattern.sub(replacement, key)
    return key


@dataclass(frozen=True, slots=True)
class SampleRow:
    """One sample, materialised from the columns when a query needs it."""

    code_sha256: str
    entry: str
    repo: str
    repo_kind: str
    path: str
    language: str | None
    status: str
    contract_check: str | None
    verification_level: int | None
    licence: str | None
    inline_ok: bool
    paper: int
    file_url: str

    @property
    def is_official(self) -> bool:
        return self.repo_kind == "official"


def sample_order_key(sample: Sample) -> tuple[bool, int, bool, str, str, str]:
    """A paper's default order, best first: official, status, showable, then repo/path/entry."""
    return (sample.repo_kind != "official", status_rank(sample.status), not sample.inline_ok, sample.repo, sample.path, sample.entry)


class CodeLinkRow(NamedTuple):
    repo: str | None  # normalised owner/name when the URL is a GitHub repository
    repo_url: str
    is_official: bool
    mentioned_in_paper: bool | None
    framework: str | None
    reach_status: str | None
    licence: str | None


@dataclass(frozen=True, slots=True)
class PaperDetails:
    """A paper's display fields, decoded from its blob."""

    authors: list[str]
    proceeding: str | None
    url_pdf: str | None
    tasks: list[tuple[str, str]]
    methods: list[str]
    code_links: list[CodeLinkRow]


@dataclass(frozen=True, slots=True)
class PaperRow:
    """One paper, materialised from the paper columns when a query needs it."""

    ordinal: int
    arxiv_id: str | None
    slug: str | None
    title: str
    date: str | None
    year: int | None
    url_abs: str | None
    snapshot: str | None
    read_at: str | None
    claim: str | None
    n_authors: int
    samples: range  # sample ids, in the paper's default order
    blob: bytes

    @property
    def key(self) -> str:
        """The id agents use: the arXiv id, else the slug."""
        return self.arxiv_id or self.slug or ""

    def details(self) -> PaperDetails:
        """Display fields; the abstract is kept once, by the search engine's full text."""
        raw = orjson.loads(self.blob)
        return PaperDetails(
            authors=raw["a"],
            proceeding=raw.get("p"),
            url_pdf=raw.get("pdf"),
            tasks=[(slug, name) for slug, name in raw["t"]],
            methods=raw["m"],
            code_links=[CodeLinkRow(*link) for link in raw["l"]],
        )


class PaperColumns:
    """Every paper, one list or array per field; `papers[i]` materialises paper i.

    Columns of plain strings and ints restore from a snapshot far faster than objects do.
    """

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        self.arxiv_id: list[str | None] = []
        self.slug: list[str | None] = []
        self.title: list[str] = []
        self.date: list[str | None] = []
        self.url_abs: list[str | None] = []
        self.read_at: list[str | None] = []
        self.blob: list[bytes] = []
        self.snapshot = array("i")
        self.claim = array("i")
        self.year = array("i")
        self.n_authors = array("i")
        self.start = array("i")  # paper i's samples are ids start[i]..end[i]-1
        self.end = array("i")

    def __len__(self) -> int:
        return len(self.title)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        for name in ("arxiv_id", "slug", "title", "date", "url_abs", "read_at"):
            state[name] = PackedStrings(state[name])
        state["blob"] = PackedBytes(self.blob)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    def __getitem__(self, i: int) -> PaperRow:
        if i < 0:
            i += len(self)
        text = self.strings.values
        return PaperRow(
            ordinal=i,
            arxiv_id=self.arxiv_id[i],
            slug=self.slug[i],
            title=self.title[i],
            date=self.date[i],
            year=None if self.year[i] == _NONE else self.year[i],
            url_abs=self.url_abs[i],
            snapshot=_text(text, self.snapshot[i]),
            read_at=self.read_at[i],
            claim=_text(text, self.claim[i]),
            n_authors=self.n_authors[i],
            samples=range(self.start[i], self.end[i]),
            blob=self.blob[i],
        )

    def __iter__(self) -> Iterator[PaperRow]:
        return (self[i] for i in range(len(self)))

    def key(self, i: int) -> str:
        return self.arxiv_id[i] or self.slug[i] or ""

    def put(self, i: int, record: Record, arxiv_id: str | None, slug: str | None, blob: bytes, start: int, end: int) -> None:
        """Set paper `i`: append when `i` is the next ordinal, else replace it."""
        harvest = record.syntology
        year = _year(record.date)
        values = {
            "arxiv_id": arxiv_id,
            "slug": slug,
            "title": record.title,
            "date": record.date,
            "url_abs": record.url_abs,
            "read_at": harvest.read_at if harvest else None,
            "blob": blob,
            "snapshot": self.strings.id(record.source.snapshot if record.source else None),
            "claim": self.strings.id(harvest.claim if harvest else None),
            "year": _NONE if year is None else year,
            "n_authors": len(record.authors),
            "start": start,
            "end": end,
        }
        appending = i == len(self)
        for name, value in values.items():
            column = getattr(self, name)
            if appending:
                column.append(value)
            else:
                column[i] = value


class SearchDocument(NamedTuple):
    """What the search engine indexes for one paper; produced while the index is built."""

    paper: int
    title: str
    abstract: str
    authors: str
    tasks: list[tuple[str, str]]
    methods: list[str]
    frameworks: set[str]
    statuses: set[str]
    date: str | None
    year: int | None
    samples: int
    official: bool


class _Ids(dict[str | None, int]):
    """string -> id; a miss appends the string (a C-level lookup on the hot path, Python only on a miss)."""

    def __init__(self, strings: list[str]) -> None:
        super().__init__({None: _NONE})
        self._strings = strings

    def __missing__(self, value: str) -> int:
        found = self[value] = len(self._strings)
        self._strings.append(value)
        return found


class StringTable:
    """Interns strings to small ints; one table serves every string column.

    A snapshot stores it packed; a restored table only reads (`id` is for building).
    """

    def __init__(self) -> None:
        building: list[str] = []
        self.values: Sequence[str] = building
        self.ids = _Ids(building)

    def id(self, value: str | None) -> int:
        return self.ids[value]

    def __getstate__(self) -> PackedStrings:
        return PackedStrings(self.values)

    def __setstate__(self, packed: PackedStrings) -> None:
        self.values = cast(Sequence[str], packed)  # a string table holds no None


class SampleColumns:
    """Every sample, one array per field; `columns[i]` materialises sample i."""

    def __init__(self) -> None:
        self.strings = StringTable()
        self.sha = bytearray()
        self.entry = array("i")
        self.repo = array("i")
        self.repo_kind = array("i")
        self.path = array("i")
        self.language = array("i")
        self.status = array("i")
        self.contract_check = array("i")
        self.verification_level = array("i")
        self.licence = array("i")
        self.inline_ok = bytearray()
        self.paper = array("i")
        self.file_url: dict[int, str] = {}  # only where it is not the usual blob/HEAD URL

    def __len__(self) -> int:
        return len(self.paper)

    def append(self, sample: Sample, paper: int) -> None:
        ids = self.strings.ids
        sample_id = len(self.paper)
        self.sha += bytes.fromhex(sample.code_sha256_prefix)
        self.entry.append(ids[sample.entry])
        self.repo.append(ids[sample.repo])
        self.repo_kind.append(ids[sample.repo_kind])
        self.path.append(ids[sample.path])
        self.language.append(ids[sample.language])
        self.status.append(ids[sample.status])
        self.contract_check.append(ids[sample.contract_check])
        self.verification_level.append(_NONE if sample.verification_level is None else sample.verification_level)
        self.licence.append(ids[sample.licence])
        self.inline_ok.append(sample.inline_ok)
        self.paper.append(paper)
        if sample.file_url is not None and sample.file_url != _blob_url(sample.repo, sample.path):
            self.file_url[sample_id] = sample.file_url

    def sha_values(self) -> array[int]:
        """Every code hash as an int (big-endian, so int order is hex order)."""
        values = array("Q")
        values.frombytes(bytes(self.sha))
        if sys.byteorder == "little":
            values.byteswap()
        return values

    def __getitem__(self, i: int) -> SampleRow:
        text = self.strings.values
        repo, path = text[self.repo[i]], text[self.path[i]]
        return SampleRow(
            code_sha256=self.sha[i * _SHA_BYTES : (i + 1) * _SHA_BYTES].hex(),
            entry=text[self.entry[i]],
            repo=repo,
            repo_kind=text[self.repo_kind[i]],
            path=path,
            language=_text(text, self.language[i]),
            status=text[self.status[i]],
            contract_check=_text(text, self.contract_check[i]),
            verification_level=None if self.verification_level[i] == _NONE else self.verification_level[i],
            licence=_text(text, self.licence[i]),
            inline_ok=bool(self.inline_ok[i]),
            paper=self.paper[i],
            file_url=self.file_url.get(i) or _blob_url(repo, path),
        )

    def __iter__(self) -> Iterator[SampleRow]:
        return (self[i] for i in range(len(self)))

    def status_of(self, i: int) -> str:
        return self.strings.values[self.status[i]]


def _text(values: Sequence[str], string_id: int) -> str | None:
    return None if string_id == _NONE else values[string_id]


def _blob_url(repo: str, path: str) -> str:
    return f"https://github.com/{repo}/blob/HEAD/{path}"


# A listing bucket: samples sharing (status, repo_kind, language, licence, inline_ok); a missing
# language or licence is "" (the filters compare lower case, so the key holds lower case too).
BucketKey = tuple[str, str, str, str, bool]


class PaperIndex:
    """Read-only lookups over one loaded corpus."""

    def __init__(
        self, loaded: Iterable[LoadedRecord], report: LoadReport, documents: Callable[[SearchDocument, bool], None] | None = None
    ) -> None:
        """Index `loaded` as it streams in; duplicates resolve in place (see `DuplicateFilter`).

        `documents` receives each paper's search document as it is indexed (and `True` when it
        replaces an earlier one), so the full text goes straight to the search engine.
        """
        self.report = report
        self.samples = SampleColumns()
        self.papers = PaperColumns(self.samples.strings)
        self.by_arxiv: dict[str, int] = {}
        self.by_slug: dict[str, int] = {}
        self._documents = documents or (lambda document, replacing: None)
        self._ordinals: dict[str, int] = {}  # duplicate key -> paper ordinal
        self._links: list[list[tuple[str, bool]]] = []  # per paper: (repo, is_official) of its code links
        duplicates = DuplicateFilter(report)
        fingerprint = hashlib.sha256()
        for item in loaded:
            if duplicates.admit(item):
                self._add(item)
                fingerprint.update(f"{item.key}\0{item.read_at}\0{item.path}\0{item.line}\0".encode())
        report.records_indexed = len(self.papers)
        self.fingerprint = fingerprint.digest()
        self._finish()

    # -- build -----------------------------------------------------------------------------

    def _add(self, item: LoadedRecord) -> None:
        """Add a record, or replace the one it beat as a duplicate (keeping that ordinal)."""
        record = item.record
        key = item.key
        ordinal = self._ordinals.get(key, len(self.papers))
        arxiv_id, slug = item.arxiv_id, item.slug
        replacing = ordinal < len(self.papers)
        if replacing:
            old_slug = self.papers.slug[ordinal]
            if old_slug is not None and self.by_slug.get(old_slug) == ordinal:
                del self.by_slug[old_slug]
        if slug is not None and slug in self.by_slug:
            if arxiv_id is None:
                self.report.add("error", "duplicate", item.path, f"slug {slug} is already taken and the record has no arXiv id", item.line)
                return
            self.report.add("warning", "duplicate_slug", item.path, f"slug {slug} is already taken; reachable by arXiv id only", item.line)
            slug = None
        harvest = record.syntology
        samples = sorted(harvest.samples, key=sample_order_key) if harvest else []
        start = len(self.samples)
        for sample in samples:  # a replaced paper's old samples stay behind, unreferenced
            self.samples.append(sample, ordinal)
        links = sorted(
            map(_code_link_row, record.code_links),
            key=lambda link: (not link.is_official, not link.mentioned_in_paper, link.repo_url.lower()),
        )
        document = SearchDocument(
            paper=ordinal,
            title=record.title,
            abstract=record.abstract or "",
            authors=" ; ".join(record.authors),
            tasks=[(task.task_slug, task.task_name or task.task_slug) for task in record.tasks],
            methods=[method.method_name for method in record.methods],
            frameworks={link.framework for link in links if link.framework},
            statuses={sample.status for sample in samples},
            date=record.date,
            year=_year(record.date),
            samples=len(samples),
            official=any(link.is_official for link in links),
        )
        repo_links = [(link.repo, link.is_official) for link in links if link.repo]
        self.papers.put(ordinal, record, arxiv_id, slug, _details_blob(record, links), start, len(self.samples))
        self._documents(document, replacing)
        if replacing:
            self._links[ordinal] = repo_links
        else:
            self._links.append(repo_links)
        self._ordinals[key] = ordinal
        if arxiv_id:
            self.by_arxiv[arxiv_id] = ordinal
        if slug:
            self.by_slug[slug] = ordinal

    def _finish(self) -> None:
        """Everything derived from the papers' live samples: counts, hashes, repos, listings."""
        columns, papers = self.samples, self.papers
        text = columns.strings.values
        live = array("i")
        for ordinal in range(len(papers)):
            live.extend(range(papers.start[ordinal], papers.end[ordinal]))
        self.live_samples = len(live)

        def counts(column: array[int], missing: str) -> Counter[str]:
            by_id = Counter(column[i] for i in live)
            return Counter({(missing if string_id == _NONE else text[string_id]): n for string_id, n in by_id.items()})

        self.status_counts = counts(columns.status, "unknown")
        self.repo_kind_counts = counts(columns.repo_kind, "unknown")
        self.licence_counts = counts(columns.licence, "NONE")
        self.language_counts = counts(columns.language, "unknown")
        self.papers_with_samples = sum(1 for ordinal in range(len(papers)) if papers.end[ordinal] > papers.start[ordinal])
        self.snapshots = {text[i] for i in set(papers.snapshot) if i != _NONE}
        read_ats = [value for value in papers.read_at if value]
        self.read_at_range = (min(read_ats), max(read_ats)) if read_ats else None
        # Code hashes: sorted values with their sample ids, for exact and prefix lookups.
        sha = columns.sha_values()
        by_sha = sorted(live, key=sha.__getitem__)
        self.sha_sorted = array("Q", map(sha.__getitem__, by_sha))
        self.sha_samples = array("i", by_sha)
        # Repositories: lower-case owner/name -> papers, official first, then by samples from it
        # (CSR layout: sorted names, offsets, papers).
        stats: dict[str, dict[int, list[int]]] = defaultdict(dict)  # repo -> paper -> [official, samples]
        for ordinal, links in enumerate(self._links):
            for repo, official in links:
                stats[repo].setdefault(ordinal, [0, 0])[0] |= official
        for i in live:
            entry = stats[text[columns.repo[i]].lower()].setdefault(columns.paper[i], [0, 0])
            entry[0] |= text[columns.repo_kind[i]] == "official"
            entry[1] += 1
        self.repo_names = sorted(stats)
        self.repo_offsets = array("i", [0])
        self.repo_papers = array("i")
        for name in self.repo_names:
            by_paper = stats[name]
            self.repo_papers.extend(sorted(by_paper, key=lambda p: (not by_paper[p][0], -by_paper[p][1], papers.key(p))))
            self.repo_offsets.append(len(self.repo_papers))
        del self._links, self._ordinals, self._documents
        # Corpus-wide listing order, bucketed so a filtered listing never scans other samples.
        order = sorted(live, key=self._listing_key)
        self.listing_order = array("i", order)
        buckets: dict[BucketKey, array[int]] = defaultdict(lambda: array("i"))
        for rank, i in enumerate(order):
            key = (
                text[columns.status[i]],
                text[columns.repo_kind[i]],
                (_text(text, columns.language[i]) or "").lower(),
                (_text(text, columns.licence[i]) or "").lower(),
                bool(columns.inline_ok[i]),
            )
            buckets[key].append(rank)
        self.buckets: dict[BucketKey, array[int]] = dict(buckets)
        self.arxiv_ids_sorted: list[str] = sorted(self.by_arxiv)

    def _listing_key(self, i: int) -> tuple[int, str, bool, bool, str, str, str, str]:
        """Corpus-wide order: status, official first, showable first, then paper/repo/path/entry."""
        columns = self.samples
        text = columns.strings.values
        status = text[columns.status[i]]
        return (
            status_rank(status),
            status,
            text[columns.repo_kind[i]] != "official",
            not columns.inline_ok[i],
            self.papers.key(columns.paper[i]),
            text[columns.repo[i]],
            text[columns.path[i]],
            text[columns.entry[i]],
        )

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        # Packed: a snapshot restores them as two buffers each instead of one object per string.
        state["repo_names"] = PackedStrings(self.repo_names)
        state["arxiv_ids_sorted"] = PackedStrings(self.arxiv_ids_sorted)
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    # -- lookups ---------------------------------------------------------------------------

    def paper_by_arxiv(self, arxiv_id: str) -> PaperRow | None:
        ordinal = self.by_arxiv.get(arxiv_id)
        return None if ordinal is None else self.papers[ordinal]

    def paper_by_slug(self, slug: str) -> PaperRow | None:
        ordinal = self.by_slug.get(slug)
        return None if ordinal is None else self.papers[ordinal]

    def samples_of(self, paper: PaperRow) -> list[SampleRow]:
        return [self.samples[i] for i in paper.samples]

    def statuses_of(self, paper: PaperRow) -> set[str]:
        return {self.samples.status_of(i) for i in paper.samples}

    def statuses(self) -> list[str]:
        """Every valid status: the known ones, then any others seen in the corpus."""
        extra = sorted(set(self.status_counts) - set(KNOWN_STATUSES))
        return [*KNOWN_STATUSES, *extra]

    def sample_ids_for_sha(self, sha: str) -> list[int]:
        """Samples whose code hash is exactly `sha` (16 hex)."""
        value = int(sha, 16)
        start = bisect.bisect_left(self.sha_sorted, value)
        end = bisect.bisect_right(self.sha_sorted, value, lo=start)
        return sorted(self.sha_samples[start:end])

    def shas_with_prefix(self, prefix: str, most: int = 10) -> list[str]:
        """Distinct code hashes starting with `prefix` (hex, at most 16), in order."""
        shift = 4 * (16 - len(prefix))
        low = int(prefix, 16) << shift if prefix else 0
        high = low + (1 << shift)
        start = bisect.bisect_left(self.sha_sorted, low)
        found: list[str] = []
        # Index from `start`: islice would walk every hash below the prefix first.
        for position in range(start, len(self.sha_sorted)):
            value = self.sha_sorted[position]
            if value >= high or len(found) >= most:
                break
            text = f"{value:016x}"
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

    def list_samples(
        self,
        statuses: Iterable[str],
        repo_kind: str | None = None,
        language: str | None = None,
        licence: str | None = None,
        inline_only: bool = False,
        offset: int = 0,
        limit: int | None = None,
    ) -> tuple[int, list[SampleRow]]:
        """(total, one page of samples in listing order) for the filters.

        Never scans non-matching samples, and materialises only the page: skipping to `offset`
        walks listing ranks (ints), and not even those when one bucket matches.
        """
        wanted = set(statuses)
        chosen = [
            ranks
            for (status, kind, lang, lic, inline), ranks in self.buckets.items()
            if status in wanted
            and (repo_kind is None or kind == repo_kind)
            and (language is None or lang == language.lower())
            and (licence is None or lic == licence.lower())
            and (inline or not inline_only)
        ]
        total = sum(map(len, chosen))
        end = total if limit is None else offset + limit
        if len(chosen) == 1:
            ranks: Iterable[int] = chosen[0][offset:end]
        else:
            ranks = itertools.islice(heapq.merge(*chosen), offset, end)
        return total, [self.samples[self.listing_order[rank]] for rank in ranks]


def _code_link_row(link: CodeLink) -> CodeLinkRow:
    reach = link.reach
    return CodeLinkRow(
        repo=normalize_repo(link.repo_url),
        repo_url=link.repo_url,
        is_official=link.is_official,
        mentioned_in_paper=link.mentioned_in_paper,
        framework=link.framework,
        reach_status=reach.status if reach else None,
        licence=reach.spdx if reach else None,
    )


def _details_blob(record: Record, links: list[CodeLinkRow]) -> bytes:
    details: dict[str, object] = {
        "a": record.authors,
        "t": [(task.task_slug, task.task_name or task.task_slug) for task in record.tasks],
        "m": [method.method_name for method in record.methods],
        "l": [list(link) for link in links],
    }
    for key, value in (("p", record.proceeding), ("pdf", record.url_pdf)):
        if value is not None:
            details[key] = value
    return orjson.dumps(details)


def _year(date: str | None) -> int | None:
    if date and len(date) >= 4 and date[:4].isdigit():
        return int(date[:4])
    return None
