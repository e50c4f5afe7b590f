"""A stdio client that closes its input right after its last request gets exactly one answer per request
(`compat.stdio_eof`): the answer, or past the bound a coded `exiting` error; a signal still stops the server at once.

The wire is tested in-process over pipes (the bound shortened); `papercode serve` as real processes, 20 runs of 8
calls with the input closed at once, over the bundled records and over an archive.
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.types import CONNECTION_CLOSED, JSONRPCError, JSONRPCRequest, JSONRPCResponse

from papercode.edge.codes import EXITING
from papercode.edge.compat import stdio_eof, stdio_wire
from tests.support.checkout import THIS_CHECKOUT

WAIT = 30  # seconds: the bound on every wait for something that does happen
RUNS = 20
AT_ONCE = 4  # servers run side by side (the runs take the machine's cores)
TESTS = Path(__file__).resolve().parent
ENVIRONMENT = {**THIS_CHECKOUT, "PATH": "", "PAPERCODE_LOG_LEVEL": "WARNING", "PAPERCODE_OFFLINE": "1"}
HANDSHAKE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(ident: object, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments, **({"_meta": meta} if meta else {})}
    return _line({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})


class Pipes:
    """A wire over two pipes: the client's end of its input (`client_in`) and of its output (`client_out`)."""

    def __init__(self, seconds: float) -> None:
        in_read, self.client_in = os.pipe()
        self.client_out, out_write = os.pipe()
        self._fds = [in_read, out_write, self.client_out, self.client_in]
        self.wire = stdio_wire.Wire(in_read, out_write, eof_answer_seconds=seconds)
        self.sdk_reads = io.TextIOWrapper(self.wire.input, encoding="utf-8", errors="replace")  # as the SDK reads it

    def sdk_writes(self, message: JSONRPCResponse | JSONRPCError) -> None:
        """An answer, written as the SDK writes it (its JSON, then a flush)."""
        self.wire.output.write((message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode())

    def send_and_close(self, *lines: bytes) -> None:
        """The client's lines, then the end of its input."""
        os.write(self.client_in, b"".join(lines))
        self._fds.remove(self.client_in)
        os.close(self.client_in)

    def written(self) -> list[dict[str, Any]]:
        """Every line written to the client so far."""
        data = b""
        while select.select([self.client_out], [], [], 0)[0]:
            data += os.read(self.client_out, 65_536)
        return [json.loads(line) for line in data.splitlines()]

    def close(self) -> None:
        self.wire.close()
        for fd in self._fds:
            os.close(fd)


def _ok(ident: int | str) -> JSONRPCResponse:
    return JSONRPCResponse(jsonrpc="2.0", id=ident, result={})


# -- the wire, in-process ---------------------------------------------------------------------------


def test_past_the_bound_each_request_still_running_is_answered_exiting_once_and_the_sdks_late_answer_dropped() -> None:
    pipes = Pipes(seconds=0.05)
    try:
        pipes.send_and_close(
            _call(1, "search_papers", {"query": "bert"}),  # never answered
            _call(7, "corpus_stats", {}),  # an id used twice: one answered, the other not
            _call(7, "corpus_stats", {}),
            _call("a", "get_paper", {"paper": "1902.04094"}),  # answered
            _call(5, "search_papers", {"query": "x"}),  # cancelled by its client: the SDK never answers it
            _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "5"}}),
            _line({"jsonrpc": "2.0", "id": 6, "method": "subscriptions/listen", "params": {"notifications": {}}}),  # a stream
        )
        for _ in range(7):
            assert pipes.sdk_reads.readline()
        pipes.sdk_writes(_ok("a"))
        pipes.sdk_writes(_ok(7))
        assert pipes.sdk_reads.readline() == ""  # the end of input, once the bound has passed
        pipes.sdk_writes(JSONRPCError(jsonrpc="2.0", id=1, error={"code": CONNECTION_CLOSED, "message": "Connection closed"}))
        written = pipes.written()
    finally:
        pipes.close()
    assert [line["id"] for line in written] == ["a", 7, 1, 7]
    assert all(line["error"]["code"] == EXITING for line in written[2:])
    assert written[2]["error"]["message"] == (
        "exiting: the server's input ended and this request was still running 0.05 s later. Next: send it again to a"
        " server whose input stays open until the answer comes."
    )


