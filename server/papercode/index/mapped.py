"""Columns written once, then mapped read-only: a directory of plain files, one per column part.

The archive is built into this form once (`papercode archive build`) and opened at every start without reading it:
each file is memory-mapped, so its pages are the page cache's, shared by every server on the machine, and loaded only
where a query reads them. Nothing here is pickled or decoded at open.

A column is one or three files, named for what they hold:
- numbers: `<name>.<typecode>` (an `array` typecode: `i` int32, `q` int64, `B` uint8, `d` float64), read as a
  `memoryview` cast to that type (an item is a Python int or float, no numpy scalar);
- strings or bytes, packed as `index.packed` holds them: `<name>.data` (every value, back to back), `<name>.ends.q`
  (where each ends) and `<name>.missing.B` (1 where a value is None), read as `PackedStrings` / `PackedBytes`.

`ColumnWriter` streams them to disk (a column can grow value by value, as a build reads its rows) and returns each
file's size and sha256, which the archive's manifest keeps: `MappedColumns` checks every size at open (a cut or
missing file is refused at once; `check_sizes` does the same for files others read), and `verify` checks every byte
against the sha256 (the build's and `papercode archive verify`'s job, not a start's; `first_damage` when something
failed to read them and only a check can say whether they are damaged).

A map is released as the objects reading it are: at once when nothing reads it any more, or when the last call
still reading a column of it ends. Nothing closes a map under a reader, and none waits for a garbage collection,
as long as no reference cycle holds a column (`index.overlaid` keeps none).
"""

from __future__ import annotations

import hashlib
import mmap
import operator
import os
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate, islice, repeat
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal

from .packed import PackedBytes, PackedStrings

_DATA, _ENDS, _MISSING = ".data", ".ends.q", ".missing.B"
_BUFFER: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class FileFacts:
    """A written file, as a manifest lists it."""

    bytes: int
    sha256: str


class ColumnProblem(ValueError):
    """A column file is missing, or is not the size or the content its manifest says."""


class _File:
    """One file being written: buffered, its length and sha256 counted as it goes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stream: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed by close()
        self._digest = hashlib.sha256()
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self.length = 0

    def write(self, data: bytes) -> None:
        self._pending.append(data)
        self._pending_bytes += len(data)
        self.length += len(data)
        if self._pending_bytes >= _BUFFER:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            joined = b"".join(self._pending)
            self._digest.update(joined)
            self._stream.write(joined)
            self._pending, self._pending_bytes = [], 0

    def close(self) -> FileFacts:
        self._flush()
        self._stream.flush()
        os.fsync(self._stream.fileno())
        self._stream.close()
        return FileFacts(self.length, self._digest.hexdigest())

    def discard(self) -> None:
        self._stream.close()


class PackedWriter:
    """A column of strings (or bytes) written value by value: `append(value)`, None for a missing one.

    Values wait in a list and go to the file a few thousand at a time, each batch encoded, measured and written in a
    few C-level passes (a build appends several values per paper, for hundreds of thousands of papers)."""

    _BATCH = 4096

    def __init__(self, directory: Path, name: str, *, text: bool) -> None:
        self._data = _File(directory / (name + _DATA))
        self._ends = array("q")
        self._missing = bytearray()
        self._pending: list[Any] = []
        self.append = self._pending.append  # the hot path: a list's own append
        self._text = text
        self.name = name

    def __len__(self) -> int:
        return len(self._ends) + len(self._pending)

    def extend(self, values: Iterable[str | bytes | None]) -> None:
        values = iter(values)
        while batch := list(islice(values, self._BATCH)):  # a batch at a time: no Python step per value
            self._pending += batch
            self.flush()

    def flush(self) -> None:
        """Write the values that wait (a caller appending value by value calls it every few thousand)."""
        pending, self._pending = self._pending, []
        self.append = self._pending.append
        if not pending:
            return
        self._missing += bytes(map(operator.is_, pending, repeat(None)))
        present = [value for value in pending if value is not None]
        if self._text:
            joined = "".join(present)
            data = joined.encode("utf-8", "surrogatepass")
            lengths = map(len, present) if len(data) == len(joined) else (len(value.encode("utf-8", "surrogatepass")) for value in present)
        else:
            data, lengths = b"".join(present), map(len, present)
        if len(present) < len(pending):  # a missing value takes no bytes
            sizes = iter(lengths)
            lengths = (0 if value is None else next(sizes) for value in pending)
        self._ends.extend(islice(accumulate(lengths, initial=self._data.length), 1, None))
        self._data.write(data)

    def close(self, directory: Path) -> dict[str, FileFacts]:
        self.flush()
        facts = {self.name + _DATA: self._data.close()}
        facts[self.name + _ENDS] = _write_file(directory / (self.name + _ENDS), self._ends.tobytes())
        facts[self.name + _MISSING] = _write_file(directory / (self.name + _MISSING), bytes(self._missing))
        return facts

    def discard(self) -> None:
        self._pending = []
        self._data.discard()


class ColumnWriter:
    """The columns of one directory: packed ones written as they grow, integer ones given whole; `close()` syncs
    them and returns each file's facts (name -> size and sha256)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._packed: list[PackedWriter] = []
        self._facts: dict[str, FileFacts] = {}

    def strings(self, name: str) -> PackedWriter:
        return self._add(PackedWriter(self.directory, name, text=True))

    def blobs(self, name: str) -> PackedWriter:
        return self._add(PackedWriter(self.directory, name, text=False))

    def _add(self, writer: PackedWriter) -> PackedWriter:
        self._packed.append(writer)
        return writer

    def packed(self, name: str, values: Iterable[str | bytes | None]) -> None:
        """A whole packed column at once (`values` in order)."""
        writer = PackedWriter(self.directory, name, text=True)
        writer.extend(values)
        self._facts.update(writer.close(self.directory))

    def ints(self, name: str, values: array[int] | array[float]) -> None:
        """A whole column of numbers (its typecode names the file)."""
        file = f"{name}.{values.typecode}"
        self._facts[file] = _write_file(self.directory / file, values.tobytes())

    def close(self) -> dict[str, FileFacts]:
        for writer in self._packed:
            self._facts.update(writer.close(self.directory))
        self._packed = []
        return dict(self._facts)

    def discard(self) -> None:
        for writer in self._packed:
            writer.discard()
        self._packed = []


