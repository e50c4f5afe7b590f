"""Live reload: rebuilds swap in atomically, failures keep the old index, clients are told."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import anyio
import pytest
from mcp import Client

from papercode import queries
from papercode.app import build_server
from papercode.corpus import Corpus
from papercode.loading import Limits
from papercode.reload import LiveCorpus
from papercode.settings import bundled_records_dir
from papercode.snapshot import records_key

pytestmark = pytest.mark.anyio

WAIT = 20  # seconds: a bound on every wait, never a sleep


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def records(tmp_path: Path) -> Path:
    directory = tmp_path / "records"
    shutil.copytree(bundled_records_dir(), directory, ignore=shutil.ignore_patterns("README.md"))
    return directory


def _live(records: Path) -> LiveCorpus:
    return LiveCorpus(build=lambda key: Corpus.load([records]), fingerprint=lambda: records_key([records], Limits()))


async def _swapped(live: LiveCorpus) -> anyio.Event:
    event = anyio.Event()

    async def mark() -> None:
        event.set()

    live.on_swap(mark)
    return event


async def test_reload_swaps_and_old_corpus_keeps_answering(records: Path) -> None:
    live = _live(records)
    before = live()
    (records / "000_14282948c0d959ec.txt").unlink()
    assert await live.reload("test") is True
    after = live()
    assert after is not before
    assert len(after.index.papers) == 1
    # A call that started on the old corpus finishes on it, unchanged.
    assert queries.harvested_code(before, "1902.04094").counts.total == 10


async def test_failed_rebuild_keeps_the_old_index_and_says_why(records: Path) -> None:
    attempts: list[int] = []

    def flaky(key: bytes) -> Corpus:
        attempts.append(1)
        if len(attempts) > 1:
            raise RuntimeError("disk on fire")
        return Corpus.load([records])

    live = LiveCorpus(build=flaky, fingerprint=lambda: records_key([records], Limits()))
    before = live()
    assert await live.reload("test") is False
    assert live() is before
    assert live.last_error is not None and "disk on fire" in live.last_error


async def test_vanished_records_directory_is_a_failed_rebuild(records: Path) -> None:
    live = _live(records)
    before = live()
    shutil.rmtree(records)
    assert await live.reload("test") is False
    assert live() is before
    assert live.last_error is not None and "does not exist" in live.last_error


async def test_watch_reloads_when_a_record_changes(records: Path) -> None:
    live = _live(records)
    swapped = await _swapped(live)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(live.watch, 0.05)
        (records / "000_14282948c0d959ec.txt").unlink()
        with anyio.fail_after(WAIT):
            await swapped.wait()
        tasks.cancel_scope.cancel()
    assert len(live().index.papers) == 1


async def test_sighup_reloads(records: Path) -> None:
    live = _live(records)
    swapped = await _swapped(live)
    async with anyio.create_task_group() as tasks:
        await tasks.start(live.reload_on_sighup)
        (records / "001_68f0e4c467ea2cc0.txt").unlink()
        os.kill(os.getpid(), signal.SIGHUP)
        with anyio.fail_after(WAIT):
            await swapped.wait()
        tasks.cancel_scope.cancel()
    assert [paper.key for paper in live().index.papers] == ["1902.04094"]


async def test_clients_see_the_new_corpus_and_are_notified(records: Path) -> None:
    live = _live(records)
    server = build_server(live)
    live.on_swap(server.notify_corpus_changed)
    published: list[object] = []
    server.events.subscribe(published.append)
    notified = anyio.Event()
    seen: list[str] = []

    async def on_message(message: object) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method == "notifications/resources/list_changed":
            seen.append(method)
            notified.set()

    async with Client(server, mode="legacy", message_handler=on_message) as client:
        first = await client.call_tool("corpus_stats", {})
        assert first.structured_content is not None and first.structured_content["papers"] == 2
        (records / "000_14282948c0d959ec.txt").unlink()
        assert await live.reload("test") is True
        with anyio.fail_after(WAIT):
            await notified.wait()
        second = await client.call_tool("corpus_stats", {})
        assert second.structured_content is not None and second.structured_content["papers"] == 1
    assert seen == ["notifications/resources/list_changed"]
    assert [type(event).__name__ for event in published] == ["ResourcesListChanged"]
