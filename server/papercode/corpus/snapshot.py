"""Warm start: the built corpus persisted in a cache directory, trusted only when provably current.

A snapshot is a file and a directory: `index-<roots>.snapshot` (a header, a manifest, then the
pickled index) and `index-<roots>.search-<suffix>/` (the search engine's tantivy index, opened
read-only in place, so its pages load on demand instead of being copied at start). The header
holds papercode's snapshot format, a key over papercode's version, the search engine's version,
the load limits and every record file's path, size and modification time, when it was written,
and the length and CRC-32 of the index and of the manifest; the manifest names the search
directory and the length and CRC-32 of each of its files. A truncated, corrupt or foreign
snapshot is detected and never served; one built from other records is returned with its key, so
the caller decides (`corpus.open_stages` serves it as stale while it rebuilds). The search
directory is written under a new name first, then the snapshot file is renamed into place (the
switch is that one rename), then older search directories are removed. This module returns the
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
import shutil
import struct
import threading
import time
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import msgspec

from papercode import __version__
from papercode.core import scratch
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.index.mapped_archive import current_build_id
from papercode.index.paper_index import PaperIndex
from papercode.index.search import SearchEngine, SearchFile
from papercode.index.search_schema import ENGINE_VERSION
from papercode.ingest.files import find_record_files

log = logging.getLogger(__name__)

FORMAT_VERSION = 7  # 7: the abstracts in a file of their own beside the search index (6: lookups as `packed.SortedKeys`)
_MAGIC = b"PAPERCODE-SNAPSHOT\n"
# magic, format, key, written at (Unix seconds), index length, index crc32, manifest length, manifest crc32
_HEADER = struct.Struct(f">{len(_MAGIC)}sI32sdQIQI")
TEMPORARY_PREFIX = ".snapshot-"  # a snapshot file being written (`core.scratch` names and holds it)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a snapshot restores: the index, its search engine, the records key it was built from, and when."""

    index: PaperIndex
    search: SearchEngine
    key: bytes
    built_at: str  # ISO 8601, UTC


_CHUNK = 1 << 22


def records_key(roots: list[Path], limits: Limits) -> bytes:
    """Identifies the exact record files a corpus was built from (paths, sizes, mtimes), and which roots were missing."""
    digest = hashlib.sha256(f"{__version__}\0{FORMAT_VERSION}\0{ENGINE_VERSION}\0{limits!r}\0".encode())
    report = LoadReport()
    for root in roots:
        if not root.exists():  # not the key of an empty directory: --watch must see the directory come back, even empty
            digest.update(f"missing\0{root.resolve()}\0".encode())
        files = find_record_files(root, report)
        digest.update(f"root\0{root.resolve()}\0{len(files)}\0".encode())
        # One update per column, not per file: this runs on every warm start.
        columns = list(zip(*files, strict=True)) or [(), (), ()]  # path, size, mtime_ns, ... as columns
        digest.update("\0".join(columns[0]).encode(errors="surrogateescape"))
        digest.update(array("q", columns[1]).tobytes() + array("q", columns[2]).tobytes())
    return digest.digest()


def served_key(roots: list[Path], limits: Limits, archive_dir: Path | None) -> bytes:
    """What `--watch` compares: the records' key and, with an archive, which of its builds is current (a new build is
    reopened as changed records are rebuilt)."""
    key = records_key(roots, limits)
    return key if archive_dir is None else with_archive(key, current_build_id(archive_dir))


def with_archive(records: bytes, build_id: str | None) -> bytes:
    """A records key (`records_key`) with the archive build served beneath them (None: none could be)."""
    return records + b"\0archive\0" + (build_id or "").encode()


def records_part(key: bytes) -> bytes:
    """The records key within a `served_key`."""
    return key[: hashlib.sha256().digest_size]


def snapshot_path(cache_dir: Path, roots: list[Path]) -> Path:
    """One snapshot per set of record roots; a rebuild replaces it."""
    name = hashlib.sha256("\0".join(str(root.resolve()) for root in roots).encode()).hexdigest()[:16]
    return cache_dir / f"index-{name}.snapshot"


