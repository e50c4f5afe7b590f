"""How every papercode command fails: one line on stderr, `papercode: <what happened>. Next: <what to do>`, and the
documented exit code (2 bad input, 1 the work failed, 130 interrupted). The modules that raise give the message;
only the command line writes it, through `fail`."""

from __future__ import annotations

import sys


def fail(message: str, code: int = 2) -> int:
    """Write `message` as papercode's one line on stderr; the exit code to return (2: bad input, unless told)."""
    sys.stderr.write(f"papercode: {message}\n")
    return code
