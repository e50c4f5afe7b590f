"""Warm start: the built corpus persisted in a cache directory, trusted only when provably current.

A snapshot is two files: `index-<roots>.snapshot` (a header, then the pickled index) and
`index-<roots>.fts` (the search engine's SQLite database, opened read-only in place, so its
pages load on demand instead of being copied at start). The header holds papercode's snapshot
format, a key over papercode's version, the load limits and every record file's path, size and
modification time, when it was written, and the length and CRC-32 of both files. A truncated,
corrupt or foreign snapshot is detected and never served; one built from other records is
returned with its key, so the caller decides (`corpus.open_stages` serves it as stale while it
rebuilds). Files are written to temporary names and renamed into place. This module returns the
parts (`Snapshot`); only `corpus` composes a corpus from them.

The index is a pickle: the cache directory is created private (0700), and must stay writable
only by the user running papercode, as with any cache of executable state.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import os
import pickle
import struct
import tempfile
import threading
import time
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import __version__
from .index import PaperIndex
from .loading import Limits, LoadReport, find_record_files
from .search import SearchEngine

log = logging.getLogger(__name__)

FORMAT_VERSION = 3
_MAGIC = b"PAPERCODE-SNAPSHOT\n"
# magic, format, key, written at (Unix seconds), index length, index crc32, fts length, fts crc32
_HEADER = struct.Struct(f">{len(_MAGIC)}sI32sdQIQI")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a snapshot restores: the index, its search engine, the records key it was built from, and when."""

    index: PaperIndex
    search: SearchEngine
    key: bytes
    built_at: str  # ISO 8601, UTC


_CHUNK = 1 << 22


def records_key(roots: list[Path], limits: Limits) -> bytes:
    """Identifies the exact record files a corpus was built from (paths, sizes, mtimes)."""
    digest = hashlib.sha256(f"{__version__}\0{FORMAT_VERSION}\0{limits!r}\0".encode())
    scratch = LoadReport()
    for root in roots:
        files = find_record_files(root, scratch)
        digest.update(f"root\0{root.resolve()}\0{len(files)}\0".encode())
        # One update per column, not per file: this runs on every warm start.
        columns = list(zip(*files, strict=True)) or [(), (), ()]  # path, size, mtime_ns, ... as columns
        digest.update("\0".join(columns[0]).encode(errors="surrogateescape"))
        digest.update(array("q", columns[1]).tobytes() + array("q", columns[2]).tobytes())
    return digest.digest()


def snapshot_path(cache_dir: Path, roots: list[Path]) -> Path:
    """One snapshot per set of record roots; a rebuild replaces it."""
    name = hashlib.sha256("\0".join(str(root.resolve()) for root in roots).encode()).hexdigest()[:16]
    return cache_dir / f"index-{name}.snapshot"


def _fts_path(path: Path) -> Path:
    return path.with_suffix(".fts")


class PendingKey:
    """`records_key` computed in a forked child while this process restores the snapshot.

    A warm start has two independent costs of similar size at 100k files: proving the records
    unchanged (a `stat` of every file) and restoring the snapshot. A forked child does the first
    on the other core, so the start costs about the larger of the two, not their sum. Where fork
    is unavailable or unsafe (threads already running), the key is computed here, in `result`.
    """

    def __init__(self, roots: list[Path], limits: Limits, *, background: bool = True) -> None:
        self._roots, self._limits = roots, limits
        self._key: bytes | None = None
        self._child: multiprocessing.process.BaseProcess | None = None
        if background and "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
            context = multiprocessing.get_context("fork")
            self._receive, send = context.Pipe(duplex=False)
            self._child = context.Process(target=_send_key, args=(send, roots, limits), daemon=True)
            self._child.start()
            send.close()

    def result(self) -> bytes:
        if self._key is None:
            self._key = self._receive_key() if self._child is not None else records_key(self._roots, self._limits)
        return self._key

    def _receive_key(self) -> bytes:
        assert self._child is not None
        try:
            return self._receive.recv_bytes()
        except (EOFError, OSError):  # the child died: do the work here
            return records_key(self._roots, self._limits)
        finally:
            self._receive.close()
            self._child.join()


