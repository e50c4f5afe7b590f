"""Live reload: rebuilds swap in atomically, failures keep the old index, clients are told."""

from __future__ import annotations

import os
import shutil
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import INVALID_PARAMS, LoggingMessageNotificationParams

from conftest import make_record, write_records
from papercode.answers import twins
from papercode.core.limits import Limits
from papercode.corpus.reload import LiveCorpus, StagesBuilder
from papercode.corpus.snapshot import records_key
from papercode.corpus.stages import Corpus, Stage, open_stages
from papercode.edge.app import PapercodeServer, build_server
from papercode.edge.notices import ClientLog
from papercode.settings import bundled_records_dir

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


def _stages(records: Path) -> StagesBuilder:
    return lambda key: open_stages([records], Limits(), None, None, key)


async def _loaded(records: Path) -> LiveCorpus:
    """A live corpus over `records`, loaded (no snapshot: every build reads the records)."""
    live = LiveCorpus(_stages(records), fingerprint=lambda: records_key([records], Limits()))
    await live.load()
    return live


async def _swapped(live: LiveCorpus) -> anyio.Event:
    event = anyio.Event()

    async def mark(corpus: Corpus) -> None:
        event.set()

    live.on_swap(mark)
    return event


async def test_reload_swaps_and_old_corpus_keeps_answering(records: Path) -> None:
    live = await _loaded(records)
    before = live()
    (records / "000_14282948c0d959ec.txt").unlink()
    assert await live.reload("test") is True
    after = live()
    assert after is not before
    assert len(after.index.papers) == 1
    # A call that started on the old corpus finishes on it, unchanged.
    assert twins.harvested_code(before, "1902.04094").counts.total == 10


async def test_failed_rebuild_keeps_the_old_index_and_says_why(records: Path) -> None:
    attempts: list[int] = []

    def flaky(key: bytes | None) -> Iterator[Stage]:
        attempts.append(1)
        if len(attempts) > 1:
            raise RuntimeError("disk on fire")
        return open_stages([records], Limits(), None, None, key)

    live = LiveCorpus(flaky, fingerprint=lambda: records_key([records], Limits()))
    await live.load()
    before = live()
    assert await live.reload("test") is False
    assert live() is before
    assert live.last_error is not None and "disk on fire" in live.last_error


async def test_vanished_records_directory_is_a_failed_rebuild(records: Path) -> None:
    live = await _loaded(records)
    before = live()
    shutil.rmtree(records)
    assert await live.reload("test") is False
    assert live() is before
    assert live.last_error is not None and "does not exist" in live.last_error


async def test_watch_reloads_when_a_record_changes(records: Path) -> None:
    live = await _loaded(records)
    swapped = await _swapped(live)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(live.watch, 0.05)
        (records / "000_14282948c0d959ec.txt").unlink()
        with anyio.fail_after(WAIT):
            await swapped.wait()
        tasks.cancel_scope.cancel()
    assert len(live().index.papers) == 1


async def test_watch_reloads_a_records_directory_deleted_then_recreated_empty(records: Path) -> None:
    live = await _loaded(records)
    swapped, failed = await _swapped(live), anyio.Event()

    async def mark_failed(reason: str) -> None:
        failed.set()

    live.on_failure(mark_failed)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(live.watch, 0.05)
        shutil.rmtree(records)
        with anyio.fail_after(WAIT):
            await failed.wait()  # the watcher saw it go: a failed reload, the old corpus still serves
        assert len(live().index.papers) == 2
        records.mkdir()  # back, empty: not the same as missing
        with anyio.fail_after(WAIT):
            await swapped.wait()
        tasks.cancel_scope.cancel()
    assert len(live().index.papers) == 0 and live.last_error is None


async def test_sighup_reloads(records: Path) -> None:
    live = await _loaded(records)
    swapped = await _swapped(live)
    async with anyio.create_task_group() as tasks:
        await tasks.start(live.reload_on_sighup)
        (records / "001_68f0e4c467ea2cc0.txt").unlink()
        os.kill(os.getpid(), signal.SIGHUP)
        with anyio.fail_after(WAIT):
            await swapped.wait()
        tasks.cancel_scope.cancel()
    assert [paper.key for paper in live().index.papers] == ["1902.04094"]


def _server_over(live: LiveCorpus) -> PapercodeServer:
    server = build_server(live)
    live.on_swap(server.notify_corpus_changed)
    live.on_failure(server.notify_reload_failed)
    return server


