"""`papercode serve` over stdio, spoken to in raw lines: every malformed request gets its JSON-RPC error and the
server keeps serving; SIGINT, SIGTERM and a client that stops reading end it quietly; while the records load,
protocol requests answer and what needs the records says `loading` with papercode's one code.
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
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, JSONRPCNotification, jsonrpc_message_adapter

from papercode.edge.codes import EXITING, LOADING
from papercode.edge.compat import stdio_lines, stdio_wire
from tests.support.mcp import TOOL_NAMES

WAIT = 20  # seconds: the bound on every wait for an answer
STOP_SECONDS = 10  # how long a stop may take (it takes well under a second)
TESTS = Path(__file__).resolve().parent
# The server under test is this checkout's, whatever is installed.
ENVIRONMENT = {"PYTHONPATH": str(TESTS.parents[1] / "server"), "PATH": "", "PAPERCODE_LOG_LEVEL": "WARNING", "PAPERCODE_OFFLINE": "1"}
HANDSHAKE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
TOOLS_LIST = {"jsonrpc": "2.0", "method": "tools/list"}
DEEP = "[" * 250 + "]" * 250  # deeper than the SDK's JSON parser goes

# A malformed line, then what it deserves: (code, id), or None for no answer at all.
MALFORMED: list[tuple[bytes, tuple[int, Any] | None]] = [
    (b'{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[]}', (INVALID_PARAMS, 11)),
    (b'{"jsonrpc":"2.0","id":12,"method":"tools/list","params":"x"}', (INVALID_PARAMS, 12)),
    (b'{"jsonrpc":"1.0","id":"thirteen","method":"tools/list"}', (INVALID_REQUEST, "thirteen")),
    (b'{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"get_paper","arguments":{"paper":"\\ud800"}}}', (PARSE_ERROR, 14)),
    (b'{"jsonrpc":"2.0","id":15,"method":"tools/li', (PARSE_ERROR, 15)),  # cut short: the id was already read
    (b'{"jsonrpc":"2.0","method":"tools/list","params":{"x":tru},"id":16}', (PARSE_ERROR, None)),  # the id is past the break
    (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":17,"method":"tools/list"}', (PARSE_ERROR, 17)),  # a byte-order mark
    (b"not json at all", (PARSE_ERROR, None)),
    (b'{"jsonrpc":"2.0","id":19,"method":"tools/list","params":{"a":' + DEEP.encode() + b"}}", (PARSE_ERROR, 19)),
    (b'[{"jsonrpc":"2.0","id":20,"method":"tools/list"}]', (INVALID_REQUEST, None)),  # a batch
    (b'{"jsonrpc":"2.0","id":21}', (INVALID_REQUEST, 21)),  # no method
    (b'{"jsonrpc":"2.0","id":22.5,"method":"tools/list"}', (INVALID_REQUEST, 22.5)),  # the SDK took these for notifications
    (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', (INVALID_REQUEST, None)),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', (INVALID_REQUEST, None)),  # MCP forbids a null id
    (b'{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}', None),  # a notification: no answer
    (b"   ", None),  # a blank line
]


class Raw:
    """A server subprocess, spoken to in raw lines on its stdin and stdout."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self._buffer = b""
        self._ids = iter(range(1_000, 100_000))

    def send(self, *lines: bytes | dict[str, Any]) -> None:
        """Write the lines at once (one write: the server reads them together)."""
        assert self.process.stdin is not None
        data = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        deadline = time.monotonic() + WAIT
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer within {WAIT} s"
            chunk = os.read(self.process.stdout.fileno(), 65_536)
            assert chunk, "the server closed its stdout"
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        ident = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params is not None else {})})
        answer = self.answer()
        assert answer["id"] == ident, answer
        return answer

    def handshake(self) -> None:
        assert "result" in self.request("initialize", HANDSHAKE)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def stopped(self) -> tuple[int, str]:
        """The exit status, once the server has stopped by itself (stdin still open), and what it wrote on stderr."""
        code = self.process.wait(timeout=STOP_SECONDS)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode(errors="replace")


@contextmanager
def spawned(tmp_path: Path, *command: str) -> Iterator[Raw]:
    process = subprocess.Popen(
        [sys.executable, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENVIRONMENT, "HOME": str(tmp_path), "PAPERCODE_CACHE_DIR": str(tmp_path / "cache")},
        cwd=tmp_path,
        preexec_fn=_interruptible,
    )
    with process:
        try:
            yield Raw(process)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=WAIT)


