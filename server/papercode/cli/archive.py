"""`papercode archive build | fetch | verify`: the archive's command line.

`add_parser(subparsers)` adds the `archive` command to papercode's parser (its flags, `--out`, `--snapshot` and
`--stall-timeout`, come from `settings.OPTIONS` like every command's); `run(args, settings)` runs it and returns the
exit code: 0 done, 1 the work failed (no network and nothing cached, a download refused or stalled, another build
running, a write failed), 2 bad input (a source, `--out`, `--snapshot`, a missing optional dependency), each as one
line on stderr (`cli.failure`). The summary goes to stdout; off a terminal, `fetch` says on stderr each file it
downloaded. Nothing heavy is imported until a command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papercode.archive.builds import remove_leftovers_when_idle
from papercode.archive.location import real_archive_dir
from papercode.core.paths import RealPath

from .failure import fail

if TYPE_CHECKING:
    from papercode.archive.build import BuildSummary
    from papercode.settings import Settings


def add_parser(subparsers: Any) -> dict[str, argparse.ArgumentParser]:
    """Add `archive build`, `archive fetch` and `archive verify` to papercode's subcommands
    (`parser.add_subparsers(...)`); returns their parsers by command, for the settings that apply to them."""
    archive = subparsers.add_parser(
        "archive", help="build the Papers-with-Code archive into its serving form (or fetch it from Hugging Face)"
    )
    actions = archive.add_subparsers(dest="archive_command", required=True, metavar="{build,fetch,verify}")
    build = actions.add_parser(
        "build",
        help="build the archive from local files",
        description="Build the Papers-with-Code archive into the form every papercode serve --archive maps (its columns, keys "
        "and search index, in a build directory of its own), from the Hugging Face mirror's parquet files "
        "(<dataset>/data/train-*.parquet, or copies made through pandas) or the original JSON dumps (.json, .json.gz), in any mix. "
        "Each file's table is told by its columns: papers-with-abstracts and links-between-papers-and-code, and optionally "
        "evaluation-tables, methods and datasets (the leaderboards get_leaderboard and describe answer from).",
    )
    build.add_argument("sources", nargs="+", type=Path, metavar="SOURCE", help="a file or a directory of files (searched recursively)")
    fetch = actions.add_parser(
        "fetch",
        help="download the archive from the Hugging Face Hub (pwc-archive), then build it",
        description="Download pwc-archive/papers-with-abstracts and pwc-archive/links-between-paper-and-code (and the leaderboards: "
        "pwc-archive/evaluation-tables, methods and datasets) into the Hugging Face "
        "cache ($HF_HOME/hub; HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE apply), then build. Offline, it builds from the cache.",
    )
    verify = actions.add_parser(
        "verify",
        help="check every byte of the current build against its manifest",
        description="Read every file of the archive's current build and check its size and sha256 against the manifest the build "
        "wrote (a start checks only the sizes). Exit 0 when intact, 1 otherwise.",
    )
    return {"archive build": build, "archive fetch": fetch, "archive verify": verify}


class _Failed(Exception):
    """A command that cannot go on: its line (`cli.failure.fail`) and exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Run `archive build`, `archive fetch` (a download that receives too little in `settings.fetch_stall_timeout`
    seconds is stopped) or `archive verify`, into or of `settings.archive_dir`; the exit code."""
    command = f"archive {args.archive_command}"
    if args.archive_command == "verify":
        remove_leftovers_when_idle(settings.archive_dir.real)  # as every command's start does; a build does it under its lock
        return verify(settings.archive_dir.real)
    from papercode.archive.build import build_archive

    try:
        sources, commit_dates = _fetched(command, settings) if args.archive_command == "fetch" else (list(args.sources), {})
        summary = build_archive(sources, settings.archive_dir, data_date=settings.data_date, commit_dates=commit_dates)
    except (Exception, KeyboardInterrupt) as exc:
        failed = _failure(command, exc)
        if failed is None:
            raise
        return fail(failed.message, failed.code)
    try:
        print_summary(summary, settings.archive_dir)
    except BrokenPipeError:  # `papercode archive build ... | head`: the archive is built, the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _fetched(command: str, settings: Settings) -> tuple[list[Path], dict[str, str]]:
    """The datasets `archive fetch` builds from (downloaded, or cached when the Hub cannot be asked) and their
    commits' dates; what was left out said on stderr."""
    from papercode.archive.fetch import FetchError, fetch_datasets

    try:
        fetched = fetch_datasets(stall_timeout=settings.fetch_stall_timeout, announce=None if sys.stderr.isatty() else _say)
    except FetchError as exc:
        raise _Failed(f"{command}: {exc}", 1) from None
    if fetched.offline_reason:
        commits = ", ".join(f"{item.dataset}@{item.commit[:7]}" for item in fetched.datasets)
        sys.stderr.write(f"papercode: {fetched.offline_reason}; building from the cached download in {fetched.cache_dir} ({commits})\n")
    for skipped in fetched.skipped:
        sys.stderr.write(f"papercode: {skipped}; building without it\n")
    return [item.folder for item in fetched.datasets], fetched.commit_dates


