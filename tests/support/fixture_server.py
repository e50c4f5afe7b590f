"""A recording HTTP server on 127.0.0.1 for tests that download: the fake GitHub the fetcher talks to.

Every request path it receives is recorded, so "no request was made" is asserted, not assumed. A handler
that blocks waits on `release`, which teardown sets, so no test can hang on it. Over HTTPS (`tls=True`) it shows a
certificate for 127.0.0.1 that no client trusts unless told to (`UNTRUSTED_CERT`, self-signed, made for these tests).
"""

from __future__ import annotations

import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Handler = Callable[[BaseHTTPRequestHandler], None]
SERVER_HOLD_SECONDS = 5.0  # the longest any handler blocks; teardown releases them at once
UNTRUSTED_CERT = Path(__file__).parent / "untrusted_tls" / "cert.pem"  # valid 2000-2199, its own issuer


# -- a recording HTTP server ----------------------------------------------------------------


@dataclass
class FixtureServer:
    """An HTTP server on 127.0.0.1: `routes` maps a raw request path to a handler; anything else is 404."""

    base_url: str = ""
    port: int = 0
    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # raw request paths, in arrival order
    user_agents: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)  # set at teardown: blocked handlers return
    errors: list[BaseException] = field(default_factory=list)  # unexpected handler failures
    active: int = 0
    most_active: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def route(self, path: str, handler: Handler) -> None:
        self.routes[path] = handler


def serve(*, tls: bool = False) -> Iterator[FixtureServer]:
    state = FixtureServer()

    class RecordingHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            with state.lock:
                state.requests.append(self.path)
                state.user_agents.append(self.headers.get("User-Agent", ""))
                state.active += 1
                state.most_active = max(state.most_active, state.active)
            try:
                state.routes.get(self.path, not_found)(self)
            finally:
                with state.lock:
                    state.active -= 1

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the test asserts on `requests`

    class QuietServer(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            error = sys.exc_info()[1]
            if error is not None and not isinstance(error, ConnectionError):  # a client hanging up early is expected
                state.errors.append(error)

    server = QuietServer(("127.0.0.1", 0), RecordingHandler)
    if tls:  # a handshake the client refuses fails in accept, which the server skips: it records no request
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(UNTRUSTED_CERT, UNTRUSTED_CERT.with_name("key.pem"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    state.port = server.server_address[1]
    state.base_url = f"{'https' if tls else 'http'}://127.0.0.1:{state.port}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=SERVER_HOLD_SECONDS)
    assert state.errors == []


def reply(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Handler:
    def handle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(status)
        sent = {"Content-Length": str(len(body)), **(headers or {})}
        for name, value in sent.items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(body)

    return handle


not_found = reply(404, b"Not Found")