def _search_prefix(path: Path) -> str:
    """Search directories of the snapshot in `path` are named this, then a unique suffix."""
    return f"{path.stem}.search-"


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
    checked = _check(data, key, path)
    if isinstance(checked, str):
        log.warning("snapshot %s %s; rebuilding", path, checked)
        return None
    start = checked.start
    # Checked on two other threads (zlib releases the GIL) while the index is restored here: the pickled index's
    # CRC-32 and the search index's files (at 600k papers each takes about half a second). Nothing is served, or
    # kept, before both say it is intact; a failed check is the reason told, whatever the restore did meanwhile.
    payload_check = _Check(_payload_problem, memoryview(data)[start:], _HEADER.unpack_from(data)[5])
    search_check = _Check(_check_search_files, checked.directory, checked.files)
    try:
        index = pickle.loads(memoryview(data)[start:])
        if not isinstance(index, PaperIndex):
            raise TypeError(f"holds a {type(index).__name__}, not an index")
    except Exception as exc:  # a snapshot from an incompatible build: rebuild, never serve
        problem = _first(payload_check.result(), search_check.result())
        log.warning("snapshot %s %s; rebuilding", path, problem or f"could not be restored ({exc})")
        return None
    problem = _first(payload_check.result(), search_check.result())
    if problem is not None:
        log.warning("snapshot %s %s; rebuilding", path, problem)
        return None
    try:
        search = SearchEngine(checked.directory)
    except Exception as exc:  # a snapshot from an incompatible build: rebuild, never serve
        log.warning("snapshot %s could not be restored (%s); rebuilding", path, exc)
        return None
    _, _, stored_key, written, *_ = _HEADER.unpack_from(data)
    return Snapshot(index, search, bytes(stored_key), datetime.fromtimestamp(written, UTC).isoformat(timespec="seconds"))


class _Check:
    """A check (a function returning why something is not intact, or None) on a thread of its own; `result` waits."""

    def __init__(self, check: Callable[..., str | None], *args: object) -> None:
        self._problem: str | None = None
        self._thread = threading.Thread(target=self._run, args=(check, args), name="snapshot check", daemon=True)
        self._thread.start()

    def _run(self, check: Callable[..., str | None], args: tuple[object, ...]) -> None:
        self._problem = check(*args)

    def result(self) -> str | None:
        self._thread.join()
        return self._problem


def _first(*problems: str | None) -> str | None:
    return next(filter(None, problems), None)


def _payload_problem(payload: memoryview, crc: int) -> str | None:
    return None if zlib.crc32(payload) == crc else "is corrupt or truncated"


class SnapshotManifest(msgspec.Struct, frozen=True):
    """What a snapshot file says of its search index: the directory beside it, and that directory's files."""

    directory: str
    files: list[SearchFile]


_MANIFEST_DECODER = msgspec.json.Decoder(SnapshotManifest)


class _Intact(msgspec.Struct, frozen=True):
    """A snapshot whose header and manifest hold: its search directory, where its pickled index starts, and the
    search index's files (still to check: `_check_search_files`)."""

    directory: Path
    start: int
    files: list[SearchFile]


def _check_search_files(directory: Path, files: list[SearchFile]) -> str | None:
    """Why the search index's files are not those the manifest lists (size and CRC-32 of each), or None."""
    where = directory.name
    for file in files:
        try:
            if (directory / file.name).stat().st_size != file.size or _file_crc(directory / file.name) != file.crc:
                return f"has a corrupt or truncated search index ({where}/{file.name})"
        except OSError as exc:
            return f"has no readable search index ({where}/{file.name}: {exc.strerror or exc})"
    return None