def test_the_end_of_input_waits_for_the_answers_still_to_come_and_no_longer() -> None:
    pipes = Pipes(seconds=WAIT)
    try:
        pipes.send_and_close(_call(1, "search_papers", {"query": "bert"}), _call(2, "corpus_stats", {}))
        assert pipes.sdk_reads.readline() and pipes.sdk_reads.readline()
        pipes.sdk_writes(_ok(2))
        ended: list[str] = []
        reading = threading.Thread(target=lambda: ended.append(pipes.sdk_reads.readline()))
        reading.start()  # the SDK's next read waits for the answer of request 1, which comes now
        pipes.sdk_writes(_ok(1))
        reading.join(WAIT)
        written = pipes.written()
    finally:
        pipes.close()
    assert ended == [""]
    assert written == [{"jsonrpc": "2.0", "id": 2, "result": {}}, {"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_a_stopped_wire_answers_the_requests_still_running_at_once() -> None:
    pipes = Pipes(seconds=WAIT)  # the bound is never reached: the stop comes first
    try:
        os.write(pipes.client_in, _call(3, "search_papers", {"query": "bert"}))
        assert pipes.sdk_reads.readline()
        threading.Timer(0.1, pipes.wire.end).start()  # a signal, while the SDK waits for its next line
        assert pipes.sdk_reads.readline() == ""
        written = pipes.written()
    finally:
        pipes.close()
    assert written == [
        {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {
                "code": EXITING,
                "message": "exiting: the server was stopped before this request finished. Next: send it again once the server runs again.",
            },
        }
    ]


IDS = st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=12)


@given(ident=IDS, answer=st.sampled_from(["result", "error"]))
def test_an_answers_id_is_read_as_the_sdk_writes_it(ident: int | str, answer: str) -> None:
    if answer == "result":
        message: JSONRPCResponse | JSONRPCError = JSONRPCResponse(jsonrpc="2.0", id=ident, result={"text": 'a "quoted" id'})
    else:
        message = JSONRPCError(jsonrpc="2.0", id=ident, error={"code": -1, "message": "m"})
    assert stdio_eof.response_id(message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n") == ident


@given(ident=IDS)
def test_a_request_or_a_notification_of_the_server_is_no_answer(ident: int | str) -> None:
    request = JSONRPCRequest(jsonrpc="2.0", id=ident, method="roots/list")
    assert stdio_eof.response_id(request.model_dump_json(by_alias=True, exclude_unset=True).encode()) is None
    assert stdio_eof.response_id(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"id":1,"result":2}}') is None
    assert stdio_eof.response_id(json.dumps({"result": {}, "id": ident, "jsonrpc": "2.0"}).encode()) == ident  # any order


class _Lines:
    """The lines a process writes on `fd`, each waited for at most `WAIT` seconds."""

    def __init__(self, fd: int) -> None:
        self._fd, self._buffer = fd, b""

    def text(self) -> str:
        while b"\n" not in self._buffer:
            assert select.select([self._fd], [], [], WAIT)[0], f"no line within {WAIT} s"
            chunk = os.read(self._fd, 65_536)
            assert chunk, "the process closed its output"
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace")

    def next(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.text())
        return message

    def rest(self) -> bytes:
        while chunk := os.read(self._fd, 65_536):  # the process has ended: its output is closed
            self._buffer += chunk
        return self._buffer


# -- papercode serve, as real processes ----------------------------------------------------------------


def _closed_at_once(tmp_path: Path, serve_args: list[str], calls: list[tuple[str, dict[str, Any]]], run: int) -> dict[object, list[Any]]:
    """One `papercode serve` sent `calls` (ids 1…) at once, its input closed after them: each id's answers."""
    modern = run % 2 == 1  # every other run in the 2026-07-28 era (no initialize)
    lines = [] if modern else [_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE})]
    lines += [] if modern else [_line({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    lines += [_call(ident, name, arguments, MODERN if modern else None) for ident, (name, arguments) in enumerate(calls, 1)]
    home = tmp_path / f"run{run}"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "papercode", "serve", *serve_args],
        input=b"".join(lines),  # written at once, then the input closed
        capture_output=True,
        env={**ENVIRONMENT, "HOME": str(home), "PAPERCODE_CACHE_DIR": str(home / "cache")},
        cwd=home,
        timeout=WAIT + stdio_eof.EOF_ANSWER_SECONDS,
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    answers: dict[object, list[Any]] = defaultdict(list)
    for line in done.stdout.splitlines():
        message = json.loads(line)
        answers[message.get("id")].append(message.get("result", message.get("error")))
    return answers


def _every_request_answered_once(tmp_path: Path, serve_args: list[str], calls: list[tuple[str, dict[str, Any]]]) -> None:
    with ThreadPoolExecutor(AT_ONCE) as runs:
        answered = list(runs.map(lambda run: _closed_at_once(tmp_path, serve_args, calls, run), range(RUNS)))
    for run, answers in enumerate(answered):
        expected = set(range(1, len(calls) + 1)) | ({0} if run % 2 == 0 else set())
        assert set(answers) == expected, (run, answers)
        assert all(len(each) == 1 for each in answers.values()), (run, answers)
        cut_off = {ident: each for ident, each in answers.items() if each[0].get("code") not in (None, EXITING)}
        assert not cut_off, (run, cut_off)  # an answer, or past the bound `exiting`: never -32000 Connection closed


RECORDS_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_papers", {"query": "bert"}),
    ("get_paper", {"paper": "1902.04094"}),
    ("get_harvested_code_for_paper", {"arxiv_id": "1902.04094"}),
    ("corpus_stats", {}),
    ("list_samples_by_status", {"status": "ran"}),
    ("find_papers_for_repo", {"repo": "github.com/none/such"}),
    ("search_papers", {"query": "language model", "limit": 50}),
    ("get_paper", {"paper": "9999.99999"}),
]


@pytest.mark.process
def test_8_calls_with_the_input_closed_at_once_each_get_one_answer_over_the_records(tmp_path: Path) -> None:
    _every_request_answered_once(tmp_path, [], RECORDS_CALLS)


@pytest.mark.process
def test_8_calls_with_the_input_closed_at_once_each_get_one_answer_over_an_archive(tmp_path: Path, overlaid: tuple[Path, Path]) -> None:
    records, archive = overlaid
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_papers", {"query": "archive"}),
        ("get_paper", {"paper": "2003.00003"}),
        ("find_papers_for_repo", {"repo": "github.com/other/r3"}),
        ("corpus_stats", {}),
        ("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"}),
        ("search_papers", {"query": "paper", "has_samples": False}),
        ("get_paper", {"paper": ["2001.00001", "2002.00002"]}),
        ("describe", {"kind": "task", "name": "nothing"}),
    ]
    _every_request_answered_once(tmp_path, ["--records", str(records), "--archive", "--archive-dir", str(archive)], calls)


