"""Sequences stored as one buffer plus offsets: compact in memory, fast in a snapshot.

Restoring a list of a million strings from a pickle builds a million objects; restoring one of
these is two memory copies, and an item is decoded only when a query reads it. Most columns are
kept as plain lists while the index is built and packed only into a snapshot; the two largest
(every sample's entry and path: nearly all distinct) are built packed (`PackedStrings.extend`),
which holds them in a third of the memory.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate, islice, repeat
from typing import overload

import numpy as np


class _Packed:
    __slots__ = ("_data", "_ends", "_missing")

    def __init__(self, items: Iterable[bytes | None]) -> None:
        # C-level passes over the items (a whole column at once), not a Python statement per item.
        listed = items if isinstance(items, list) else list(items)
        present = [b"" if item is None else item for item in listed]
        self._set(b"".join(present), array("q", accumulate(map(len, present))), bytearray(map(operator.is_, listed, repeat(None))))

    def _set(self, data: bytes | bytearray, ends: array[int], missing: bytearray) -> None:
        self._data = data
        self._ends = ends
        self._missing = missing

    def __len__(self) -> int:
        return len(self._ends)

    def _raw(self, i: int) -> bytes | bytearray | None:
        if i < 0:
            i += len(self._ends)
        if self._missing[i]:  # also raises IndexError past the end
            return None
        start = self._ends[i - 1] if i else 0
        return self._data[start : self._ends[i]]

    def __getstate__(self) -> tuple[bytes | bytearray, array[int], bytearray]:
        return self._data, self._ends, self._missing

    def __setstate__(self, state: tuple[bytes | bytearray, array[int], bytearray]) -> None:
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
        # `_raw`, inlined: answers read a few of these per row, and a call is a third of the cost of one.
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
        if not isinstance(self._data, bytearray):
            self._data = bytearray(self._data)
        joined = "".join(values)
        data = joined.encode("utf-8", "surrogatepass")
        if len(data) == len(joined):  # all ASCII: each string's bytes are its characters
            lengths: Iterable[int] = map(len, values)
        else:
            lengths = (len(value.encode("utf-8", "surrogatepass")) for value in values)
        self._ends.extend(islice(accumulate(lengths, initial=len(self._data)), 1, None))
        self._data += data
        self._missing += bytes(len(values))

    def extend_packed(self, other: PackedStrings, positions: Iterable[int] | None = None) -> None:
        """Append `other`'s items at `positions` (all of them, in order, when None)."""
        if positions is not None:
            for position in positions:
                value = other[position]
                if value is None:
                    raise ValueError("extend_packed copies strings, not missing values")
                self.extend([value])
            return
        if not isinstance(self._data, bytearray):
            self._data = bytearray(self._data)
        offset = len(self._data)
        self._data += other._data
        self._ends.frombytes((np.frombuffer(other._ends, dtype=np.int64) + offset).tobytes())
        self._missing += other._missing


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
        self._values = array("q", map(mapping.__getitem__, keys))

    def get(self, key: str, /) -> int | None:
        # Bisection over the keys' UTF-8 bytes, which sort as their code points do: no string decoded, no call a
        # probe (a lookup runs on the event loop for every keyed tool).
        wanted = key.encode("utf-8", "surrogatepass")
        data, ends = self._keys._data, self._keys._ends
        low, high = 0, len(ends)
        while low < high:
            middle = (low + high) // 2
            if data[ends[middle - 1] if middle else 0 : ends[middle]] < wanted:
                low = middle + 1
            else:
                high = middle
        if low < len(ends) and data[ends[low - 1] if low else 0 : ends[low]] == wanted:
            return self._values[low]
        return None

    def __len__(self) -> int:
        return len(self._values)

    def __getstate__(self) -> tuple[PackedStrings, array[int]]:
        return self._keys, self._values

    def __setstate__(self, state: tuple[PackedStrings, array[int]]) -> None:
        self._keys, self._values = state
