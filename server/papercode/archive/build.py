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
from papercode.core.ids import canonical_arxiv_id, parse_slug
from papercode.core.records import MAX_LIST_ENTRIES
from papercode.index.archive_layer import FORMAT, FORMAT_VERSION, MANIFEST, current_build
from papercode.index.columns import CodeLinkRow, link_row
from papercode.index.mapped import FileFacts

from . import store
from .boards import BoardsBuilder, BoardsSummary
from .builds import NewBuild
from .manifest import check_snapshot, commit_dates, papercode_manifest
from .progress import ArchiveBuildProgress
from .rows import (
    LICENCE,
    LICENCE_URL,
    MAX_LINE_BYTES,
    SURELY_WITHIN_CAPS,
    URL_PROBLEMS,
    Json,
    Tally,
    Vocabulary,
    authors_of,
    day,
    flag,
    framework_of,
    link_key,
    paper_url_problem,
    quoted,
    repo_url,
    web_url,
    within_caps,
)
from .serving import ServingWriter, Written
from .sources import CATALOGUE_TABLES, NOT_AN_OBJECT, BadInput, Batch, SourceFile, classify, find_sources, json_batches, parquet_batches

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
    snapshot: str
    snapshot_basis: str
    sources: list[SourceFile]
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
            "snapshot": self.snapshot,
            "snapshot_basis": self.snapshot_basis,
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


def _source_json(source: SourceFile) -> Json:
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
    out_dir: str | os.PathLike[str] | None = None,
    *,
    snapshot: str | None = None,
    commit_dates: Mapping[str, str] | None = None,
    progress: ArchiveBuildProgress | None = None,
) -> BuildSummary:
    """Build the archive from `sources` (files and directories, any mix of forms) into `out_dir`
    (default: `store.default_archive_dir()`), replacing the archive there only once the new one is complete.

    `snapshot` (YYYY-MM-DD) overrides the date of the data; else it is the dataset commit's date when
    `commit_dates` (commit sha -> YYYY-MM-DD) or the previous manifest knows it, else the newest source file's
    modification date (UTC). Raises `sources.BadInput` / `sources.MissingDependency` before anything is
    written, `store.NotAnArchive` / `store.ArchiveBusy` for the output, and `BadInput` for a file that turns
    out corrupt while it is read, or `EmptyArchive` (a `BadInput`) when no paper is left to write: the previous
    archive is then untouched.
    """
    started = time.monotonic()
    out = Path(out_dir) if out_dir is not None else store.default_archive_dir()
    if snapshot is not None:
        check_snapshot(snapshot)
    if not sources:
        raise ValueError("no sources given: pass the archive's files or directories")
    files = [classify(path) for path in find_sources([Path(source) for source in sources], skip=[out])]
    out = store.checked_out_dir(out)
    _reject_sources_inside(files, out)
    _fill_commit_dates(files, {**_previous_commit_dates(out), **(commit_dates or {})})
    day_of_data, basis = (snapshot, BASIS_GIVEN) if snapshot else _snapshot_of(files)
    summary = BuildSummary(Path(os.path.abspath(out)), day_of_data, basis, files)
    ordered = [f for f in files if f.table == "links"] + [f for f in files if f.table == "papers"]
    catalogues = [f for f in files if f.table in CATALOGUE_TABLES]
    progress = progress if progress is not None else ArchiveBuildProgress(sum(f.size for f in files))
    new = NewBuild(out)
    with new as directory:
        writer = ServingWriter(directory, results=bool(catalogues))
        builder = _Builder(summary, writer, progress)
        try:
            hold("archive-reading")
            builder.run(ordered)
            if not summary.papers:
                raise EmptyArchive(summary)

            def boards() -> Mapping[str, FileFacts]:
                summary.boards = _boards(catalogues, directory, writer, summary, progress, sum(f.size for f in ordered))
                return summary.boards.files

            summary.written = writer.finish(progress.stage, meanwhile=boards if catalogues else None)
            hold("archive-indexed")
        except BaseException:
            writer.discard()  # the directory goes with the build; the error is what matters
            raise
        finally:
            progress.finish()
        summary.build_id = new.build_id
        summary.built_at = datetime.now(UTC).isoformat(timespec="seconds")
        summary.seconds = time.monotonic() - started
        _write_manifest(directory, summary)
        store.checked_out_dir(out)  # again, under the build's lock: nothing papercode did not write came in meanwhile
        new.commit()
    store.remove_format_1(out)
    return summary


