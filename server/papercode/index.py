"""The in-memory index: papers, samples and repositories, with every keyed lookup a dict hit.

Built once per process from validated records. It holds compact rows (slotted objects with
interned strings), not the records themselves, so memory grows with what is served, not with
everything a record carries. Nothing here imports MCP.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .ids import canonical_arxiv_id, normalize_repo, slug_from_record_url
from .loading import LoadedRecord, LoadReport
from .records import KNOWN_STATUSES, CodeLink, Record, Sample

_intern = sys.intern

STATUS_RANK: dict[str, int] = {status: rank for rank, status in enumerate(KNOWN_STATUSES)}
_UNKNOWN_STATUS_RANK = len(KNOWN_STATUSES)


def status_rank(status: str) -> int:
    return STATUS_RANK.get(status, _UNKNOWN_STATUS_RANK)


_SPELLING = ((re.compile(r"(.)\1"), r"\1"), (re.compile(r"isation"), "ization"), (re.compile(r"our\b"), "or"))


def task_key(name: str) -> str:
    """Merges near-duplicate task names (language-modeling / language-modelling)."""
    key = re.sub(r"[\s_\-]+", "-", name.strip().lower())
    for pattern, replacement in _SPELLING:
        key = pattern.sub(replacement, key)
    return key


@dataclass(slots=True)
class SampleRow:
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
    file_url: str | None

    @property
    def is_official(self) -> bool:
        return self.repo_kind == "official"

    def order_key(self) -> tuple[bool, int, bool, str, str, str]:
        """Best first: official, status, showable inline, then repo/path/entry."""
        return (not self.is_official, status_rank(self.status), not self.inline_ok, self.repo, self.path, self.entry)


@dataclass(frozen=True, slots=True)
class CodeLinkRow:
    repo: str | None  # normalised owner/name when the URL is a GitHub repository
    repo_url: str
    is_official: bool
    mentioned_in_paper: bool | None
    framework: str | None
    reach_status: str | None
    licence: str | None


@dataclass(slots=True)
class PaperRow:
    arxiv_id: str | None
    slug: str | None
    title: str
    date: str | None
    year: int | None
    authors: tuple[str, ...]
    abstract: str | None
    proceeding: str | None
    url_abs: str | None
    url_pdf: str | None
    tasks: tuple[tuple[str, str], ...]
    methods: tuple[str, ...]
    code_links: tuple[CodeLinkRow, ...]
    snapshot: str | None
    read_at: str | None
    claim: str | None
    samples: list[int] = field(default_factory=list)  # sample ids, default order

    @property
    def key(self) -> str:
        """The id agents use: the arXiv id, else the slug."""
        return self.arxiv_id or self.slug or ""


# A listing bucket: samples sharing (status, repo_kind, language, licence, inline_ok).
BucketKey = tuple[str, str, str | None, str | None, bool]


@dataclass(slots=True)
class RepoEntry:
    papers: dict[int, list[int]] = field(default_factory=dict)  # paper -> its sample ids from this repo


class PaperIndex:
    """Read-only lookups over one loaded corpus."""

    def __init__(self, loaded: Iterable[LoadedRecord], report: LoadReport) -> None:
        self.report = report
        self.papers: list[PaperRow] = []
        self.samples: list[SampleRow] = []
        self.by_arxiv: dict[str, int] = {}
        self.by_slug: dict[str, int] = {}
        self.by_sha: dict[str, list[int]] = {}
        self.by_repo: dict[str, RepoEntry] = {}
        self.status_counts: Counter[str] = Counter()
        self.repo_kind_counts: Counter[str] = Counter()
        self.licence_counts: Counter[str] = Counter()
        self.language_counts: Counter[str] = Counter()
        fingerprint = hashlib.sha256()
        for item in loaded:
            self._add(item, fingerprint)
        report.records_indexed = len(self.papers)
        self.fingerprint = fingerprint.digest()
        self._finish()

    # -- build -----------------------------------------------------------------------------

    def _add(self, item: LoadedRecord, fingerprint: hashlib._Hash) -> None:
        record = item.record
        ordinal = len(self.papers)
        paper = _paper_row(record)
        if paper.slug is not None and paper.slug in self.by_slug:
            if paper.arxiv_id is None:
                self.report.add(
                    "error", "duplicate", item.path, f"slug {paper.slug} is already taken and the record has no arXiv id", item.line
                )
                return
            self.report.add(
                "warning", "duplicate_slug", item.path, f"slug {paper.slug} is already taken; reachable by arXiv id only", item.line
            )
            paper.slug = None
        self.papers.append(paper)
        if paper.arxiv_id:
            self.by_arxiv[paper.arxiv_id] = ordinal
        if paper.slug:
            self.by_slug[paper.slug] = ordinal
        fingerprint.update(f"{paper.key}\0{paper.read_at}\0{item.path}\0".encode())
        harvest = record.syntology
        rows = [] if harvest is None else [self._sample_row(sample, ordinal) for sample in harvest.samples]
        rows.sort(key=SampleRow.order_key)
        for row in rows:
            sample_id = len(self.samples)
            self.samples.append(row)
            paper.samples.append(sample_id)
            self.by_sha.setdefault(row.code_sha256, []).append(sample_id)
            self.by_repo.setdefault(row.repo.lower(), RepoEntry()).papers.setdefault(ordinal, []).append(sample_id)
            self.status_counts[row.status] += 1
            self.repo_kind_counts[row.repo_kind] += 1
            self.licence_counts[row.licence or "NONE"] += 1
            self.language_counts[row.language or "unknown"] += 1
        for link in paper.code_links:
            if link.repo:
                self.by_repo.setdefault(link.repo, RepoEntry()).papers.setdefault(ordinal, [])

    def _sample_row(self, sample: Sample, paper: int) -> SampleRow:
        derived_url = f"https://github.com/{sample.repo}/blob/HEAD/{sample.path}"
        return SampleRow(
            code_sha256=sample.code_sha256_prefix,
            entry=_intern(sample.entry),
            repo=_intern(sample.repo),
            repo_kind=_intern(sample.repo_kind),
            path=_intern(sample.path),
            language=_intern(sample.language) if sample.language else None,
            status=_intern(sample.status),
            contract_check=_intern(sample.contract_check) if sample.contract_check else None,
            verification_level=sample.verification_level,
            licence=_intern(sample.licence) if sample.licence else None,
            inline_ok=sample.inline_ok,
            paper=paper,
            file_url=None if sample.file_url in (None, derived_url) else sample.file_url,
        )

    def _finish(self) -> None:
        order = sorted(range(len(self.samples)), key=self._listing_key)
        self.listing_rank: list[int] = [0] * len(self.samples)
        self.listing_order: list[int] = order
        buckets: dict[BucketKey, list[int]] = defaultdict(list)
        for rank, sample_id in enumerate(order):
            self.listing_rank[sample_id] = rank
            row = self.samples[sample_id]
            buckets[(row.status, row.repo_kind, row.language, row.licence, row.inline_ok)].append(rank)
        self.buckets: dict[BucketKey, list[int]] = dict(buckets)
        self.sorted_shas: list[str] = sorted(self.by_sha)
        self.arxiv_ids_sorted: list[str] = sorted(self.by_arxiv)

    def _listing_key(self, sample_id: int) -> tuple[int, str, bool, bool, str, str, str, str]:
        """Corpus-wide order: status, official first, showable first, then paper/repo/path/entry."""
        row = self.samples[sample_id]
        paper_key = self.papers[row.paper].key
        return (status_rank(row.status), row.status, not row.is_official, not row.inline_ok, paper_key, row.repo, row.path, row.entry)

    # -- lookups ---------------------------------------------------------------------------

    def paper_by_arxiv(self, arxiv_id: str) -> PaperRow | None:
        ordinal = self.by_arxiv.get(arxiv_id)
        return None if ordinal is None else self.papers[ordinal]

    def paper_by_slug(self, slug: str) -> PaperRow | None:
        ordinal = self.by_slug.get(slug)
        return None if ordinal is None else self.papers[ordinal]

    def samples_of(self, paper: PaperRow) -> list[SampleRow]:
        return [self.samples[i] for i in paper.samples]

    def statuses(self) -> list[str]:
        """Every valid status: the known ones, then any others seen in the corpus."""
        extra = sorted(set(self.status_counts) - set(KNOWN_STATUSES))
        return [*KNOWN_STATUSES, *extra]

    def shas_with_prefix(self, prefix: str, most: int = 10) -> list[str]:
        start = bisect.bisect_left(self.sorted_shas, prefix)
        found = itertools.takewhile(lambda sha: sha.startswith(prefix), self.sorted_shas[start : start + most])
        return list(found)

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
    ) -> tuple[int, Iterator[SampleRow]]:
        """(total, samples in listing order) for the filters; no scan of non-matching samples."""
        wanted = set(statuses)
        chosen = [
            ranks
            for (status, kind, lang, lic, inline), ranks in self.buckets.items()
            if status in wanted
            and (repo_kind is None or kind == repo_kind)
            and (language is None or (lang or "").lower() == language.lower())
            and (licence is None or (lic or "").lower() == licence.lower())
            and (inline or not inline_only)
        ]
        total = sum(map(len, chosen))
        ranks_in_order = chosen[0] if len(chosen) == 1 else heapq.merge(*chosen)
        return total, (self.samples[self.listing_order[rank]] for rank in ranks_in_order)


def _paper_row(record: Record) -> PaperRow:
    harvest = record.syntology
    links = sorted(
        (_code_link_row(link) for link in record.code_links),
        key=lambda link: (not link.is_official, not link.mentioned_in_paper, link.repo_url.lower()),
    )
    return PaperRow(
        arxiv_id=canonical_arxiv_id(record.arxiv_id),
        slug=slug_from_record_url(record.url),
        title=record.title,
        date=record.date,
        year=_year(record.date),
        authors=tuple(record.authors),
        abstract=record.abstract,
        proceeding=record.proceeding,
        url_abs=record.url_abs,
        url_pdf=record.url_pdf,
        tasks=tuple((_intern(task.task_slug), _intern(task.task_name or task.task_slug)) for task in record.tasks),
        methods=tuple(_intern(method.method_name) for method in record.methods),
        code_links=tuple(links),
        snapshot=_intern(record.source.snapshot) if record.source and record.source.snapshot else None,
        read_at=harvest.read_at if harvest else None,
        claim=_intern(harvest.claim) if harvest and harvest.claim else None,
    )


def _code_link_row(link: CodeLink) -> CodeLinkRow:
    reach = link.reach
    return CodeLinkRow(
        repo=normalize_repo(link.repo_url),
        repo_url=link.repo_url,
        is_official=link.is_official,
        mentioned_in_paper=link.mentioned_in_paper,
        framework=_intern(link.framework) if link.framework else None,
        reach_status=_intern(reach.status) if reach and reach.status else None,
        licence=_intern(reach.spdx) if reach and reach.spdx else None,
    )


def _year(date: str | None) -> int | None:
    if date and len(date) >= 4 and date[:4].isdigit():
        return int(date[:4])
    return None
