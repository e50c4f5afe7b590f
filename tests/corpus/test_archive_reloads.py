"""Reloads over the archive (issue 30): what a reload replaces is let go when it is replaced, not at a garbage
collection that may never come."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from papercode.core.limits import Limits
from papercode.corpus.reload import LiveCorpus
from papercode.corpus.snapshot import records_part, served_key
from papercode.corpus.stages import open_stages
from papercode.index.archive_layer import current_build
from tests.support.archive_layers import build_small_archive, layered_records

ON_LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads a process's descriptors in /proc")


@pytest.fixture
def layered_copy(tmp_path: Path) -> tuple[Path, Path]:
    """Records of the test's own (it changes them) over a small archive of its own (it moves `current`)."""
    return layered_records(tmp_path / "records"), build_small_archive(tmp_path / "sources", tmp_path / "archive")


def _live(records: Path, archive: Path) -> LiveCorpus:
    roots = [records]
    return LiveCorpus(
        lambda key: open_stages(roots, Limits(), None, None, key and records_part(key), archive_dir=archive),
        fingerprint=lambda: served_key(roots, Limits(), archive),
    )


@pytest.fixture
def collections_off() -> Iterator[None]:
    """No garbage collection while the test runs: what it checks must happen without one."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _build_descriptors(build: Path) -> int:
    """This process's descriptors open on a file of `build` (its maps each hold one)."""
    found = 0
    for descriptor in os.listdir("/proc/self/fd"):
        try:
            found += os.readlink(f"/proc/self/fd/{descriptor}").startswith(str(build))
        except OSError:  # closed meanwhile (the listing's own)
            continue
    return found


@ON_LINUX
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.usefixtures("collections_off")
async def test_a_replaced_archive_layer_is_let_go_at_the_swap_without_a_collection(layered_copy: tuple[Path, Path]) -> None:
    records, archive = layered_copy
    build = current_build(archive)
    assert build is not None
    live = _live(records, archive)
    await live.load()
    one_layer = _build_descriptors(build)
    assert one_layer > 10  # the maps of the paper columns, the abstracts, the lock
    for _ in range(3):
        assert await live.reload("SIGHUP") is True
        assert _build_descriptors(build) == one_layer


@ON_LINUX
@pytest.mark.usefixtures("collections_off")
def test_a_map_a_call_still_reads_is_released_when_that_call_lets_it_go(layered_copy: tuple[Path, Path]) -> None:
    records, archive = layered_copy
    build = current_build(archive)
    assert build is not None
    live = _live(records, archive)
    anyio.run(live.load)
    layer = live().archive
    assert layer is not None
    titles, years = layer.papers.title, layer.papers.year  # what a call in flight reads: a packed column and a view
    del layer
    anyio.run(live.reload, "SIGHUP")  # the layer those columns came from is replaced
    assert titles[2] == "A paper only the archive has" and years[2] == 2020  # the call goes on reading them
    still_open = _build_descriptors(build)
    del titles, years  # the call ends
    assert _build_descriptors(build) < still_open
