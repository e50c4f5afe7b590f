"""Read-only sequences stored as one buffer plus offsets, for fast snapshots.

Restoring a list of a million strings from a pickle builds a million objects; restoring one of
these is two memory copies, and an item is decoded only when a query reads it. The index keeps
plain lists while it is built and serves from them; it packs them only into a snapshot.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import overload


class _Packed:
    __slots__ = ("_data", "_ends", "_missing")

    def __init__(self, items: Iterable[bytes | None]) -> None:
        parts: list[bytes] = []
        ends = array("q")
        missing = bytearray()
        end = 0
        for item in items:
            missing.append(item is None)
            if item is not None:
                parts.append(item)
                end += len(item)
            ends.append(end)
        self._data = b"".join(parts)
        self._ends = ends
        self._missing = missing

    def __len__(self) -> int:
        return len(self._ends)

    def _raw(self, i: int) -> bytes | None:
        if i < 0:
            i += len(self._ends)
        if self._missing[i]:  # also raises IndexError past the end
            return None
        start = self._ends[i - 1] if i else 0
        return self._data[start : self._ends[i]]

    def __getstate__(self) -> tuple[bytes, array[int], bytearray]:
        return self._data, self._ends, self._missing

    def __setstate__(self, state: tuple[bytes, array[int], bytearray]) -> None:
        self._data, self._ends, self._missing = state


class PackedStrings(_Packed, Sequence[str | None]):
    """`list[str | None]`, packed as UTF-8."""

    __slots__ = ()

    def __init__(self, values: Iterable[str | None]) -> None:
        super().__init__(None if value is None else value.encode("utf-8", "surrogatepass") for value in values)

    @overload
    def __getitem__(self, i: int) -> str | None: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str | None]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str | None] | None:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        raw = self._raw(i)
        return None if raw is None else raw.decode("utf-8", "surrogatepass")


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
        return self._raw(i) or b""
