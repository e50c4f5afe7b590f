"""Where source files come from: `locate` against hostile records, the fetcher against a local HTTP server, local clones.

No test touches the internet: every fetch goes to a `ThreadingHTTPServer` on 127.0.0.1 that records
each request it receives, so "no request was made" is asserted, not assumed. The circuit breaker's
clock is injected, so nothing sleeps; a slow handler blocks server-side, bounded by a release event.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import anyio
import pytest

from papercode import __version__
from papercode.verified import sources
from papercode.verified.sources import (
    DEFAULT_BASE_URL,
    MAX_SOURCE_BYTES,
    LocalClones,
    SourceFetcher,
    SourceFile,
    SourceLocation,
    locate,
)
from tests.support.fixture_server import SERVER_HOLD_SECONDS, UNTRUSTED_CERT, FixtureServer, reply, serve


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    yield from serve()


@pytest.fixture
def other_server() -> Iterator[FixtureServer]:
    yield from serve()


@pytest.fixture
def untrusted() -> Iterator[FixtureServer]:
    """A server over HTTPS with a certificate this machine does not trust."""
    yield from serve(tls=True)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def fetcher(server: FixtureServer, clock: FakeClock) -> AsyncIterator[SourceFetcher]:
    """A fetcher that times out only where a test means it to: a busy machine must not turn a held answer into a timeout."""
    fetcher = SourceFetcher(server.base_url, timeout=SERVER_HOLD_SECONDS * 2, clock=clock)
    yield fetcher
    await fetcher.aclose()


@pytest.fixture
async def impatient(server: FixtureServer, clock: FakeClock) -> AsyncIterator[SourceFetcher]:
    """A fetcher that gives up after 0.2 s, for the tests of that bound (the server holds far longer)."""
    fetcher = SourceFetcher(server.base_url, timeout=0.2, clock=clock)
    yield fetcher
    await fetcher.aclose()


def file_location(path: str = "src/model.py", repo: str = "owner/name") -> SourceLocation:
    location = locate(repo, path)
    assert isinstance(location, SourceLocation), location
    return location


def raw_path(path: str, repo: str = "owner/name") -> str:
    return f"/{repo}/HEAD/{path}"


# -- locate: hostile records --------------------------------------------------------------------


def test_locate_accepts_ordinary_sample_paths() -> None:
    assert locate("seanrjohnson/protein_gibbs_sampler", "src/pgen/esm_sampler.py") == SourceLocation(
        "seanrjohnson", "protein_gibbs_sampler", "src/pgen/esm_sampler.py"
    )
    located = locate("gkamradt/LLMTest_NeedleInAHaystack", "needle-in-a-haystack/haystack.py")
    assert isinstance(located, SourceLocation)
    assert located.repo == "gkamradt/LLMTest_NeedleInAHaystack"
    assert isinstance(locate("a-b/x.y_z-1", "dir with space/ünïcode.py"), SourceLocation)


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("../x", id="parent-traversal"),
        pytest.param("a/../../x", id="nested-traversal"),
        pytest.param("./x", id="dot-segment"),
        pytest.param("a//b", id="empty-segment"),
        pytest.param("a/", id="trailing-slash"),
        pytest.param("/etc/passwd", id="absolute-path"),
        pytest.param("\\\\host\\share", id="unc-path"),
        pytest.param("a\\b", id="backslash"),
        pytest.param("a/%2e%2e/b", id="pre-encoded-traversal"),
        pytest.param("a%2fb", id="pre-encoded-slash"),
        pytest.param("a\x00b", id="nul-byte"),
        pytest.param("a\nb", id="newline-log-injection"),
        pytest.param("a\x7fb", id="delete-char"),
        pytest.param("a\u202eyp.exe", id="right-to-left-override"),
        pytest.param("a\ud800b", id="lone-surrogate"),
        pytest.param("x?y", id="query-string"),
        pytest.param("x#y", id="fragment"),
        pytest.param(".git/config", id="git-config"),
        pytest.param("sub/.GIT/config", id="git-config-any-case"),
        pytest.param("", id="empty"),
        pytest.param("a" * 401, id="over-400-chars"),
    ],
)
def test_locate_refuses_hostile_path(path: str) -> None:
    reason = locate("owner/name", path)
    assert isinstance(reason, str) and reason
    assert len(reason) < 120


@pytest.mark.parametrize(
    "repo",
    [
        pytest.param("owner", id="no-name"),
        pytest.param("owner/name/extra", id="extra-segment"),
        pytest.param("https://evil.example/x", id="url-with-host"),
        pytest.param("evil.example:80/x", id="host-and-port"),
        pytest.param("../x", id="dot-dot-owner"),
        pytest.param("x/..", id="dot-dot-name"),
        pytest.param("x/.", id="dot-name"),
        pytest.param("own er/name", id="space-in-owner"),
        pytest.param("-owner/name", id="leading-hyphen-owner"),
        pytest.param("owner/na%2fme", id="pre-encoded-name"),
        pytest.param("owner/name\n", id="trailing-newline"),
        pytest.param("o" * 40 + "/name", id="owner-over-39-chars"),
        pytest.param("owner/" + "n" * 101, id="name-over-100-chars"),
        pytest.param("/name", id="empty-owner"),
        pytest.param("owner/", id="empty-name"),
    ],
)
def test_locate_refuses_hostile_repo(repo: str) -> None:
    reason = locate(repo, "src/model.py")
    assert isinstance(reason, str) and reason


def test_locate_accepts_the_longest_allowed_names() -> None:
    assert isinstance(locate("o" * 39 + "/" + "n" * 100, "p" * 400), SourceLocation)


def test_locate_refuses_values_that_are_not_strings() -> None:
    assert isinstance(locate(None, "x.py"), str)  # type: ignore[arg-type]
    assert isinstance(locate("owner/name", 7), str)  # type: ignore[arg-type]


def test_a_source_location_cannot_be_built_unchecked() -> None:
    with pytest.raises(ValueError):
        SourceLocation("owner", "..", "x.py")
    with pytest.raises(ValueError):
        SourceLocation("owner", "name", "../../etc/passwd")


@pytest.mark.anyio
async def test_a_refused_location_makes_no_request(server: FixtureServer, fetcher: SourceFetcher) -> None:
    hostile = [("owner/name", "../x"), ("https://evil.example/x", "a.py"), ("owner/name", "a/%2e%2e/b"), ("owner/name", "x?y")]
    for repo, path in hostile:
        located = locate(repo, path)
        if isinstance(located, SourceLocation):  # the way every caller uses it
            await fetcher.fetch(located)
    assert server.requests == []


# -- fetching -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_fetch_returns_the_file(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("src/model.py"), reply(200, b"def f():\n    return 1\n"))
    assert await fetcher.fetch(file_location()) == SourceFile("ok", b"def f():\n    return 1\n")
    assert server.requests == ["/owner/name/HEAD/src/model.py"]
    assert server.user_agents == [f"papercode/{__version__}"]


@pytest.mark.anyio
async def test_fetch_percent_encodes_each_path_segment(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route("/owner/name/HEAD/dir%20one/caf%C3%A9%20%26%20co%3B.py", reply(200, b"x = 1\n"))
    result = await fetcher.fetch(file_location("dir one/café & co;.py"))
    assert result.outcome == "ok"
    assert server.requests == ["/owner/name/HEAD/dir%20one/caf%C3%A9%20%26%20co%3B.py"]


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 410])
async def test_fetch_missing_file(server: FixtureServer, fetcher: SourceFetcher, status: int) -> None:
    server.route(raw_path("gone.py"), reply(status, b"Not Found"))
    result = await fetcher.fetch(file_location("gone.py"))
    assert result.outcome == "file_missing"
    assert result.content is None
    assert str(status) in result.reason


@pytest.mark.anyio
async def test_fetch_reason_never_holds_the_response_body(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("x.py"), reply(418, b"SECRET-TOKEN-abc123"))
    result = await fetcher.fetch(file_location("x.py"))
    assert result.outcome == "fetch_failed"
    assert "418" in result.reason
    assert "SECRET" not in result.reason


@pytest.mark.anyio
async def test_slow_server_times_out_quickly_and_opens_the_circuit(server: FixtureServer, impatient: SourceFetcher) -> None:
    fetcher = impatient

    def never_answer(request: BaseHTTPRequestHandler) -> None:
        server.release.wait(SERVER_HOLD_SECONDS)

    server.route(raw_path("slow.py"), never_answer)
    started = time.monotonic()
    with anyio.fail_after(2):
        result = await fetcher.fetch(file_location("slow.py"))
    assert time.monotonic() - started < 1.0
    assert result == SourceFile("fetch_failed", reason="timed out after 0.2 s")  # no `connect_failed`: asking again may do
    again = await fetcher.fetch(file_location("other.py"))
    assert again.outcome == "fetch_failed" and "retried in 60 s" in again.reason and again.connect_failed is None
    assert server.requests == [raw_path("slow.py")]


@pytest.mark.anyio
async def test_a_body_that_trickles_in_is_bounded_by_the_total_timeout(server: FixtureServer, impatient: SourceFetcher) -> None:
    fetcher = impatient

    def trickle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Length", "1000")
        request.end_headers()
        for _ in range(1000):  # a byte every 50 ms: each read is well within the per-read timeout
            if server.release.wait(0.05):
                return
            request.wfile.write(b"x")
            request.wfile.flush()

    server.route(raw_path("trickle.py"), trickle)
    started = time.monotonic()
    with anyio.fail_after(2):  # bounds this test should the fetcher's own bound fail
        result = await fetcher.fetch(file_location("trickle.py"))
    assert time.monotonic() - started < 1.0
    assert result == SourceFile("fetch_failed", reason="timed out after 0.2 s")


@pytest.mark.anyio
async def test_a_declared_length_over_the_cap_is_refused_before_the_body(server: FixtureServer, fetcher: SourceFetcher) -> None:
    def promise_a_lot(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Length", str(10**9))
        request.end_headers()
        server.release.wait(SERVER_HOLD_SECONDS)  # never sends it: waiting for the body would time out

    server.route(raw_path("huge.py"), promise_a_lot)
    result = await fetcher.fetch(file_location("huge.py"))
    assert result.outcome == "too_large"
    assert result.content is None


@pytest.mark.anyio
async def test_a_huge_body_is_too_large(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("huge.py"), reply(200, b"x" * (MAX_SOURCE_BYTES + 1)))
    assert (await fetcher.fetch(file_location("huge.py"))).outcome == "too_large"


@pytest.mark.anyio
async def test_a_body_exactly_at_the_cap_is_ok(server: FixtureServer, clock: FakeClock) -> None:
    server.route(raw_path("edge.py"), reply(200, b"x" * 1000))
    fetcher = SourceFetcher(server.base_url, timeout=0.5, max_bytes=1000, clock=clock)
    try:
        result = await fetcher.fetch(file_location("edge.py"))
    finally:
        await fetcher.aclose()
    assert result.outcome == "ok" and result.content == b"x" * 1000


@pytest.mark.anyio
async def test_a_body_without_content_length_is_counted_as_it_streams(server: FixtureServer, fetcher: SourceFetcher) -> None:
    def close_delimited(request: BaseHTTPRequestHandler) -> None:
        request.close_connection = True
        request.send_response(200)
        request.send_header("Connection", "close")
        request.end_headers()
        for _ in range(64):  # 4 MiB in all, no length declared
            request.wfile.write(b"x" * 65536)

    server.route(raw_path("endless.py"), close_delimited)
    assert (await fetcher.fetch(file_location("endless.py"))).outcome == "too_large"


@pytest.mark.anyio
async def test_a_chunked_body_is_counted_as_it_streams(server: FixtureServer, fetcher: SourceFetcher) -> None:
    def chunked(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Transfer-Encoding", "chunked")
        request.end_headers()
        for _ in range(64):
            request.wfile.write(b"10000\r\n" + b"x" * 65536 + b"\r\n")
        request.wfile.write(b"0\r\n\r\n")

    server.route(raw_path("chunked.py"), chunked)
    assert (await fetcher.fetch(file_location("chunked.py"))).outcome == "too_large"


@pytest.mark.anyio
async def test_a_gzip_bomb_is_too_large(server: FixtureServer, fetcher: SourceFetcher) -> None:
    bomb = gzip.compress(bytes(8 * MAX_SOURCE_BYTES))  # a few KiB that inflate to 16 MiB
    assert len(bomb) < MAX_SOURCE_BYTES // 100
    server.route(raw_path("bomb.py"), reply(200, bomb, {"Content-Encoding": "gzip"}))
    assert (await fetcher.fetch(file_location("bomb.py"))).outcome == "too_large"


@pytest.mark.anyio
async def test_a_gzip_body_is_inflated(server: FixtureServer, fetcher: SourceFetcher) -> None:
    source = b"def f():\n    return 1\n" * 100
    server.route(raw_path("small.py"), reply(200, gzip.compress(source), {"Content-Encoding": "gzip"}))
    assert await fetcher.fetch(file_location("small.py")) == SourceFile("ok", source)


# -- redirects ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_redirect_within_the_base_is_followed(server: FixtureServer, fetcher: SourceFetcher, status: int) -> None:
    server.route(raw_path("old.py"), reply(status, headers={"Location": "/owner/renamed/HEAD/new.py"}))
    server.route("/owner/renamed/HEAD/new.py", reply(200, b"new = 1\n"))
    assert await fetcher.fetch(file_location("old.py")) == SourceFile("ok", b"new = 1\n")
    assert server.requests == [raw_path("old.py"), "/owner/renamed/HEAD/new.py"]


@pytest.mark.anyio
async def test_an_absolute_redirect_to_the_same_origin_is_followed(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("old.py"), reply(302, headers={"Location": f"{server.base_url}/owner/name/HEAD/new.py"}))
    server.route(raw_path("new.py"), reply(200, b"new = 1\n"))
    assert (await fetcher.fetch(file_location("old.py"))).outcome == "ok"


@pytest.mark.anyio
async def test_a_redirect_to_another_port_is_not_followed(
    server: FixtureServer, other_server: FixtureServer, fetcher: SourceFetcher
) -> None:
    server.route(raw_path("old.py"), reply(302, headers={"Location": f"{other_server.base_url}/owner/name/HEAD/old.py"}))
    other_server.route(raw_path("old.py"), reply(200, b"stolen = 1\n"))
    result = await fetcher.fetch(file_location("old.py"))
    assert result.outcome == "fetch_failed"
    assert f"redirected off 127.0.0.1:{server.port}" in result.reason
    assert other_server.requests == []


@pytest.mark.anyio
async def test_a_redirect_to_another_host_name_is_not_followed(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("old.py"), reply(302, headers={"Location": f"http://localhost:{server.port}/owner/name/HEAD/new.py"}))
    result = await fetcher.fetch(file_location("old.py"))
    assert result.outcome == "fetch_failed" and "redirected off" in result.reason
    assert server.requests == [raw_path("old.py")]


@pytest.mark.anyio
async def test_a_redirect_to_another_scheme_is_not_followed(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("old.py"), reply(302, headers={"Location": f"https://127.0.0.1:{server.port}/owner/name/HEAD/new.py"}))
    assert (await fetcher.fetch(file_location("old.py"))).outcome == "fetch_failed"
    assert server.requests == [raw_path("old.py")]


@pytest.mark.anyio
async def test_a_redirect_loop_stops_after_three_hops(server: FixtureServer, fetcher: SourceFetcher) -> None:
    server.route(raw_path("loop.py"), reply(302, headers={"Location": raw_path("loop.py")}))
    result = await fetcher.fetch(file_location("loop.py"))
    assert result.outcome == "fetch_failed" and "redirects" in result.reason
    assert len(server.requests) == 4  # the request and three redirects followed


# -- the circuit breaker ------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("status", [500, 503, 429, 403])
async def test_a_failing_base_is_not_asked_again_until_retry_after(
    server: FixtureServer, fetcher: SourceFetcher, clock: FakeClock, status: int
) -> None:
    server.route(raw_path("broken.py"), reply(status, b"busy"))
    server.route(raw_path("fine.py"), reply(200, b"ok = 1\n"))
    first = await fetcher.fetch(file_location("broken.py"))
    assert first.outcome == "fetch_failed" and str(status) in first.reason and first.connect_failed is None
    second = await fetcher.fetch(file_location("fine.py"))
    assert second.outcome == "fetch_failed" and "retried in 60 s" in second.reason
    assert server.requests == [raw_path("broken.py")]
    clock.now += 59.5
    assert "retried in 1 s" in (await fetcher.fetch(file_location("fine.py"))).reason
    clock.now += 1
    assert (await fetcher.fetch(file_location("fine.py"))).outcome == "ok"
    assert server.requests == [raw_path("broken.py"), raw_path("fine.py")]


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 410, 400])
async def test_an_answer_about_one_file_does_not_open_the_circuit(server: FixtureServer, fetcher: SourceFetcher, status: int) -> None:
    server.route(raw_path("odd.py"), reply(status))
    server.route(raw_path("fine.py"), reply(200, b"ok = 1\n"))
    assert (await fetcher.fetch(file_location("odd.py"))).outcome != "ok"
    assert (await fetcher.fetch(file_location("odd.py"))).outcome != "ok"
    assert (await fetcher.fetch(file_location("fine.py"))).outcome == "ok"
    assert len(server.requests) == 3


@pytest.mark.anyio
async def test_an_unreachable_base_opens_the_circuit(clock: FakeClock) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fetcher = SourceFetcher(f"http://127.0.0.1:{port}", timeout=0.5, clock=clock)
    try:
        first = await fetcher.fetch(file_location())
        second = await fetcher.fetch(file_location())
    finally:
        await fetcher.aclose()
    assert first == SourceFile(
        "fetch_failed", reason=f"127.0.0.1:{port} cannot be reached from this machine (Connection refused)", connect_failed="unreachable"
    )
    assert second.outcome == "fetch_failed" and second.connect_failed == "unreachable"  # not asked again: what made it so is said again
    assert second.reason == f"{first.reason}; it will be retried in 60 s"


@pytest.mark.anyio
async def test_a_host_whose_name_does_not_resolve_is_unreachable(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    resolve = socket.getaddrinfo

    def no_such_name(host: Any, *args: Any, **kwargs: Any) -> Any:  # the resolver's answer for a name that does not exist
        if host == "code.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    fetcher = SourceFetcher("http://code.example", timeout=2.0, clock=clock)
    try:
        result = await fetcher.fetch(file_location())
    finally:
        await fetcher.aclose()
    assert result == SourceFile(
        "fetch_failed",
        reason="code.example cannot be resolved from this machine (DNS: Name or service not known)",
        connect_failed="unreachable",
    )


@pytest.fixture
async def over_tls(untrusted: FixtureServer, clock: FakeClock) -> AsyncIterator[SourceFetcher]:
    """A fetcher from the server over HTTPS, which has src/model.py."""
    untrusted.route(raw_path("src/model.py"), reply(200, b"ok = 1\n"))
    fetcher = SourceFetcher(untrusted.base_url, timeout=SERVER_HOLD_SECONDS, clock=clock)
    yield fetcher
    await fetcher.aclose()


@pytest.mark.anyio
async def test_a_certificate_this_machine_does_not_trust_is_a_failed_tls_handshake_not_an_unreachable_host(
    untrusted: FixtureServer, over_tls: SourceFetcher
) -> None:
    # httpcore raises ConnectError for it, over an ssl.SSLError whose errno (1) is OpenSSL's: not "Operation not permitted"
    first = await over_tls.fetch(file_location())
    second = await over_tls.fetch(file_location())
    assert (first.outcome, first.connect_failed) == ("fetch_failed", "tls")
    said = re.escape(f"the TLS handshake with 127.0.0.1:{untrusted.port} failed: certificate verify failed: ")
    assert re.fullmatch(said + "self[- ]signed certificate", first.reason), first.reason
    assert second == SourceFile("fetch_failed", reason=f"{first.reason}; it will be retried in 60 s", connect_failed="tls")
    assert untrusted.requests == []  # the handshake failed: nothing was asked


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process trusts the test server's certificate alone, as a server started with SSL_CERT_FILE naming it does
    (the TLS context is made once a process, on first use)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(UNTRUSTED_CERT))
    sources._tls_context.cache_clear()
    yield
    sources._tls_context.cache_clear()  # made again, without it, by the next test that fetches


@pytest.mark.anyio
@pytest.mark.usefixtures("trusting")
async def test_the_next_step_a_failed_handshake_names_works_a_certificate_trusted_through_ssl_cert_file(over_tls: SourceFetcher) -> None:
    assert await over_tls.fetch(file_location()) == SourceFile("ok", b"ok = 1\n")


# -- concurrency ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_concurrent_fetches_of_one_file_share_one_request(server: FixtureServer, fetcher: SourceFetcher) -> None:
    gate = threading.Event()

    def held(request: BaseHTTPRequestHandler) -> None:
        gate.wait(SERVER_HOLD_SECONDS)
        reply(200, b"shared = 1\n")(request)

    server.route(raw_path("shared.py"), held)
    results: list[SourceFile] = []

    async def fetch_into_results() -> None:
        results.append(await fetcher.fetch(file_location("shared.py")))

    async with anyio.create_task_group() as group:
        group.start_soon(fetch_into_results)
        group.start_soon(fetch_into_results)
        await anyio.wait_all_tasks_blocked()  # both are inside fetch before the server answers
        gate.set()
    assert results == [SourceFile("ok", b"shared = 1\n")] * 2
    assert server.requests == [raw_path("shared.py")]


@pytest.mark.anyio
async def test_a_cancelled_fetch_does_not_strand_the_one_waiting_on_it(server: FixtureServer, fetcher: SourceFetcher) -> None:
    gate = threading.Event()

    def held(request: BaseHTTPRequestHandler) -> None:
        gate.wait(SERVER_HOLD_SECONDS)
        reply(200, b"shared = 1\n")(request)

    server.route(raw_path("shared.py"), held)
    results: list[SourceFile] = []
    leader = anyio.CancelScope()

    async def lead() -> None:
        with leader:
            await fetcher.fetch(file_location("shared.py"))

    async def follow() -> None:
        results.append(await fetcher.fetch(file_location("shared.py")))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(lead)
            await anyio.wait_all_tasks_blocked()
            group.start_soon(follow)
            await anyio.wait_all_tasks_blocked()
            leader.cancel()
            gate.set()
    assert results == [SourceFile("ok", b"shared = 1\n")]


@pytest.mark.anyio
async def test_no_more_than_concurrency_requests_are_in_flight(server: FixtureServer, clock: FakeClock) -> None:
    def held_briefly(request: BaseHTTPRequestHandler) -> None:
        server.release.wait(0.1)  # long enough for an unbounded fetcher's other requests to arrive
        reply(200, b"x = 1\n")(request)

    paths = [f"f{number}.py" for number in range(6)]
    for path in paths:
        server.route(raw_path(path), held_briefly)
    fetcher = SourceFetcher(server.base_url, timeout=2.0, concurrency=2, clock=clock)
    try:
        async with anyio.create_task_group() as group:
            for path in paths:
                group.start_soon(fetcher.fetch, file_location(path))
    finally:
        await fetcher.aclose()
    assert len(server.requests) == 6
    assert server.most_active == 2


# -- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    ["ftp://example.com", "file:///etc", "127.0.0.1:8000", "http://", "http://user:secret@example.com", "https://x/?q=1", "http://x:99999"],
)
def test_the_base_url_must_be_plain_http_or_https(base_url: str) -> None:
    with pytest.raises(ValueError):
        SourceFetcher(base_url)


def test_the_base_url_loses_a_trailing_slash() -> None:
    assert SourceFetcher("http://127.0.0.1:9/raw/").base_url == "http://127.0.0.1:9/raw"
    assert SourceFetcher().base_url == DEFAULT_BASE_URL


# -- local clones ---------------------------------------------------------------------------


@pytest.fixture
def clones(tmp_path: Path) -> Path:
    root = tmp_path / "clones"
    (root / "owner" / "name" / "src").mkdir(parents=True)
    (root / "owner" / "name" / "src" / "model.py").write_bytes(b"def f():\n    return 1\n")
    return root


def test_local_clone_file_is_read(clones: Path) -> None:
    assert LocalClones(clones).read(file_location()) == SourceFile("ok", b"def f():\n    return 1\n")


def test_local_clone_directories_match_ignoring_case(tmp_path: Path) -> None:
    (tmp_path / "SeanRJohnson" / "Protein_Gibbs_Sampler").mkdir(parents=True)
    (tmp_path / "SeanRJohnson" / "Protein_Gibbs_Sampler" / "run.py").write_bytes(b"x = 1\n")
    result = LocalClones(tmp_path).read(file_location("run.py", "seanrjohnson/protein_gibbs_sampler"))
    assert result == SourceFile("ok", b"x = 1\n")


def test_local_clone_missing_file_or_clone(clones: Path) -> None:
    local = LocalClones(clones)
    assert local.read(file_location("src/absent.py")).outcome == "file_missing"
    assert local.read(file_location("src/model.py/deeper.py")).outcome == "file_missing"
    assert local.read(file_location("src")).outcome == "file_missing"  # a directory
    assert local.read(file_location("src/model.py", "owner/other")).outcome == "file_missing"
    assert local.read(file_location("src/model.py", "nobody/name")).outcome == "file_missing"
    (clones / "owner" / "name" / "loop.py").symlink_to(clones / "owner" / "name" / "loop.py")
    assert local.read(file_location("loop.py")).outcome == "file_missing"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_local_clone_fifo_is_not_opened(clones: Path) -> None:
    fifo = clones / "owner" / "name" / "pipe.py"
    os.mkfifo(fifo)

    def unblock_a_stuck_reader() -> None:  # bounds the test if the read ever opens the FIFO
        with contextlib.suppress(OSError):  # no reader was waiting: good
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    watchdog = threading.Timer(2.0, unblock_a_stuck_reader)
    watchdog.start()
    try:
        started = time.monotonic()
        result = LocalClones(clones).read(file_location("pipe.py"))
    finally:
        watchdog.cancel()
    assert time.monotonic() - started < 1.0
    assert result.outcome == "file_missing"


def test_local_clone_symlink_escaping_the_clone_is_refused(clones: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.py"
    secret.parent.mkdir()
    secret.write_bytes(b"TOKEN = 'x'\n")
    clone = clones / "owner" / "name"
    (clone / "link.py").symlink_to(secret)
    (clone / "linked_dir").symlink_to(secret.parent, target_is_directory=True)
    (clones / "owner" / "other").mkdir()
    (clones / "owner" / "other" / "x.py").write_bytes(b"x = 1\n")
    (clone / "sibling").symlink_to(clones / "owner", target_is_directory=True)  # another repository's clone
    local = LocalClones(clones)
    for path in ("link.py", "linked_dir/secret.py", "sibling/other/x.py"):
        result = local.read(file_location(path))
        assert result.outcome == "invalid_location", path
        assert result.content is None


def test_local_clone_symlink_within_the_clone_is_followed(clones: Path) -> None:
    (clones / "owner" / "name" / "alias.py").symlink_to(clones / "owner" / "name" / "src" / "model.py")
    assert LocalClones(clones).read(file_location("alias.py")).outcome == "ok"


def test_local_clone_file_over_the_cap_is_too_large(clones: Path) -> None:
    (clones / "owner" / "name" / "big.py").write_bytes(b"x" * 11)
    (clones / "owner" / "name" / "edge.py").write_bytes(b"x" * 10)
    local = LocalClones(clones, max_bytes=10)
    assert local.read(file_location("big.py")).outcome == "too_large"
    assert local.read(file_location("edge.py")) == SourceFile("ok", b"x" * 10)
