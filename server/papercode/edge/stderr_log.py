"""stderr logging that a client cannot flood.

Servers log what requests carry (a Host header, an Origin, a session id): here every line is cut to
`MAX_LINE_CHARS` and its control characters escaped (no ANSI sequences or forged lines reach the
terminal); a warning repeated from one place in the code is let through `BURST` times a minute and
then counted, not printed (errors too: a client able to trigger one could otherwise repeat it);
and a record carries its exception as one line, not a traceback, below ERROR or when the exception
says a request was malformed (the client's mistake, not ours).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable

from pydantic import ValidationError

MAX_LINE_CHARS = 500
BURST = 10  # lines from one call site per window
WINDOW_SECONDS = 60.0
# Exceptions that say a request was malformed: the client's mistake, worth a line, never a traceback.
CLIENT_MISTAKES = (ValidationError, json.JSONDecodeError, UnicodeDecodeError)
# Escaped: C0 and C1 controls (C1 holds CSI, U+009B, which terminals read as ESC [), the line and paragraph
# separators, and the bidirectional controls (embeddings, overrides, isolates and marks), which reorder what follows.
_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))} | {
    ord("\t"): "\\t",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
}
_CONTROL |= {code: f"\\u{code:04x}" for code in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def printable(text: str, most: int = MAX_LINE_CHARS) -> str:
    """`text` with control characters escaped, cut to `most` characters (marked with an ellipsis)."""
    text = text.translate(_CONTROL)
    return text if len(text) <= most else text[: most - 1] + "…"


class SafeRecords(logging.Filter):
    """Escapes and bounds every record; rate-limits each call site; keeps tracebacks for errors only."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._windows: dict[tuple[str, int], list[float]] = {}  # call site -> [window start, lines, suppressed]

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._admit(record):
            return False
        message = record.getMessage()
        error = record.exc_info[1] if record.exc_info else None
        if error is not None and (record.levelno < logging.ERROR or isinstance(error, CLIENT_MISTAKES)):
            message += f" ({type(error).__name__}: {error})"
            record.exc_info = record.exc_text = None
        record.msg, record.args = printable(message), None
        return True

    def _admit(self, record: logging.LogRecord) -> bool:
        site = (record.pathname, record.lineno)
        now = self._clock()
        window = self._windows.setdefault(site, [now, 0, 0])
        if now - window[0] >= WINDOW_SECONDS:
            if window[2]:
                record.msg = f"{record.msg} (and {int(window[2])} more like it in the last minute, not shown)"
            window[:] = [now, 0, 0]
        if window[1] >= BURST:
            window[2] += 1
            return False
        window[1] += 1
        return True


def configure(level: str) -> None:
    """papercode's stderr logging: one handler on the root logger, through `SafeRecords`."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SafeRecords())
    logging.basicConfig(level=level, handlers=[handler])  # a no-op where logging is configured already (tests)
