"""On SIGTERM or SIGINT, uvicorn stops gracefully and `serve` returns, so `papercode serve` exits 0.

Works around: uvicorn 0.54.0 stops gracefully on those signals (no new connections, calls in flight finish,
bounded by the graceful-shutdown timeout) but then re-raises the signal (`Server.capture_signals` ends with
`signal.raise_signal`), and the process ends by it (status 143 for SIGTERM) instead of returning.
Canary: `test_uvicorn_raises_again_the_signal_it_stopped_on` fails the day uvicorn returns instead.
Goes when: uvicorn returns from `serve` after a graceful stop (or offers an option not to re-raise).

`GracefulServer` overrides `capture_signals`, which uvicorn documents nowhere as an extension point: `serve` enters
it around serving, and `handle_exit(sig, frame)` starts the graceful stop. `tests/edge/test_uvicorn_workarounds.py`
checks that both are still there, with those signatures, and that a stop still returns.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import uvicorn

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class GracefulServer(uvicorn.Server):
    """`uvicorn.Server` that returns after a graceful stop on SIGTERM or SIGINT instead of raising the signal again."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
