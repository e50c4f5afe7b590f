"""Warm start: the built corpus persisted in a cache directory, trusted only when provably current.

A snapshot is two files: `index-<roots>.snapshot` (a header, then the pickled index) and
`index-<roots>.fts` (the search engine's SQLite database, opened read-only in place, so its
pages load on demand instead of being copied at start). The header holds papercode's snapshot
format, a key over papercode's version, the load limits and every record file's path, size and
modification time, and the length and CRC-32 of both files. Any change to the records means a
rebuild; a truncated, corrupt or foreign snapshot is detected and rebuilt, never served.
Files are written to temporary names and renamed into place.

The index is a pickle: the cache directory is created private (0700), and must stay writable
only by the user running papercode, as with any cache of executable state.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import os
import pickle
import struct
import tempfile
import zlib
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .loading import Limits, LoadReport, find_record_files

if TYPE_CHECKING:
    from .corpus import Corpus

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
_MAGIC = b"PAPERCODE-SNAPSHOT\n"
# magic, format, key, index length, index crc32, fts length, fts crc32
_HEADER = struct.Struct(f">{len(_MAGIC)}sI32sQIQI")
_CHUNK = 1 << 22


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "papercode"


def records_key(roots: list[Path], limits: Limits) -> bytes:
    """Identifies the exact record files a corpus was built from (paths, sizes, mtimes)."""
    digest = hashlib.sha256(f"{__version__}\0{FORMAT_VERSION}\0{limits!r}\0".encode())
    scratch = LoadReport()
    for root in roots:
        files = find_record_files(root, scratch)
        digest.update(f"root\0{root.resolve()}\0{len(files)}\0".encode())
        # One update per column, not per file: this runs on every warm start.
        digest.update("\0".join(found.path for found in files).encode(errors="surrogateescape"))
        digest.update(array("q", (value for found in files for value in (found.size, found.mtime_ns))).tobytes())
    return digest.digest()


def snapshot_path(cache_dir: Path, roots: list[Path]) -> Path:
    """One snapshot per set of record roots; a rebuild replaces it."""
    name = hashlib.sha256("\0".join(str(root.resolve()) for root in roots).encode()).hexdigest()[:16]
    return cache_dir / f"index-{name}.snapshot"


def _fts_path(path: Path) -> Path:
    return path.with_suffix(".fts")


def load(path: Path, key: bytes) -> Corpus | None:
    """The corpus in `path` if it is intact and was built from exactly these records, else None."""
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
    from .corpus import Corpus
    from .paging import Pager
    from .search import SearchEngine

    # Unpickling builds many objects; the cyclic GC has nothing to find in them.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        index = pickle.loads(memoryview(data)[_HEADER.size :])
        search = SearchEngine.open_image(_fts_path(path))
    except Exception as exc:  # a snapshot from an incompatible build: rebuild, never serve
        log.warning("snapshot %s could not be restored (%s); rebuilding", path, exc)
        return None
    finally:
        if gc_was_enabled:
            gc.enable()
    return Corpus(index=index, search=search, pager=Pager(index.fingerprint))


def _check(data: bytes, key: bytes, fts: Path) -> str | None:
    if len(data) < _HEADER.size:
        return "is truncated"
    magic, version, stored_key, length, crc, fts_length, fts_crc = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return "is not a papercode snapshot"
    if version != FORMAT_VERSION:
        return f"has format {version}, not {FORMAT_VERSION}"
    if stored_key != key:
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


def save(path: Path, key: bytes, corpus: Corpus) -> None:
    """Write the snapshot; a failure is logged, never raised (the cache is optional)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with _temporary(path.parent, ".fts-") as fts_temporary:
            corpus.search.save_image(fts_temporary)
            fts_length, fts_crc = fts_temporary.stat().st_size, _file_crc(fts_temporary)
            payload = pickle.dumps(corpus.index, protocol=5)
            header = _HEADER.pack(_MAGIC, FORMAT_VERSION, key, len(payload), zlib.crc32(payload), fts_length, fts_crc)
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
