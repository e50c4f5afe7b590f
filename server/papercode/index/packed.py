"""Sequences stored as one buffer plus offsets: compact in memory, fast in a snapshot.

Restoring a list of a million strings from a pickle builds a million objects; restoring one of
these is two memory copies, and an item is decoded only when a query reads it. Most columns are
kept as plain lists while the index is built and packed only into a snapshot; the two largest
(every sample's entry and path: nearly all distinct) are built packed (`PackedStrings.extend`), so
that they never exist as an object per string.
"""

from __future__ import annotations

import mmap
import operator
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate, islice, repeat
from typing import Self, TypeAlias, overload

import numpy as np

# What the three parts can be: built in memory (bytes, array, bytearray) or mapped from a file (`index.mapped`).
Buffer: TypeAlias = "bytes | bytearray | mmap.mmap"
Ints: TypeAlias = "array[int] | memoryview"
Flags: TypeAlias = "bytearray | memoryview"


class _Packed:
    __slots__ = ("_data", "_ends", "_missing")

    def __init__(self, items: Iterable[bytes | None]) -> None:
        # C-level passes over the items (a whole column at once), not a Python statement per item.
        listed = items if isinstance(items, list) else list(items)
        present = [b"" if item is None else item for item in listed]
        self._set(b"".join(present), array("q", accumulate(map(len, present))), bytearray(map(operator.is_, listed, repeat(None))))

    def _set(self, data: Buffer, ends: Ints, missing: Flags) -> None:
        self._data = data
        self._ends = ends
        self._missing = missing

    @classmethod
    def mapped(cls, data: mmap.mmap | bytes, ends: memoryview, missing: memoryview) -> Self:
        """Over a column's three parts as `index.mapped` maps them (read-only; slices of `data` are bytes)."""
        packed = cls.__new__(cls)
        packed._set(data, ends, missing)
        return packed

    def __len__(self) -> int:
        return len(self._ends)

    def _raw(self, i: int) -> bytes | bytearray | None:
        if i < 0:
            i += len(self._ends)
        if self._missing[i]:  # also raises IndexError past the end
            return None
        start = self._ends[i - 1] if i else 0
        return self._data[start : self._ends[i]]

    def __getstate__(self) -> tuple[Buffer, Ints, Flags]:
        return self._data, self._ends, self._missing

    def __setstate__(self, state: tuple[Buffer, Ints, Flags]) -> None:
        self._data, self._ends, self._missing = state


class PackedStrings(_Packed, Sequence[str | None]):
    """`list[str | None]`, packed as UTF-8."""

    __slots__ = ()

    def __init__(self, values: Iterable[str | None]) -> None:
        listed = values if isinstance(values, list) else list(values)
        texts = ["" if value is None else value for value in listed]
        joined = "".join(texts)
        data, characters = joined.encode("utf-8", "surrogatepass"), len(joined)
        del joined
        if len(data) == characters:  # all ASCII: each string's bytes are its characters
            lengths: Iterable[int] = map(len, texts)
        else:
            lengths = (len(text.encode("utf-8", "surrogatepass")) for text in texts)
        self._set(data, array("q", accumulate(lengths)), bytearray(map(operator.is_, listed, repeat(None))))

    @overload
    def __getitem__(self, i: int) -> str | None: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str | None]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str | None] | None:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        # `_raw`, inlined: answers read a few of these per row, and a call would cost as much as the read.
        ends = self._ends
        if i < 0:
            i += len(ends)
        if self._missing[i]:  # also raises IndexError past the end
            return None
        return self._data[ends[i - 1] if i else 0 : ends[i]].decode("utf-8", "surrogatepass")

    def take(self, ids: Iterable[int]) -> list[str | None]:
        """The items at `ids` (none negative), in one comprehension over the buffer rather than a call per item."""
        data, ends, missing = self._data, self._ends, self._missing
        return [None if missing[i] else data[ends[i - 1] if i else 0 : ends[i]].decode("utf-8", "surrogatepass") for i in ids]

    def extend(self, values: list[str]) -> None:
        """Append `values` (no None), in a few C-level passes rather than one per string."""
        ends, missing = self._growing()
        joined = "".join(values)
        data = joined.encode("utf-8", "surrogatepass")
        if len(data) == len(joined):  # all ASCII: each string's bytes are its characters
            lengths: Iterable[int] = map(len, values)
        else:
            lengths = (len(value.encode("utf-8", "surrogatepass")) for value in values)
        ends.extend(islice(accumulate(lengths, initial=len(self._data)), 1, None))
        self._grow_data(data)
        missing += bytes(len(values))

    def extend_packed(self, other: PackedStrings, positions: Iterable[int] | None = None) -> None:
        """Append `other`'s items at `positions` (all of them, in order, when None)."""
        if positions is not None:
            for position in positions:
                value = other[position]
                if value is None:
                    raise ValueError("extend_packed copies strings, not missing values")
                self.extend([value])
            return
        ends, missing = self._growing()
        offset = len(self._data)
        assert not isinstance(other._data, mmap.mmap)  # built in memory, as the builder's parts are
        self._grow_data(other._data)
        ends.frombytes((np.frombuffer(other._ends, dtype=np.int64) + offset).tobytes())
        missing += other._missing

    def _growing(self) -> tuple[array[int], bytearray]:
        """The parts as they grow: in memory (a mapped column is read-only)."""
        if not isinstance(self._ends, array) or not isinstance(self._missing, bytearray):
            raise TypeError("a mapped column is read-only")
        if not isinstance(self._data, bytearray):
            self._data = bytearray(self._data)
        return self._ends, self._missing

    def _grow_data(self, data: bytes | bytearray) -> None:
        assert isinstance(self._data, bytearray)  # `_growing` made it one
        self._data += data


