"""A cold build on both cores: for a large corpus, a child process indexes part of the records and
builds the search index while this process indexes the rest; for a small one, everything here.

The child (`python -m papercode.ingest.parallel`, a fresh interpreter started with `subprocess`, never
a bare `fork`: the server builds in a background thread while its event loop runs) is given the
list of record files and a split point. This process indexes the files before it, and writes what
admission made of each record, with the search document of each admitted one, to a file the child
reads later. The child indexes the files from the split on, as its own papers in reading order
(`builder.PartBuilder`), and hands them over as an `IndexPart`, which this process admits as if it
had read them itself: same ordinals, same problems in the same order. The keyed index is ready
once both halves are in. The child then admits every record (this process's, then its own) by the
same rules (`admission.Admission`) and builds the search index, while this process finishes the keyed
index and serves it. Its fingerprint of what it admitted must equal the index's, else its search
index is thrown away and everything is built here; a child that fails costs the same.

A corpus in one file cannot be split: then the child reads and decodes every record itself, beside
this process (no record crosses between them). The child keeps search documents in files, not in
memory, until it writes them into the index, one paper at a time.

What crosses between the two is declared once, as named structs: the child's `BuildJob`, and per record its
`duplicates.RecordFacts` and `index.search_documents.SearchDocument` (msgpack arrays: no field names on the wire); the
child's `builder.IndexPart` comes back pickled (plain lists and arrays).

Both work in temporary directories named `papercode-build-<pid>-…` and `papercode-search-<pid>-…`,
owned through `core.scratch`: removed when the build ends or fails, at exit and on SIGTERM, and at
the next start if this process is killed. The child dies with this process: it watches a pipe that
only this process writes to, and exits when the pipe reports end of file (this process is gone).

A test can hold a build just after it starts its child, and the child before it reads anything (`core.holds`,
`build-started`), to kill either at a known point.
"""

from __future__ import annotations

import logging
import mmap
import os
import pickle
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, BinaryIO, Protocol

import msgspec

from papercode.core import scratch
from papercode.core.child import ChildProcess, watch_parent
from papercode.core.holds import hold
from papercode.core.ids import paper_key
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport, ProgressCallback
from papercode.index.search import SearchEngine
from papercode.index.search_documents import SearchDocument
from papercode.index.search_writer import SearchBuilder, write_index

from .admission import Admission, Admitted, RecordSink
from .builder import IndexPart, PartBuilder
from .decode import LoadedRecord, iter_records
from .documents import search_document
from .duplicates import RecordFacts, facts
from .files import RecordFile

log = logging.getLogger(__name__)

# Raw bytes of record files from which a child process pays for itself (it costs ~0.3 s to start).
CHILD_PROCESS_BYTES = 64 * 1024 * 1024
# The share of the record bytes this process indexes: over half, as the child starts later and
# writes its part out (this process then merges it and computes the corpus-wide orders).
HERE_SHARE = 0.53
# The temporary directories of a build (see `core.scratch`): the child's files, and a search index being built.
BUILD_PREFIX, SEARCH_PREFIX = "papercode-build-", "papercode-search-"


class BuildJob(msgspec.Struct, frozen=True):
    """What the child process is given: the records' roots and limits, every record file, how many of them this process
    indexes (the child indexes the rest), and the build's scratch directory."""

    roots: list[str]
    limits: Limits
    files: list[RecordFile]
    split: int
    scratch: str


class SearchBuildFailed(RuntimeError):
    """The child process failed: build everything here instead."""


class SearchMismatch(SearchBuildFailed):
    """The child's records were not the index's (they changed between the two reads)."""


