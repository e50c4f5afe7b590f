"""The records' search engine: one tantivy index, written by `search_writer`, served read-only.

Its files are opened and memory-mapped once and kept open, so the directory of a fresh build can be removed at once
(nothing is left behind) and still be copied into a snapshot (`save_image`). The ranking is `ranking.Ranking`'s; the
abstracts are the file beside the index (`index.abstracts`).
"""

from __future__ import annotations

import os
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import msgspec
import tantivy

from .abstracts import ABSTRACTS, Abstracts
from .ranking import Ranking
from .search_schema import LOCK_FILES, open_index

_COPY_CHUNK = 1 << 22


class SearchFile(msgspec.Struct, array_like=True, frozen=True):
    """A file of the search index copied for a warm start, as the snapshot's manifest lists it (a JSON array: name,
    size, CRC-32)."""

    name: str
    size: int
    crc: int


class SearchEngine(Ranking):
    """Serves one tantivy index read-only: every paper's title, abstract, authors, tasks and methods, with facets for the filters."""

    def __init__(self, directory: Path, *, remove: bool = False) -> None:
        """Open the index in `directory` (never modified). With `remove`, the directory is removed
        once open: the engine keeps reading its files, and nothing is left behind when it goes."""
        self._files: dict[str, BinaryIO] = {}
        try:
            for entry in sorted(os.scandir(directory), key=lambda entry: entry.name):
                if entry.is_file() and entry.name not in LOCK_FILES:
                    self._files[entry.name] = open(entry.path, "rb")  # noqa: SIM115 - closed by close()
            index = open_index(tantivy.Index.open(str(directory)))
            index.config_reader(reload_policy="Manual")
            self._searcher = index.searcher()
            self.abstracts = Abstracts(self._files.get(ABSTRACTS))
        except BaseException:
            self.close()
            raise
        if remove:
            shutil.rmtree(directory, ignore_errors=True)

    def close(self) -> None:
        files, self._files = self._files, {}
        for handle in files.values():
            handle.close()
        if (abstracts := getattr(self, "abstracts", None)) is not None:
            abstracts.close()
            del self.abstracts

    def __del__(self) -> None:
        self.close()

    def save_image(self, directory: Path) -> Iterator[SearchFile]:
        """Copy the index's files into `directory` (for warm starts), yielding each as a snapshot's manifest lists it."""
        for name, handle in self._files.items():
            crc = size = 0
            handle.seek(0)
            with open(directory / name, "wb") as out:
                while chunk := handle.read(_COPY_CHUNK):
                    out.write(chunk)
                    crc = zlib.crc32(chunk, crc)
                    size += len(chunk)
            yield SearchFile(name, size, crc)

    def abstract(self, paper: int) -> str | None:
        """A paper's abstract: the full text lives here once, not also in the index (a slice of `ABSTRACTS`)."""
        return self.abstracts.get(paper)
