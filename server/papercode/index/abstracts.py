"""The abstracts file: every paper's abstract, kept once, beside the search index that stores no text.

`papercode-abstracts` holds the abstracts (UTF-8, in paper order), then the end offset of each, then their count
(8 bytes each). It is written with the index (`AbstractsWriter`, by `search_writer.IndexWriting`), so a snapshot
copies it with the index's files and their CRCs; a server maps it (`Abstracts`) and reads an abstract as a slice of
the map, on the event loop, with no lock: there is no stored document to decompress.
"""

from __future__ import annotations

import mmap
import os
from array import array
from pathlib import Path
from typing import BinaryIO

ABSTRACTS = "papercode-abstracts"
_OFFSET = array("q").itemsize


class AbstractsWriter:
    """An abstracts file being written: `add` each paper's abstract at its place, in order, then `finish`."""

    def __init__(self, path: Path) -> None:
        self._file: BinaryIO = open(path, "wb", buffering=1 << 20)  # noqa: SIM115 - closed by finish() or close()
        self._ends = array("q")
        self._written = 0

    def __len__(self) -> int:
        """The places written so far (a place skipped counts: it has no abstract)."""
        return len(self._ends)

    def add(self, place: int, abstract: str) -> None:
        """Paper `place`'s abstract (`place` past every one added: the places between have none)."""
        ends = self._ends
        ends.extend([self._written] * (place - len(ends)))
        self._written += self._file.write(abstract.encode("utf-8", "surrogatepass"))
        ends.append(self._written)

    def finish(self) -> None:
        """Write the offsets and the count after the abstracts, and close the file."""
        self._file.write(self._ends.tobytes() + len(self._ends).to_bytes(_OFFSET, "little"))
        self._file.close()

    def close(self) -> None:
        self._file.close()


class Abstracts:
    """An abstracts file, mapped. `ValueError` when it is missing or cut short (a snapshot then rebuilds)."""

    def __init__(self, handle: BinaryIO | None) -> None:
        if handle is None:
            raise ValueError(f"{ABSTRACTS} is missing")
        size = os.fstat(handle.fileno()).st_size
        if size < _OFFSET:
            raise ValueError(f"{ABSTRACTS} is cut short or damaged")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        count = int.from_bytes(mapped[size - _OFFSET :], "little")
        data = size - _OFFSET * (count + 1)
        ends = memoryview(mapped)[max(data, 0) : size - _OFFSET].cast("q") if data >= 0 else None
        if ends is None or (ends[-1] if count else 0) != data:
            if ends is not None:
                ends.release()
            mapped.close()
            raise ValueError(f"{ABSTRACTS} is cut short or damaged")
        self._mapped, self._ends = mapped, ends

    @classmethod
    def open(cls, path: Path) -> Abstracts:
        with open(path, "rb") as handle:
            return cls(handle)

    def __len__(self) -> int:
        return len(self._ends)

    def get(self, paper: int) -> str | None:
        """Paper `paper`'s abstract (None: it has none, or there is no such paper)."""
        ends = self._ends
        if not 0 <= paper < len(ends):
            return None
        return self._mapped[ends[paper - 1] if paper else 0 : ends[paper]].decode("utf-8", "surrogatepass") or None

    def close(self) -> None:
        self._ends.release()
        self._mapped.close()
