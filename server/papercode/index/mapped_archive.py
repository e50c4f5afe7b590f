"""The Papers-with-Code archive as a server serves it: one build of it, opened read-only and memory-mapped.

`papercode archive build` writes the archive in its serving form once (see `archive.serving`); here it is opened at
every start without being read: the paper columns, the keys, the repository lists and the abstracts are mapped
(`index.mapped`), and the tantivy index beside them is searched through an overlay (`index.overlay`). Nothing here
makes a Python object per paper, so a start costs milliseconds and the archive's pages are the page cache's, shared
by every server on the machine.

The layout of an archive directory is declared here, once, for the build that writes it and the server that reads it:
`current` (a symlink) names the build being served, `builds/<id>/` holds each build, `archive.json` in it is the
manifest. A server holds a shared lock on the build it opened for as long as it serves it, so a build never removes
one a live server uses. Opening a build checks the size of every file its manifest lists: a file cut short or missing
is "damaged" (`ArchiveUnavailable`), while an error of the system (too many open files, a permission) says nothing of
the files and is named as it is, with what to fix.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any, Final, cast

import orjson

from papercode.core import liveness
from papercode.core.days import is_day

from .abstracts import ABSTRACTS, Abstracts
from .board_columns import BOARDS, Boards
from .columns import PaperColumns, StringTable
from .fields import NONE, PAPER_FIELDS, Details, Field, Int32, Interned, Ordinal, SampleIds, Text
from .mapped import ColumnProblem, FileFacts, MappedColumns, check_sizes
from .packed import SortedKeys

FORMAT: Final = "papercode-archive"
FORMAT_VERSION: Final = 2
MANIFEST: Final = "archive.json"
MAX_MANIFEST_BYTES: Final = 16 << 20  # a manifest is kilobytes: a larger file is not one, and is not read whole
CURRENT: Final = "current"
BUILDS: Final = "builds"
COLUMNS: Final = "papers"  # the paper columns' directory in a build
SEARCH: Final = "search"  # the tantivy index's directory in a build
ARCHIVE_BASE: Final = 1 << 32  # the search index's `paper` value of archive paper `a` is ARCHIVE_BASE + a
_BUILD_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")

# The paper columns: a file of `papers/` for each field of `fields.PaperRow` with an archive reader, as `index.fields`
# says (packed for `Text` and `Details`, `<name>.i` for `Int32`); the others are the same for every archive paper.
ARCHIVED: Final = tuple(field for field in PAPER_FIELDS if field.in_archive)
KEY_COLUMNS: Final = ("arxiv", "slug")  # `<name>.keys` (packed, sorted) and `<name>.values` (int64: the paper)
# packed sorted names; int64 offsets into the papers; int32 papers (official first, then by key); int32 how many official
REPO_COLUMNS: Final = ("repo.names", "repo.offsets", "repo.papers", "repo.officials")


class ArchiveUnavailable(Exception):
    """No archive can be served from this directory: the reason, in one line; `next_step` when the next step is not
    to fetch or build one."""

    def __init__(self, reason: str, next_step: str | None = None) -> None:
        super().__init__(reason)
        self.next_step = next_step


UNOPENABLE_NEXT: Final = "fix what the error says (too many open files: raise ulimit -n), then send the server SIGHUP or start it again"


class ManifestProblem(ArchiveUnavailable):
    """A manifest this papercode does not read: `path: why`, one line."""


def load_manifest(path: Path) -> dict[str, Any] | None:
    """The JSON object in the manifest file `path` when it has papercode's format marker (whatever its version); None
    when there is no such file; `ManifestProblem` when what is there is not such a manifest. Read bounded, not through
    a symlink, never blocking on a FIFO put in its place. An OSError of the system (too many open files, a permission)
    says nothing of the file, and is raised as it is."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise ManifestProblem(f"{path}: a symbolic link, not the manifest papercode writes") from None
    with os.fdopen(descriptor, "rb") as stream:
        if not S_ISREG(os.fstat(descriptor).st_mode):
            raise ManifestProblem(f"{path}: not a regular file")
        data = stream.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestProblem(f"{path}: larger than any manifest papercode writes")
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ManifestProblem(f"{path}: not JSON") from None
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise ManifestProblem(f'{path}: not a manifest papercode wrote (no "format": "{FORMAT}")')
    return value