def _boards(
    sources: list[SourceFile], directory: Path, writer: ServingWriter, summary: BuildSummary, progress: ArchiveBuildProgress, done: float
) -> BoardsSummary:
    """The catalogue tables, read once the papers are (their results join those papers), written into the build
    while the search index commits (`ServingWriter.finish`'s `meanwhile`)."""
    boards = BoardsBuilder(writer.paper_keys(), writer.papers, summary.rejected, summary.warnings)
    for source in sources:

        def show(share: float, source: SourceFile = source, before: float = done) -> None:
            progress.update(before + share * source.size, source.path.name, summary.papers, summary.link_rows)

        show(0.0)
        boards.read(source, show)
        done += source.size
    progress.stage("indexing the leaderboards while the search index commits")
    return boards.write(directory)


def _reject_sources_inside(files: list[SourceFile], out: Path) -> None:
    """A source inside the output directory would be deleted with the old archive: refuse."""
    real_out = os.path.realpath(out)
    for source in files:
        if os.path.realpath(source.path).startswith(real_out + os.sep):
            raise store.NotAnArchive(
                f"{source.path}: is inside --out {out}, which the build replaces. Next: move it, or pass another --out"
            )


def _previous_commit_dates(out: Path) -> dict[str, str]:
    """The dataset commits' dates the archive being replaced knew (its current build's manifest, or format 1's)."""
    return commit_dates(papercode_manifest(current_build(out) or out))


def _fill_commit_dates(files: list[SourceFile], known: Mapping[str, str]) -> None:
    for source in files:
        if source.commit and source.commit_date is None:
            source.commit_date = known.get(source.commit)


def _snapshot_of(files: list[SourceFile]) -> tuple[str, str]:
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


_Link = tuple[tuple[int, int, int, str], str, Json]  # (its order among the paper's links, its repository key, the link)