class PackedBytes(_Packed, Sequence[bytes]):
    """`list[bytes]`, packed."""

    __slots__ = ()

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        raw = self._raw(i)
        return raw if isinstance(raw, bytes) else bytes(raw or b"")


class SortedKeys:
    """A read-only `str -> int` lookup held as its keys, sorted and packed, and their values in an array.

    What a snapshot restores in place of a dict of every paper's arXiv id or slug: two buffers each, where a dict of
    600k keys takes half a second to unpickle (a warm start waits for it). `get` bisects the packed keys' bytes (about 20
    probes: microseconds).
    """

    __slots__ = ("_keys", "_values")

    def __init__(self, mapping: dict[str, int]) -> None:
        keys = sorted(mapping)
        self._keys = PackedStrings(keys)
        self._values: Ints = array("q", map(mapping.__getitem__, keys))

    @classmethod
    def mapped(cls, keys: PackedStrings, values: memoryview) -> SortedKeys:
        """Over keys sorted by their UTF-8 bytes and their values, as `index.mapped` maps them."""
        lookup = cls.__new__(cls)
        lookup._keys, lookup._values = keys, values
        return lookup

    @property
    def keys(self) -> PackedStrings:
        """Every key, in order."""
        return self._keys

    def get(self, key: str, /) -> int | None:
        wanted = key.encode("utf-8", "surrogatepass")
        low = lower_bound(self._keys, wanted)
        data, ends = self._keys._data, self._keys._ends
        if low < len(ends) and data[ends[low - 1] if low else 0 : ends[low]] == wanted:
            return self._values[low]
        return None

    def __len__(self) -> int:
        return len(self._values)

    def __getstate__(self) -> tuple[PackedStrings, Ints]:
        return self._keys, self._values

    def __setstate__(self, state: tuple[PackedStrings, Ints]) -> None:
        self._keys, self._values = state


def lower_bound(keys: PackedStrings, wanted: bytes) -> int:
    """Where `wanted` goes among `keys` (sorted by their UTF-8 bytes, which sort as their code points do): the first
    position whose key is not below it. Bisection over the bytes: no string decoded, no call a probe (a lookup runs on
    the event loop for every keyed tool)."""
    data, ends = keys._data, keys._ends
    low, high = 0, len(ends)
    while low < high:
        middle = (low + high) // 2
        if data[ends[middle - 1] if middle else 0 : ends[middle]] < wanted:
            low = middle + 1
        else:
            high = middle
    return low
