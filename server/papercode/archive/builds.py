"""An archive directory's builds: each written apart, made current by one rename, removed once no server uses it.

The layout is `index.mapped_archive`'s: `current` (a symlink) names the build being served, `builds/<id>/` holds each.
A build is written into `builds/.building-<id>-<pid>` (the pid of the process writing it), renamed to `builds/<id>`
once complete, and made current by renaming a new symlink over `current`: one `rename(2)`, so a server starting at
any moment sees the old build or the new one, whole. Builds no longer current are removed when no server holds them
(a server holds a shared lock on the build it serves: see `index.mapped_archive.open_archive`); one still in use stays,
and the next build (or `papercode archive` command) removes it once its servers are gone. Nothing is removed while
`current` names no build that is there. Builds of one archive
directory exclude each other with a lock on its `.lock` file; what a killed build left (`.building-…` of a process
that is no longer running) is removed by the next.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from papercode.core import liveness
from papercode.index.mapped_archive import BUILDS, CURRENT, build_id_is_valid, current_build

LOCK: Final = ".lock"
_BUILDING: Final = ".building-"
_LINKING: Final = ".current-"
BUILDING_NAME = re.compile(r"\.building-(?P<id>[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8})-(?P<pid>[0-9]{1,10})")
LINKING_NAME = re.compile(r"\.current-(?P<pid>[0-9]{1,10})")


class ArchiveBusy(Exception):
    """Another build is writing the same archive directory."""


def new_build_id() -> str:
    """A build's id: when it started (UTC, to the second), then random hex (`mapped_archive.build_id_is_valid`)."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


class NewBuild:
    """`with NewBuild(archive_dir) as directory:` write a build into `directory`, then `commit()` to make it current.

    Leaving the block without `commit()` (an error, Ctrl-C) removes the directory; the current build is untouched, and
    an archive directory this first build made is removed again (a failed first build leaves nothing)."""

    def __init__(self, archive_dir: Path) -> None:
        self.archive_dir = archive_dir
        self.build_id = new_build_id()
        self.directory = archive_dir / BUILDS / f"{_BUILDING}{self.build_id}-{os.getpid()}"
        self._lock: int | None = None
        self._committed = False
        self._made = False

    def __enter__(self) -> Path:
        self._made = not self.archive_dir.exists()
        self.archive_dir.mkdir(parents=True, exist_ok=True)
        self._lock = _exclusive(self.archive_dir / LOCK)
        try:
            remove_leftovers(self.archive_dir)
            (self.archive_dir / BUILDS).mkdir(exist_ok=True)
            self.directory.mkdir()
        except BaseException:
            self._unlock()
            raise
        return self.directory

    def __exit__(self, *exc_info: object) -> None:
        try:
            if not self._committed:
                shutil.rmtree(self.directory, ignore_errors=True)
                if self._made:  # only what this build made, and only if nothing else came in meanwhile
                    with contextlib.suppress(OSError):
                        os.rmdir(self.archive_dir / BUILDS)
                        os.unlink(self.archive_dir / LOCK)
                        os.rmdir(self.archive_dir)
        finally:
            self._unlock()

    def commit(self) -> Path:
        """Make the build current (one rename of a link), then remove the builds no server uses. Returns the build."""
        builds = self.archive_dir / BUILDS
        final = builds / self.build_id
        os.rename(self.directory, final)
        self.directory = final  # until the switch, leaving the block removes it
        _fsync(builds)
        link = self.archive_dir / f"{_LINKING}{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(link)
        try:
            os.symlink(f"{BUILDS}/{self.build_id}", link)
            os.rename(link, self.archive_dir / CURRENT)  # the switch
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(link)
            raise
        self._committed = True
        _fsync(self.archive_dir)
        remove_unused(self.archive_dir)
        return final

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def remove_unused(archive_dir: Path) -> list[Path]:
    """Every complete build but the current one that no server holds, removed. Returns what was removed.

    The current build is told by its id, never by its path: `current_build` names it by the real path of `builds/`,
    and `archive_dir` may be written another way (relative, through a symlink). Without a current build (no `current`
    link, one that names no build of this directory, or one whose build is missing, as a half-done copy or a hand edit
    leaves it) every build stays where it is: one of them may be the build to point `current` at again."""
    current = current_build(archive_dir)
    if current is None or not current.is_dir():
        return []
    removed = []
    with contextlib.suppress(FileNotFoundError), os.scandir(archive_dir / BUILDS) as listing:
        for entry in listing:
            if not build_id_is_valid(entry.name) or not entry.is_dir(follow_symlinks=False) or (current and entry.name == current.name):
                continue
            if _remove_unheld(Path(entry.path)):
                removed.append(Path(entry.path))
    return removed


def remove_leftovers(archive_dir: Path) -> list[Path]:
    """What builds killed outright left (their `.building-` directories and `.current-` links, where the process that
    named them is not running), and builds no server uses: removed. Returns what was removed."""
    removed = []
    with contextlib.suppress(FileNotFoundError), os.scandir(archive_dir / BUILDS) as listing:
        for entry in listing:
            found = BUILDING_NAME.fullmatch(entry.name)
            if found and not liveness.process_alive(int(found["pid"])) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    with contextlib.suppress(FileNotFoundError), os.scandir(archive_dir) as listing:
        for entry in listing:
            found = LINKING_NAME.fullmatch(entry.name)
            if found and not liveness.process_alive(int(found["pid"])) and entry.is_symlink():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                removed.append(Path(entry.path))
    return [*removed, *remove_unused(archive_dir)]


def remove_leftovers_when_idle(archive_dir: Path) -> list[Path]:
    """`remove_leftovers` at a command's start, unless a build is running there or the directory is not ours to
    write (another user's, a read-only volume): then nothing is touched, and nothing fails. A directory no build
    locked (no `.lock`: copied from elsewhere, say) holds nothing a build left, and gets no file from a start."""
    if not (archive_dir / BUILDS).is_dir() or not os.access(archive_dir, os.W_OK) or not os.access(archive_dir / BUILDS, os.W_OK):
        return []
    try:
        lock = _exclusive(archive_dir / LOCK, create=False)
    except (ArchiveBusy, OSError):
        return []
    try:
        return remove_leftovers(archive_dir)
    except OSError:
        return []
    finally:
        os.close(lock)


def _remove_unheld(build: Path) -> bool:
    """Remove `build` if no server holds it (an exclusive lock can be taken) and it can be renamed aside; True when
    removed."""
    if not liveness.LOCKS:  # pragma: no cover - no way to know: keep it
        return False
    try:
        held = liveness.lock_directory(build)
    except OSError:  # no verdict (too many open files, a file system without locks): it stays
        return False
    if held is None:
        return False  # a server serves it, or it is gone
    try:
        # Renamed aside first, so that no server resolving an old link could open it half removed.
        doomed = build.with_name(f"{_BUILDING}{build.name}-{os.getpid()}")
        try:
            os.rename(build, doomed)
        except OSError:  # a read-only volume, say: it stays, whole
            return False
        shutil.rmtree(doomed, ignore_errors=True)
        return True
    finally:
        os.close(held)


def _exclusive(path: Path, *, create: bool = True) -> int:
    fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
    try:
        locked = liveness.lock(fd)
    except BaseException:
        os.close(fd)
        raise
    if not locked:
        os.close(fd)
        raise ArchiveBusy(f"another papercode archive build is writing {path.parent}. Next: wait for it to finish")
    return fd


def _fsync(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
