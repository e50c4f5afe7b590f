"""HTTP as a hostile network sees it (issue 16): auth before anything reads a request, a time limit on bodies,
no server paths in what anyone outside can read, a Host without its default port, and logs a terminal can trust.

Real servers on 127.0.0.1 and raw sockets: in this process where a limit must be lowered for the test, as
`papercode serve` (this checkout's, with a lowered file-descriptor limit where that is the point) elsewhere.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import time
from dataclasses import replace
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from papercode.corpus.stages import Corpus
from papercode.edge.access import transport_security
from papercode.edge.compat.body_timeout import BodyTimeout
from papercode.edge.stderr_log import printable
from papercode.settings import Settings, bundled_records_dir
from tests.support.http import ACCEPT, INITIALIZE, TOKEN, WAIT, bearer, health, http_server, papercode_serve, settings_for, wait_ready
from tests.support.mcp import Connect
from tests.support.records import make_record, write_records

pytestmark = [pytest.mark.anyio, pytest.mark.process]

AT_ONCE = 3.0  # seconds: well under the 5 s keep-alive and the 10 s header and body limits, which would also close


def address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split("/")[0].rsplit(":", 1)
    return host, int(port)


def send_raw(url: str, head: bytes) -> socket.socket:
    raw = socket.create_connection(address(url), timeout=WAIT)
    raw.sendall(head)
    return raw


def until_closed(raw: socket.socket, seconds: float) -> tuple[bytes, bool]:
    """What the server sends within `seconds`, and whether it closed the connection by then."""
    received = b""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        raw.settimeout(left)
        try:
            chunk = raw.recv(65536)
        except TimeoutError:
            break
        except ConnectionResetError:
            return received, True
        if not chunk:
            return received, True
        received += chunk
    return received, False


def post_head(url: str, *, length: int = 1000, token: str | None = None, path: str | None = None) -> bytes:
    """A POST's headers (announcing a `length`-byte body) and the first byte of that body."""
    host, port = address(url)
    lines = [
        f"POST {path or url.split(str(port), 1)[1]} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {length}",
        *([f"Authorization: Bearer {token}"] if token else []),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n{").encode()


def _health(url: str) -> dict[str, object]:
    answer = health(url)
    assert "secret-place" not in str(answer)
    return answer


# -- 1. auth before anything reads the request; a time limit on the body -------------------------------------


HELD = 80  # connections that send headers and one byte without a token
FD_LIMIT = 64  # the server's file descriptors: fewer than HELD, so held connections would starve it


async def test_requests_without_a_token_are_refused_before_their_body_and_cost_the_server_nothing(tmp_path: Path) -> None:
    environment = {"PAPERCODE_TEST_TOKEN": TOKEN}
    args = ("--transport", "streamable-http", "--auth-token-env", "PAPERCODE_TEST_TOKEN")
    with papercode_serve(tmp_path, *args, fd_limit=FD_LIMIT, **environment) as (_, url):
        wait_ready(url)  # the corpus is built (it needs descriptors of its own)
        held = [send_raw(url, post_head(url)) for _ in range(HELD)]  # stateful mode: no session header either
        try:
            async with httpx2.AsyncClient(timeout=WAIT) as http:
                with anyio.fail_after(WAIT):
                    initialized = await http.post(url, headers={**ACCEPT, **bearer()}, json=INITIALIZE)
            answers = [await anyio.to_thread.run_sync(until_closed, raw, AT_ONCE) for raw in held]
        finally:
            for raw in held:
                raw.close()
    assert initialized.status_code == 200 and "mcp-session-id" in initialized.headers
    for answer, closed in answers:
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:80]
        assert b'www-authenticate: bearer error="invalid_token"' in answer.lower()
        assert closed


@pytest.mark.parametrize("mode", ["stateful", "stateless", "sse"])
async def test_a_request_without_a_token_gets_401_at_once_and_its_connection_closed(corpus: Corpus, mode: str) -> None:
    settings = settings_for("sse" if mode == "sse" else "streamable-http", stateless=mode == "stateless")
    async with http_server(corpus, settings, (TOKEN,)) as url:
        path = "/messages/?session_id=0123456789abcdef0123456789abcdef" if mode == "sse" else None
        for token in (None, "wrong-token-0123456789abcdef"):
            with send_raw(url, post_head(url, token=token, path=path)) as raw:
                answer, closed = await anyio.to_thread.run_sync(until_closed, raw, AT_ONCE)
            assert answer.startswith(b"HTTP/1.1 401 ") and closed, (token, answer[:80], closed)


@pytest.mark.parametrize("mode", ["stateful", "stateless"])
async def test_a_body_slower_than_the_limit_gets_408_and_its_connection_closed(
    corpus: Corpus, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BodyTimeout, "seconds", 0.5)
    async with http_server(corpus, settings_for("streamable-http", stateless=mode == "stateless"), (TOKEN,)) as url:
        with send_raw(url, post_head(url, token=TOKEN)) as raw:  # authenticated, and then nothing more
            started = time.monotonic()
            answer, closed = await anyio.to_thread.run_sync(until_closed, raw, WAIT)
            took = time.monotonic() - started
        async with httpx2.AsyncClient(timeout=WAIT) as http:  # a whole body in time is served as before
            served = await http.post(url, headers={**ACCEPT, **bearer()}, json=INITIALIZE)
    assert answer.startswith(b"HTTP/1.1 408 ") and closed, answer[:80]
    assert 0.4 < took < WAIT / 2
    assert served.status_code == 200


# -- 3. no server paths in what anyone outside can read --------------------------------------------------------


def test_healthz_names_a_vanished_records_directory_without_its_path(tmp_path: Path) -> None:
    records = tmp_path / "secret-place" / "records"
    shutil.copytree(bundled_records_dir(), records, ignore=shutil.ignore_patterns("README.md"))
    with papercode_serve(tmp_path, "--transport", "streamable-http", "--records", str(records)) as (process, url):
        wait_ready(url)
        shutil.rmtree(records)
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + WAIT
        while (answer := _health(url))["last_reload_error"] is None:
            assert time.monotonic() < deadline, "no failed reload in time"
            time.sleep(0.05)
    assert answer == {
        "status": "degraded",  # still serving what it served before the reload that failed
        "papers": 2,
        "reloads": 0,
        "failed_reloads": 1,
        "last_reload_error": "records: records directory does not exist",
    }


async def test_load_problems_name_other_records_without_their_path(tmp_path: Path, connect: Connect) -> None:
    first = make_record()
    records = write_records(tmp_path / "secret-place" / "records", [first, first])  # a duplicate names the copy kept
    async with connect(lambda: Corpus.load([records])) as client:
        stats = await client.call_tool("corpus_stats", {})
        report = (await client.read_resource("corpus://load-report")).contents[0].text  # type: ignore[union-attr]
    assert stats.structured_content is not None
    (problem,) = stats.structured_content["load"]["first_problems"]
    assert problem.startswith("error duplicate 001.json: duplicate of") and "kept the one in 000.json" in problem
    assert "secret-place" not in json.dumps(stats.structured_content) and "secret-place" not in report
    assert json.loads(report)["problems"][0]["reason"] == problem.split(": ", 1)[1]


# -- 11. a Host without the scheme's default port -----------------------------------------------------------------


def _host_allowed(settings: Settings, host: str, origin: str | None = None) -> int:
    headers = [(b"host", host.encode()), *([(b"origin", origin.encode())] if origin else [])]
    request = Request({"type": "http", "method": "GET", "path": "/mcp", "headers": headers, "query_string": b""})
    refused = anyio.run(TransportSecurityMiddleware(transport_security(settings)).validate_request, request)
    return 200 if refused is None else refused.status_code


def test_on_port_80_the_url_the_server_prints_is_allowed() -> None:
    on_80 = replace(Settings(), transport="streamable-http", port=80)
    for host in ("127.0.0.1", "localhost", "[::1]", "127.0.0.1:80", "localhost:80"):
        assert _host_allowed(on_80, host) == 200, host
    assert _host_allowed(on_80, "127.0.0.1", origin="http://127.0.0.1") == 200  # a browser's Origin leaves out :80 too
    assert _host_allowed(on_80, "evil.example") == 421
    assert _host_allowed(on_80, "127.0.0.1.evil.example") == 421
    assert _host_allowed(on_80, "127.0.0.1", origin="http://evil.example") == 403
    named = replace(on_80, host="0.0.0.0", allowed_hosts=("papers.example.org:*", "::1"))
    for host in ("papers.example.org", "papers.example.org:443", "[::1]", "[::1]:80"):
        assert _host_allowed(named, host) == 200, host
    assert _host_allowed(named, "papers.example.org.evil.example") == 421


async def test_a_host_header_without_a_port_is_served(corpus: Corpus) -> None:
    async with http_server(corpus, settings_for("streamable-http")) as url, httpx2.AsyncClient(timeout=WAIT) as http:
        for host in ("127.0.0.1", "localhost"):
            response = await http.post(url, headers={**ACCEPT, "host": host}, json=INITIALIZE)
            assert response.status_code == 200, host


# -- 12. what reaches stderr: C1 controls, separators and bidirectional controls escaped ---------------------------


UNSAFE = "\x1b\x7f\x80\x85\x9b\x9f\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_printable_escapes_c1_controls_separators_and_bidirectional_controls() -> None:
    shown = printable(f"a{UNSAFE}z é ü")
    assert not set(shown) & set(UNSAFE)
    assert shown == (
        "a\\x1b\\x7f\\x80\\x85\\x9b\\x9f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a\\u202b\\u202c\\u202d\\u202e"
        "\\u2066\\u2067\\u2068\\u2069z é ü"
    )


def test_a_c1_control_in_a_host_header_reaches_stderr_escaped(tmp_path: Path) -> None:
    with papercode_serve(tmp_path, "--transport", "streamable-http") as (process, url):
        head = post_head(url, length=1).replace(f"Host: {address(url)[0]}:{address(url)[1]}".encode(), b"Host: \x9b31mevil\x85.example")
        with send_raw(url, head) as raw:
            answer, _ = until_closed(raw, 2.0)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT)
        assert process.stderr is not None
        stderr = process.stderr.read()
    assert answer.startswith(b"HTTP/1.1 421 ")
    (line,) = [line for line in stderr.splitlines() if "Invalid Host header" in line]
    assert line.endswith("Invalid Host header: \\x9b31mevil\\x85.example")
    assert not any(0x80 <= ord(char) < 0xA0 for char in stderr)
