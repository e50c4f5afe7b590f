"""papercode over stdio: the SDK's stdio transport, reading and writing through papercode's own two streams.

The SDK's `stdio_server()` serves the `.buffer`s of `sys.stdin` and `sys.stdout` in place when they are not the
process's descriptors 0 and 1. While serving, papercode points them at `WireIn` and `WireOut`, over private copies
of those descriptors (0 then reads the null device and 1 writes to stderr, as the SDK arranges for its own
streams, so stray output of a handler or a child process never reaches the wire). Through them:

- **Every request with an id gets an answer.** A line the SDK would drop with a debug log (not JSON, a lone
  surrogate escape, a byte-order mark, `"jsonrpc": "1.0"`, `params` that are not an object) is answered here with
  the JSON-RPC error it deserves (-32700 with the id when the id can still be read, else null; -32600; -32602)
  and never reaches the SDK; so is a request whose id is not a string or an integer (which the SDK would take for
  a notification, leaving its client waiting); notifications and blank lines get no answer. Good lines pass through unchanged.
  The check is one orjson parse of each line (a microsecond or two); only a line that fails it is judged the
  SDK's way (`jsonrpc_message_adapter`), so what the SDK accepts is exactly what passes.
- **SIGINT and SIGTERM end the input**: the server stops as at the end of input, and `papercode serve` exits 0.
- **A client that stopped reading** (the pipe is closed: EPIPE) ends the input too, with one line at INFO.
- Reads and writes wait on the descriptors and on a wake-up pipe, so ending never waits for a client.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import select
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Final, TextIO, cast

import anyio
import orjson
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
from pydantic import ValidationError

log = logging.getLogger(__name__)

READ_BYTES = 64 * 1024
# Below this many brackets a line cannot nest deeper than the SDK's JSON parser allows (about 200 levels),
# so orjson (which allows 1,024) accepting it means the SDK does too.
FAST_BRACKETS = 128
_JSON_SPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


class _Drop:
    """A line the SDK rejects that gets no answer (a notification, a malformed response, a blank line)."""


DROP: Final = _Drop()


class Wire:
    """The private copies of the process's stdin and stdout, and a wake-up pipe that ends both."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        self._wake_read, self._wake_write = os.pipe()
        self._ended = threading.Event()
        self._closed = False
        self._pollers: dict[int, select.poll] = {}
        self.input = WireIn(self)
        self.output = WireOut(self)

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def end(self) -> None:
        """End the input (the server stops as at the end of input); from now on a write that would wait is dropped."""
        if not self._ended.is_set():
            self._ended.set()
            with contextlib.suppress(OSError):
                os.write(self._wake_write, b"x")

    def ready(self, fd: int, events: int) -> bool:
        """Wait until `fd` is ready for `events`; once the wire has ended, only say whether it is ready now."""
        poller = self._pollers.get(fd)
        if poller is None:
            poller = self._pollers[fd] = select.poll()
            poller.register(fd, events)
            poller.register(self._wake_read, select.POLLIN)
        while not self._closed:
            if self._ended.is_set():
                now = select.poll()
                now.register(fd, events)
                return bool(now.poll(0))
            for ready, _ in poller.poll():
                if ready == fd:
                    return True
        return False

    def close(self) -> None:
        self.end()
        self._closed = True
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)


class WireIn(io.BufferedIOBase):
    """What the SDK reads: the client's lines, less those answered here."""

    def __init__(self, wire: Wire) -> None:
        super().__init__()
        self._wire = wire
        self._partial: list[bytes] = []  # the start of a line whose newline has not come yet
        self._good = b""  # lines for the SDK, read by it from `_at` on
        self._at = 0
        self._eof = False

    def readable(self) -> bool:
        return True

    def read1(self, size: int | None = -1) -> bytes:
        if self._at == len(self._good):
            self._good, self._at = b"", 0
        while not self._good and not self._eof:
            chunk = self._receive()
            if chunk:
                self._take(chunk)
            else:
                self._eof = True
                last = b"".join(self._partial)
                if last.strip() and not self._wire.ended:  # a last line without its newline
                    self._good = self._sort(last + b"\n")
                self._partial = []
        if self._at == 0 and (size is None or size < 0 or size >= len(self._good)):
            self._at = len(self._good)
            return self._good  # the usual case: one message, handed over without a copy
        end = len(self._good) if size is None or size < 0 else min(self._at + size, len(self._good))
        out, self._at = self._good[self._at : end], end
        return out

    def read(self, size: int | None = -1) -> bytes:
        return self.read1(size)

    def _receive(self) -> bytes:
        if self._wire.ended or not self._wire.ready(self._wire.in_fd, select.POLLIN):
            return b""
        try:
            return os.read(self._wire.in_fd, READ_BYTES)
        except OSError:
            return b""

    def _take(self, chunk: bytes) -> None:
        end = chunk.rfind(b"\n") + 1
        if not end:  # a long line: joined once its newline comes
            self._partial.append(chunk)
            return
        lines = b"".join((*self._partial, chunk[:end])) if self._partial else chunk[:end]
        self._partial = [chunk[end:]] if end < len(chunk) else []
        self._good = self._sort(lines)

    def _sort(self, lines: bytes) -> bytes:
        """The lines the SDK gets (unchanged), answering the others; `lines` ends with a newline."""
        if b"\r" in lines:  # the SDK reads with universal newlines: a lone CR ends a line too
            lines = lines.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if lines.find(b"\n") == len(lines) - 1:  # one line, as a client usually sends
            return lines if self._admit(lines) else b""
        parts = lines.split(b"\n")
        parts.pop()
        good = [part for part in parts if self._admit(part)]
        if len(good) == len(parts):
            return lines
        return b"".join(part + b"\n" for part in good)

    def _admit(self, line: bytes) -> bool:
        if surely_valid(line):
            return True
        verdict = judge(line)
        if verdict is None:
            return True
        if isinstance(verdict, bytes):
            self._wire.output.send(verdict)
        return False


