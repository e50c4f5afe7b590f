"""The verified code store: harvested modules on disk, addressed by their own hash.

A module whose code hashes to prefix `p` lives in `<dir>/<p>.py`. The name is the proof: a
file is served only when the sha256 prefix of its bytes equals its name, so a corrupted,
truncated or tampered file is reported (`code_mismatch`) and never served. One directory is
written (the user's code directory); others are only read (a `code/` folder a corpus publisher
ships beside its records). Writes go to a temporary file renamed into place, so a reader never
sees half a module. Nothing here imports MCP; all of it is blocking file I/O (callers keep it
off the event loop).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from papercode.core.ids import is_sha_prefix
from papercode.core.load_report import Problem

from .harvest import sha256_prefix

log = logging.getLogger(__name__)

SUFFIX = ".py"
MAX_CODE_BYTES = 2 * 1024 * 1024  # a harvested module is never larger than its source file's cap
MAX_PROBLEMS = 1_000  # bad files reported; the rest are counted


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
        self._lock = threading.Lock()

    @classmethod
    def for_records(cls, write_dir: Path | None, roots: Sequence[Path]) -> CodeStore:
        """The user's store plus the `code/` folder of every records directory that has one."""
        shipped = [root / "code" for root in roots if (root / "code").is_dir()]
        return cls(write_dir, [directory for directory in shipped if directory != write_dir])

    def contains(self, sha: str) -> bool:
        """A file for `sha` is present (it is verified when read). String paths, not `Path` objects: a third of the
        cost, and get_harvested_code_for_paper asks this for every showable sample of its page."""
        name = sha + SUFFIX
        return is_sha_prefix(sha) and any(os.path.isfile(os.path.join(directory, name)) for directory in self.dirs)

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
        handle, temporary = tempfile.mkstemp(dir=self.write_dir, prefix=".writing-", suffix=SUFFIX)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        with self._lock:
            self._problems.pop(str(path), None)
        return path

    def verify_all(self) -> tuple[int, int]:
        """Read and check every stored file (for `papercode check`): (verified, bad)."""
        good = bad = 0
        for path in self._files():
            if self._verified(path, path.name.removesuffix(SUFFIX)) is None:
                bad += 1
            else:
                good += 1
        return good, bad

    @property
    def problems(self) -> list[Problem]:
        with self._lock:
            return list(self._problems.values())

    def _files(self) -> Iterator[Path]:
        for directory in self.dirs:
            with contextlib.suppress(OSError), os.scandir(directory) as listing:
                for entry in listing:
                    if entry.name.endswith(SUFFIX) and not entry.name.startswith("."):
                        yield Path(entry.path)

    def _verified(self, path: Path, sha: str) -> str | None:
        """The file's text when it is a regular file whose bytes hash to `sha`; else None (reported)."""
        try:
            with open(path, "rb", opener=_no_follow_fifo) as stream:
                data = stream.read(MAX_CODE_BYTES + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._report(path, f"unreadable: {exc.strerror or exc}")
            return None
        if not is_sha_prefix(sha):
            self._report(path, "the file name is not a 16-hex code hash")
            return None
        if len(data) > MAX_CODE_BYTES:
            self._report(path, f"over {MAX_CODE_BYTES:,} bytes; never served")
            return None
        try:
            code = data.decode("utf-8")
        except UnicodeDecodeError:
            self._report(path, "not UTF-8; never served")
            return None
        actual = sha256_prefix(code)
        if actual != sha:
            self._report(path, f"its content hashes to {actual}, not to its name; never served")
            return None
        return code

    def _report(self, path: Path, reason: str) -> None:
        with self._lock:
            if str(path) in self._problems or len(self._problems) >= MAX_PROBLEMS:
                return
            self._problems[str(path)] = Problem("error", "code_mismatch", str(path), reason)
        log.warning("code store: %s %s", path, reason)


def _no_follow_fifo(path: str, flags: int) -> int:
    # O_NONBLOCK: opening a FIFO planted in the store must not hang the server; regular files ignore it.
    descriptor = os.open(path, flags | os.O_NONBLOCK)
    if not _is_regular(descriptor):
        os.close(descriptor)
        raise OSError(0, "not a regular file")
    return descriptor


def _is_regular(descriptor: int) -> bool:
    return S_ISREG(os.fstat(descriptor).st_mode)
