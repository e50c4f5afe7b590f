"""How a server that runs for months gives freed memory back to the system, reload after reload (glibc's malloc).

Two habits of glibc's allocator keep what a reload frees: a block freed above the threshold for mapping blocks on
their own raises that threshold to its size, so later blocks of that size come from the heap, whose free parts it
keeps; and it gives a heap's free pages back only from its top. Each reload frees large blocks (the snapshot read, the
previous corpus, tantivy's buffers for the archive's overlay): a server's anonymous memory grew by half again or more
over its first reloads, and over the archive went on swinging by tens of megabytes. With the threshold fixed at its
default and the heap trimmed after each reload, the first growth goes too: a records-only server ends its first reloads
below where it started, as the cold build's leftovers go back (20,000 generated records: 178 -> 161 -> 161 MB at 0, 10
and 60 SIGHUPs, and without this module 207 -> 281 -> 288). `tests/corpus/test_archive_reloads.py` holds a
records-only server to at most 10 MB over its start after 10 reloads, and one over the archive to at most 20 MB and 5
descriptors more over 190 reloads after its first 10.

Only where the C library is glibc; elsewhere nothing changes.
"""

from __future__ import annotations

import ctypes
import functools
import platform
from typing import Final

_M_MMAP_THRESHOLD: Final = -3  # mallopt's parameter, from glibc's malloc.h
_MAPPED_FROM: Final = 128 << 10  # glibc's own default: a block this large is mapped on its own, and unmapped when freed


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    if platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(None)  # this process's own symbols: the C library it runs on
    except OSError:  # pragma: no cover - a static build without dlopen
        return None


def fix_mapping_threshold() -> None:
    """Blocks from 128 KiB up are mapped on their own and go back to the system when freed, however large a block
    was freed before (set once, at a server's start)."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MAPPED_FROM)


def return_free_memory() -> None:
    """The heap's free pages, wherever they lie, go back to the system (a few milliseconds, in a worker thread: run it
    once a reload has let the previous corpus go)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
