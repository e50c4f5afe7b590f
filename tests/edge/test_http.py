"""papercode over HTTP on real sockets on 127.0.0.1: streamable HTTP and SSE, both protocol eras, as a team would
expose it (tokens, Host/Origin checks, bounded cost per client, health, graceful shutdown).

Most servers here run in this process (`serving.serve_http` on a bound socket, the same code `papercode serve` runs),
so a test can slow a call down on purpose; tests that only make requests share one server per transport and
configuration. `papercode serve` itself runs as a subprocess where the process matters (the startup line on a free
port, both eras over the real process, signals, stderr).
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from papercode.corpus.stages import Corpus
from papercode.edge import http as serving
from papercode.edge.access import StaticTokens
from papercode.edge.compat.header_timeout import HeaderTimeoutH11
from papercode.edge.stderr_log import BURST
from tests.support.checkout import THIS_CHECKOUT
from tests.support.fixture_server import FixtureServer, reply, serve
from tests.support.http import ACCEPT, INITIALIZE, TOKEN, WAIT, bearer, http_server, listening, settings_for
from tests.support.mcp import MODES, TOOL_NAMES
from tests.support.records import BERT_MOUTH

pytestmark = [pytest.mark.anyio, pytest.mark.process]

OTHER_TOKEN = "rotated-token-9876543210fedcba"


@asynccontextmanager
async def client_for(url: str, transport: str, token: str | None = TOKEN, mode: str = "auto", **headers: str) -> AsyncIterator[Client]:
    sent = {**(bearer(token) if token else {}), **headers}
    if transport == "sse":
        async with Client(sse_client(url, headers=sent), mode=mode) as client:
            yield client
        return
    async with (
        httpx2.AsyncClient(headers=sent, timeout=WAIT) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


TRANSPORTS = ("streamable-http", "sse")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # one event loop for the module: the shared servers below live in it


@asynccontextmanager
async def both_transports(corpus: Corpus, tokens: tuple[str, ...] = ()) -> AsyncIterator[dict[str, str]]:
    async with (
        http_server(corpus, settings_for("streamable-http"), tokens) as streamable,
        http_server(corpus, settings_for("sse"), tokens) as sse,
    ):
        yield {"streamable-http": streamable, "sse": sse}


@pytest.fixture(scope="module")
async def team_servers(corpus: Corpus) -> AsyncIterator[dict[str, str]]:
    """The MCP URL of each transport served as a team would (two tokens accepted, as while rotating one),
    shared by the tests that only make requests of it: a server of their own each would cost ~0.3 s."""
    async with both_transports(corpus, (OTHER_TOKEN, TOKEN)) as urls:
        yield urls


@pytest.fixture(scope="module")
async def open_servers(corpus: Corpus) -> AsyncIterator[dict[str, str]]:
    """The MCP URL of each transport served on 127.0.0.1 without tokens, shared the same way."""
    async with both_transports(corpus) as urls:
        yield urls


# -- the startup line and both transports, as `papercode serve` runs them --------------------------------


@contextmanager
def running(tmp_path: Path, *args: str, **environment: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`papercode serve ARGS` on a free port; yields the process and the URL its startup line names."""
    server = subprocess.Popen(
        [sys.executable, "-m", "papercode", "serve", "--port", "0", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={
            "HOME": str(tmp_path),
            "PAPERCODE_CACHE_DIR": str(tmp_path / "cache"),
            "PAPERCODE_OFFLINE": "1",
            "PATH": "",
            **THIS_CHECKOUT,
            **environment,
        },
    )
    with listening(server) as started:
        yield started


async def _answers_in_both_eras(url: str, transport: str) -> None:
    """What `papercode serve` started with --port 0 must do first: name a real port, and answer there in both eras."""
    assert re.fullmatch(rf"http://127\.0\.0\.1:\d+{serving.PATHS[transport]}", url)
    for mode in MODES:
        with anyio.fail_after(WAIT):
            async with client_for(url, transport, token=None, mode=mode) as client:
                result = await client.call_tool("get_paper", {"paper": 1902.04094})
        assert result.structured_content is not None and result.structured_content["query"] == {"asked": BERT_MOUTH}, mode


async def _endpoint(events: AsyncIterator[str]) -> str:
    """The SSE session's message endpoint, from the stream's lines (`events`). The caller keeps `events`
    referenced while it uses the session: a dropped line iterator is finalized at once, which closes the
    stream and with it the session (the server then answers 404 to the session's messages)."""
    async for line in events:
        if line.startswith("data:"):
            return line.removeprefix("data:").strip()
    raise AssertionError("the SSE stream ended before its endpoint event")


# -- auth -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_without_or_with_a_wrong_token_a_request_gets_401(team_servers: dict[str, str], transport: str) -> None:
    url = team_servers[transport]
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        for headers in ({}, bearer("wrong-token-0123456789abcdef"), {"authorization": TOKEN}):
            if transport == "sse":
                response = await http.get(url, headers=headers)
            else:
                response = await http.post(url, headers={**ACCEPT, **headers}, json=INITIALIZE)
            assert response.status_code == 401, headers
            challenge = response.headers["www-authenticate"]
            assert challenge.startswith('Bearer error="invalid_token"')
            assert TOKEN not in response.text and TOKEN not in challenge
            assert OTHER_TOKEN not in response.text and OTHER_TOKEN not in challenge


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
async def test_the_right_token_is_served(team_servers: dict[str, str], transport: str, mode: str) -> None:
    with anyio.fail_after(WAIT):
        async with client_for(team_servers[transport], transport, mode=mode) as client:
            result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH})
    assert result.structured_content is not None and result.structured_content["counts"]["total"] == 10


