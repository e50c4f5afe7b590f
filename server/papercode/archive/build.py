"""`build_archive`: the Papers-with-Code archive's tables in, the archive's serving form out.

The links tables are read first (they are small) into each paper's code links; then the papers tables are streamed
a batch at a time, each row becoming one compact record (only fields papercode reads, no nulls) with its code links,
handed to the serving form's writer (`serving.ServingWriter`: paper columns, keys, repositories and the search index,
built once here so that no start builds them); last, the papers only a link names are written from the link's own
fields. Everything goes into a build directory of its own, made current by one rename once complete (`builds`).

A row the build cannot use is dropped and counted by reason, with one example each (`BuildSummary.rejected`);
a field it cannot use is left out and counted as a warning (`BuildSummary.warnings`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson

from papercode.core.holds import hold
from papercode.core.ids import parse_slug
from papercode.core.paths import RealPath
from papercode.core.records import MAX_LIST_ENTRIES
from papercode.index.fields import CodeLinkRow
from papercode.index.mapped import FileFacts
from papercode.index.mapped_archive import FORMAT, FORMAT_VERSION, MANIFEST, current_build

from . import location
from .boards import BoardsSummary
from .boards_child import BoardsBeside, read_here, start_beside
from .build_progress import ArchiveBuildProgress
from .builds import NewBuild
from .manifest import check_data_date, commit_dates, papercode_manifest
from .results_join import join_results
from .rows import (
    LICENCE,
    LICENCE_URL,
    SURELY_WITHIN_CAPS,
    Json,
    LinksTableRow,
    PaperLink,
    PapersTableRow,
    RecordAssembly,
    Tally,
    Vocabulary,
    paper_url_problem,
    quoted,
)
from .serving import ServingWriter, Written
from .tables import CATALOGUE_TABLES, NOT_AN_OBJECT, BadInput, Batch, TableFile, classify, find_sources, json_batches, parquet_batches

BASIS_GIVEN: Final = "given with --snapshot"
BASIS_COMMIT: Final = "the dataset commit's date"
BASIS_MTIME: Final = "the newest source file's modification date (UTC)"


class EmptyArchive(BadInput):
    """The sources left no paper to write (no rows, or every one rejected): an archive of nothing would replace
    a good one, and a server watching it would drop every paper."""

    def __init__(self, summary: BuildSummary) -> None:
        names = [source.path.name for source in summary.sources]
        where = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        rows = f"{summary.paper_rows:,} papers rows and {summary.link_rows:,} links rows"
        if summary.rejected.total():
            top = summary.rejected.counts.most_common(3)
            reasons = ", ".join(f"{reason} {count:,}" for reason, count in top)
            first = summary.rejected.examples[top[0][0]]
            problem = f"no paper to write: every one of {rows} was rejected ({reasons}; e.g. {first})"
        else:
            problem = f"no paper to write: the sources hold {rows}"
        super().__init__(where, f"{problem}. Next: pass the Papers-with-Code tables (papers-with-abstracts and its links)")


@dataclass(slots=True)
class BuildSummary:
    """What a build wrote and what it dropped. `manifest()` is the `archive.json` it wrote."""

    archive_dir: Path
    data_date: str
    data_date_basis: str
    sources: list[TableFile]
    papers_from_abstracts: int = 0  # records written from a papers row
    papers_from_links: int = 0  # records written for a paper only the links table names
    code_links: int = 0  # links written (inside records)
    paper_rows: int = 0  # rows read from papers tables
    link_rows: int = 0  # rows read from links tables
    rejected: Tally = field(default_factory=Tally)
    warnings: Tally = field(default_factory=Tally)
    build_id: str = ""
    written: Written | None = None
    boards: BoardsSummary | None = None  # the leaderboards, tasks, methods and datasets, when their tables were given
    built_at: str = ""
    seconds: float = 0.0

    @property
    def papers(self) -> int:
        return self.papers_from_abstracts + self.papers_from_links

    @property
    def bytes_written(self) -> int:
        return sum(facts.bytes for facts in self.written.files.values()) if self.written else 0

    def manifest(self) -> Json:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "build_id": self.build_id,
            "built_at": self.built_at,
            "snapshot": self.data_date,
            "snapshot_basis": self.data_date_basis,
            "licence": LICENCE,
            "licence_url": LICENCE_URL,
            "counts": {
                "papers": self.papers,
                "papers_from_abstracts": self.papers_from_abstracts,
                "papers_from_links": self.papers_from_links,
                "code_links": self.code_links,
                "paper_rows": self.paper_rows,
                "link_rows": self.link_rows,
                "rejected": self.rejected.total(),
                "warnings": self.warnings.total(),
                "bytes": self.bytes_written,
                **({"boards": self.boards.as_json()} if self.boards is not None else {}),
            },
            "rejected": self.rejected.as_json(),
            "warnings": self.warnings.as_json(),
            "search": {"segments": self.written.search_segments if self.written else 0},
            "files": {
                name: {"bytes": facts.bytes, "sha256": facts.sha256} for name, facts in (self.written.files if self.written else {}).items()
            },
            "sources": [_source_json(source) for source in self.sources],
        }


def _source_json(source: TableFile) -> Json:
    return {
        "path": os.path.abspath(source.path),
        "table": source.table,
        "form": source.form,
        "rows": source.rows,
        "bytes": source.size,
        "modified": datetime.fromtimestamp(source.mtime, UTC).isoformat(timespec="seconds"),
        "dataset": source.dataset,
        "commit": source.commit,
        "commit_date": source.commit_date,
    }


def build_archive(
    sources: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str] | RealPath | None = None,
    *,
    data_date: str | None = None,
    commit_dates: Mapping[str, str] | None = None,
    progress: ArchiveBuildProgress | None = None,
) -> BuildSummary:
    """Build the archive from `sources` (files and directories, any mix of forms) into `out_dir`
    (default: `location.default_archive_dir()`; taken as its real path, `location.real_archive_dir`, unless it is
    one already), replacing the archive there only once the new one is complete.

    `data_date` (YYYY-MM-DD) overrides the date of the data; else it is the dataset commit's date when
    `commit_dates` (commit sha -> YYYY-MM-DD) or the previous manifest knows it, else the newest source file's
    modification date (UTC). Raises `tables.BadInput` / `tables.MissingDependency` before anything is
    written, `location.NotAnArchive` / `builds.ArchiveBusy` for the output, and `BadInput` for a file that turns
    out corrupt while it is read, or `EmptyArchive` (a `BadInput`) when no paper is left to write: the previous
    archive is then untouched.
    """
    started = time.monotonic()
    chosen = out_dir if isinstance(out_dir, RealPath) else location.real_archive_dir(None if out_dir is None else Path(out_dir))
    if data_date is not None:
        check_data_date(data_date)
    if not sources:
        raise ValueError("no sources given: pass the archive's files or directories")
    files = [classify(path) for path in find_sources([Path(source) for source in sources], skip=[chosen.real])]
    out = location.checked_out_dir(chosen)
    _reject_sources_inside(files, chosen)
    _fill_commit_dates(files, {**_previous_commit_dates(out), **(commit_dates or {})})
    day_of_data, basis = (data_date, BASIS_GIVEN) if data_date else _data_date_of(files)
    summary = BuildSummary(out, day_of_data, basis, files)
    ordered = [f for f in files if f.table == "links"] + [f for f in files if f.table == "papers"]
    catalogues = [f for f in files if f.table in CATALOGUE_TABLES]
    progress = progress if progress is not None else ArchiveBuildProgress(sum(f.size for f in files))
    new = NewBuild(out)
    with new as directory:
        writer = ServingWriter(directory, results=bool(catalogues))
        builder = _Builder(summary, writer, progress)
        beside = start_beside(catalogues, directory, sum(f.size for f in ordered))
        try:
            hold("archive-reading")
            builder.run(ordered)
            if not summary.papers:
                raise EmptyArchive(summary)

            def boards() -> Mapping[str, FileFacts]:
                summary.boards = _boards(
                    catalogues,
                    directory,
                    beside=beside,
                    writer=writer,
                    summary=summary,
                    progress=progress,
                    done=sum(f.size for f in ordered),
                )
                return summary.boards.files

            summary.written = writer.finish(progress.stage, meanwhile=boards if catalogues else None)
            hold("archive-indexed")
        except BaseException:
            writer.discard()  # the directory goes with the build; the error is what matters
            raise
        finally:
            if beside is not None:
                beside.close()  # before anything removes the directory it writes into
            progress.finish()
        summary.build_id = new.build_id
        summary.built_at = datetime.now(UTC).isoformat(timespec="seconds")
        summary.seconds = time.monotonic() - started
        _write_manifest(directory, summary)
        location.checked_out_dir(chosen)  # again, under the build's lock: nothing papercode did not write came in meanwhile
        new.commit()
    location.remove_format_1(out)
    return summary


def _boards(
    sources: list[TableFile],
    directory: Path,
    *,
    beside: BoardsBeside | None,
    writer: ServingWriter,
    summary: BuildSummary,
    progress: ArchiveBuildProgress,
    done: float,
) -> BoardsSummary:
    """The catalogue tables (read by the child `beside` while the papers were, else read here now) joined to the
    papers, written into the build while the search index commits (`ServingWriter.finish`'s `meanwhile`)."""
    catalogued = None
    if beside is not None:
        progress.stage("finishing the leaderboards' tables, read beside the papers")
        catalogued = beside.result(summary.rejected, summary.warnings)
    if catalogued is None:
        starts = {id(source): done + sum(f.size for f in sources[:i]) for i, source in enumerate(sources)}  # bytes before each

        def show(source: TableFile, share: float) -> None:
            progress.update(starts[id(source)] + share * source.size, _shown(source), summary.papers, summary.link_rows)

        catalogued = read_here(sources, directory, rejected=summary.rejected, warnings=summary.warnings, progress=show)
    progress.stage("joining the leaderboards to the papers while the search index commits")
    return join_results(catalogued, writer.paper_keys(), directory, papers=writer.papers, warnings=summary.warnings)


def _shown(source: TableFile) -> str:
    """A source as progress names it: the Hub's files are all `train-*.parquet`, so its table too."""
    return f"{source.path.name} ({source.table} table)"


def _reject_sources_inside(files: list[TableFile], out: RealPath) -> None:
    """A source inside the output directory would be deleted with the old archive: refuse."""
    for source in files:
        if os.path.realpath(source.path).startswith(f"{out.real}{os.sep}"):
            raise location.NotAnArchive(
                f"{source.path}: is inside --out {out.shown}, which the build replaces. Next: move it, or pass another --out"
            )


def _previous_commit_dates(out: Path) -> dict[str, str]:
    """The dataset commits' dates the archive being replaced knew (its current build's manifest, or format 1's)."""
    return commit_dates(papercode_manifest(current_build(out) or out))


def _fill_commit_dates(files: list[TableFile], known: Mapping[str, str]) -> None:
    for source in files:
        if source.commit and source.commit_date is None:
            source.commit_date = known.get(source.commit)


def _data_date_of(files: list[TableFile]) -> tuple[str, str]:
    dates = [source.commit_date for source in files if source.commit_date]
    undated = [source.mtime for source in files if not source.commit_date]
    if undated:
        dates.append(datetime.fromtimestamp(max(undated), UTC).date().isoformat())
        return max(dates), BASIS_MTIME
    return max(dates), BASIS_COMMIT


def _write_manifest(directory: Path, summary: BuildSummary) -> None:
    data = orjson.dumps(summary.manifest(), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    with open(directory / MANIFEST, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


class _Builder:
    """The rows joined: each paper's links gathered while the links tables are read, then each papers row made into
    its record (`rows.RecordAssembly`) with its links, then the papers only links name. A paper is kept once: by its
    slug (the first row wins), then by its arXiv id."""

    def __init__(self, summary: BuildSummary, writer: ServingWriter, progress: ArchiveBuildProgress) -> None:
        self.summary = summary
        self.writer = writer
        self.progress = progress
        self.rejected = summary.rejected
        self.warnings = summary.warnings
        self.vocab = Vocabulary(self.warnings)
        self.assembly = RecordAssembly(self.rejected, self.warnings)
        self.seen: set[str] = set()  # slugs written (lower case, as `ids.parse_slug` gives them)
        self.dropped: set[str] = set()  # slugs of papers dropped as duplicates by arXiv id (their links go too)
        self.by_arxiv: dict[str, str] = {}  # arXiv id -> the slug that has it
        self.pending: dict[str, list[PaperLink]] = {}  # slug -> its links, while the links tables are read
        self.link_papers: dict[str, tuple[LinksTableRow, TableFile]] = {}  # slug -> its first link's row, which names the paper
        self.fragments: dict[str, list[CodeLinkRow]] = {}  # slug -> its code links
        self._done_bytes = 0.0

    # -- driving ---------------------------------------------------------------------------

    def run(self, ordered: list[TableFile]) -> None:
        links_done = False
        for source in ordered:
            if source.table == "papers" and not links_done:
                self._finish_links()
                links_done = True
            if source.table == "links":
                self._read(source, self._links)
            else:
                self._read(source, self._papers)
        if not links_done:
            self._finish_links()
        self._links_only()

    def _read(self, source: TableFile, handle: Callable[[TableFile, Batch[Any]], None]) -> None:
        name = _shown(source)
        self._show(0.0, source, f"reading {name}")
        vocab = self.vocab if source.table == "papers" else None
        batches = parquet_batches(source, vocab) if source.form == "parquet" else json_batches(source, vocab)
        for batch in batches:
            handle(source, batch)
            self._show(batch.share, source, name)
        self._done_bytes += source.size

    def _show(self, share: float, source: TableFile, what: str) -> None:
        written = self.summary.papers_from_abstracts + self.summary.papers_from_links
        self.progress.update(self._done_bytes + share * source.size, what, written, self.summary.link_rows)

    def _no_slug(self, paper_url: object, where: str, detail: str) -> None:
        """A row whose `paper_url` gives no slug by the server's rule (`ids.parse_slug`), rejected."""
        if paper_url is NOT_AN_OBJECT:
            self.rejected.add("not_an_object", where, "row is not a JSON object")
        else:
            self.rejected.add(paper_url_problem(paper_url), where, f"{detail} {quoted(paper_url)}")

    # -- links -----------------------------------------------------------------------------

    def _links(self, source: TableFile, batch: Batch[LinksTableRow]) -> None:
        pending, link_papers, assembly = self.pending, self.link_papers, self.assembly
        name = source.path.name
        number = batch.first
        for row in batch.rows:
            number += 1
            purl = row.paper_url
            slug = parse_slug(purl) if type(purl) is str else None
            if slug is None:
                self._no_slug(purl, f"{name} row {number}", "link with paper_url")
                continue
            link = assembly.link(row, slug, name, number)
            if link is None:
                continue
            links = pending.get(slug)
            if links is None:
                links = pending[slug] = []
                link_papers[slug] = (row, source)
            links.append(link)
        self.summary.link_rows += batch.count

    def _finish_links(self) -> None:
        """Each paper's links: a repository once (the first row wins: the same repository in
        another letter case, with `.git` or a trailing slash, is the same), official first, then mentioned in the
        paper, then mentioned on GitHub, then by URL (the order the real records show); at most
        `MAX_LIST_ENTRIES`."""
        for slug, links in self.pending.items():
            keys: set[str] = set()
            kept: list[PaperLink] = []
            for link in links:
                if link.key in keys:
                    self.rejected.add("duplicate_link", f"paper {slug}", f"repo_url {link.order[3]} names a repository listed already")
                    continue
                keys.add(link.key)
                kept.append(link)
            kept.sort(key=_order)
            if len(kept) > MAX_LIST_ENTRIES:
                self.warnings.add("list_truncated", f"paper {slug}", f"{len(kept):,} code links cut to {MAX_LIST_ENTRIES:,}")
                del kept[MAX_LIST_ENTRIES:]
            self.fragments[slug] = [link.row for link in kept]
        self.pending.clear()

    # -- papers ----------------------------------------------------------------------------

    def _papers(self, source: TableFile, batch: Batch[PapersTableRow]) -> None:
        seen, by_arxiv, fragments, assembly = self.seen, self.by_arxiv, self.fragments, self.assembly
        rejected, add, dumps = self.rejected, self.writer.add, orjson.dumps
        name = source.path.name
        written = links_written = 0
        number = batch.first
        for row in batch.rows:
            number += 1
            purl, title = row.paper_url, row.title
            slug = parse_slug(purl) if type(purl) is str else None
            if slug is None:
                self._no_slug(purl, f"{name} row {number}", "paper_url")
                continue
            if type(title) is not str or not title.strip():
                rejected.add("no_title", f"{name} row {number}", f"/paper/{slug} has title {quoted(title)}")
                continue
            if slug in seen:
                rejected.add("duplicate", f"{name} row {number}", f"paper_url {purl} again (the first row is kept)")
                continue
            arxiv = assembly.arxiv_id(row.arxiv_id, slug, name, number) if row.arxiv_id else None
            if arxiv is not None:
                if arxiv in by_arxiv:
                    rejected.add(
                        "duplicate", f"{name} row {number}", f"arXiv {arxiv} again under {purl} (first under /paper/{by_arxiv[arxiv]})"
                    )
                    self.dropped.add(slug)
                    continue
                by_arxiv[arxiv] = slug
            seen.add(slug)
            record = assembly.paper(row, slug, arxiv, name, number)
            links = fragments.pop(slug, None) or []
            if len(dumps(record)) > SURELY_WITHIN_CAPS:  # a long record: looked at field by field
                capped = self._within_caps(record, links, f"{name} row {number}")
                if capped is None:
                    continue
                record = capped
            add(slug=slug, arxiv_id=arxiv, record=record, links=links)
            written += 1
            links_written += len(links)
        self.summary.paper_rows += batch.count
        self.summary.papers_from_abstracts += written
        self.summary.code_links += links_written

    def _within_caps(self, record: Json, links: list[CodeLinkRow], where: str) -> Json | None:
        """`record` cut to the server's caps (`RecordAssembly.within_caps`); None when it is rejected, its links with it."""
        capped = self.assembly.within_caps(record, where)
        if capped is None:
            self.dropped.add(record["url"].removeprefix("/paper/"))
            if links:
                self.rejected.add("links_of_rejected_paper", where, f"{len(links)} link(s) of a paper over the record cap", len(links))
        return capped

    def _links_only(self) -> None:
        """The papers only the links tables name, from the first link's fields (`row_kind: links`)."""
        rejected, add, dumps = self.rejected, self.writer.add, orjson.dumps
        for slug, (row, source) in self.link_papers.items():
            links = self.fragments.pop(slug, None)
            if links is None:  # written with its papers row
                continue
            count = len(links)
            where = f"{source.path.name}, paper_url …/{slug}"
            if slug in self.dropped:
                rejected.add("links_of_rejected_paper", where, f"{count} link(s) of a paper dropped as a duplicate", count)
                continue
            title = row.paper_title
            if type(title) is not str or not title.strip():
                rejected.add("no_title", where, f"paper named only by links, with paper_title {quoted(title)}")
                rejected.add("links_of_rejected_paper", where, f"{count} link(s) of a paper without a title", count)
                continue
            arxiv = self.assembly.arxiv_id(row.paper_arxiv_id, slug, where, None) if row.paper_arxiv_id else None
            if arxiv is not None:
                if arxiv in self.by_arxiv:
                    rejected.add("duplicate", where, f"arXiv {arxiv} again (first under /paper/{self.by_arxiv[arxiv]})")
                    rejected.add("links_of_rejected_paper", where, f"{count} link(s) of a paper dropped as a duplicate", count)
                    continue
                self.by_arxiv[arxiv] = slug
            record = self.assembly.named_by_link(row, slug, arxiv, where)
            if len(dumps(record)) > SURELY_WITHIN_CAPS:
                capped = self._within_caps(record, links, where)
                if capped is None:
                    continue
                record = capped
            add(slug=slug, arxiv_id=arxiv, record=record, links=links)
            self.summary.papers_from_links += 1
            self.summary.code_links += count
        self.link_papers.clear()


def _order(link: PaperLink) -> tuple[int, int, int, str]:
    return link.order
