"""Every request a client sent over stdio gets exactly one answer, even when it closes its input at once: the end of
input reaches the SDK only once each request the SDK read has had its answer written, or, past
`EOF_ANSWER_SECONDS`, a JSON-RPC error saying the server is exiting (`EXITING`). A stopped wire (SIGINT, SIGTERM, a
client that stopped reading) waits for nothing: the requests still running get that error at once.

Works around: mcp 2.3.0's JSON-RPC dispatcher, at the end of its input, cancels every request still running
(`JSONRPCDispatcher.run`): each is answered `-32000 Connection closed`, or not at all when its answer was already on
its way to the transport, so a client that closes stdin right after its last request (a pipeline, a one-shot
script) loses the calls still running.
Canary: `test_the_sdk_cuts_off_a_request_still_running_when_its_input_ends` fails the day the SDK answers it.
Goes when: the SDK answers (or bounds) the requests still running when its input ends; `stdio_wire` then hands the
end of input on at once.

`InFlight` counts the requests the SDK reads by id (a client may reuse one; `subscriptions/listen` is a stream that
ends with the connection, never waited for) and the answers the SDK writes; `stdio_wire` tells it both, and waits on
it before it hands the SDK the end of input. Once it has answered a request as exiting, the SDK's own answers are
dropped: its `-32000` for the same request would be a second answer.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import orjson
from mcp.shared.dispatcher import coerce_request_id
from mcp.types import RequestId

from ..codes import EXITING
from .stdio_lines import error_line, is_request_id

log = logging.getLogger(__name__)

EOF_ANSWER_SECONDS: Final = 10.0
_RESPONSE: Final = b'{"jsonrpc":"2.0","id":'  # how the SDK writes every answer (pydantic keeps the fields in order)
_NOTIFICATION: Final = b'{"jsonrpc":"2.0","method":'
_STREAMS: Final = frozenset({"subscriptions/listen"})  # answered when the stream ends, which the end of input is
_BOUND_PASSED: Final = (
    "exiting: the server's input ended and this request was still running {seconds:g} s later. Next: send it again to a"
    " server whose input stays open until the answer comes."
)
_STOPPED: Final = "exiting: the server was stopped before this request finished. Next: send it again once the server runs again."


class InFlight:
    """The requests the SDK has read and not yet answered, counted by id."""

    def __init__(self, seconds: float = EOF_ANSWER_SECONDS) -> None:
        self.seconds = seconds
        self._changed = threading.Condition()
        self._running: Counter[RequestId] = Counter()
        self._settled = False  # every request has had its one answer: the SDK's are dropped from now on

    def read(self, line: bytes, message: dict[str, Any] | None = None) -> None:
        """The SDK is about to read `line`, a message it accepts (`message`: the line already parsed, if it was)."""
        if message is None:
            message = _parsed(line)
        method = message.get("method")
        if not isinstance(method, str):
            return
        if "id" in message:
            if method not in _STREAMS and is_request_id(message["id"]):
                with self._changed:
                    self._running[coerce_request_id(message["id"])] += 1
        elif method == "notifications/cancelled":  # the SDK never answers a request its client cancelled
            params = message.get("params")
            ident = params.get("requestId") if isinstance(params, dict) else None
            if is_request_id(ident):
                self._answered(coerce_request_id(ident))

    def passes(self, line: bytes) -> bool:
        """Whether the SDK's `line` (one whole message) goes out: False once the requests were settled as exiting."""
        ident = response_id(line)
        if ident is None:
            return not self._settled
        with self._changed:
            if self._settled:
                return False
            self._answered(coerce_request_id(ident))
            return True

    def settle(self, stopped: Callable[[], bool]) -> list[bytes]:
        """At the end of input: wait until every request read has its answer, for `seconds` at most and not at all
        once `stopped()`; then the exiting error of each still running. The SDK's lines are dropped from now on."""
        deadline = time.monotonic() + self.seconds
        message, waiting = "", False
        with self._changed:
            while self._running and not message:
                if (left := deadline - time.monotonic()) <= 0:
                    message = _BOUND_PASSED.format(seconds=self.seconds)
                elif stopped():
                    message = _STOPPED
                else:
                    if not waiting:  # said under the lock, so a stop after it is seen wakes the wait below
                        log.info("the input ended with %d request(s) still running: answering them first", self._running.total())
                        waiting = True
                    self._changed.wait(left)
            running, self._settled = list(self._running.elements()), True
            self._running.clear()
        return [error_line(ident, EXITING, message) for ident in running]

    def wake(self) -> None:
        """Stop a `settle` waiting (the wire was stopped)."""
        with self._changed:
            self._changed.notify_all()

    def _answered(self, key: RequestId) -> None:
        with self._changed:
            if self._running[key] > 1:
                self._running[key] -= 1
            else:
                self._running.pop(key, None)
            self._changed.notify_all()


def response_id(line: bytes) -> RequestId | None:
    """The id of an answer (`result` or `error`) in `line`, read without parsing the answer when the line is written
    the SDK's way; None when `line` is no answer."""
    if line.startswith(_NOTIFICATION):
        return None
    if line.startswith(_RESPONSE):
        start = len(_RESPONSE)
        end = _string_end(line, start) if line[start : start + 1] == b'"' else line.find(b",", start)
        after = line[end : end + 10]
        if end > start and (after.startswith(b',"result"') or after.startswith(b',"error"')):
            try:
                ident = orjson.loads(line[start:end])
            except orjson.JSONDecodeError:
                ident = None
            return ident if is_request_id(ident) else None
    message = _parsed(line)  # written some other way: read it whole
    ident = message.get("id")
    return ident if ("result" in message or "error" in message) and "method" not in message and is_request_id(ident) else None


def _string_end(line: bytes, start: int) -> int:
    """Where the JSON string starting at `start` ends (just past its closing quote); -1 if it does not."""
    end = start + 1
    while (end := line.find(b'"', end)) != -1:
        backslashes = 0
        while line[end - 1 - backslashes] == 0x5C:  # a quote after an odd number of backslashes is escaped
            backslashes += 1
        if backslashes % 2 == 0:
            return end + 1
        end += 1
    return -1


def _parsed(line: bytes) -> dict[str, Any]:
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:  # nested deeper than orjson goes, or text the SDK reads with replacements
        try:
            message = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return {}
    return message if isinstance(message, dict) else {}