@pytest.mark.process
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_server_waiting_for_its_last_answers_at_once(tmp_path: Path, signum: int) -> None:
    # The call waits for records whose loading is held (up to a minute): only the signal can end the wait in time.
    release = tmp_path / "release"
    process = subprocess.Popen(
        [sys.executable, str(TESTS / "held_server.py"), str(release), "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENVIRONMENT, "HOME": str(tmp_path), "PAPERCODE_LOG_LEVEL": "INFO"},
        cwd=tmp_path,
    )
    with process:
        try:
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            process.stdin.write(
                _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE})
                + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
                + _call(1, "corpus_stats", {})
            )
            process.stdin.close()
            lines = _Lines(process.stdout.fileno())
            assert lines.next()["id"] == 0
            logged = _Lines(process.stderr.fileno())
            while "the input ended with" not in logged.text():
                pass
            process.send_signal(signum)  # while the server waits for the call's answer
            answer = lines.next()  # the call's one answer, at once
            release.touch()  # the held load may end now, and the process with it
            assert process.wait(WAIT) == 0
            rest = lines.rest()
        finally:
            if process.poll() is None:
                process.kill()
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": EXITING,
            "message": "exiting: the server was stopped before this request finished. Next: send it again once the server runs again.",
        },
    }
    assert rest == b""