def test_tokens_compare_every_configured_token() -> None:
    verifier = StaticTokens((OTHER_TOKEN, TOKEN))
    assert anyio.run(verifier.verify_token, TOKEN) is not None
    assert anyio.run(verifier.verify_token, OTHER_TOKEN) is not None
    assert anyio.run(verifier.verify_token, TOKEN[:-1]) is None
    assert anyio.run(verifier.verify_token, "") is None
    granted = anyio.run(verifier.verify_token, TOKEN)
    assert granted is not None and TOKEN not in granted.model_dump_json()  # the token is not kept where it could be logged


# -- Host and Origin checks, on any bind address --------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_foreign_host_or_origin_is_refused_even_on_a_public_bind(corpus: Corpus, transport: str) -> None:
    settings = settings_for(
        transport, host="0.0.0.0", allowed_hosts=("papers.example.org",), allowed_origins=("https://papers.example.org",)
    )
    async with http_server(corpus, settings, (TOKEN,)) as url, httpx2.AsyncClient(timeout=WAIT) as http:

        async def status(**headers: str) -> int:
            merged = {**ACCEPT, **bearer(), **headers}
            if transport == "sse":
                async with http.stream("GET", url, headers=merged) as response:
                    return response.status_code
            return (await http.post(url, headers=merged, json=INITIALIZE)).status_code

        assert await status(host="evil.example") == 421
        assert await status(origin="http://evil.example") == 403
        assert await status(host="papers.example.org") == 200
        assert await status(host="papers.example.org:8443", origin="https://papers.example.org") == 200


# -- bounded cost per client -----------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_body_over_64_kib_is_refused_with_413(open_servers: dict[str, str], transport: str) -> None:
    oversized = {**INITIALIZE, "params": {**INITIALIZE["params"], "padding": "x" * serving.MAX_BODY_BYTES}}
    url = open_servers[transport]
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        if transport == "sse":
            async with http.stream("GET", url, headers=ACCEPT) as stream:
                events = stream.aiter_lines()
                endpoint = await _endpoint(events)
                response = await http.post(url.removesuffix("/sse") + endpoint, headers=ACCEPT, content=json.dumps(oversized))
        else:
            response = await http.post(url, headers=ACCEPT, content=json.dumps(oversized))
    assert response.status_code == 413


@dataclass
class Gate:
    entered: threading.Event = field(default_factory=threading.Event)  # a search is running (and held)
    release: threading.Event = field(default_factory=threading.Event)


async def test_an_oversized_list_argument_is_refused_over_http(open_servers: dict[str, str]) -> None:
    async with client_for(open_servers["streamable-http"], "streamable-http", token=None) as client:
        refused = await client.call_tool("list_samples_by_status", {"status": ["ran"] * 1_000})
    assert refused.is_error is True
    assert refused.content[0].text.startswith("invalid_argument: status takes at most 20 values")  # type: ignore[union-attr]