def build_id_is_valid(text: str) -> bool:
    return _BUILD_ID.fullmatch(text) is not None


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a build's `archive.json` says, checked."""

    build_id: str
    data_date: str  # the date of the data, YYYY-MM-DD ("snapshot" in the manifest)
    papers: int
    files: dict[str, FileFacts]  # every file of the build (relative path -> size and sha256)
    search_segments: int
    raw: dict[str, Any]  # the whole manifest, for `check` and the summary

    @classmethod
    def read(cls, build: Path) -> Manifest:
        """The manifest of the build in `build`; `ArchiveUnavailable` when it is missing, of another format, or
        not one papercode wrote."""
        raw = load_manifest(build / MANIFEST)
        if raw is None:
            raise ArchiveUnavailable(f"{build.name} has no {MANIFEST}")
        version = raw.get("format_version")
        if version != FORMAT_VERSION:
            raise ArchiveUnavailable(f"the archive is of format {version!r}, and this papercode serves format {FORMAT_VERSION}")
        try:
            files = {str(name): FileFacts(int(facts["bytes"]), str(facts["sha256"])) for name, facts in raw["files"].items()}
            build_id, papers, segments = str(raw["build_id"]), int(raw["counts"]["papers"]), int(raw["search"]["segments"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ArchiveUnavailable(f"{build.name}/{MANIFEST} lacks a field or has a wrong one ({exc!r})") from None
        lacking = [file for file in map(column_file, ARCHIVED) if file not in files]
        if lacking:  # built before a field was declared (`index.fields`): of another format, whatever its number
            raise ArchiveUnavailable(f"the archive is of another format: its build has no {lacking[0]}, which this papercode serves")
        data_date = raw.get("snapshot")
        if not is_day(data_date) or not build_id_is_valid(build_id) or papers < 0:
            raise ArchiveUnavailable(f"{build.name}/{MANIFEST} has a malformed build id, date or count")
        if any(not _inside(name) for name in files):
            raise ArchiveUnavailable(f"{build.name}/{MANIFEST} names files outside its build")
        return cls(build_id, str(data_date), papers, files, segments, raw)


def column_file(field: Field) -> str:
    """The file (or, for packed values, the first file) of `papers/` that holds `field` in a build."""
    return f"{COLUMNS}/{field.name}.i" if isinstance(field.kind, Int32) else f"{COLUMNS}/{field.name}.data"


def _inside(name: str) -> bool:
    parts = name.split("/")
    return bool(parts) and all(part not in ("", ".", "..") and "\\" not in part for part in parts)


def current_build(archive_dir: Path) -> Path | None:
    """The build directory `archive_dir/current` names (resolved), or None when there is none."""
    link = archive_dir / CURRENT
    try:
        target = os.readlink(link)
    except OSError:
        return None
    build = (archive_dir / target).resolve() if not os.path.isabs(target) else Path(target)
    builds = (archive_dir / BUILDS).resolve()
    if build.parent != builds or not build_id_is_valid(build.name):
        return None
    return build


def current_build_id(archive_dir: Path) -> str | None:
    """The id of the build `current` names: what `--watch` compares (cheap: one readlink)."""
    build = current_build(archive_dir)
    return None if build is None else build.name


@dataclass(frozen=True, slots=True)
class Repeated(Sequence[Any]):
    """A column with the same value for every paper (read_at, claim, samples: the archive has none)."""

    value: Any
    length: int

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.value] * len(range(*i.indices(self.length)))
        if not -self.length <= i < self.length:
            raise IndexError(i)
        return self.value


class MappedArchive:
    """One archive build, opened read-only: its papers (ordinals 0..papers-1, in build order), their keys, the
    repositories their code links name, their abstracts, and where its search index is."""

    def __init__(self, build: Path, manifest: Manifest, *, lock: int | None = None) -> None:
        """`lock` (a descriptor holding a shared lock on `build`) is the mapped archive's from here: released by
        `close()`, or at once if the build cannot be opened."""
        self.build = build
        self.manifest = manifest
        self._lock = lock
        self._columns: MappedColumns | None = None
        self.abstracts: Abstracts | None = None
        self.boards: Boards | None = None  # the leaderboards, tasks, methods and datasets: only when the build has them
        try:
            mapped = (COLUMNS + "/", BOARDS + "/")  # checked as they are mapped
            check_sizes(build, {name: facts for name, facts in manifest.files.items() if not name.startswith(mapped)})
            self._columns = MappedColumns(build, {name: facts for name, facts in manifest.files.items() if name.startswith(COLUMNS + "/")})
            if any(name.startswith(BOARDS + "/") for name in manifest.files):
                self.boards = Boards(build, manifest.files)
            self._open_columns()
            self.abstracts = Abstracts.open(build / SEARCH / ABSTRACTS)
            if len(self.abstracts) > manifest.papers:
                raise ColumnProblem(f"{ABSTRACTS} holds {len(self.abstracts):,} papers, more than the archive's {manifest.papers:,}")
        except BaseException:
            self.close()
            raise

    def _open_columns(self) -> None:
        columns, prefix, count = self._columns, COLUMNS + "/", self.manifest.papers
        assert columns is not None
        strings = StringTable()
        strings.values = [self.manifest.data_date]  # string id 0: the build's data date
        papers = PaperColumns(strings)
        for field in PAPER_FIELDS:
            if isinstance(field.kind, SampleIds):
                papers.start = papers.end = Repeated(0, count)  # type: ignore[assignment]
            elif not isinstance(field.kind, Ordinal):
                setattr(papers, field.name, _paper_column(columns, field, count))
        lengths = {len(papers.column(field.name)) for field in ARCHIVED}
        if lengths != {count}:
            raise ColumnProblem(f"the paper columns hold {sorted(lengths)} papers, and the manifest says {count:,}")
        self.papers = papers
        self.by_arxiv, self.by_slug = (
            SortedKeys.mapped(columns.strings(f"{prefix}{name}.keys"), columns.ints(f"{prefix}{name}.values", "q")) for name in KEY_COLUMNS
        )
        self.repo_names = columns.strings(prefix + REPO_COLUMNS[0])
        self.repo_offsets = columns.ints(prefix + REPO_COLUMNS[1], "q")
        self.repo_papers = columns.ints(prefix + REPO_COLUMNS[2], "i")
        self.repo_officials = columns.ints(prefix + REPO_COLUMNS[3], "i")
        names = len(self.repo_names)
        if len(self.repo_offsets) != names + 1 or len(self.repo_officials) != names or self.repo_offsets[-1] != len(self.repo_papers):
            raise ColumnProblem("the repository lists disagree with their names (cut short or damaged)")

    @property
    def build_id(self) -> str:
        return self.manifest.build_id

    @property
    def search_dir(self) -> Path:
        return self.build / SEARCH

    def __len__(self) -> int:
        return self.manifest.papers

    def papers_for_repo(self, repo: str) -> Sequence[int] | None:
        """The archive papers whose code links name `repo` (a repository key), official first, then by paper key."""
        position = self._repo(repo)
        return None if position is None else self.repo_papers[self.repo_offsets[position] : self.repo_offsets[position + 1]]

    def officials_for_repo(self, repo: str) -> int:
        """How many of `papers_for_repo(repo)`, from the first, link to it as their official code."""
        position = self._repo(repo)
        return 0 if position is None else self.repo_officials[position]

    def _repo(self, repo: str) -> int | None:
        names = cast(Sequence[str], self.repo_names)  # a name is never missing
        position = bisect.bisect_left(names, repo)
        return position if position < len(names) and names[position] == repo else None

    def arxiv_ids_with_prefix(self, prefix: str, most: int) -> list[str]:
        keys = cast(Sequence[str], self.by_arxiv.keys)  # a key is never missing
        start = bisect.bisect_left(keys, prefix)
        found = itertools.takewhile(lambda key: key is not None and key.startswith(prefix), (keys[i] for i in range(start, len(keys))))
        return [key for key in itertools.islice(found, most) if key is not None]

    def close(self) -> None:
        """Let the build go: its maps (once no column is in use) and the shared lock that kept it from removal."""
        if self._columns is not None:
            self._columns.close()
        if self.boards is not None:
            self.boards.close()
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock)
            self._lock = None

    def __del__(self) -> None:
        self.close()


