"""A connection that takes over `HEADER_TIMEOUT_SECONDS` to send a request's headers is closed (slow loris).

Works around: uvicorn 0.54.0 puts no time limit on a request's headers: no timer runs before a connection's first
request, and its keep-alive timer, between requests, is cancelled by the first byte that arrives, so a client
sending headers slowly (or not at all) holds a connection and a file descriptor as long as it likes.
Canary: `test_uvicorn_leaves_a_connection_with_unfinished_headers_open` fails the day uvicorn times headers out.
Goes when: uvicorn closes a connection whose request headers are late (an option or a default).

`HeaderTimeoutH11` subclasses uvicorn's h11 protocol (`uvicorn.Config(http=...)`) and overrides methods uvicorn
documents nowhere as extension points: `connection_made`, `data_received`, `on_response_complete` and
`connection_lost`, and reads the attributes `loop`, `transport` and `cycle` (a new request-response cycle object
once a request's headers are parsed). `tests/edge/test_uvicorn_workarounds.py` checks that they are still there, with
the signatures overridden here, and that the timeout still works.
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

HEADER_TIMEOUT_SECONDS = 10.0


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers take over `header_timeout` s."""

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