def _check(data: bytes, key: bytes | None, path: Path) -> str | _Intact:
    """Why the snapshot in `data` must not be served (`key` None: any records); else what holds of it. The caller
    checks the CRC-32 of the pickled index and the search index's files."""
    if len(data) < _HEADER.size:
        return "is truncated"
    magic, version, stored_key, _, length, _, manifest_length, manifest_crc = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return "is not a papercode snapshot"
    if version != FORMAT_VERSION:
        return f"has format {version}, not {FORMAT_VERSION}"
    if key is not None and stored_key != key:
        return "was built from other records (they changed)"
    manifest = memoryview(data)[_HEADER.size : _HEADER.size + manifest_length]
    payload = memoryview(data)[_HEADER.size + manifest_length :]
    if len(manifest) != manifest_length or zlib.crc32(manifest) != manifest_crc or len(payload) != length:
        return "is corrupt or truncated"
    try:
        listed = _MANIFEST_DECODER.decode(manifest)
    except msgspec.DecodeError:
        return "has a manifest that is not one"
    where = listed.directory
    if not where.startswith(_search_prefix(path)) or not all(map(_plain_name, [where, *(file.name for file in listed.files)])):
        return "names files that are not its own"
    return _Intact(path.parent / where, _HEADER.size + manifest_length, listed.files)


def _plain_name(name: str) -> bool:
    """A file name in the cache directory itself: no path in it, no way out of it."""
    return name not in ("", ".", "..") and Path(name).name == name and "/" not in name and "\\" not in name


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
    """Write the snapshot; a failure is logged, never raised (the cache is optional).

    The search index is copied into a scratch directory (`core.scratch`: a killed save's is removed at the next
    start) and renamed to its own name just before the snapshot file that names it is switched in.
    """
    directory: Path | None = None
    writing: scratch.Scratch | None = None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        writing = scratch.directory(TEMPORARY_PREFIX, path.parent)
        directory = path.parent / f"{_search_prefix(path)}{writing.path.name.removeprefix(TEMPORARY_PREFIX)}"
        files = list(search.save_image(writing.path))
        manifest = msgspec.json.encode(SnapshotManifest(directory.name, files))
        with _temporary(path.parent, TEMPORARY_PREFIX) as index_temporary:
            with open(index_temporary, "wb") as out:
                # The index is pickled straight into the file (never whole in memory: at 600k papers it is about as
                # large as the index), its length and CRC counted on the way; the header is written last, in place.
                out.seek(_HEADER.size)
                out.write(manifest)
                counted = _Counted(out)
                pickle.dump(index, counted, protocol=5)
                out.seek(0)
                out.write(
                    _HEADER.pack(_MAGIC, FORMAT_VERSION, key, time.time(), counted.length, counted.crc, len(manifest), zlib.crc32(manifest))
                )
            os.replace(writing.path, directory)
            writing.release()
            os.replace(index_temporary, path)  # the switch: the new file names the new directory
        _remove_older_search_indexes(path, keep=directory)
    except (OSError, pickle.PicklingError) as exc:
        log.warning("could not write snapshot %s: %s", path, exc)
        if writing is not None:
            writing.remove()  # nothing once it was renamed and let go
        if directory is not None and not _names(path, directory):
            shutil.rmtree(directory, ignore_errors=True)


class _Counted:
    """A file's `write`, counting the bytes written and their CRC-32 (what pickle writes through it)."""

    def __init__(self, out: BinaryIO) -> None:
        self._write = out.write
        self.length = self.crc = 0

    def write(self, data: bytes | memoryview) -> int:
        self.crc = zlib.crc32(data, self.crc)
        self.length += len(data)
        return self._write(data)


def _names(path: Path, directory: Path) -> bool:
    """Whether the snapshot file in `path` names `directory` (it was switched to)."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(_HEADER.size)
            *_, manifest_length, _ = _HEADER.unpack(head)
            return _MANIFEST_DECODER.decode(stream.read(manifest_length)).directory == directory.name
    except (OSError, msgspec.DecodeError, struct.error):
        return False


def _remove_older_search_indexes(path: Path, keep: Path) -> None:
    """Older snapshots' search directories (an engine still serving one keeps its files open), and
    the SQLite database of a format-3 snapshot."""
    for other in path.parent.glob(_search_prefix(path) + "*"):
        if other != keep:
            shutil.rmtree(other, ignore_errors=True)
    with contextlib.suppress(OSError):
        path.with_suffix(".fts").unlink()


@contextlib.contextmanager
def _temporary(directory: Path, prefix: str) -> Iterator[Path]:
    """A new file in `directory`, removed afterwards unless it was renamed away; named and held as
    `core.scratch` says, so one that a killed process left is removed at the next start."""
    entry = scratch.file(prefix, directory)
    try:
        yield entry.path
    finally:
        entry.remove()
