"""Whether another process still uses a file: the advisory lock (`flock`) it holds on it, the process id in its name.

A lock belongs to an open descriptor, and the system drops it when its process ends, however it ends (kill -9
included): a lock that can be taken means no live process holds one in the way. A process id is a weaker sign (it is
reused, and a process in another pid namespace has another), read from the names papercode gives what a process
writes (`<prefix><pid>-…`, `.building-<id>-<pid>`, `.current-<pid>`), where a name may hold any digits at all.

POSIX only: where there are no advisory locks (Windows), `LOCKS` is false and `lock` always succeeds. A file system
that has none where the platform has them (an NFS mount without its lock service) raises its OSError from `lock`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCKS: Final = fcntl is not None


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs, as far as this process can see. A process of another user counts, and so
    does a number no process can have (past the platform's range): what papercode cannot judge, it leaves alone."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def lock(descriptor: int, *, shared: bool = False, wait: bool = False) -> bool:
    """Lock the file open at `descriptor`: exclusively, or `shared`; without waiting, unless `wait`. True once it is
    locked (or nothing locks on this platform), False when another descriptor's lock is in the way. A file system
    without locks raises its OSError: each caller knows what that means for it."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(descriptor, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def lock_directory(path: Path, *, shared: bool = False) -> int | None:
    """The directory `path` opened and locked without waiting (exclusively, or `shared`): its descriptor, which holds
    the lock until it is closed. None when it is gone or not a directory, or when another descriptor's lock is in the
    way. Any other OSError is raised: too many open files, a permission, a file system without locks say nothing of
    who uses the directory, and each caller says what they mean for it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        locked = lock(descriptor, shared=shared)
    except BaseException:
        os.close(descriptor)
        raise
    if locked:
        return descriptor
    os.close(descriptor)
    return None