def _write_file(path: Path, data: bytes) -> FileFacts:
    with open(path, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    return FileFacts(len(data), hashlib.sha256(data).hexdigest())


class MappedColumns:
    """The columns of a directory, mapped read-only. Every file the manifest lists must be there with its size:
    `ColumnProblem` otherwise; an `OSError` that says nothing of the files (too many open files) is raised as it is."""

    def __init__(self, directory: Path, files: Mapping[str, FileFacts]) -> None:
        self.directory = directory
        self._files = dict(files)
        self._maps: dict[str, mmap.mmap | bytes] = {}
        for name, facts in self._files.items():
            self._maps[name] = _map(directory / name, facts.bytes)

    def close(self) -> None:
        """Let the maps go. Each is unmapped, and its descriptor closed, once no column reads it: at once for a map
        nothing reads, when the call reading it ends for one still read. Closing a map here instead would fail for
        one a column views (`BufferError`) and pull a `.data` file from under a call still slicing it."""
        self._maps = {}

    def _get(self, file: str) -> mmap.mmap | bytes:
        try:
            return self._maps[file]
        except KeyError:
            raise ColumnProblem(f"{file} is not among the archive's files") from None

    def ints(self, name: str, typecode: Literal["i", "q", "B"]) -> memoryview:
        return memoryview(self._get(f"{name}.{typecode}")).cast(typecode)

    def floats(self, name: str) -> memoryview[float]:
        return memoryview(self._get(f"{name}.d")).cast("d")

    def strings(self, name: str) -> PackedStrings:
        return PackedStrings.mapped(*self._packed_parts(name))

    def blobs(self, name: str) -> PackedBytes:
        return PackedBytes.mapped(*self._packed_parts(name))

    def _packed_parts(self, name: str) -> tuple[mmap.mmap | bytes, memoryview, memoryview]:
        data, ends, missing = (self._get(name + suffix) for suffix in (_DATA, _ENDS, _MISSING))
        ends_view, missing_view = memoryview(ends).cast("q"), memoryview(missing)
        if len(ends_view) != len(missing_view) or (len(ends_view) and ends_view[-1] != len(data)):
            raise ColumnProblem(f"the {name} column's parts disagree (cut short or damaged)")
        return data, ends_view, missing_view


def _map(path: Path, size: int) -> mmap.mmap | bytes:
    """`path` mapped read-only (an empty file as b"", which mmap refuses); `ColumnProblem` unless it has `size` bytes."""
    try:
        with open(path, "rb") as stream:
            _check_size(path.name, os.fstat(stream.fileno()).st_size, size)
            return mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        raise ColumnProblem(f"{path.name} is missing") from None


def _check_size(name: str, actual: int, size: int) -> None:
    if actual != size:
        raise ColumnProblem(f"{name} has {actual:,} bytes, not the {size:,} its manifest says (cut short or replaced)")


def check_sizes(directory: Path, files: Mapping[str, FileFacts]) -> None:
    """Every file of `files` in `directory` with its size, as `MappedColumns` checks those it maps, for files read
    otherwise (the search index): `ColumnProblem` when one is missing or of another size."""
    for name, facts in files.items():
        try:
            actual = os.stat(directory / name).st_size
        except FileNotFoundError:
            raise ColumnProblem(f"{name} is missing") from None
        _check_size(name, actual, facts.bytes)


def file_facts(path: Path) -> FileFacts:
    """A file's size and sha256, read whole (`OSError` when it cannot be read)."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as stream:
        while chunk := stream.read(_BUFFER * 4):
            digest.update(chunk)
            size += len(chunk)
    return FileFacts(size, digest.hexdigest())


def verify(directory: Path, files: Mapping[str, FileFacts]) -> list[str]:
    """Every file's bytes against its size and sha256: the problems found (none: intact)."""
    problems = []
    for name, facts in files.items():
        try:
            problem = _damage(directory, name, facts)
        except OSError as exc:
            problem = f"{name}: cannot be read: {exc.strerror or exc}"
        if problem is not None:
            problems.append(problem)
    return problems


def first_damage(directory: Path, files: Mapping[str, FileFacts]) -> str | None:
    """The first file of `files` that is missing or whose bytes are not those its manifest lists (None: all intact).
    An `OSError` that says nothing of the files (too many open files, a permission) is raised: no verdict."""
    return next((problem for name, facts in files.items() if (problem := _damage(directory, name, facts))), None)


def _damage(directory: Path, name: str, facts: FileFacts) -> str | None:
    """What is wrong with the bytes of file `name` (None: they are the build's)."""
    try:
        found = file_facts(directory / name)
    except FileNotFoundError:
        return f"{name}: missing"
    if found == facts:
        return None
    return f"{name}: its bytes are not those the build wrote ({'size' if found.bytes != facts.bytes else 'sha256'} differs)"
