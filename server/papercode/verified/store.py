"""The verified code store: harvested modules on disk, addressed by their own hash.

A module whose code hashes to prefix `p` lives in `<dir>/<p>.py`. The name is the proof: a
file is served only when it is a regular file (not a symlink) of at most `MAX_CODE_BYTES` and the
sha256 prefix of its bytes equals its name, so a corrupted, truncated or tampered file is reported
(`code_mismatch`) and never served; once fixed or deleted, it is reported no more. What was
verified is remembered by the file's identity (device, inode, size, modification time), so
`contains` asks again with one `stat`, and a changed file is verified again.

A sample's `stored` is answered from memory by `holds`, once `scan` has verified every file (at
start, in a worker thread): the hashes whose file the store last found verified. Every verdict
the store reaches keeps it true (a write, a read, `contains`, a scan), and `scan` again (every
`VerifiedCode.keep_current` period) looks again at a directory whose modification time changed,
so a file added, replaced or deleted there by another process is seen within that period. A file
changed in place behind the server's back can be held until it is next read: `read` (what
`get_code` serves) always verifies the bytes, refuses them, and the hash is held no more.

One directory is written (the user's code directory); others are only read (a `code/` folder a
corpus publisher ships beside its records). Writes go to a temporary file (`.writing-<pid>-…`,
see `core.scratch`) renamed into place, so a reader never sees half a module. Nothing here
imports MCP; everything but `holds` is blocking file I/O (callers keep it off the event loop).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISLNK, S_ISREG

from papercode.core import scratch
from papercode.core.ids import is_sha_prefix
from papercode.core.load_report import Problem

from .harvest import sha256_prefix
from .sources import MAX_SOURCE_BYTES

log = logging.getLogger(__name__)

SUFFIX = ".py"
MAX_CODE_BYTES = MAX_SOURCE_BYTES  # a harvested module is never larger than its source file's cap
MAX_PROBLEMS = 1_000  # bad files reported; the rest are counted
WRITING_PREFIX = ".writing-"  # a module being written (`core.scratch` names and holds it)

RECENT_NS = 2_000_000_000  # a directory changed this recently is listed again at the next scan (its time has a coarse tick)
Identity = tuple[int, int, int, int]  # a file's device, inode, size and modification time (ns)


@dataclass(frozen=True, slots=True)
class StoredCode:
    code: str
    path: Path


class CodeStore:
    """Reads `<prefix>.py` from `read_dirs` (then `write_dir`); writes to `write_dir` only."""

    def __init__(self, write_dir: Path | None, read_dirs: Sequence[Path] = ()) -> None:
        self.write_dir = write_dir
        self.dirs = [*read_dirs, *([write_dir] if write_dir is not None else [])]
        self._problems: dict[str, Problem] = {}  # by path: each bad file reported once
        self._checked: dict[str, tuple[Identity, bool]] = {}  # by path: whether the file, as it was then, verified
        self._held: dict[Path, set[str]] = {directory: set() for directory in self.dirs}  # by directory: hashes verified there
        self._marks: dict[Path, int | None] = {}  # by directory: its modification time when `scan` last listed it
        self.scanned = False  # `holds` answers once the first `scan` is done
        self._lock = threading.Lock()

    @classmethod
    def for_records(cls, write_dir: Path | None, roots: Sequence[Path]) -> CodeStore:
        """The user's store plus the `code/` folder of every records directory that has one."""
        shipped = [root / "code" for root in roots if (root / "code").is_dir()]
        return cls(write_dir, [directory for directory in shipped if directory != write_dir])

    def contains(self, sha: str) -> bool:
        """A verified copy of `sha` is in the store: `read` would serve it. A file verified (or not)
        before is not read again until it changes."""
        return is_sha_prefix(sha) and any(self._still_verified(directory / f"{sha}{SUFFIX}", sha) for directory in self.dirs)

    def holds(self, sha: str) -> bool:
        """Whether the store last found a verified file for `sha` (see the module docstring): no file
        is touched, so it may run on the event loop. Before the first `scan` (`scanned`) it knows only
        the files looked at so far."""
        for held in self._held.values():  # noqa: SIM110 - a loop, not any() over a generator: it runs for every sample shown
            if sha in held:
                return True
        return False

    def scan(self, *, reread: bool = False) -> tuple[int, int]:
        """Look at every directory whose modification time changed since the last scan (every one, the
        first time or with `reread`): verify each file not verified before as it is now (every file with
        `reread`), forget the ones gone. Blocking. Returns (verified, bad) among the files looked at."""
        good = bad = 0
        for directory in self.dirs:
            mark = _mtime(directory)  # taken before listing: a change during the listing shows at the next scan
            if not reread and directory in self._marks and self._marks[directory] == mark:
                continue
            with self._lock:
                before = set(self._held[directory])
            listed: set[str] = set()
            for path in self._files_in(directory):
                sha = path.name.removesuffix(SUFFIX)
                listed.add(sha)
                verified = self._verified(path, sha) is not None if reread else self._still_verified(path, sha)
                good, bad = good + verified, bad + (not verified)
            with self._lock:
                self._held[directory] -= before - listed  # gone since; a write during the listing is kept
            if mark is not None and time.time_ns() - mark < RECENT_NS:
                self._marks.pop(directory, None)  # a change within the same clock tick leaves the time as it is: list again
            else:
                self._marks[directory] = mark
        self.scanned = True
        return good, bad

    def read(self, sha: str) -> StoredCode | None:
        """The stored module for `sha`, only if its bytes hash to `sha`."""
        if not is_sha_prefix(sha):
            return None
        for directory in self.dirs:
            path = directory / f"{sha}{SUFFIX}"
            code = self._verified(path, sha)
            if code is not None:
                return StoredCode(code, path)
        return None

    def write(self, code: str) -> Path:
        """Store `code` under its own prefix (atomically); the path it is stored at."""
        if self.write_dir is None:
            raise OSError("no code directory to write to")
        data = code.encode("utf-8")
        path = self.write_dir / f"{sha256_prefix(code)}{SUFFIX}"
        self.write_dir.mkdir(parents=True, exist_ok=True)
        temporary = scratch.file(WRITING_PREFIX, self.write_dir, suffix=SUFFIX)
        try:
            with open(temporary.path, "wb") as out:
                out.write(data)
            identity = _identity(os.stat(temporary.path))
            os.replace(temporary.path, path)  # the same file under its name: its identity is unchanged
        finally:
            temporary.remove()
        self._remember(path, identity, verified=True)
        return path

    def verify_all(self) -> tuple[int, int]:
        """Read and check every stored file (for `papercode check`): (verified, bad)."""
        return self.scan(reread=True)

    @property
    def has_problems(self) -> bool:
        """Whether bad files have been reported (then `problems` touches files: not for the event loop)."""
        return bool(self._problems)

    @property
    def problems(self) -> list[Problem]:
        """Bad files still in the store: each reported file is looked at again (a `stat`), and
        verified again if it changed, so one fixed or deleted since is no longer reported. Blocking when there
        are any (`has_problems`)."""
        with self._lock:
            reported = [(path, self._checked.get(path)) for path in self._problems]
        for path, checked in reported:
            try:
                identity = _identity(os.lstat(path))
            except FileNotFoundError:
                self._forget(Path(path))
                continue
            except OSError:
                continue
            if checked is None or checked[0] != identity:
                self._verified(Path(path), Path(path).name.removesuffix(SUFFIX))
        with self._lock:
            return list(self._problems.values())

    @staticmethod
    def _files_in(directory: Path) -> Iterator[Path]:
        with contextlib.suppress(OSError), os.scandir(directory) as listing:
            for entry in listing:
                if entry.name.endswith(SUFFIX) and not entry.name.startswith("."):
                    yield Path(entry.path)

    def _still_verified(self, path: Path, sha: str) -> bool:
        """Whether the file verifies as it is now: one `stat` when its verdict is remembered, else a read."""
        try:
            identity = _identity(os.lstat(path))
        except FileNotFoundError:
            self._forget(path)
            return False
        except OSError:
            return False
        checked = self._checked.get(str(path))
        if checked is not None and checked[0] == identity:
            return checked[1]
        return self._verified(path, sha) is not None

    def _verified(self, path: Path, sha: str) -> str | None:
        """The file's text when it is a regular file whose bytes hash to `sha`; else None (reported).
        Either way the verdict is remembered with the file's identity (see `contains`)."""
        try:
            with open(path, "rb", opener=_regular_file_only) as stream:
                identity = _identity(os.fstat(stream.fileno()))
                data = stream.read(MAX_CODE_BYTES + 1)
        except FileNotFoundError:
            self._forget(path)
            return None
        except OSError as exc:
            reason = "a symbolic link; never followed or served" if _is_symlink(path) else f"unreadable: {exc.strerror or exc}"
            self._bad(path, _lstat_identity(path), reason)
            return None
        code, reason = _code_of(data, sha)
        if code is None:
            self._bad(path, identity, reason)
            return None
        self._remember(path, identity, verified=True)
        return code

    def _bad(self, path: Path, identity: Identity | None, reason: str) -> None:
        if identity is not None:
            self._remember(path, identity, verified=False)
        with self._lock:
            known = self._problems.get(str(path))
            if (known is None and len(self._problems) >= MAX_PROBLEMS) or (known is not None and known.reason == reason):
                return
            self._problems[str(path)] = Problem("error", "code_mismatch", str(path), reason)
        log.warning("code store: %s %s", path, reason)

    def _remember(self, path: Path, identity: Identity, *, verified: bool) -> None:
        with self._lock:
            self._checked[str(path)] = (identity, verified)
            self._hold(path, verified)
            if verified:
                self._problems.pop(str(path), None)

    def _forget(self, path: Path) -> None:
        """The file is gone: nothing to remember or report about it."""
        with self._lock:
            self._checked.pop(str(path), None)
            self._problems.pop(str(path), None)
            self._hold(path, False)

    def _hold(self, path: Path, verified: bool) -> None:
        """`holds` follows the verdict on `path` (under the lock)."""
        held = self._held.get(path.parent)
        if held is not None:
            (held.add if verified else held.discard)(path.name.removesuffix(SUFFIX))