async def test_stateless_mode_answers_json_without_sessions(corpus: Corpus) -> None:
    async with http_server(corpus, settings_for("streamable-http", stateless=True)) as url, httpx2.AsyncClient(timeout=WAIT) as http:
        call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_paper", "arguments": {"paper": BERT_MOUTH}}}
        answer = await http.post(url, headers={"accept": "application/json", "content-type": "application/json"}, json=call)
        async with client_for(url, "streamable-http", token=None, mode="legacy") as client:
            listed = await client.list_tools()
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    assert "mcp-session-id" not in answer.headers
    assert answer.json()["result"]["structuredContent"]["query"] == {"asked": BERT_MOUTH}
    assert len(listed.tools) == len(TOOL_NAMES)


@pytest.fixture
def blocked_search(corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    """search_papers blocks (in its worker thread) until released; every other call is untouched."""
    gate = Gate()
    original = type(corpus.search).search

    def slow(engine: Any, *args: Any) -> Any:
        gate.entered.set()
        gate.release.wait(WAIT)
        return original(engine, *args)

    monkeypatch.setattr(type(corpus.search), "search", slow)
    yield gate
    gate.release.set()


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_slow_call_does_not_delay_a_fast_one_on_another_connection(
    open_servers: dict[str, str], transport: str, blocked_search: Gate
) -> None:
    url = open_servers[transport]
    async with client_for(url, transport, token=None) as slow_client, client_for(url, transport, token=None) as fast_client:
        finished: list[str] = []

        async def slow() -> None:
            await slow_client.call_tool("search_papers", {"query": "bert"})
            finished.append("slow")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(slow)
            with anyio.fail_after(WAIT):
                answer = await fast_client.call_tool("get_paper", {"paper": BERT_MOUTH})
            finished.append("fast")
            blocked_search.release.set()
    assert answer.structured_content is not None and answer.structured_content["query"] == {"asked": BERT_MOUTH}
    assert finished == ["fast", "slow"]


async def _open_session(http: httpx2.AsyncClient, url: str) -> str:
    response = await http.post(url, headers=ACCEPT, json=INITIALIZE)
    assert response.status_code == 200
    session = response.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, headers={**ACCEPT, "mcp-session-id": session}, json=initialized)).status_code == 202
    return session


async def _ping(http: httpx2.AsyncClient, url: str, session: str, request_id: int = 2) -> httpx2.Response:
    ping = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
    return await http.post(url, headers={**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}, json=ping)


async def test_opening_a_session_past_the_cap_closes_the_least_recently_used(corpus: Corpus) -> None:
    async with http_server(corpus, settings_for("streamable-http", max_sessions=2)) as url, httpx2.AsyncClient(timeout=WAIT) as http:
        first = await _open_session(http, url)
        second = await _open_session(http, url)
        async with client_for(url, "streamable-http", token=None) as modern:  # 2026-07-28 requests open no session
            assert modern.protocol_version == "2026-07-28"
            await modern.call_tool("corpus_stats", {})
        assert (await _ping(http, url, second)).status_code == 200  # so nothing was closed for them
        assert (await _ping(http, url, first)).status_code == 200  # first is now the most recently used
        third = await _open_session(http, url)  # closes `second`
        assert (await _ping(http, url, second)).status_code == 404
        assert (await _ping(http, url, first)).status_code == 200
        assert (await _ping(http, url, third)).status_code == 200
        for _ in range(20):  # a client opening sessions in a loop never locks the others out
            await _open_session(http, url)
        assert (await http.post(url, headers=ACCEPT, json=INITIALIZE)).status_code == 200


async def test_a_request_id_already_in_flight_in_the_session_gets_an_error(open_servers: dict[str, str], blocked_search: Gate) -> None:
    url = open_servers["streamable-http"]
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        session = await _open_session(http, url)
        headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        search = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search_papers", "arguments": {"query": "bert"}}}
        first: list[httpx2.Response] = []

        async def in_flight() -> None:
            first.append(await http.post(url, headers=headers, json=search))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(in_flight)
            with anyio.fail_after(WAIT):
                await anyio.to_thread.run_sync(blocked_search.entered.wait)  # the search with id 7 is running
                duplicate = await http.post(url, headers=headers, json={**search, "params": {"name": "corpus_stats", "arguments": {}}})
            blocked_search.release.set()
    assert duplicate.status_code == 409
    error = duplicate.json()
    assert error["id"] == 7 and error["error"]["message"].startswith("invalid_request: request id 7 is already in flight")
    (answered,) = first
    assert answered.status_code == 200 and '"total":2' in answered.text  # the first call still gets its own answer