class WireOut(io.BufferedIOBase):
    """What the SDK writes: whole lines only, one writer at a time (the SDK's or an answer from `WireIn`)."""

    def __init__(self, wire: Wire) -> None:
        super().__init__()
        self._wire = wire
        self._lock = threading.Lock()
        self._pending = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        with self._lock:
            if not self._pending and data[-1:] == b"\n":  # a whole message, as the SDK writes them
                self._emit(data)
            else:
                self._pending += data
        return len(data)

    def flush(self) -> None:
        with self._lock:
            end = self._pending.rfind(b"\n") + 1
            if end:
                line = bytes(self._pending[:end])
                del self._pending[:end]
                self._emit(line)

    def send(self, line: bytes) -> None:
        """Write one whole line, between the SDK's lines."""
        with self._lock:
            self._emit(line)

    def _emit(self, data: Any) -> None:
        view = memoryview(data)
        try:
            while view:
                if not self._wire.ready(self._wire.out_fd, select.POLLOUT):
                    return  # ended, and the client is not reading: drop the rest
                # A pipe that polls writable takes PIPE_BUF bytes without blocking.
                written = os.write(self._wire.out_fd, view[: select.PIPE_BUF])
                view = view[written:]
        except OSError as error:
            if not self._wire.ended:
                log.info("the client stopped reading (%s): stopping", os.strerror(error.errno or 0) or error)
            self._wire.end()


# -- what a line deserves ---------------------------------------------------------------------------


def surely_valid(line: bytes) -> bool:
    """True when the SDK certainly accepts `line` (False: maybe not; `judge` decides)."""
    if line.count(b"{") + line.count(b"[") > FAST_BRACKETS:
        return False
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if type(message) is not dict or message.get("jsonrpc") != "2.0":
        return False
    if type(message.get("method")) is str:
        params = message.get("params")
        return (params is None or type(params) is dict) and ("id" not in message or type(message["id"]) in (int, str))
    return type(message.get("result")) is dict and type(message.get("id")) in (int, str)