def _code_of(data: bytes, sha: str) -> tuple[str | None, str]:
    """The code in `data` (read up to one byte over the cap) if it is what `sha` names; else why not."""
    if not is_sha_prefix(sha):
        return None, "the file name is not a 16-hex code hash"
    if len(data) > MAX_CODE_BYTES:
        return None, f"over {MAX_CODE_BYTES:,} bytes; never served"
    try:
        code = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8; never served"
    actual = sha256_prefix(code)
    if actual != sha:
        return None, f"its content hashes to {actual}, not to its name; never served"
    return code, ""


def _regular_file_only(path: str, flags: int) -> int:
    # O_NONBLOCK: opening a FIFO planted in the store must not hang the server; regular files ignore it.
    # O_NOFOLLOW: a symlink (to /etc/passwd, say) is never opened.
    descriptor = os.open(path, flags | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    if not S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise OSError(0, "not a regular file")
    return descriptor


def _identity(stat: os.stat_result) -> Identity:
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _mtime(directory: Path) -> int | None:
    try:
        return os.stat(directory).st_mtime_ns
    except OSError:
        return None


def _lstat_identity(path: Path) -> Identity | None:
    try:
        return _identity(os.lstat(path))
    except OSError:
        return None


def _is_symlink(path: Path) -> bool:
    try:
        return S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False