def _interruptible() -> None:
    """The server started as a host starts it, SIGINT at its default: a shell starts a background job (`pytest ... &`)
    with SIGINT ignored, which its children inherit, and a server that ignores it is right to."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def serving(tmp_path: Path) -> Iterator[Raw]:
    """`papercode serve` over the bundled records."""
    with spawned(tmp_path, "-m", "papercode", "serve") as raw:
        yield raw


def the_lines_after_startup(stderr: str) -> list[str]:
    """stderr without the lines `papercode serve` prints as the records become ready."""
    return [line for line in stderr.splitlines() if not line.startswith("papercode: ")]


# -- every request with an id gets an answer ------------------------------------------------------


@pytest.mark.process
def test_every_malformed_line_gets_the_error_it_deserves_and_the_next_request_its_answer(tmp_path: Path) -> None:
    with serving(tmp_path) as raw:
        raw.handshake()
        for together in (False, True):  # alone, and in one read with the good request after it
            for line, deserved in MALFORMED:
                good = {**TOOLS_LIST, "id": f"after {line[:30]!r}"}
                if together:
                    raw.send(line, good)
                else:
                    raw.send(line)
                    raw.send(good)
                if deserved is not None:
                    answer = raw.answer()
                    code, ident = deserved
                    assert answer["id"] == ident and answer["error"]["code"] == code, (line, answer)
                    assert answer["jsonrpc"] == "2.0" and answer["error"]["message"]
                following = raw.answer()
                assert following["id"] == good["id"] and len(following["result"]["tools"]) == len(TOOL_NAMES), (line, following)
        raw.process.stdin.close()  # type: ignore[union-attr]
        code, stderr = raw.stopped()
    assert code == 0 and "Traceback" not in stderr


@pytest.mark.process
def test_good_lines_pass_unchanged_whatever_their_line_ends(tmp_path: Path) -> None:
    with serving(tmp_path) as raw:
        raw.handshake()
        assert raw.process.stdin is not None
        raw.process.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}\r\n{"jsonrpc":"2.0",'
        )
        raw.process.stdin.flush()
        assert [raw.answer()["id"], raw.answer()["id"]] == [1, 2]
        raw.process.stdin.write(b'"id":3,"method":"ping"}\n')  # the rest of the line, in another read
        raw.process.stdin.flush()
        assert raw.answer() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_the_sdk_reads_long_lines_whole_from_the_wire_and_ending_the_wire_ends_its_wait() -> None:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    wire = stdio_wire.Wire(in_read, out_write)
    reader = io.TextIOWrapper(wire.input, encoding="utf-8", errors="replace")  # as the SDK reads it
    long = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_paper", "arguments": {"paper": "x" * 3_000_000}}}
    )
    lines = (long + "\n" + '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[]}\n').encode()

    def client() -> None:
        for start in range(0, len(lines), 50_000):  # in pieces, as a pipe delivers them
            os.write(in_write, lines[start : start + 50_000])

    writing = threading.Thread(target=client)
    writing.start()
    try:
        assert reader.readline() == long + "\n"
        ending = threading.Timer(0.2, wire.end)  # the SDK now waits for a line that never comes, until the wire ends
        ending.start()
        assert reader.readline() == ""
        ending.join(WAIT)
        refused, exiting = map(json.loads, os.read(out_read, 65_536).splitlines())
        assert refused == {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": INVALID_PARAMS, "message": 'Invalid params: "params" must be an object'},
        }
        # The long request, read but never answered here, is answered as the wire ends (as on a signal).
        assert exiting["id"] == 1 and exiting["error"]["code"] == EXITING, exiting
    finally:
        writing.join(WAIT)
        wire.close()
        for fd in (in_read, in_write, out_read, out_write):
            os.close(fd)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
MESSAGES = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | JSON_VALUES,
        "id": st.integers() | st.text(max_size=3) | JSON_VALUES,
        "method": st.text(max_size=5) | JSON_VALUES,
        "params": st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=3) | JSON_VALUES,
        "result": st.dictionaries(st.text(max_size=3), JSON_VALUES, max_size=2) | JSON_VALUES,
        "error": JSON_VALUES,
    },
)


@given(message=MESSAGES | JSON_VALUES, ascii_only=st.booleans())
@settings(max_examples=200, deadline=None)
def test_what_the_wire_lets_through_unjudged_the_sdk_accepts(message: Any, ascii_only: bool) -> None:
    line = json.dumps(message, ensure_ascii=ascii_only).encode()
    if stdio_lines.surely_valid(line) is not None:
        jsonrpc_message_adapter.validate_json(line.decode(), by_name=False)
    else:
        verdict = stdio_lines.judge(line)
        try:
            accepted = jsonrpc_message_adapter.validate_json(line.decode(errors="replace"), by_name=False)
        except ValueError:
            assert verdict is not None
        else:  # what the SDK accepts passes, except a request with an unusable id, which it would take for a notification
            unusable_id = isinstance(message, dict) and "id" in message and not stdio_lines.is_request_id(message["id"])
            if unusable_id and isinstance(accepted, JSONRPCNotification):
                assert isinstance(verdict, bytes) and json.loads(verdict)["error"]["code"] == INVALID_REQUEST
            else:
                assert verdict is None


# -- stopping ---------------------------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_it_quietly_with_exit_status_0_though_stdin_stays_open(tmp_path: Path, signum: int) -> None:
    with serving(tmp_path) as raw:
        raw.handshake()
        assert len(raw.request("tools/list")["result"]["tools"]) == len(TOOL_NAMES)
        raw.process.send_signal(signum)
        code, stderr = raw.stopped()
    assert code == 0
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert the_lines_after_startup(stderr) == []


@pytest.mark.process
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_it_starts_stops_it_quietly_with_exit_status_0(tmp_path: Path, signum: int) -> None:
    # The signal arrives while the server is being built, before it serves (and handles signals itself).
    starting = (
        "import os, sys\n"
        "import papercode.cli.main as cli\n"
        "build = cli.build_live_server\n"
        "def signalled(*args, **kwargs):\n"
        f"    os.kill(os.getpid(), {int(signum)})\n"
        "    return build(*args, **kwargs)\n"
        "cli.build_live_server = signalled\n"
        "sys.exit(cli.main(['serve']))\n"
    )
    with spawned(tmp_path, "-c", starting) as raw:
        code, stderr = raw.stopped()
    assert code == 0
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr


_SIGNAL_WHILE_IMPORTING = """
import builtins, os, sys
sys.argv = ["papercode", *sys.argv[1:]]
imported = builtins.__import__

