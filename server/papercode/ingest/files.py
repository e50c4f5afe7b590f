"""Find the record files under a root: every regular `.json`, `.txt` or `.jsonl` file (optionally gzipped).

This walk runs on every warm start (the snapshot key is the files' paths, sizes and mtimes), so it
is one `stat` and one tuple per plain file.
"""

from __future__ import annotations

import operator
import os
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import NamedTuple

from papercode.core.load_report import LoadReport

RECORD_SUFFIXES = (".json", ".txt", ".jsonl")


class RecordFile(NamedTuple):
    path: str
    size: int
    mtime_ns: int
    device: int
    inode: int


_RECORD_SUFFIXES_ALL = RECORD_SUFFIXES + tuple(suffix + ".gz" for suffix in RECORD_SUFFIXES)
_ENTRY_NAME = operator.attrgetter("name")  # a C-level sort key: this sort runs on every warm start


def find_record_files(root: Path, report: LoadReport) -> list[RecordFile]:
    """Every regular record file under `root`, in sorted path order, with its size and mtime.

    Symlinks are followed only when they stay inside `root`, and a file reached through a symlink
    is not listed again. Anything that is not a regular file (a FIFO would block the read forever,
    a device never ends) is reported, not opened. This runs on every warm start (the snapshot key
    stats every record file), so a plain file costs one `stat`, one tuple and no Path object.
    """
    if not root.exists():
        report.add("error", "missing_directory", str(root), "records directory does not exist")
        return []
    if root.is_file():
        stat = root.stat()
        return [RecordFile(str(root), stat.st_size, stat.st_mtime_ns, stat.st_dev, stat.st_ino)]
    walk = _Walk(root, report)
    walk.directory(root)
    return walk.files()


class _Walk:
    """One walk of a records directory: the plain files found, in path order, and those reached through a symlink."""

    def __init__(self, root: Path, report: LoadReport) -> None:
        self._real_root, self._report = root.resolve(), report
        self._found: list[RecordFile] = []
        self._seen_dirs: set[Path] = set()
        self._linked: list[tuple[int, RecordFile]] = []  # files reached through a symlink: (position, file)

    def directory(self, directory: Path) -> None:
        try:
            real = directory.resolve()
            if real in self._seen_dirs:
                return
            self._seen_dirs.add(real)
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=_ENTRY_NAME)
        except (OSError, RuntimeError) as exc:
            self._report.add("error", "unreadable", str(directory), f"cannot list directory: {_os_reason(exc)}")
            return
        for entry in entries:
            name = entry.name
            wanted = name.endswith(_RECORD_SUFFIXES_ALL) and name[0] != "."
            try:
                if not entry.is_symlink():
                    self._plain(entry, wanted)
                elif wanted or entry.is_dir():
                    self._symlink(entry, wanted)
            except (OSError, RuntimeError) as exc:
                if wanted:
                    self._report.add("error", "unreadable", entry.path, f"broken symlink: {_os_reason(exc)}")

    def _plain(self, entry: os.DirEntry[str], wanted: bool) -> None:
        if not wanted:
            if entry.is_dir(follow_symlinks=False):
                self.directory(Path(entry.path))
            return
        stat = entry.stat(follow_symlinks=False)
        if S_ISREG(stat.st_mode):
            self._found.append(RecordFile(entry.path, stat.st_size, stat.st_mtime_ns, stat.st_dev, stat.st_ino))
        elif S_ISDIR(stat.st_mode):  # a directory named like a record file
            self.directory(Path(entry.path))
        else:
            self._report.add("error", "not_a_file", entry.path, "not a regular file (FIFO, socket or device); not opened")

    def _symlink(self, entry: os.DirEntry[str], wanted: bool) -> None:
        target = Path(entry.path).resolve(strict=True)
        if not target.is_relative_to(self._real_root):
            self._report.add("error", "symlink_outside", entry.path, "symlink points outside the records directory; not followed")
        elif target.is_dir():
            self.directory(Path(entry.path))
        elif wanted:
            stat = target.stat()
            if S_ISREG(stat.st_mode):
                self._linked.append((len(self._found), RecordFile(entry.path, stat.st_size, stat.st_mtime_ns, stat.st_dev, stat.st_ino)))
            else:
                self._report.add("error", "not_a_file", entry.path, "not a regular file (FIFO, socket or device); not opened")

    def files(self) -> list[RecordFile]:
        """The files found, each read once: a symlinked file not when its target is listed plainly, nor twice via two
        links."""
        found = self._found
        if self._linked:
            seen = {(file.device, file.inode) for file in found}
            kept = []
            for position, record_file in self._linked:  # in path order: the first link to a file wins
                if (record_file.device, record_file.inode) not in seen:
                    seen.add((record_file.device, record_file.inode))
                    kept.append((position, record_file))
            for position, record_file in reversed(kept):  # back to front, so positions stay right
                found.insert(position, record_file)
        return found


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, RuntimeError):  # Path.resolve() on a symlink loop (Python < 3.13)
        return "symlink loop"
    return getattr(exc, "strerror", None) or str(exc)