class SearchBuild(Protocol):
    @property
    def records(self) -> RecordSink:
        """Told of each record the index builder reads, and what admission made of it."""
        ...

    @property
    def here(self) -> list[RecordFile]:
        """The record files this process indexes (the child indexes the rest: see `part`)."""
        ...

    def progress(self, progress: ProgressCallback | None, total: int) -> ProgressCallback | None:
        """`progress` over every file, for this process's reads (the child's so far are added in)."""
        ...

    def part(self) -> IndexPart | None:
        """Every file of `here` is read: wait for the records of the files after them, indexed by the
        child (None: there are none)."""
        ...

    def result(self, fingerprint: bytes) -> SearchEngine:
        """Wait for the search index of the index with this fingerprint, and open it."""
        ...

    def cancel(self) -> None:
        """The index build failed or is not wanted: stop, and leave nothing behind."""
        ...


def start_search_build(roots: list[Path], limits: Limits, files: list[RecordFile], *, child: bool = True) -> SearchBuild:
    """A child process for a corpus of at least `CHILD_PROCESS_BYTES`, else this process."""
    if child and sum(found.size for found in files) >= CHILD_PROCESS_BYTES:
        try:
            return ChildSearchBuild(roots, limits, files)
        except OSError as exc:
            log.warning("cannot start the search builder process (%s); building here", exc)
    return LocalSearchBuild(files)


def split_point(files: list[RecordFile]) -> int:
    """How many files (from the first) this process indexes: `HERE_SHARE` of the bytes, and at
    least one file each side when there are two or more."""
    if len(files) < 2:
        return len(files)
    target, total = HERE_SHARE * sum(found.size for found in files), 0
    for count, found in enumerate(files, 1):
        total += found.size
        if total >= target:
            return min(count, len(files) - 1)
    return len(files) - 1


def _index_directory() -> scratch.Scratch:
    return scratch.directory(SEARCH_PREFIX)


class LocalSearchBuild:
    """Everything in this process: the search index from the records the index builder reads."""

    def __init__(self, files: list[RecordFile]) -> None:
        self._builder = SearchBuilder()
        self._files = files

    def records(self, item: LoadedRecord, admitted: Admitted | None) -> None:
        if admitted is not None:
            self._builder.add(search_document(item, admitted))

    @property
    def here(self) -> list[RecordFile]:
        return self._files

    def progress(self, progress: ProgressCallback | None, total: int) -> ProgressCallback | None:
        return progress

    def part(self) -> None:
        return None

    def result(self, fingerprint: bytes) -> SearchEngine:
        directory = _index_directory()
        try:
            self._builder.write(directory.path)
            return SearchEngine(directory.path, remove=True)
        finally:
            directory.remove()

    def cancel(self) -> None:
        self._builder.close()


class _SharedCounts:
    """Two counters (files done, records read) the child writes and this process reads: a small shared map."""

    _LAYOUT = struct.Struct("<qq")

    def __init__(self, path: Path) -> None:
        with open(path, "r+b") as stream:
            stream.truncate(self._LAYOUT.size)
            self._map = mmap.mmap(stream.fileno(), self._LAYOUT.size)

    def write(self, done: int, total: int, records: int) -> None:
        self._LAYOUT.pack_into(self._map, 0, done, records)

    def read(self) -> tuple[int, int]:
        done, records = self._LAYOUT.unpack_from(self._map)
        return done, records

    def close(self) -> None:
        self._map.close()