def judge(line: bytes) -> bytes | _Drop | None:
    """None when the SDK accepts `line`; otherwise the answer it deserves, or DROP when it deserves none."""
    text = line.decode("utf-8", "replace")  # what the SDK reads
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as error:
        problem = error.errors()[0]
    else:
        return _unusable_id(text)
    if not text.strip(_JSON_SPACE):
        return DROP
    try:
        message = json.loads(text) if problem["type"] != "json_invalid" else None
    except ValueError:
        message = None
    if message is None:
        if text.startswith("\ufeff"):
            reason = "the line starts with a byte-order mark"
        else:
            reason = str(problem["msg"]).removeprefix("Invalid JSON: ")
        return _answer(readable_id(text), PARSE_ERROR, f"Parse error: {reason}")
    if not isinstance(message, dict):
        what = "a batch (an array), which MCP does not take" if isinstance(message, list) else "not a JSON object"
        return _answer(None, INVALID_REQUEST, f"Invalid Request: the message is {what}")
    ident = message.get("id")
    if "method" not in message and ("result" in message or "error" in message):
        log.info("dropped a malformed response from the client")
        return DROP
    if not is_request_id(ident):
        log.info("dropped a malformed message without a usable id (a notification gets no answer)")
        return DROP
    if message.get("jsonrpc") != "2.0":
        return _answer(ident, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if not isinstance(message.get("method"), str):
        return _answer(ident, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return _answer(ident, INVALID_PARAMS, 'Invalid params: "params" must be an object')
    return _answer(ident, INVALID_REQUEST, "Invalid Request")


def _unusable_id(text: str) -> bytes | None:
    """A request whose id is neither a string nor an integer (a float, true, null, …) the SDK takes for a
    notification and never answers, so its client would wait forever: answered here (MCP forbids a null id)."""
    message = json.loads(text)
    if not isinstance(message, dict) or "id" not in message or "method" not in message or is_request_id(message["id"]):
        return None
    ident = message["id"]
    shown = ident if isinstance(ident, float) else None  # a number its client can still match the answer to
    return _answer(shown, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')


def _answer(ident: object, code: int, message: str) -> bytes:
    log.info("answered a malformed line: %s", message)
    return error_line(ident, code, message)


def is_request_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def readable_id(text: str) -> object:
    """The request's id, read from the top-level members before the JSON breaks; None when it cannot be read."""
    found: object = None
    try:
        i = _space(text, 1 if text.startswith("\ufeff") else 0)
        if not text.startswith("{", i):
            return None
        i += 1
        while True:
            i = _space(text, i)
            if not text.startswith('"', i):
                break
            key, i = _DECODER.raw_decode(text, i)
            i = _space(text, i)
            if not text.startswith(":", i):
                break
            value, i = _DECODER.raw_decode(text, _space(text, i + 1))
            if key == "id":
                found = value
            i = _space(text, i)
            if not text.startswith(",", i):
                break
            i += 1
    except (ValueError, RecursionError):
        pass
    return found if is_request_id(found) else None


def _space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _JSON_SPACE:
        i += 1
    return i


def error_line(ident: object, code: int, message: str) -> bytes:
    """A JSON-RPC error answer, as one line."""
    try:
        return orjson.dumps({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}) + b"\n"
    except TypeError:  # an id with a lone surrogate cannot be written back
        return orjson.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}) + b"\n"


# -- serving --------------------------------------------------------------------------------------


class _Std:
    """Stands in for `sys.stdin`/`sys.stdout` while serving: `.buffer` is the wire (what the SDK serves),
    anything else goes to `text` (the null device, or stderr: a stray print never reaches the wire)."""

    def __init__(self, buffer: io.BufferedIOBase, text: TextIO) -> None:
        self.buffer = buffer
        self._text = text

    def __getattr__(self, name: str) -> Any:
        return getattr(self._text, name)


@contextlib.contextmanager
def claimed(in_fd: int, out_fd: int) -> Iterator[Wire]:
    """The wire over `in_fd` and `out_fd` (private copies of descriptors 0 and 1, closed afterwards), with
    `sys.stdin`/`sys.stdout` standing for it and descriptors 0 and 1 on the null device and stderr meanwhile."""
    wire = Wire(in_fd, out_fd)
    saved = sys.stdin, sys.stdout
    nothing = open(os.devnull, encoding="utf-8")  # noqa: SIM115  # closed below, once the SDK is done
    try:
        os.dup2(nothing.fileno(), 0)
        os.dup2(2, 1)
        sys.stdin = cast(TextIO, _Std(wire.input, nothing))
        sys.stdout = cast(TextIO, _Std(wire.output, sys.stderr))
        yield wire
    finally:
        sys.stdin, sys.stdout = saved
        wire.close()
        for fd in (0, 1):
            with contextlib.suppress(OSError):
                os.dup2((in_fd, out_fd)[fd], fd)
        for fd in (in_fd, out_fd):
            os.close(fd)
        nothing.close()


async def serve(run: Callable[[], Awaitable[None]]) -> None:
    """Run the SDK's stdio server (`run`, which must read `sys.stdin` and write `sys.stdout`) through the wire
    until its input ends: at end of input, on SIGINT or SIGTERM, when the client stops reading, or when cancelled."""
    try:
        import fcntl  # POSIX, as is select.poll

        in_fd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (ImportError, OSError):  # no stdin to serve, or not POSIX: the SDK's own way
        await run()
        return
    try:
        out_fd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        os.close(in_fd)
        await run()
        return
    with claimed(in_fd, out_fd) as wire:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_end_on_signal, wire)
            try:
                await run()
            finally:
                tasks.cancel_scope.cancel()


async def _end_on_signal(wire: Wire) -> None:
    """End the wire on SIGINT or SIGTERM, and when serving is cancelled (the SDK's reader waits on the wire in a
    worker thread, which cancellation alone would wait for)."""
    try:
        if threading.current_thread() is not threading.main_thread():  # signal handlers live in the main thread
            await anyio.sleep_forever()
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:  # handled until serving is over, so a second Ctrl-C is quiet too
                if not wire.ended:
                    log.info("stopping on %s", signal.Signals(signum).name)
                wire.end()
    finally:
        wire.end()