def importing(name, *args, **kwargs):
    if name == "papercode.cli.main":  # the signal lands while papercode's modules load
        os.kill(os.getpid(), int(os.environ["SIGNAL"]))
    return imported(name, *args, **kwargs)

builtins.__import__ = importing
from papercode.cli.entry import main
sys.exit(main())
"""


@pytest.mark.process
@pytest.mark.parametrize(
    ("signum", "command", "status"),
    [(signal.SIGINT, "serve", 0), (signal.SIGTERM, "serve", 0), (signal.SIGINT, "check", 130)],
    ids=["SIGINT-serve", "SIGTERM-serve", "SIGINT-check"],
)
def test_a_signal_while_its_modules_load_ends_it_quietly(tmp_path: Path, signum: int, command: str, status: int) -> None:
    process = subprocess.run(
        [sys.executable, "-c", _SIGNAL_WHILE_IMPORTING, command],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**ENVIRONMENT, "SIGNAL": str(int(signum)), "HOME": str(tmp_path)},
        cwd=tmp_path,
        timeout=WAIT,
        preexec_fn=_interruptible,
    )
    assert process.returncode == status
    assert process.stderr == b"" and process.stdout == b""


@pytest.mark.process
def test_a_client_that_stops_reading_ends_it_quietly(tmp_path: Path) -> None:
    with serving(tmp_path) as raw:
        raw.handshake()
        assert raw.process.stdout is not None
        raw.process.stdout.close()
        raw.send({**TOOLS_LIST, "id": 2})  # its answer has nowhere to go; stdin stays open
        code, stderr = raw.stopped()
    assert code in (0, 1)
    assert "Traceback" not in stderr, stderr
    assert len(the_lines_after_startup(stderr)) <= 1, stderr


# -- while the records load -------------------------------------------------------------------------


@pytest.mark.process
def test_while_loading_protocol_requests_answer_and_a_resource_says_loading(tmp_path: Path) -> None:
    release = tmp_path / "release"
    with spawned(tmp_path, str(TESTS / "held_server.py"), str(release)) as raw:
        raw.handshake()
        assert raw.request("logging/setLevel", {"level": "debug"})["result"] == {}
        assert raw.request("ping")["result"] == {}
        assert len(raw.request("tools/list")["result"]["tools"]) == len(TOOL_NAMES)
        refused = raw.request("resources/read", {"uri": "corpus://stats"})["error"]
        assert refused["code"] == LOADING and refused["message"].startswith("loading: ")
        release.touch()
        deadline = time.monotonic() + WAIT
        while "error" in (read := raw.request("resources/read", {"uri": "corpus://stats"})):
            assert read["error"]["code"] == LOADING and time.monotonic() < deadline, read
        assert json.loads(read["result"]["contents"][0]["text"])["papers"] == 2
        raw.process.stdin.close()  # type: ignore[union-attr]
        code, stderr = raw.stopped()
    assert code == 0 and "Traceback" not in stderr, stderr
