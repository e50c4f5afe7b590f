"""numpy over the index's columns: zero-copy views, ranges of positions, and counting in place of sorting.

The columns are plain `array`s and `bytearray`s (as the index serves and pickles them); these helpers
read them as numpy arrays without copying and hand results back as `array`s.
"""

from __future__ import annotations

from array import array
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Column: TypeAlias = "array[int] | bytearray"


def view(column: Column) -> npt.NDArray[Any]:
    """The column as a numpy array over the same memory."""
    if isinstance(column, bytearray):
        return np.frombuffer(column, dtype=np.uint8)
    return np.frombuffer(column, dtype=np.dtype(column.typecode))


def pick(column: Column, positions: Ints | None) -> npt.NDArray[Any]:
    """The column's values at `positions` (every value, uncopied, when None)."""
    whole = view(column)
    return whole if positions is None else whole[positions]


def as_ints(values: npt.NDArray[Any]) -> array[int]:
    return array("i", values.astype(np.intc).tobytes())


def range_starts(lengths: npt.NDArray[Any]) -> Ints:
    """Where each of ranges of these lengths starts when they are laid one after another from 0."""
    starts: Ints = np.cumsum(lengths, dtype=np.int64) - lengths
    return starts


def range_positions(starts: Ints, ends: Ints) -> Ints:
    """Every position start..end-1 of each range, range after range: one gather for them all, no loop."""
    lengths = ends - starts
    return np.repeat(starts - range_starts(lengths), lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


def live_positions(starts: npt.NDArray[Any], ends: npt.NDArray[Any], owner: npt.NDArray[Any]) -> Ints | None:
    """Positions whose owner's current range holds them; None when that is every position."""
    if int((ends - starts).sum()) == len(owner):
        return None
    positions = np.arange(len(owner), dtype=np.int64)
    return np.flatnonzero((starts[owner] <= positions) & (positions < ends[owner]))


def narrow(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """`values` (0 or more) in the narrowest unsigned type: a stable sort of 16-bit keys is a radix sort."""
    top = int(values.max()) if len(values) else 0
    return values.astype(np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.int64)


def dense(values: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
    """(the distinct values, in order; each value's position among them), by counting, not sorting:
    the values are string ids (-1 and up) or flags, few and small."""
    shifted = values.astype(np.int64) + 1
    present = np.flatnonzero(np.bincount(shifted)) if len(values) else np.zeros(0, dtype=np.int64)
    position = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.int64)
    position[present] = np.arange(len(present), dtype=np.int64)
    return present - 1, position[shifted]
