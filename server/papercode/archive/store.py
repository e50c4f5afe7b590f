"""Where an archive lives and how a new one replaces the old one.

An archive is a directory: `archive.json` (the manifest) and `records/` (the `.jsonl` shards the server
reads). A build writes into `.<name>.building-<pid>` beside it and switches over only when everything is
written: the old directory is renamed aside, the new one renamed into place, the old one removed. An
interrupted build removes its temporary directory; one killed outright leaves it behind, and the next build
removes it (and, if a kill fell between the two renames, puts the previous archive back). Builds of one
archive exclude each other with a lock on the parent directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from papercode.core import archive_layout

MANIFEST = archive_layout.MANIFEST  # the layout has one home, which the server's loader reads too
RECORDS = archive_layout.RECORDS
_BUILDING, _OLD = "building", "old"

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, the rename dance still holds
    fcntl = None  # type: ignore[assignment]


class ArchiveBusy(Exception):
    """Another build is writing the same archive."""


class NotAnArchive(Exception):
    """`--out` names something that is not an archive papercode wrote: it is never replaced."""


def default_archive_dir() -> Path:
    """`$PAPERCODE_ARCHIVE_DIR` (as `serve --archive` reads it too), else `$XDG_DATA_HOME/papercode/archive`,
    else `~/.local/share/papercode/archive` (a relative `XDG_DATA_HOME` is ignored, as the XDG spec says)."""
    chosen = os.environ.get("PAPERCODE_ARCHIVE_DIR", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "papercode" / "archive"


def records_dir(archive: Path) -> Path:
    """The directory of an archive's record shards: what the server's loader reads."""
    return archive / RECORDS


def read_manifest(archive: Path) -> dict[str, Any] | None:
    """An archive's manifest, or None when there is none (or it cannot be read)."""
    try:
        value = orjson.loads((archive / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def check_out_dir(out: Path) -> None:
    """Refuse an `--out` that exists and is not an archive (a file, or a directory with other things in it):
    the build replaces the whole directory."""
    if not out.exists():
        return
    if not out.is_dir():
        raise NotAnArchive(f"--out {out}: exists and is not a directory. Next: pass a new directory or an archive papercode built")
    if not (out / MANIFEST).is_file() and any(out.iterdir()):
        raise NotAnArchive(
            f"--out {out}: not empty and not a papercode archive (no {MANIFEST}); it would be replaced. "
            "Next: pass a new or empty directory, or an archive papercode built"
        )


class Staging:
    """`with Staging(out) as tmp:` write the new archive into `tmp`, then `commit()` to switch to it.

    Leaving the block without `commit()` (an error, Ctrl-C) removes `tmp`; the previous archive is untouched.
    """

    def __init__(self, out: Path) -> None:
        self.out = Path(os.path.abspath(out))
        self.parent = self.out.parent
        self.tmp = self.parent / f".{self.out.name}.{_BUILDING}-{os.getpid()}"
        self._lock: int | None = None
        self._committed = False

    def __enter__(self) -> Path:
        self.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.parent)
        try:
            self._recover()
            self.tmp.mkdir()
        except BaseException:
            self._unlock()
            raise
        return self.tmp

    def __exit__(self, *exc_info: object) -> None:
        try:
            if not self._committed:
                shutil.rmtree(self.tmp, ignore_errors=True)
        finally:
            self._unlock()

    def commit(self) -> None:
        """Switch to the new archive: two renames, then the old one is removed."""
        old = self.parent / f".{self.out.name}.{_OLD}-{os.getpid()}"
        if self.out.exists():
            os.rename(self.out, old)
            try:
                os.rename(self.tmp, self.out)
            except BaseException:
                os.rename(old, self.out)  # put the previous archive back
                raise
            self._committed = True
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(self.tmp, self.out)
            self._committed = True
        _fsync_dir(self.parent)

    def _recover(self) -> list[Path]:
        """Clean up after a build that was killed: its temporary directory goes; an archive renamed aside
        but never replaced comes back. Returns what was removed."""
        leftovers = sorted(self._leftovers(_OLD), key=lambda path: path.stat().st_mtime, reverse=True)
        if leftovers and not self.out.exists():
            os.rename(leftovers.pop(0), self.out)
        removed = [*leftovers, *self._leftovers(_BUILDING)]
        for path in removed:
            shutil.rmtree(path, ignore_errors=True)
        return removed

    def _leftovers(self, kind: str) -> Iterator[Path]:
        prefix = f".{self.out.name}.{kind}-"
        with os.scandir(self.parent) as entries:
            for entry in entries:
                if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
                    yield Path(entry.path)

    def _unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the lock
            self._lock = None


def clear_leftovers(out: Path) -> list[Path]:
    """What a build killed outright left beside the archive `out`, removed (and an archive it had renamed aside put
    back), unless a build is running there now: every papercode command's start calls this, as it sweeps the rest
    of its scratch. Returns what was removed."""
    staging = Staging(out)
    if not staging.parent.is_dir():
        return []
    try:
        lock = _lock(staging.parent)
    except (ArchiveBusy, OSError):
        return []  # a build is running (it cleans up after itself), or the directory cannot be locked
    try:
        return staging._recover()
    finally:
        if lock is not None:
            os.close(lock)


def _lock(directory: Path) -> int | None:
    if fcntl is None:  # pragma: no cover
        return None
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ArchiveBusy(f"another papercode archive build is writing in {directory}. Next: wait for it to finish") from None
    return fd


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform can open a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