class _Builder:
    def __init__(self, summary: BuildSummary, writer: ServingWriter, progress: ArchiveBuildProgress) -> None:
        self.summary = summary
        self.writer = writer
        self.progress = progress
        self.rejected = summary.rejected
        self.warnings = summary.warnings
        self.vocab = Vocabulary(self.warnings)
        self.seen: set[str] = set()  # slugs written (lower case, as `ids.parse_slug` gives them)
        self.dropped: set[str] = set()  # slugs of papers dropped as duplicates by arXiv id (their links go too)
        self.by_arxiv: dict[str, str] = {}  # arXiv id -> the slug that has it
        self.pending: dict[str, list[_Link]] = {}  # slug -> its links, while the links tables are read
        self.link_papers: dict[str, tuple[Any, Any, Any, Any, SourceFile]] = {}  # slug -> the paper as its first link names it
        self.fragments: dict[str, list[CodeLinkRow]] = {}  # slug -> its code links
        self._done_bytes = 0.0

    # -- driving ---------------------------------------------------------------------------

    def run(self, ordered: list[SourceFile]) -> None:
        links_done = False
        for source in ordered:
            if source.table == "papers" and not links_done:
                self._finish_links()
                links_done = True
            self._read(source, self._links if source.table == "links" else self._papers)
        if not links_done:
            self._finish_links()
        self._links_only()

    def _read(self, source: SourceFile, handle: Callable[[SourceFile, Batch], None]) -> None:
        name = source.path.name
        self._show(0.0, source, f"reading {name}")
        vocab = self.vocab if source.table == "papers" else None
        batches = parquet_batches(source, vocab) if source.form == "parquet" else json_batches(source, vocab)
        for batch in batches:
            handle(source, batch)
            self._show(batch.share, source, name)
        self._done_bytes += source.size

    def _show(self, share: float, source: SourceFile, what: str) -> None:
        written = self.summary.papers_from_abstracts + self.summary.papers_from_links
        self.progress.update(self._done_bytes + share * source.size, what, written, self.summary.link_rows)

    # -- links -----------------------------------------------------------------------------

    def _links(self, source: SourceFile, batch: Batch) -> None:
        pending, link_papers, rejected, warnings = self.pending, self.link_papers, self.rejected, self.warnings
        number = batch.first
        for purl, raw_repo, official, in_paper, in_github, raw_framework, title, raw_arxiv, url_abs, url_pdf in batch.rows:
            number += 1
            slug = parse_slug(purl) if type(purl) is str else None
            if slug is None:
                if purl is NOT_AN_OBJECT:
                    rejected.add("not_an_object", f"{source.path.name} row {number}", "row is not a JSON object")
                else:
                    rejected.add(paper_url_problem(purl), f"{source.path.name} row {number}", f"link with paper_url {quoted(purl)}")
                continue
            url, problem = repo_url(raw_repo)
            if url is None:
                rejected.add(problem or "bad_repo_url", f"{source.path.name} row {number}", _repo_detail(raw_repo, problem, slug))
                continue
            link: Json = {"paper_slug": slug, "repo_url": url}
            is_official, is_in_paper, is_in_github = flag(official), flag(in_paper), flag(in_github)
            if is_official is not None:
                link["is_official"] = is_official
            if is_in_paper is not None:
                link["mentioned_in_paper"] = is_in_paper
            if is_in_github is not None:
                link["mentioned_in_github"] = is_in_github
            if raw_framework is not None and raw_framework != "":
                framework = framework_of(raw_framework)
                if framework is None:
                    warnings.add(
                        "bad_framework",
                        f"{source.path.name} row {number}",
                        f"framework {quoted(raw_framework)} of a link of /paper/{slug}: written without it",
                    )
                else:
                    link["framework"] = framework
            links = pending.get(slug)
            if links is None:
                links = pending[slug] = []
                link_papers[slug] = (title, raw_arxiv, url_abs, url_pdf, source)
            links.append(((-(is_official or 0), -(is_in_paper or 0), -(is_in_github or 0), url), link_key(url), link))
        self.summary.link_rows += batch.count

    def _finish_links(self) -> None:
        """Each paper's links: a repository once (the first row wins: the same repository in
        another letter case, with `.git` or a trailing slash, is the same), official first, then mentioned in the
        paper, then mentioned on GitHub, then by URL (the order the real records show); at most
        `MAX_LIST_ENTRIES`."""
        for slug, links in self.pending.items():
            keys: set[str] = set()
            kept: list[_Link] = []
            for item in links:
                key = item[1]
                if key in keys:
                    self.rejected.add("duplicate_link", f"paper {slug}", f"repo_url {item[0][3]} names a repository listed already")
                    continue
                keys.add(key)
                kept.append(item)
            kept.sort(key=_sort_key)
            if len(kept) > MAX_LIST_ENTRIES:
                self.warnings.add("list_truncated", f"paper {slug}", f"{len(kept):,} code links cut to {MAX_LIST_ENTRIES:,}")
                del kept[MAX_LIST_ENTRIES:]
            self.fragments[slug] = [_link_row(link) for _, _, link in kept]
        self.pending.clear()

    # -- papers ----------------------------------------------------------------------------

    def _papers(self, source: SourceFile, batch: Batch) -> None:
        seen, dropped, by_arxiv, fragments = self.seen, self.dropped, self.by_arxiv, self.fragments
        rejected, warnings, add, dumps = self.rejected, self.warnings, self.writer.add, orjson.dumps
        name = source.path.name
        written = links_written = 0
        number = batch.first
        for purl, title, raw_arxiv, raw_date, proceeding, authors, abstract, url_abs, url_pdf, tasks, methods in batch.rows:
            number += 1
            slug = parse_slug(purl) if type(purl) is str else None
            if slug is None:
                where = f"{name} row {number}"
                if purl is NOT_AN_OBJECT:
                    rejected.add("not_an_object", where, "row is not a JSON object")
                else:
                    rejected.add(paper_url_problem(purl), where, f"paper_url {quoted(purl)}")
                continue
            if type(title) is not str or not title.strip():
                rejected.add("no_title", f"{name} row {number}", f"/paper/{slug} has title {quoted(title)}")
                continue
            if slug in seen:
                rejected.add("duplicate", f"{name} row {number}", f"paper_url {purl} again (the first row is kept)")
                continue
            record: Json = {"url": "/paper/" + slug, "title": title}
            if raw_arxiv:
                arxiv = canonical_arxiv_id(raw_arxiv)
                if arxiv is None:
                    warnings.add(
                        "bad_arxiv_id", f"{name} row {number}", f"arxiv_id {quoted(raw_arxiv)} of /paper/{slug}: written without it"
                    )
                elif arxiv in by_arxiv:
                    rejected.add(
                        "duplicate", f"{name} row {number}", f"arXiv {arxiv} again under {purl} (first under /paper/{by_arxiv[arxiv]})"
                    )
                    dropped.add(slug)
                    continue
                else:
                    by_arxiv[arxiv] = slug
                    record["arxiv_id"] = arxiv
            seen.add(slug)
            if raw_date is not None:
                written_date = day(raw_date)
                if written_date is None:
                    warnings.add("bad_date", f"{name} row {number}", f"date {quoted(raw_date)} of /paper/{slug}: written without it")
                else:
                    record["date"] = written_date
            if type(proceeding) is str and proceeding:
                record["proceeding"] = proceeding
            if authors:
                names = authors_of(authors)
                if names:
                    record["authors"] = names
            if type(abstract) is str and abstract:
                record["abstract"] = abstract
            if url_abs or url_pdf:
                self._paper_urls(record, url_abs, url_pdf, name, number)
            links = fragments.pop(slug, None) or []
            if tasks:
                record["tasks"] = tasks
            if methods:
                record["methods"] = methods
            if len(dumps(record)) > SURELY_WITHIN_CAPS:  # a long record: looked at field by field
                capped = self._within_caps(record, links, f"{name} row {number}")
                if capped is None:
                    continue
                record = capped
            add(slug=slug, arxiv_id=record.get("arxiv_id"), record=record, links=links)
            written += 1
            links_written += len(links)
        self.summary.paper_rows += batch.count
        self.summary.papers_from_abstracts += written
        self.summary.code_links += links_written

    def _paper_urls(self, record: Json, url_abs: Any, url_pdf: Any, source_name: str, number: int | None) -> None:
        """The paper's `url_abs` and `url_pdf` (`number` None: a link's `paper_url_abs` and `paper_url_pdf`, `source_name`
        saying where), each written only if a client can follow it safely (`rows.web_url`); else it is left out, with
        a warning, and the paper kept."""
        for field_name, value in (("url_abs", url_abs), ("url_pdf", url_pdf)):
            if not value:
                continue
            url, problem = web_url(value)
            if url is not None:
                record[field_name] = url
                continue
            where, given = (f"{source_name} row {number}", field_name) if number is not None else (source_name, f"paper_{field_name}")
            what = URL_PROBLEMS[problem or "malformed"]
            self.warnings.add(f"bad_{field_name}", where, f"{given} of {record['url']} ({what}), written without it: {quoted(value)}")

    def _within_caps(self, record: Json, links: list[CodeLinkRow], where: str) -> Json | None:
        """A long record with its texts and lists cut to the server's caps (each cut a warning), or None when it is
        still over the server's cap on a record (the record rejected, its links with it)."""
        capped, cuts = within_caps(record)
        for reason, detail in cuts:
            self.warnings.add(reason, where, f"{detail} ({record['url']})")
        size = len(orjson.dumps(capped))
        if size <= MAX_LINE_BYTES:
            return capped
        self.rejected.add(
            "record_too_large", where, f"{record['url']}: {size:,} bytes, over the server's {MAX_LINE_BYTES:,}-byte record cap"
        )
        self.dropped.add(record["url"].removeprefix("/paper/"))
        if links:
            self.rejected.add("links_of_rejected_paper", where, f"{len(links)} link(s) of a paper over the record cap", len(links))
        return None

    def _links_only(self) -> None:
        """The papers only the links tables name, from the first link's fields (`row_kind: links`)."""
        rejected, add, dumps = self.rejected, self.writer.add, orjson.dumps
        for slug, (title, raw_arxiv, url_abs, url_pdf, source) in self.link_papers.items():
            links = self.fragments.pop(slug, None)
            if links is None:  # written with its papers row
                continue
            count = len(links)
            where = f"{source.path.name}, paper_url …/{slug}"
            if slug in self.dropped:
                rejected.add("links_of_rejected_paper", where, f"{count} link(s) of a paper dropped as a duplicate", count)
                continue
            if type(title) is not str or not title.strip():
                rejected.add("no_title", where, f"paper named only by links, with paper_title {quoted(title)}")
                rejected.add("links_of_rejected_paper", where, f"{count} link(s) of a paper without a title", count)
                continue
            record: Json = {"url": "/paper/" + slug, "title": title}
            if raw_arxiv:
                arxiv = canonical_arxiv_id(raw_arxiv)
                if arxiv is None:
                    self.warnings.add("bad_arxiv_id", where, f"paper_arxiv_id {quoted(raw_arxiv)}: written without it")
                elif arxiv in self.by_arxiv:
                    rejected.add("duplicate", where, f"arXiv {arxiv} again (first under /paper/{self.by_arxiv[arxiv]})")
                    rejected.add("links_of_rejected_paper", where, f"{count} link(s) of a paper dropped as a duplicate", count)
                    continue
                else:
                    self.by_arxiv[arxiv] = slug
                    record["arxiv_id"] = arxiv
            if url_abs or url_pdf:
                self._paper_urls(record, url_abs, url_pdf, where, None)
            if len(dumps(record)) > SURELY_WITHIN_CAPS:
                capped = self._within_caps(record, links, where)
                if capped is None:
                    continue
                record = capped
            add(slug=slug, arxiv_id=record.get("arxiv_id"), record=record, links=links)
            self.summary.papers_from_links += 1
            self.summary.code_links += count
        self.link_papers.clear()


def _repo_detail(raw: object, problem: str | None, slug: str) -> str:
    """What is wrong first (an example is cut to its first 200 characters), then the value."""
    what = URL_PROBLEMS.get(problem.removeprefix("repo_url_")) if problem and problem.startswith("repo_url_") else None
    return f"repo_url of /paper/{slug}" + (f" ({what})" if what else "") + f": {quoted(raw)}"


def _sort_key(item: _Link) -> tuple[int, int, int, str]:
    return item[0]


def _link_row(link: Json) -> CodeLinkRow:
    """A link as the serving form keeps it (`columns.link_row`), as a server reads it from a record."""
    mentioned = link.get("mentioned_in_paper")
    return link_row(link["repo_url"], bool(link.get("is_official")), None if mentioned is None else bool(mentioned), link.get("framework"))
