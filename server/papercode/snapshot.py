"""Warm start: the built corpus persisted in a cache directory, trusted only when provably current.

A snapshot is keyed by papercode's version, the load limits and every record file's path, size
and modification time; any change means a rebuild. The file carries a magic header, the key, the
payload length and a CRC-32, so a truncated, corrupt or foreign snapshot is detected and rebuilt,
never served. Snapshots are written atomically (temporary file, then rename).

The payload is a pickle: the cache directory must be writable only by the user running papercode
(it is created with mode 0700), as with any cache of executable state.
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
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .loading import Limits, LoadReport, find_record_files

if TYPE_CHECKING:
    from .corpus import Corpus

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
_MAGIC = b"PAPERCODE-SNAPSHOT\n"
_HEADER = struct.Struct(f">{len(_MAGIC)}sI32sQI")  # magic, format, key, payload length, crc32


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "papercode"


def records_key(roots: list[Path], limits: Limits) -> bytes:
    """Identifies the exact record files a corpus was built from (paths, sizes, mtimes)."""
    digest = hashlib.sha256(f"{__version__}\0{FORMAT_VERSION}\0{limits!r}\0".encode())
    scratch = LoadReport()
    for root in roots:
        digest.update(f"root\0{root.resolve()}\0".encode())
        for path in find_record_files(root, scratch):
            try:
                stat = path.stat()
            except OSError:
                digest.update(f"gone\0{path}\0".encode())
                continue
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.digest()


def snapshot_path(cache_dir: Path, roots: list[Path]) -> Path:
    """One snapshot per set of record roots; a rebuild replaces it."""
    name = hashlib.sha256("\0".join(str(root.resolve()) for root in roots).encode()).hexdigest()[:16]
    return cache_dir / f"index-{name}.snapshot"


def load(path: Path, key: bytes) -> Corpus | None:
    """The corpus in `path` if it is intact and was built from exactly these records, else None."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("snapshot %s unreadable (%s); rebuilding", path, exc)
        return None
    reason = _check(data, key)
    if reason is not None:
        log.warning("snapshot %s %s; rebuilding", path, reason)
        return None
    # Unpickling builds millions of objects; the cyclic GC has nothing to find in them.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        corpus = pickle.loads(memoryview(data)[_HEADER.size :])
    except Exception as exc:  # a snapshot from an incompatible build: rebuild, never serve
        log.warning("snapshot %s could not be restored (%s); rebuilding", path, exc)
        return None
    finally:
        if gc_was_enabled:
            gc.enable()
    from .corpus import Corpus

    return corpus if isinstance(corpus, Corpus) else None


def _check(data: bytes, key: bytes) -> str | None:
    if len(data) < _HEADER.size:
        return "is truncated"
    magic, version, stored_key, length, crc = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return "is not a papercode snapshot"
    if version != FORMAT_VERSION:
        return f"has format {version}, not {FORMAT_VERSION}"
    if stored_key != key:
        return "was built from other records (they changed)"
    payload = memoryview(data)[_HEADER.size :]
    if len(payload) != length:
        return "is truncated"
    if zlib.crc32(payload) != crc:
        return "is corrupt (checksum mismatch)"
    return None


def save(path: Path, key: bytes, corpus: Corpus) -> None:
    """Write the snapshot atomically; a failure is logged, never raised (the cache is optional)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        payload = pickle.dumps(corpus, protocol=5)
        header = _HEADER.pack(_MAGIC, FORMAT_VERSION, key, len(payload), zlib.crc32(payload))
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".snapshot-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(header)
                out.write(payload)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except (OSError, pickle.PicklingError) as exc:
        log.warning("could not write snapshot %s: %s", path, exc)
