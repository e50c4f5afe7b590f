"""papercode over stdio: the SDK's stdio transport, reading and writing through papercode's wire (`compat.stdio_wire`).

The SDK's `stdio_server()` serves the `.buffer`s of `sys.stdin` and `sys.stdout` in place when they are not the
process's descriptors 0 and 1. While serving, papercode points them at the wire's two streams, over private copies
of those descriptors (0 then reads the null device and 1 writes to stderr, as the SDK arranges for its own
streams, so stray output of a handler or a child process never reaches the wire). Through them:

- **every request with an id gets an answer** (`compat.stdio_lines`); good lines pass through unchanged;
- **the end of input waits for the answers**: when the client closes stdin, every request already received gets
  exactly one answer before the server exits, its own or, past 10 s, the JSON-RPC error `-32011` (`exiting: …`)
  (`compat.stdio_eof`);
- **SIGINT and SIGTERM stop it at once**: the input ends without waiting, each request still running is answered
  `exiting`, and `papercode serve` exits 0;
- **a client that stopped reading** (the pipe is closed: EPIPE) ends the input at once too, with one line at INFO;
- stopping never waits for a client.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TextIO, cast

import anyio

from .compat.stdio_wire import Wire

log = logging.getLogger(__name__)


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
    until its input ends: at end of input (once every request received is answered), on SIGINT or SIGTERM, when the
    client stops reading, or when cancelled (these three at once)."""
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