class ChildSearchBuild:
    """A child process that indexes the files after the split and builds the search index on the other core."""

    def __init__(self, roots: list[Path], limits: Limits, files: list[RecordFile]) -> None:
        self._split = split_point(files)
        self._files = files
        self._shipped: IO[bytes] | None = None
        self._child: ChildProcess | None = None
        self._entries = [scratch.directory(BUILD_PREFIX)]
        self._scratch = self._entries[0].path
        try:
            self._entries.append(_index_directory())
            self._path = self._entries[1].path
            job = BuildJob([str(root) for root in roots], limits, files, self._split, str(self._scratch))
            (self._scratch / "job").write_bytes(msgspec.msgpack.encode(job))
            (self._scratch / "progress").touch()
            self._counts = _SharedCounts(self._scratch / "progress")
            if self._split < len(files):
                self._shipped = open(self._scratch / "records", "wb", buffering=1 << 20)  # noqa: SIM115 - closed by part()
            self._child = ChildProcess("papercode.ingest.parallel", [str(self._path), str(self._scratch / "job")], self._scratch / "errors")
        except BaseException:
            self._remove()
            raise
        hold("build-started")

    def records(self, item: LoadedRecord, admitted: Admitted | None) -> None:
        """Ship each record as read, with the search document of an admitted one, to the child."""
        if self._shipped is not None:
            ship(self._shipped, item, admitted)

    @property
    def here(self) -> list[RecordFile]:
        return self._files[: self._split]

    def progress(self, progress: ProgressCallback | None, total: int) -> ProgressCallback | None:
        if progress is None:
            return None
        counts, report = self._counts, progress

        def combined(done: int, _: int, records: int) -> None:
            child_done, child_records = counts.read()
            report(done + child_done, total, records + child_records)

        return combined

    def part(self) -> IndexPart | None:
        if self._shipped is None:
            return None
        self._shipped.close()
        process = self._running().process
        stdin, stdout = process.stdin, process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(b"shipped\n")  # every record of this process's files is in the file
            stdin.flush()
        except OSError:
            raise self._failure() from None
        if stdout.readline().strip() != b"part":
            raise self._failure()
        path = self._scratch / "part.pickle"
        try:
            with open(path, "rb") as stream:
                part = pickle.load(stream)
        finally:
            path.unlink(missing_ok=True)
        if not isinstance(part, IndexPart):
            raise SearchBuildFailed(f"the build process handed over a {type(part).__name__}, not an index part")
        return part

    def result(self, fingerprint: bytes) -> SearchEngine:
        process = self._running().process
        out, _ = process.communicate()
        if process.returncode != 0 or not out.startswith(b"ok "):
            raise self._failure()
        if out.split()[1].decode() != fingerprint.hex():
            self._remove()
            raise SearchMismatch("the records changed between the index build and the search build")
        try:
            return SearchEngine(self._path, remove=True)
        finally:
            self._remove()

    def _running(self) -> ChildProcess:
        assert self._child is not None  # set by __init__, or __init__ raised
        return self._child

    def _failure(self) -> SearchBuildFailed:
        how = self._running().failure()
        self._remove()
        return SearchBuildFailed(f"the build process failed ({how})")

    def cancel(self) -> None:
        self._running().kill()
        self._remove()

    def _remove(self) -> None:
        """Once the child has ended (or never started): close everything, remove both directories."""
        for closing in (self._shipped, getattr(self, "_counts", None), self._child):
            if closing is not None:
                closing.close()
        for entry in self._entries:
            entry.remove()


_NOT_YET_ADMITTED = Admitted(0, False, None)
# A shipped record: the lengths of its facts and of its search document, then both (msgpack; no document: length 0).
_FRAME = struct.Struct("<II")
_ENCODE = msgspec.msgpack.Encoder().encode
_DECODE_FACTS = msgspec.msgpack.Decoder(RecordFacts).decode
_DECODE_DOCUMENT = msgspec.msgpack.Decoder(SearchDocument).decode


def ship(stream: IO[bytes], item: LoadedRecord, admitted: Admitted | None) -> None:
    """Write a record as read (its facts) and, when admitted, its search document (else nothing)."""
    head = _ENCODE(facts(item))
    body = b"" if admitted is None else _ENCODE(search_document(item, admitted))
    stream.write(_FRAME.pack(len(head), len(body)) + head + body)