def _failure(command: str, exc: BaseException) -> _Failed | None:
    """What a build that raised `exc` says, and its exit code; None for an exception no build expects."""
    from papercode.archive.builds import ArchiveBusy
    from papercode.archive.location import NotAnArchive
    from papercode.archive.tables import BadInput, MissingDependency

    unchanged = "The previous archive is unchanged"
    if isinstance(exc, _Failed):
        return exc
    if isinstance(exc, MissingDependency | NotAnArchive):
        return _Failed(f"{command}: {exc}", 2)
    if isinstance(exc, BadInput):
        return _Failed(f"{command}: {exc}. {unchanged}", 2)
    if isinstance(exc, ArchiveBusy):
        return _Failed(f"{command}: {exc}", 1)
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        return _Failed(f"{command}: cannot write the archive{where}: {exc.strerror or exc}. {unchanged}", 1)
    if isinstance(exc, KeyboardInterrupt):
        return _Failed(f"{command}: interrupted. {unchanged}", 130)
    return None


def verify(archive_dir: Path) -> int:
    """`papercode archive verify`: every file of the current build against its size and sha256; the exit code."""
    from papercode.index.mapped import verify as verify_files
    from papercode.index.mapped_archive import ArchiveUnavailable, open_archive

    try:
        archive = open_archive(archive_dir)
    except ArchiveUnavailable as exc:
        return fail(f"archive verify: {exc}. Next: build it (papercode archive build SOURCE... or papercode archive fetch)", 1)
    try:
        problems = verify_files(archive.build, archive.manifest.files)
    finally:
        archive.close()
    files = len(archive.manifest.files)
    if problems:
        for problem in problems:
            sys.stderr.write(f"papercode: archive verify: {archive.build_id}/{problem}\n")
        return fail(f"archive verify: {len(problems)} of {files} files of build {archive.build_id} are damaged. Next: rebuild it", 1)
    sys.stdout.write(f"archive: build {archive.build_id} intact ({files} files, {len(archive):,} papers)\n")
    return 0


def _say(line: str) -> None:
    sys.stderr.write(f"papercode: {line}\n")
    sys.stderr.flush()


def print_summary(summary: BuildSummary, chosen: RealPath) -> None:
    """The build's summary on stdout: where (and the path the user gave, where it reads otherwise), what, and every
    reason rows were dropped, with an example."""
    out = sys.stdout.write
    through = f", given as {chosen.given}" if str(chosen.given) != str(summary.archive_dir) else ""
    out(f"archive: {summary.archive_dir}, build {summary.build_id} ({summary.bytes_written / 1e6:,.1f} MB{through})\n")
    out(f"snapshot: {summary.data_date} ({summary.data_date_basis})\n")
    out(
        f"papers: {summary.papers:,} written ({summary.papers_from_abstracts:,} from {summary.paper_rows:,} papers rows, "
        f"{summary.papers_from_links:,} named only by links)\n"
    )
    out(f"code links: {summary.code_links:,} written (from {summary.link_rows:,} links rows)\n")
    boards = summary.boards
    if boards is not None:
        joined = ", ".join(f"{count:,} by {how}" for how, count in sorted(boards.joined_by.items())) or "none"
        counts = boards.counts
        out(
            f"leaderboards: {counts.tasks:,} tasks, {counts.benchmarks:,} benchmarks, {counts.results:,} results "
            f"(joined to papers: {joined}; {boards.unjoined:,} to none), {counts.methods:,} methods, {counts.datasets:,} datasets\n"
        )
    for title, tally in (("rejected", summary.rejected), ("warnings", summary.warnings)):
        out(f"{title}: {tally.total():,}\n")
        for reason, count in sorted(tally.counts.items()):
            out(f"  {reason} ({count:,}): e.g. {tally.examples[reason]}\n")
    where = "" if summary.archive_dir == real_archive_dir().real else f" --archive-dir {summary.archive_dir}"
    out(f"built in {summary.seconds:,.1f}s. Serve it beneath the records: papercode serve --archive{where}\n")