async def test_a_client_that_never_finishes_its_headers_is_disconnected(
    open_servers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(HeaderTimeoutH11, "header_timeout", 0.2)  # read as each connection is made
    url = open_servers["streamable-http"]
    host, port = url.removeprefix("http://").split("/")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=WAIT) as raw:
        raw.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")  # and nothing more
        with anyio.fail_after(WAIT):
            closed = await anyio.to_thread.run_sync(raw.recv, 1024)
    assert closed == b""


# -- health ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_healthz_needs_no_token_and_shows_counts_only(team_servers: dict[str, str], transport: str) -> None:
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        response = await http.get(team_servers[transport].rsplit("/", 1)[0] + "/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "papers": 2, "reloads": 0, "failed_reloads": 0, "last_reload_error": None}


# -- the process: exposure, signals, stderr ------------------------------------------------------------------


@pytest.fixture
def slow_github() -> Iterator[FixtureServer]:
    """A raw-file server that holds every request until released (what a call in flight waits on)."""
    for server in serve():

        def held(request: Any, release: threading.Event = server.release) -> None:
            release.wait(WAIT)
            reply(200, b"def preprocess():\n    return 1\n")(request)

        server.route("/nyu-dl/bert-gen/HEAD/generate.py", held)
        yield server


async def test_serve_answers_in_both_eras_then_on_sigterm_answers_the_call_in_flight_and_exits_0(
    tmp_path: Path, slow_github: FixtureServer
) -> None:
    environment = {"PAPERCODE_OFFLINE": "0", "PAPERCODE_CODE_BASE_URL": slow_github.base_url, "PAPERCODE_CODE_DIR": str(tmp_path / "code")}
    with running(tmp_path, "--transport", "streamable-http", **environment) as (process, url):
        await _answers_in_both_eras(url, "streamable-http")
        async with client_for(url, "streamable-http", token=None) as client:
            await client.list_tools()  # the client validates answers against these: fetched now, not after the signal
            answers: list[Any] = []

            async def call() -> None:
                answers.append(await client.call_tool("get_code", {"code_sha256": "2a890c3f8ff19f47"}))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                with anyio.fail_after(WAIT):
                    while not slow_github.requests:  # the call is in flight: the server is fetching for it
                        await anyio.sleep(0.01)
                process.send_signal(signal.SIGTERM)
                slow_github.release.set()
        with anyio.fail_after(WAIT):
            code = await anyio.to_thread.run_sync(process.wait)
        assert process.stderr is not None
        stderr = process.stderr.read()
    (answer,) = answers
    assert answer.structured_content is not None and answer.structured_content["withheld"] == "hash_mismatch"
    assert code == 0
    assert "Traceback" not in stderr


async def test_serve_answers_in_both_eras_and_logs_request_values_cut_escaped_and_rate_limited(tmp_path: Path) -> None:
    with running(tmp_path, "--transport", "sse") as (process, url):
        await _answers_in_both_eras(url, "sse")
        async with httpx2.AsyncClient(timeout=WAIT) as http:
            for _ in range(40):
                # Long, but under the 16 KiB a request's headers may take: a longer one is refused as too large
                # (400, connection closed) whenever it arrives in several reads, which would make this test race.
                refused = await http.get(url, headers={"host": "\x1b[31mevil" + "x" * 10_000})
                assert refused.status_code == 421
            async with http.stream("GET", url, headers=ACCEPT) as stream:  # an open stream at shutdown
                events = stream.aiter_lines()
                endpoint = await _endpoint(events)
                malformed = await http.post(url.removesuffix("/sse") + endpoint, headers=ACCEPT, content=b"{not json")
                process.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT):
            code = await anyio.to_thread.run_sync(process.wait)
        assert process.stderr is not None
        lines = process.stderr.read().splitlines()
    assert code == 0 and malformed.status_code == 400
    assert all(len(line) < 700 for line in lines), max(map(len, lines))
    assert not any("\x1b" in line for line in lines)
    host_lines = [line for line in lines if "Invalid Host header" in line]
    assert 1 <= len(host_lines) <= BURST
    assert not any(line.startswith("Traceback") for line in lines)