def _paper_column(columns: MappedColumns, field: Field, count: int) -> Sequence[Any]:
    """A paper field's column in a build: mapped from its file (`ARCHIVED`), or its one value for every archive paper."""
    kind, name = field.kind, f"{COLUMNS}/{field.name}"
    if field.in_archive:
        if isinstance(kind, Int32):
            return columns.ints(name, "i")
        return columns.blobs(name) if isinstance(kind, Details) else columns.strings(name)
    if isinstance(kind, Interned):
        return Repeated(0 if kind.data_date else NONE, count)  # string id 0: the build's data date
    if isinstance(kind, Int32):
        return Repeated(NONE, count)
    if isinstance(kind, Text):
        return Repeated(None, count)
    raise TypeError(f"PaperRow.{field.name}: an archive paper cannot do without a {type(kind).__name__}")


def open_archive(archive_dir: Path) -> MappedArchive:
    """The current build of the archive in `archive_dir`, opened; `ArchiveUnavailable` (with what to run) otherwise.

    Never writes: the directory may be another user's, or a read-only volume.
    """
    for _ in range(3):  # a build switched and removed the one resolved between the readlink and the lock: look again
        build = current_build(archive_dir)
        if build is None:
            raise ArchiveUnavailable(_missing_reason(archive_dir))
        try:
            lock = liveness.lock_directory(build, shared=True) if liveness.LOCKS else None
        except OSError as exc:  # the lock is the first descriptor taken: out of them, this is where it shows
            raise _unopenable(build, exc) from None
        if lock is None and liveness.LOCKS:
            if build.is_dir() or current_build(archive_dir) != build:
                continue  # being removed by a build that switched meanwhile
            raise ArchiveUnavailable(f"{CURRENT} names the build {build.name}, which is missing from {BUILDS}/")
        try:
            manifest = Manifest.read(build)
            if manifest.build_id != build.name:
                raise ArchiveUnavailable(f"{build.name}/{MANIFEST} names build {manifest.build_id}")
        except BaseException as exc:
            if lock is not None:
                os.close(lock)
            if isinstance(exc, OSError):  # no verdict on the manifest: the system would not read it
                raise _unopenable(build, exc) from None
            raise
        try:
            return MappedArchive(build, manifest, lock=lock)  # the mapped archive's lock from here: it releases it if it fails
        except (ColumnProblem, ValueError) as exc:  # what a check of its files found
            raise ArchiveUnavailable(f"the archive's build {build.name} is damaged: {exc}") from None
        except OSError as exc:
            raise _unopenable(build, exc) from None
    raise ArchiveUnavailable("the archive kept changing while it was opened (builds in quick succession?)")


def _unopenable(build: Path, error: OSError) -> ArchiveUnavailable:
    """An error of the system, which gives no verdict on the build's files: named as it is, with what to fix."""
    return ArchiveUnavailable(f"the archive's build {build.name} cannot be opened: {error.strerror or error}", UNOPENABLE_NEXT)


def _missing_reason(archive_dir: Path) -> str:
    if (archive_dir / MANIFEST).is_file():
        return "the archive there is of format 1 (record shards), which this papercode no longer serves"
    if not archive_dir.exists():
        return f"there is no archive in {archive_dir.name}"
    return f"{archive_dir.name} holds no complete archive build"