def _send_key(send: multiprocessing.connection.Connection, roots: list[Path], limits: Limits) -> None:
    with send:
        send.send_bytes(records_key(roots, limits))


def load(path: Path, key: bytes | None = None) -> Snapshot | None:
    """The snapshot in `path` if it is intact, else None (and the reason logged).

    With `key`, only a snapshot built from exactly those records is restored (checked before
    the index is read); without, any intact one is, and the caller compares `Snapshot.key`.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("snapshot %s unreadable (%s); rebuilding", path, exc)
        return None
    reason = _check(data, key, _fts_path(path))
    if reason is not None:
        log.warning("snapshot %s %s; rebuilding", path, reason)
        return None
    try:
        index = pickle.loads(memoryview(data)[_HEADER.size :])
        if not isinstance(index, PaperIndex):
            raise TypeError(f"holds a {type(index).__name__}, not an index")
        search = SearchEngine(_fts_path(path))
    except Exception as exc:  # a snapshot from an incompatible build: rebuild, never serve
        log.warning("snapshot %s could not be restored (%s); rebuilding", path, exc)
        return None
    _, _, stored_key, written, *_ = _HEADER.unpack_from(data)
    return Snapshot(index, search, bytes(stored_key), datetime.fromtimestamp(written, UTC).isoformat(timespec="seconds"))


def _check(data: bytes, key: bytes | None, fts: Path) -> str | None:
    """Why the snapshot in `data` must not be served; None when it may (`key` None: any records)."""
    if len(data) < _HEADER.size:
        return "is truncated"
    magic, version, stored_key, _, length, crc, fts_length, fts_crc = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return "is not a papercode snapshot"
    if version != FORMAT_VERSION:
        return f"has format {version}, not {FORMAT_VERSION}"
    if key is not None and stored_key != key:
        return "was built from other records (they changed)"
    payload = memoryview(data)[_HEADER.size :]
    if len(payload) != length or zlib.crc32(payload) != crc:
        return "is corrupt or truncated"
    try:
        if fts.stat().st_size != fts_length or _file_crc(fts) != fts_crc:
            return f"has a corrupt or truncated search database {fts.name}"
    except OSError as exc:
        return f"has no readable search database {fts.name} ({exc.strerror or exc})"
    return None


def _file_crc(path: Path) -> int:
    crc = 0
    for chunk in _chunks(path):
        crc = zlib.crc32(chunk, crc)
    return crc


def _chunks(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as stream:
        while chunk := stream.read(_CHUNK):
            yield chunk


def save(path: Path, key: bytes, index: PaperIndex, search: SearchEngine) -> None:
    """Write the snapshot; a failure is logged, never raised (the cache is optional)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with _temporary(path.parent, ".fts-") as fts_temporary:
            search.save_image(fts_temporary)
            fts_length, fts_crc = fts_temporary.stat().st_size, _file_crc(fts_temporary)
            payload = pickle.dumps(index, protocol=5)
            header = _HEADER.pack(_MAGIC, FORMAT_VERSION, key, time.time(), len(payload), zlib.crc32(payload), fts_length, fts_crc)
            with _temporary(path.parent, ".snapshot-") as index_temporary:
                with open(index_temporary, "wb") as out:
                    out.write(header)
                    out.write(payload)
                # The database first: a crash between the renames leaves a mismatch, detected.
                os.replace(fts_temporary, _fts_path(path))
                os.replace(index_temporary, path)
    except (OSError, pickle.PicklingError) as exc:
        log.warning("could not write snapshot %s: %s", path, exc)


@contextlib.contextmanager
def _temporary(directory: Path, prefix: str) -> Iterator[Path]:
    handle, name = tempfile.mkstemp(dir=directory, prefix=prefix)
    os.close(handle)
    try:
        yield Path(name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
