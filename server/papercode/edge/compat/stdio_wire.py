"""The two streams papercode serves the SDK's stdio transport through (`edge.stdio` puts them in place): their reads
and writes wait on the descriptors and on a wake-up pipe, so ending the wire ends both at once, whatever the client
does.

Works around: mcp 2.3.0's stdio transport reads stdin a line at a time in worker threads (`anyio.wrap_file`), which
cancellation cannot interrupt: cancelling the server (as on SIGINT or SIGTERM) waits until the client sends another
line or closes its end; and a client that stopped reading (the pipe closed: EPIPE) makes its writer raise
`BrokenPipeError` out of the transport, after that same wait.
Canary: `test_cancelling_the_sdks_stdio_server_waits_for_its_client` and
`test_a_client_that_stopped_reading_crashes_the_sdks_stdio_server` fail the day the SDK changes either.
Goes when: the SDK's stdio transport ends when cancelled while a read waits, and quietly on a broken pipe; the
wire then stays only as the place where `stdio_lines` answers lines and `stdio_eof` the requests still running at
the end of input, until those go too.

`WireIn` hands the SDK only the lines `stdio_lines` lets through, and the end of input only once `stdio_eof` has
settled every request the SDK read; `WireOut` writes the SDK's lines and the answers to the others, whole lines
only, one writer at a time. A client that stopped reading ends the wire, with one line at INFO.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import select
import threading
from typing import Any

from .stdio_eof import EOF_ANSWER_SECONDS, InFlight
from .stdio_lines import judge, surely_valid

log = logging.getLogger(__name__)

READ_BYTES = 64 * 1024


class Wire:
    """The private copies of the process's stdin and stdout, and a wake-up pipe that ends both; at the end of input
    the requests still running are given `eof_answer_seconds` to be answered."""

    def __init__(self, in_fd: int, out_fd: int, eof_answer_seconds: float = EOF_ANSWER_SECONDS) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        self.in_flight = InFlight(eof_answer_seconds)
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
            self.in_flight.wake()

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
        if not self._good:  # the end of input, once every request the SDK read has its one answer
            for answer in self._wire.in_flight.settle(lambda: self._wire.ended):
                self._wire.output.send(answer)
            return b""
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
        message = surely_valid(line)
        if message is not None or (verdict := judge(line)) is None:
            self._wire.in_flight.read(line, message)
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
                self._emit_sdks(bytes(data))
            else:
                self._pending += data
        return len(data)

    def flush(self) -> None:
        with self._lock:
            end = self._pending.rfind(b"\n") + 1
            if end:
                lines = bytes(self._pending[:end])
                del self._pending[:end]
                self._emit_sdks(lines)

    def send(self, line: bytes) -> None:
        """Write one whole line, between the SDK's lines."""
        with self._lock:
            self._emit(line)

    def _emit_sdks(self, lines: bytes) -> None:
        """Write the SDK's `lines`, each told to `stdio_eof` (which drops them once it has settled the requests)."""
        passes = self._wire.in_flight.passes
        if lines.find(b"\n") == len(lines) - 1:  # one message, as the SDK writes them
            if passes(lines):
                self._emit(lines)
            return
        kept = b"".join(line + b"\n" for line in lines.split(b"\n")[:-1] if passes(line + b"\n"))
        if kept:
            self._emit(kept)

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
