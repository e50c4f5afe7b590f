"""The `papercode` command's first instant (the console script and `python -m papercode` start here).

A Ctrl-C (or, for `serve`, a SIGTERM) that arrives while papercode's modules are still being imported, before
`cli.main` handles signals itself, would print a traceback; here it ends the command quietly: `serve` with exit
status 0, as a moment later, any other command with 130, as a shell reports an interrupted command.
"""

from __future__ import annotations

import signal
import sys


def main() -> int:
    serving = sys.argv[1:2] == ["serve"]
    if serving:  # SIGTERM stops a starting server as Ctrl-C does (`cli.main.serve` goes on so)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        from papercode.cli.main import main as run

        return run()
    except KeyboardInterrupt:
        return 0 if serving else 128 + signal.SIGINT