class _Documents:
    """Search documents kept in a file by the child, not in memory: `(where, length)` finds one again.

    Read, not mapped: mapped pages read would count as this process's memory."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._handle: BinaryIO | None = None

    def frames(self) -> Iterator[tuple[RecordFacts, int, int]]:
        """Each record in the file: its facts, and where its document is (length 0: none)."""
        self._handle = open(self._path, "rb")  # noqa: SIM115 - closed by close()
        with open(self._path, "rb", buffering=1 << 20) as stream:
            while frame := stream.read(_FRAME.size):
                head, body = _FRAME.unpack(frame)
                yield _DECODE_FACTS(stream.read(head)), stream.tell(), body
                stream.seek(body, os.SEEK_CUR)

    def document(self, where: int, length: int) -> SearchDocument:
        assert self._handle is not None
        self._handle.seek(where)
        return _DECODE_DOCUMENT(self._handle.read(length))

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()


def main(argv: list[str]) -> int:
    """The child: indexes the files from the split on (writes the part, prints "part"), then builds the
    search index of every record into argv[0] (prints "ok <fingerprint>"). argv[1] is the job (and the last, on POSIX,
    the pipe `core.child.watch_parent` watches).

    A corpus that cannot be split (`split` is every file): it reads every record, and hands over no part."""
    argv = watch_parent(argv)
    hold("build-started")
    directory, job = Path(argv[0]), msgspec.msgpack.decode(Path(argv[1]).read_bytes(), type=BuildJob)
    scratch, split = Path(job.scratch), job.split < len(job.files)
    if not _read_records(job, split=split):
        return 1  # the other process is gone
    here = [_Documents(scratch / "documents")]
    fingerprint = _write_search_index(directory, [_Documents(scratch / "records"), *here] if split else here)
    sys.stdout.write(f"ok {fingerprint}")
    return 0


def _read_records(job: BuildJob, *, split: bool) -> bool:
    """Reads the files from the split on (every file when the corpus is not `split`), each record's document into a
    file; when split, hands their part of the index over and waits for the other process's documents. False: the
    other process is gone."""
    scratch = Path(job.scratch)
    counts = _SharedCounts(scratch / "progress")
    report = LoadReport()
    builder = PartBuilder(report) if split else None
    roots, files = [Path(root) for root in job.roots], job.files[job.split :] if split else job.files
    # The documents of the records read here, kept in a file: memory holds one at a time.
    with open(scratch / "documents", "wb", buffering=1 << 20) as documents:
        for item in iter_records(roots, report, job.limits, counts.write if builder else None, files=files):
            if builder is not None:
                builder.add(item)
            ship(documents, item, _NOT_YET_ADMITTED)
    counts.close()
    if builder is None:
        return True
    with open(scratch / "part.pickle", "wb") as out:
        pickle.dump(builder.part(), out, protocol=pickle.HIGHEST_PROTOCOL)
    del builder
    sys.stdout.write("part\n")
    sys.stdout.flush()
    if hasattr(os, "nice"):
        os.nice(5)  # the keyed index (the other process) comes first; the search takes what is left
    return sys.stdin.readline().strip() == "shipped"


def _write_search_index(directory: Path, sources: list[_Documents]) -> str:
    """Admits every record of `sources` as the other process does, and writes the search index of the papers into
    `directory`; the fingerprint of what was admitted (hex)."""
    admission = Admission(LoadReport())  # the index build reports the problems
    final: dict[int, tuple[str, _Documents, int, int, bool]] = {}  # paper -> its key and last admitted record
    for source in sources:
        for record, where, length in source.frames():
            admitted = admission.admit(record)
            if admitted is not None:
                if not length:  # the other process did not admit it: the two are not reading the same records
                    raise SearchBuildFailed(f"{record.path}: admitted here, not where it was read")
                final[admitted.ordinal] = (paper_key(record.arxiv_id, admitted.slug), source, where, length, admitted.replacing)
    papers = sorted(final)

    def in_order() -> Iterator[SearchDocument]:
        for paper in papers:
            key, source, where, length, replacing = final[paper]
            yield msgspec.structs.replace(source.document(where, length), paper=paper, replacing=replacing, key=key)

    write_index(directory, in_order(), len(papers))
    for source in sources:
        source.close()
    return admission.fingerprint.hex()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
