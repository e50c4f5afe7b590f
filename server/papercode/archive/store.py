"""Where an archive lives and how a new one replaces the old one.

An archive is a directory: `archive.json` (the manifest, with papercode's format marker: `manifest`) and `records/`
(the `.jsonl` shards the server reads). Only such a directory, holding nothing else, or an empty one, is ever
replaced: anything else given as `--out` is refused and left as it is. An `--out` that is a symlink is followed, and
the archive is replaced where the link points.

A build writes into `.<name>.papercode-building-<pid>-…` beside the archive (a `core.scratch` directory: held while
the build runs, removed when it fails or is interrupted) and switches over only when everything is written: the old
archive is renamed to `.<name>.papercode-old-<pid>-…`, the new one renamed into place, the old one removed. A build
killed outright leaves those behind: the next build, and the start of every papercode command (before it looks for
the archive), removes them, and puts the previous archive back if the kill fell between the two renames. Only
entries with those names whose process is dead are touched. Builds of one archive exclude each other with a lock
on `.<name>.papercode-lock` beside it; builds of other archives in the same directory do not wait.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
from pathlib import Path

from papercode.core import archive_layout, scratch
from papercode.core.paths import given_path, xdg_base

from .manifest import MANIFEST, papercode_manifest

RECORDS = archive_layout.RECORDS  # the layout has one home, which the server's loader reads too
ARCHIVE_DIR_VARIABLE = "PAPERCODE_ARCHIVE_DIR"
_BUILDING, _OLD, _LOCK = "papercode-building-", "papercode-old-", "papercode-lock"
_LOCK_TRIES = 10

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, the rename dance still holds
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)


class ArchiveBusy(Exception):
    """Another build is writing the same archive."""


class NotAnArchive(Exception):
    """`--out` names something that is not an archive papercode wrote: it is never replaced."""


def default_archive_dir() -> Path:
    """`$PAPERCODE_ARCHIVE_DIR` (read as every setting's path is: `core.paths.given_path`), else
    `$XDG_DATA_HOME/papercode/archive`, else `~/.local/share/papercode/archive`."""
    chosen = given_path(os.environ.get(ARCHIVE_DIR_VARIABLE, ""))
    return chosen if chosen is not None else xdg_base("XDG_DATA_HOME", ".local/share") / "papercode" / "archive"


def records_dir(archive: Path) -> Path:
    """The directory of an archive's record shards: what the server's loader reads."""
    return archive / RECORDS


def real_out(out: Path) -> Path:
    """The directory an archive path names: `out` made absolute, or where it points when it is a symlink (the
    build replaces that directory, never the link)."""
    absolute = Path(os.path.abspath(out))
    return Path(os.path.realpath(absolute)) if absolute.is_symlink() else absolute


def checked_out_dir(out: Path) -> Path:
    """The directory a build into `out` replaces (`real_out`). NotAnArchive unless it does not exist yet, is
    empty, or is an archive papercode wrote holding nothing papercode did not write."""
    target = real_out(out)
    shown = f"--out {out}" if target == Path(os.path.abspath(out)) else f"--out {out} (a symlink to {target})"
    if not os.path.lexists(target):
        if target.parent.is_dir() or not Path(os.path.abspath(out)).is_symlink():
            return target
        raise NotAnArchive(f"{shown}: points where nothing is. Next: create {target.parent} (or mount its disk), or pass another --out")
    if not target.is_dir():
        raise NotAnArchive(f"{shown}: exists and is not a directory. Next: pass a new directory or an archive papercode built")
    why = _not_papercodes(target)
    if why is not None:
        raise NotAnArchive(f"{shown}: {why}; it was left as it is. Next: pass a new or empty directory, or an archive papercode built")
    return target


def _not_papercodes(directory: Path) -> str | None:
    """Why `directory` holds something papercode did not write; None when it is empty or an archive and nothing else."""
    with os.scandir(directory) as listing:
        entries = sorted(listing, key=lambda entry: entry.name)
    if not entries:
        return None
    manifest = papercode_manifest(directory)
    if manifest is None:
        return f"not empty and not an archive papercode wrote (no {MANIFEST} with papercode's format marker)"
    listed = manifest.get("shards")
    shards = {item.get("name") for item in listed if isinstance(item, dict)} if isinstance(listed, list) else set()
    for entry in entries:
        if entry.name == MANIFEST and entry.is_file(follow_symlinks=False):
            continue
        if entry.name == RECORDS and entry.is_dir(follow_symlinks=False):
            with os.scandir(entry.path) as listing:
                for shard in sorted(listing, key=lambda item: item.name):
                    if shard.name not in shards or not shard.is_file(follow_symlinks=False):
                        return f"holds {RECORDS}/{shard.name}, which papercode did not write"
            continue
        return f"holds {entry.name}, which papercode did not write"
    return None


class Staging:
    """`with Staging(out) as tmp:` write the new archive into `tmp`, then `commit()` to switch to it.

    Leaving the block without `commit()` (an error, Ctrl-C) removes `tmp`; the previous archive is untouched.
    """

    def __init__(self, out: Path) -> None:
        self.out = real_out(out)
        self.parent = self.out.parent
        self._lock: int | None = None
        self._building: scratch.Scratch | None = None
        self._committed = False

    def __enter__(self) -> Path:
        self.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.out)
        try:
            _recover(self.out)
            self._building = scratch.directory(_prefix(self.out, _BUILDING), self.parent, private=False)
        except BaseException:
            self._unlock()
            raise
        return self._building.path

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self._building is not None and not self._committed:
                self._building.remove()
        finally:
            self._unlock()

    def commit(self) -> None:
        """Switch to the new archive: two renames, then the old one is removed. What is in `out` now is checked
        again first: files put there while the build ran are not papercode's to remove."""
        if self._building is None:
            raise RuntimeError("commit() outside the `with Staging(...)` block")
        new = self._building.path
        checked_out_dir(self.out)
        if os.path.lexists(self.out):
            old = self.parent / f"{_prefix(self.out, _OLD)}{os.getpid()}-{secrets.token_hex(4)}"
            os.rename(self.out, old)
            try:
                os.rename(new, self.out)
            except BaseException:
                os.rename(old, self.out)  # put the previous archive back
                raise
            self._switched()
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(new, self.out)
            self._switched()
        _fsync_dir(self.parent)

    def _switched(self) -> None:
        self._committed = True
        if self._building is not None:
            self._building.release()  # it is the archive now

    def _unlock(self) -> None:
        if self._lock is not None:
            _unlock(self.out, self._lock)
            self._lock = None


def clear_leftovers(out: Path) -> list[Path]:
    """What builds killed outright left beside the archive `out`, removed (and an archive one had renamed aside put
    back), unless a build of it is running now: every papercode command's start calls this, before it looks for the
    archive, as it sweeps the rest of its scratch. Returns what was removed; never raises (a read-only directory
    keeps what it holds)."""
    target = real_out(out)
    if not scratch.abandoned(target.parent, (_prefix(target, _BUILDING), _prefix(target, _OLD))):
        return []
    try:
        lock = _lock(target)
    except (ArchiveBusy, OSError):
        return []  # a build is running (it cleans up after itself), or nothing here can be changed
    try:
        return _recover(target)
    finally:
        _unlock(target, lock)


def _recover(out: Path) -> list[Path]:
    """With the archive's lock held: an archive a killed build renamed aside comes back when nothing took its place;
    the other leftovers of dead builds go. Returns what was removed."""
    aside = scratch.abandoned(out.parent, (_prefix(out, _OLD),))
    if aside and not os.path.lexists(out):
        newest = max(aside, key=_modified)
        try:
            os.rename(newest, out)
        except OSError as exc:  # a read-only directory: leave everything as it is, and say so
            log.warning("cannot put the archive %s back from %s: %s", out, newest, exc.strerror or exc)
            return []
        log.info("put the archive %s back: a build was killed as it switched archives", out)
    return scratch.sweep(out.parent, (_prefix(out, _OLD), _prefix(out, _BUILDING)))


def _modified(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def _prefix(out: Path, kind: str) -> str:
    return f".{out.name}.{kind}"


def _lock(out: Path) -> int | None:
    """Hold the lock of the archive `out` (the descriptor to pass to `_unlock`); ArchiveBusy when a build holds it."""
    if fcntl is None:  # pragma: no cover
        return None
    path = out.parent / _prefix(out, _LOCK)
    for _ in range(_LOCK_TRIES):
        descriptor = os.open(path, os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise ArchiveBusy(f"another papercode archive build is writing {out}. Next: wait for it to finish") from None
        with contextlib.suppress(FileNotFoundError):
            held, named = os.fstat(descriptor), os.stat(path, follow_symlinks=False)
            if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                return descriptor
        os.close(descriptor)  # its holder removed it as it let go: lock the one there now
    raise ArchiveBusy(f"the lock of {out} keeps changing hands. Next: run it again")


def _unlock(out: Path, descriptor: int | None) -> None:
    """Let go of the lock, removing its file first (no one can take it meanwhile; `_lock` checks it locked the
    file that is there)."""
    if descriptor is None:  # pragma: no cover
        return
    with contextlib.suppress(OSError):
        os.unlink(out.parent / _prefix(out, _LOCK))
    os.close(descriptor)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
