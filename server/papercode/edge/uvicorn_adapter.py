"""The two places where papercode needs of uvicorn what it offers no option or public hook for.

Each subclasses a uvicorn class and overrides methods uvicorn documents nowhere as extension points,
so a uvicorn release may change them: `tests/edge/test_uvicorn_adapter.py` checks that every method and
attribute used here still exists with the signature assumed below, and that both behaviours still
work, so such a change fails there, by name, rather than silently in production.

- `HeaderTimeoutH11` (uvicorn's h11 protocol; `uvicorn.Config(http=...)`): closes a connection that
  takes over `header_timeout` seconds to send a request's headers. uvicorn has no such timeout: its
  keep-alive timeout ends once any byte arrives, so a client sending headers slowly (slow loris)
  holds a connection and a file descriptor as long as it likes.
- `GracefulServer` (`uvicorn.Server`): stops on SIGTERM or SIGINT as uvicorn does (no new connections,
  calls in flight finish, bounded by the graceful-shutdown timeout) but then returns, where uvicorn
  re-raises the signal once it has stopped and the process ends by it (status 143).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEADER_TIMEOUT_SECONDS = 10.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers take over `header_timeout` s.

    Uses of uvicorn: the overridden `connection_made`, `data_received`, `on_response_complete` and
    `connection_lost`; the attributes `loop`, `transport` and `cycle` (a new request-response cycle
    object once a request's headers are parsed).
    """

    header_timeout = HEADER_TIMEOUT_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._start_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._waiting_after:  # a request's headers are complete
            self._header_timer.cancel()
            self._header_timer = None

    def on_response_complete(self) -> None:
        answered = self.cycle
        super().on_response_complete()
        if self.cycle is answered and not self.transport.is_closing():  # no pipelined request began: time the next one's headers
            self._start_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def _start_header_timer(self) -> None:
        self._waiting_after = self.cycle  # the cycle before the request whose headers are awaited (None at first)
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.cycle is self._waiting_after and not self.transport.is_closing():
            log.info("closed a connection that sent no complete request headers within %g s", self.header_timeout)
            self.transport.close()


class GracefulServer(uvicorn.Server):
    """`uvicorn.Server` that returns after a graceful stop on SIGTERM or SIGINT instead of re-raising the signal.

    Uses of uvicorn: `serve` enters `capture_signals()` around serving (overridden here, without the
    re-raise at its end); `handle_exit(sig, frame)` starts the graceful stop.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
