"""Ready at once: the server answers while the records load, serves an older snapshot while they rebuild, and says
what is ready. The stages of loading are released one at a time by each test, so nothing depends on timing.
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import INTERNAL_ERROR, LoggingMessageNotificationParams, TextResourceContents

from papercode.corpus.reload import LiveCorpus, SwapListener
from papercode.corpus.stages import Corpus, Stage
from papercode.edge.app import PapercodeServer, build_server
from papercode.edge.codes import LOADING
from papercode.edge.views import VIEWS
from tests.support.mcp import TOOL_NAMES
from tests.support.records import BERT_MOUTH, BERTS_ICL, make_record, write_records

pytestmark = pytest.mark.anyio

WAIT = 20  # seconds: the bound on every wait
SHORT = 0.05  # seconds a call waits for what is not ready, in tests that check the `loading` answer (it cannot come sooner)
SNAPSHOT_DATE = "2026-11-01T00:00:00+00:00"


@dataclass
class Gated:
    """A stages builder that yields each stage only once the test releases it."""

    stages: list[Stage]
    gates: list[threading.Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.gates = [threading.Event() for _ in self.stages]

    def __call__(self, key: bytes | None) -> Iterator[Stage]:
        for stage, gate in zip(self.stages, self.gates, strict=True):
            gate.wait(WAIT)
            yield stage

    def release(self, count: int = 1) -> None:
        for gate in [gate for gate in self.gates if not gate.is_set()][:count]:
            gate.set()


@pytest.fixture
def stale_corpus(tmp_path: Any) -> Corpus:
    """An older corpus: one made-up paper, standing for the snapshot before the records changed."""
    return Corpus.load([write_records(tmp_path / "old", [make_record("2001.00001", "old-paper", title="An Old Paper")])])


def keyed(corpus: Corpus) -> Corpus:
    return replace(corpus, search=None)


@asynccontextmanager
async def serving(
    gated: Gated, ready_timeout: float = WAIT, on_swap: SwapListener | None = None, **client_options: Any
) -> AsyncIterator[tuple[PapercodeServer, LiveCorpus, Client]]:
    live = LiveCorpus(gated, fingerprint=lambda: b"records")
    if on_swap is not None:
        live.on_swap(on_swap)
    server = build_server(live, ready_timeout=ready_timeout)
    async with server.running(), Client(server, **client_options) as client:
        yield server, live, client
        gated.release(len(gated.stages))  # let the loader finish, so the server stops cleanly


async def _wait_for_state(live: LiveCorpus, state: str) -> None:
    with anyio.fail_after(WAIT):
        while live.state != state:
            await anyio.sleep(0.01)


async def test_lists_answer_at_once_and_a_call_says_loading_with_when_to_come_back(corpus: Corpus) -> None:
    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated, ready_timeout=SHORT) as (_, live, client):
        live.progress(500, 2_000, 500)  # what the loader reports: a quarter of the files
        assert len((await client.list_tools()).tools) == len(TOOL_NAMES)
        assert {prompt.name for prompt in (await client.list_prompts()).prompts} == {"implement_paper", "compare_implementations"}
        result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
        assert result.is_error is True
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith("loading: 500 of 2,000 records indexed, ready in about ") and ". Next: call again in " in text
        assert live.health()["status"] == "loading"
        gated.release()
        await _wait_for_state(live, "complete")
        answer = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
        assert answer.is_error is False and answer.structured_content is not None
        assert answer.structured_content["counts"]["total"] == 10
        assert live.health() == {"status": "ok", "papers": 2, "reloads": 0, "failed_reloads": 0, "last_reload_error": None}


async def test_a_call_waits_for_the_index_with_progress_notifications(corpus: Corpus) -> None:
    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated) as (_, live, client):
        live.progress(1, 2, 1)
        notes: list[tuple[float, float | None, str | None]] = []

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            notes.append((progress, total, message))
            gated.release()  # the first notification shows the call is waiting: now let the index arrive

        with anyio.fail_after(WAIT):
            result = await client.call_tool("corpus_stats", {}, progress_callback=progressed)
    assert result.is_error is False and result.structured_content is not None and result.structured_content["papers"] == 2
    progress, total, message = notes[0]
    assert (progress, total) == (1.0, 2.0) and message is not None and message.startswith("1 records indexed, ready in about ")


async def test_keyed_lookups_serve_while_full_text_search_is_built(corpus: Corpus) -> None:
    gated = Gated([Stage("keyed", keyed(corpus), None), Stage("complete", corpus, None)])
    async with serving(gated, ready_timeout=SHORT) as (_, live, client):
        gated.release()
        await _wait_for_state(live, "keyed")
        harvested = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERTS_ICL})
        assert harvested.is_error is False and harvested.structured_content is not None
        stats = await client.call_tool("corpus_stats", {})
        assert stats.structured_content is not None and stats.structured_content["ready"].startswith("lookups only")
        for tool, arguments in (("search_papers", {"query": "bert"}), ("get_paper", {"paper": BERT_MOUTH})):
            waiting = await client.call_tool(tool, arguments)
            assert waiting.is_error is True
            text = waiting.content[0].text  # type: ignore[union-attr]
            assert text.startswith("loading: the full-text index is still being built")
            assert "; search_papers and get_paper wait for it, every other tool already answers. Next: " in text  # get_paper by id too
        assert live.health()["status"] == "loading"
        gated.release()
        await _wait_for_state(live, "complete")
        found = await client.call_tool("search_papers", {"query": "bert"})
        assert found.is_error is False and found.structured_content is not None and found.structured_content["total"] == 2
        stats = await client.call_tool("corpus_stats", {})
        assert stats.structured_content is not None and "ready" not in stats.structured_content


async def test_a_stale_snapshot_answers_at_once_marked_stale_until_the_swap(corpus: Corpus, stale_corpus: Corpus) -> None:
    gated = Gated([Stage("stale", stale_corpus, SNAPSHOT_DATE), Stage("keyed", keyed(corpus), None), Stage("complete", corpus, None)])
    swapped: list[Corpus] = []

    async def swap(fresh: Corpus) -> None:
        swapped.append(fresh)

    async with serving(gated, on_swap=swap) as (_, live, client):
        gated.release()
        await _wait_for_state(live, "stale")
        old = await client.call_tool("get_paper", {"paper": "2001.00001"})
        assert old.is_error is False and old.structured_content is not None and old.structured_content["title"] == "An Old Paper"
        answer, marker = old.content
        assert json.loads(answer.text) == old.structured_content  # type: ignore[union-attr]
        stale = json.loads(marker.text)  # type: ignore[union-attr]
        assert stale["stale"] is True and stale["snapshot"] == SNAPSHOT_DATE
        stats = await client.call_tool("corpus_stats", {})
        assert stats.structured_content is not None and stats.structured_content["ready"].startswith(
            f"stale: answers come from the snapshot of {SNAPSHOT_DATE}"
        )
        gated.release(2)
        await _wait_for_state(live, "complete")
        fresh = await client.call_tool("get_paper", {"paper": BERT_MOUTH})
        assert fresh.is_error is False and len(fresh.content) == 1
    assert swapped == [corpus]  # clients are told once the fresh corpus is in


async def test_completions_while_loading_offer_nothing_yet(corpus: Corpus) -> None:
    from mcp.types import PromptReference

    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated) as (_, live, client):
        reference = PromptReference(type="ref/prompt", name="implement_paper")
        waiting = await client.complete(reference, {"name": "arxiv_id", "value": "19"})
        assert waiting.completion.values == []
        gated.release()
        await _wait_for_state(live, "complete")
        ready = await client.complete(reference, {"name": "arxiv_id", "value": "19"})
        assert ready.completion.values == [BERT_MOUTH]


async def test_an_unknown_tool_while_loading_is_refused_at_once(corpus: Corpus) -> None:
    from mcp import MCPError

    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated) as (_, live, client):  # a 20 s ready timeout: waiting would show as a timeout below
        with anyio.fail_after(5), pytest.raises(MCPError) as error:
            await client.call_tool("get_everything", {})
        assert live.state == "loading"
    assert error.value.message.startswith("not_found: unknown tool")


async def test_an_argument_a_tool_does_not_take_is_refused_at_once_while_loading(corpus: Corpus) -> None:
    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated) as (_, live, client):
        with anyio.fail_after(5):
            result = await client.call_tool("search_papers", {"q": "bert"})
        assert live.state == "loading"
    assert result.is_error and result.content[0].type == "text"
    assert result.content[0].text.startswith("invalid_argument: search_papers takes no argument 'q'")


async def test_protocol_requests_that_need_no_records_answer_while_loading(
    corpus: Corpus, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated, mode=mode) as (_, live, client):
        with warnings.catch_warnings():  # logging and ping are deprecated in 2026-07-28; they are the handshake era's
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            if mode == "legacy":
                await client.set_logging_level("debug")
                await client.send_ping()
        assert len((await client.list_tools()).tools) == len(TOOL_NAMES)
        assert len((await client.list_prompts()).prompts) == 2
        assert {resource.uri for resource in (await client.list_resources()).resources} == {
            "corpus://stats",
            "corpus://load-report",
            *(view.uri for view in VIEWS),
        }
        assert len((await client.list_resource_templates()).resource_templates) == 2
        assert live.state == "loading"
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_a_resource_or_prompt_that_needs_the_records_says_loading_with_papercodes_one_code(corpus: Corpus, mode: str) -> None:
    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated, ready_timeout=SHORT, mode=mode) as (_, live, client):
        live.progress(1, 4, 10)
        for uri in ("corpus://stats", f"paper://{BERT_MOUTH}"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(uri)
            assert refused.value.code == LOADING and refused.value.message.startswith("loading: 10 of 40 records indexed"), uri
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("implement_paper", {"arxiv_id": BERT_MOUTH})
        assert refused.value.code == LOADING and refused.value.message.startswith("loading: ")
    assert -32019 <= LOADING <= -32000 and LOADING not in (-32000, -32001, -32002)  # the implementation band, no SDK or retired code


async def test_a_view_is_read_at_once_while_the_records_load(corpus: Corpus, mode: str) -> None:
    gated = Gated([Stage("complete", corpus, None)])
    async with serving(gated, ready_timeout=SHORT, mode=mode) as (_, live, client):
        for view in VIEWS:
            (content,) = (await client.read_resource(view.uri)).contents
            assert isinstance(content, TextResourceContents) and content.text.startswith("<!doctype html>")
        assert live.state == "loading"


async def test_a_client_that_set_its_level_while_loading_hears_of_load_problems_once_loaded(tmp_path: Path) -> None:
    problems = Corpus.load([write_records(tmp_path / "records", [make_record(), {"title": "no key"}])])
    gated = Gated([Stage("complete", problems, None)])
    heard: list[tuple[str, str]] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        heard.append((params.level, str(params.data)))

    async with serving(gated, mode="legacy", logging_callback=on_log) as (_, live, client):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.set_logging_level("warning")
        assert heard == [] and live.state == "loading"
        gated.release()
        with anyio.fail_after(WAIT):
            while not heard:
                await anyio.sleep(0.01)
    assert heard == [("warning", "loaded 1 papers; 1 records, samples or files rejected and 0 warnings: read corpus://load-report")]


class FailsFirst:
    """The first load serves `served`, then fails with `error` once `gate` is set; a reload gives `complete`."""

    def __init__(self, served: list[Stage], complete: Corpus, error: Exception) -> None:
        self.served, self.complete, self.error = served, complete, error
        self.gate = threading.Event()
        self.loads = 0

    def __call__(self, key: bytes | None) -> Iterator[Stage]:
        self.loads += 1
        if self.loads == 1:
            yield from self.served
            self.gate.wait(WAIT)
            raise self.error
        yield Stage("complete", self.complete, None)


async def _wait_for_failure(live: LiveCorpus) -> None:
    with anyio.fail_after(WAIT):
        while live.load_error is None:
            await anyio.sleep(0.01)


async def test_a_first_load_that_fails_answers_a_waiting_call_at_once_and_the_server_stays_up(corpus: Corpus, tmp_path: Path) -> None:
    failing = FailsFirst([], corpus, OSError(f"[Errno 5] Input/output error: '{tmp_path}/records/a.json'"))
    live = LiveCorpus(failing, fingerprint=lambda: b"records")
    server = build_server(live, ready_timeout=WAIT)  # a 20 s wait: answering after it would fail the bound below
    async with server.running(), Client(server) as client:

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            failing.gate.set()  # the call is waiting for the records: now let the load fail

        with anyio.fail_after(5):
            result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH}, progress_callback=progressed)
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error is True
        assert text.startswith("load_failed: the records could not be loaded (OSError: [Errno 5] Input/output error: '")
        assert text.endswith(". Next: the server's log says why; after a fix, send it SIGHUP or restart it.")
        with anyio.fail_after(5), pytest.raises(MCPError) as refused:
            await client.read_resource("corpus://stats")
        assert refused.value.code == INTERNAL_ERROR and refused.value.message == text
        assert len((await client.list_tools()).tools) == len(TOOL_NAMES)  # still serving
        health = live.health()
        assert health["status"] == "failed" and health["papers"] == 0
        assert str(tmp_path) not in text and str(tmp_path) not in str(health["load_error"])  # no server path
        assert await live.reload("SIGHUP") is True  # a reload that succeeds ends the failure
        assert live.health() == {"status": "ok", "papers": 2, "reloads": 1, "failed_reloads": 0, "last_reload_error": None}
        answer = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
        assert answer.is_error is False and answer.structured_content is not None
        assert answer.structured_content["counts"]["total"] == 10


async def test_a_search_build_that_fails_after_keyed_keeps_the_lookups_and_says_why_search_cannot_answer(corpus: Corpus) -> None:
    failing = FailsFirst([Stage("keyed", keyed(corpus), None)], corpus, RuntimeError("the search builder died"))
    failing.gate.set()
    live = LiveCorpus(failing, fingerprint=lambda: b"records")
    server = build_server(live, ready_timeout=WAIT)
    async with server.running(), Client(server) as client:
        await _wait_for_failure(live)
        assert live.state == "keyed"
        harvested = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERTS_ICL})
        assert harvested.is_error is False
        with anyio.fail_after(5):
            search = await client.call_tool("search_papers", {"query": "bert"})
        assert search.is_error is True
        assert search.content[0].text == (  # type: ignore[union-attr]
            "load_failed: the full-text index could not be built (RuntimeError: the search builder died); every tool but "
            "search_papers and get_paper still answers. Next: the server's log says why; after a fix, send it SIGHUP or restart it."
        )
        stats = await client.call_tool("corpus_stats", {})
        assert stats.structured_content is not None
        assert stats.structured_content["ready"] == (
            "lookups only: full-text search (search_papers, get_paper) could not be built (RuntimeError: the search builder died)"
        )
        assert live.health()["status"] == "failed"
        assert await live.reload("SIGHUP") is True
        found = await client.call_tool("search_papers", {"query": "bert"})
        assert found.is_error is False and found.structured_content is not None and found.structured_content["total"] == 2
        assert live.load_error is None and live.health()["status"] == "ok"


async def test_with_watch_a_failed_first_load_is_tried_again(corpus: Corpus) -> None:
    failing = FailsFirst([], corpus, RuntimeError("the disk was busy"))
    failing.gate.set()
    live = LiveCorpus(failing, fingerprint=lambda: b"records")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(live.load)
        await _wait_for_failure(live)
        tasks.start_soon(live.watch, 0.01)
        await _wait_for_state(live, "complete")
        tasks.cancel_scope.cancel()
    assert failing.loads == 2 and live.load_error is None