class LogInbox:
    """What a client receives as `notifications/message`, and every other notification method."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []
        self.methods: list[str] = []
        self._changed = anyio.Event()

    async def on_log(self, params: LoggingMessageNotificationParams) -> None:
        self.messages.append((params.level, str(params.data)))
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def on_message(self, message: object) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method is not None:
            self.methods.append(method)

    async def wait_for(self, count: int) -> None:
        with anyio.fail_after(WAIT):
            while True:
                changed = self._changed
                if len(self.messages) >= count:
                    return
                await changed.wait()


async def _set_level(client: Client, level: str) -> None:
    with warnings.catch_warnings():  # logging is deprecated in 2026-07-28; this is the handshake era
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.set_logging_level(level)  # type: ignore[arg-type]


async def test_handshake_clients_that_set_a_level_hear_of_reloads(records: Path) -> None:
    live = await _loaded(records)
    inbox = LogInbox()
    async with Client(_server_over(live), mode="legacy", logging_callback=inbox.on_log, message_handler=inbox.on_message) as client:
        await _set_level(client, "info")
        first = await client.call_tool("corpus_stats", {})
        assert first.structured_content is not None and first.structured_content["papers"] == 2
        (records / "000_14282948c0d959ec.txt").unlink()
        assert await live.reload("test") is True
        await inbox.wait_for(1)
        second = await client.call_tool("corpus_stats", {})
        assert second.structured_content is not None and second.structured_content["papers"] == 1
    assert inbox.messages == [("info", "records reloaded: 1 papers, 26 samples (0 rejected)")]
    # The resource list never changes, and the server does not claim listChanged: it sends none.
    assert "notifications/resources/list_changed" not in inbox.methods


async def test_a_failed_reload_reaches_clients_at_error_level_only(records: Path) -> None:
    live = await _loaded(records)
    inbox = LogInbox()
    async with Client(_server_over(live), mode="legacy", logging_callback=inbox.on_log) as client:
        await _set_level(client, "error")
        (records / "000_14282948c0d959ec.txt").unlink()
        assert await live.reload("test") is True  # info: below the level asked for
        shutil.rmtree(records)
        assert await live.reload("test") is False
        await inbox.wait_for(1)
    ((level, text),) = inbox.messages
    assert level == "error" and text.startswith("reload failed, still serving the previous records:") and "does not exist" in text


async def test_a_client_setting_a_level_hears_of_load_problems(tmp_path: Path) -> None:
    records = write_records(tmp_path / "records", [make_record(), {"title": "no key"}])
    inbox = LogInbox()
    corpus = Corpus.load([records])
    async with Client(build_server(lambda: corpus), mode="legacy", logging_callback=inbox.on_log) as client:
        await _set_level(client, "warning")
        await inbox.wait_for(1)
    assert inbox.messages == [
        ("warning", "loaded 1 papers; 1 records, samples or files rejected and 0 warnings: read corpus://load-report")
    ]


async def test_set_level_refuses_an_unknown_level() -> None:
    # Clients validate the level themselves, so the middleware is called directly with what a raw client could send.
    async def never(ctx: object) -> None:
        raise AssertionError("setLevel must be answered by papercode, not passed on")

    ctx = ServerRequestContext(
        session=None,  # type: ignore[arg-type]
        lifespan_context=None,
        protocol_version="2025-11-25",
        method="logging/setLevel",
        params={"level": "loud"},
    )
    with pytest.raises(MCPError) as error:
        await ClientLog()(ctx, never)
    assert error.value.code == INVALID_PARAMS and "debug, info" in error.value.message


async def test_capabilities_say_what_the_server_does_in_each_era(server: PapercodeServer) -> None:
    async with Client(server, mode="legacy") as legacy:
        handshake = legacy.server_capabilities
    async with Client(server) as modern:
        assert modern.protocol_version == "2026-07-28"
        discovered = modern.server_capabilities
    assert handshake.logging is not None  # logging/setLevel is answered, and messages follow
    assert handshake.resources is not None and handshake.resources.list_changed is False and handshake.resources.subscribe is False
    assert discovered.logging is None  # 2026-07-28: logging is per request, and papercode sends none
    assert discovered.resources is not None and discovered.resources.subscribe is True  # served by subscriptions/listen
    # Neither era is told a list may change: papercode's tools, prompts and resources never do while it serves.
    for capabilities in (handshake, discovered):
        assert capabilities.tools is not None and capabilities.tools.list_changed is False
        assert capabilities.prompts is not None and capabilities.prompts.list_changed is False
        assert capabilities.resources is not None and capabilities.resources.list_changed is False


async def test_listen_streams_hear_that_the_corpus_resources_changed(records: Path) -> None:
    live = await _loaded(records)
    async with Client(_server_over(live)) as client, client.listen(resource_subscriptions=["corpus://stats"]) as events:
        (records / "000_14282948c0d959ec.txt").unlink()
        assert await live.reload("test") is True
        with anyio.fail_after(WAIT):
            event = await events.__anext__()
    assert event == ResourceUpdated(uri="corpus://stats")


async def test_a_failed_reload_names_no_server_path(records: Path) -> None:
    live = await _loaded(records)
    inbox = LogInbox()
    async with Client(_server_over(live), mode="legacy", logging_callback=inbox.on_log) as client:
        await _set_level(client, "error")
        shutil.rmtree(records)
        assert await live.reload("test") is False
        await inbox.wait_for(1)
    missing = "records: records directory does not exist"  # the directory by its name, as /healthz shows it
    assert inbox.messages == [("error", f"reload failed, still serving the previous records: {missing}")]
    assert live.last_error == missing


async def test_a_reload_failing_on_a_file_names_it_without_its_path(records: Path) -> None:
    attempts: list[int] = []

    def failing(key: bytes | None) -> Iterator[Stage]:
        attempts.append(1)
        if len(attempts) > 1:
            raise FileNotFoundError(2, "No such file or directory", str(records.parent / "cache" / "index.snapshot"))
        return open_stages([records], Limits(), None, None, key)

    live = LiveCorpus(failing, fingerprint=lambda: records_key([records], Limits()))
    await live.load()
    told: list[str] = []

    async def tell(reason: str) -> None:
        told.append(reason)

    live.on_failure(tell)
    assert await live.reload("test") is False
    assert live.last_error == "FileNotFoundError: [Errno 2] No such file or directory: 'index.snapshot'"
    assert told == [live.last_error]
