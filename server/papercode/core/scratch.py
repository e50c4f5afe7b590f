"""Scratch space: the temporary files and directories a papercode process owns, gone when it is.

Every entry is named `<prefix><pid>-<random>` (its owner's process id) and, while its owner runs,
held by an advisory lock (`flock`: `core.liveness`) that the system drops when the process ends, however it ends
(kill -9 included). So a start clears what a dead papercode left (`sweep`): an entry of this user
whose owner is not running and whose lock can be taken. A running process's entry is never
touched: its pid runs, or its lock is held (a process in another pid namespace sharing the
directory). A process removes each entry when done with it; `remove_all` removes what it still
holds on the way out (the command line calls it at exit and on SIGTERM), after stopping the child
processes that write into them (`own_process`).

POSIX only (Linux, macOS): elsewhere entries are still removed by their owner, and `sweep` does nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from stat import S_ISDIR, S_ISREG

from . import liveness

_POSIX = os.name == "posix"
_OWNER = re.compile(r"(\d{1,10})-")
_lock = threading.RLock()  # re-entrant: `remove_all` runs in a signal handler, maybe while this thread holds it
_held: dict[int, Scratch] = {}
_processes: dict[int, subprocess.Popen[bytes]] = {}
_exiting = False


class Scratch:
    """A temporary file or directory this process owns (see the module docstring)."""

    def __init__(self, path: Path, descriptor: int) -> None:
        self.path = path
        self._descriptor = descriptor  # holds the lock; -1 once let go

    def remove(self) -> None:
        """Delete whatever is left of the entry, then let go of it (again: nothing)."""
        descriptor = self._let_go()
        if descriptor < 0:
            return
        try:
            if os.path.isdir(self.path) and not os.path.islink(self.path):
                shutil.rmtree(self.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
        finally:
            os.close(descriptor)

    def release(self) -> None:
        """Let go of the entry without deleting it (it was renamed into place)."""
        descriptor = self._let_go()
        if descriptor >= 0:
            os.close(descriptor)

    def _let_go(self) -> int:
        with _lock:
            descriptor, self._descriptor = self._descriptor, -1
            _held.pop(id(self), None)
        return descriptor


def directory(prefix: str, parent: Path | None = None, *, private: bool = True) -> Scratch:
    """A new empty directory `<parent>/<prefix><pid>-…` (parent: the temporary directory), held. Private: mode 0700;
    else made as `mkdir` makes a directory (the umask decides), for one that is renamed into place for others to read."""
    _check_open()
    if private:
        path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent))
    else:
        path = _new_directory(Path(parent if parent is not None else tempfile.gettempdir()), f"{prefix}{os.getpid()}-")
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        os.rmdir(path)
        raise
    return _hold(path, descriptor)


def _new_directory(parent: Path, stem: str) -> Path:
    while True:
        path = parent / f"{stem}{secrets.token_hex(4)}"
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path


def file(prefix: str, parent: Path, suffix: str = "") -> Scratch:
    """A new empty file `<parent>/<prefix><pid>-…<suffix>` (mode 0600), held. Write it by its path."""
    _check_open()
    descriptor, name = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}-", suffix=suffix, dir=parent)
    return _hold(Path(name), descriptor)


def own_process(process: subprocess.Popen[bytes]) -> None:
    """`process` writes into this process's entries: `remove_all` stops it before removing them."""
    with _lock:
        _processes[id(process)] = process


def disown_process(process: subprocess.Popen[bytes]) -> None:
    with _lock:
        _processes.pop(id(process), None)


def remove_all() -> None:
    """On the way out (at exit, on SIGTERM): stop owned child processes, remove every entry still held.
    No entry can be made after it."""
    global _exiting
    with _lock:
        _exiting = True
        processes, entries = list(_processes.values()), list(_held.values())
        _processes.clear()
    for process in processes:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait(timeout=5)
    for entry in reversed(entries):
        with contextlib.suppress(OSError):
            entry.remove()


def sweep(parent: Path | None, prefixes: Iterable[str]) -> list[Path]:
    """Remove the entries of `parent` (None: nothing to do) named `<prefix><pid>-…` for one of
    `prefixes` that a papercode process of this user left when it died; the paths removed."""
    removed = []
    for path in abandoned(parent, prefixes):
        with contextlib.suppress(OSError):
            if _remove_if_abandoned(path):
                removed.append(path)
    return removed


def abandoned(parent: Path | None, prefixes: Iterable[str]) -> list[Path]:
    """The entries of `parent` (None: none) named `<prefix><pid>-…` for one of `prefixes`, this user's regular
    files and directories, whose owner process is not running: what a papercode process left when it died. (A
    lock still held, by a process in another pid namespace, is checked by `sweep` as it removes.)"""
    if parent is None or not _POSIX:
        return []
    wanted = tuple(prefixes)
    try:
        with os.scandir(parent) as listing:
            entries = list(listing)
    except OSError:
        return []
    found = []
    for entry in entries:
        prefix = next((prefix for prefix in wanted if entry.name.startswith(prefix)), None)
        owner = _OWNER.match(entry.name, len(prefix)) if prefix is not None else None
        if owner is None or liveness.process_alive(int(owner.group(1))):
            continue
        with contextlib.suppress(OSError):
            stat = entry.stat(follow_symlinks=False)
            if stat.st_uid == os.getuid() and (S_ISDIR(stat.st_mode) or S_ISREG(stat.st_mode)):
                found.append(Path(entry.path))
    return found


def _hold(path: Path, descriptor: int) -> Scratch:
    entry = Scratch(path, descriptor)
    with contextlib.suppress(OSError):  # a file system without locks: the owner's pid alone decides
        liveness.lock(descriptor, wait=True)
    with _lock:
        if not _exiting:
            _held[id(entry)] = entry
            return entry
    entry.remove()
    raise OSError("papercode is exiting: no new temporary files")


def exiting() -> bool:
    """Whether this process is on its way out (`remove_all` ran): its build child was stopped on purpose."""
    return _exiting


def _check_open() -> None:
    if _exiting:
        raise OSError("papercode is exiting: no new temporary files")


def _remove_if_abandoned(path: Path) -> bool:
    """Remove this user's regular file or directory at `path` if no process holds its lock."""
    stat = path.lstat()
    if stat.st_uid != os.getuid() or not (S_ISDIR(stat.st_mode) or S_ISREG(stat.st_mode)):
        return False
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | (getattr(os, "O_DIRECTORY", 0) if S_ISDIR(stat.st_mode) else 0)
    descriptor = os.open(path, flags)
    try:
        opened = os.fstat(descriptor)
        if (opened.st_dev, opened.st_ino) != (stat.st_dev, stat.st_ino):
            return False  # replaced meanwhile
        try:
            if not liveness.lock(descriptor):
                return False  # its owner is alive
        except OSError:
            pass  # a file system without locks: the owner's pid decided
        if S_ISDIR(stat.st_mode):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
        return True
    finally:
        os.close(descriptor)
