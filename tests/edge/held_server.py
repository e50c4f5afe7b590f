"""`python tests/edge/held_server.py RELEASE [WAIT]`: papercode's stdio server over the bundled records, whose loading is
held until the file RELEASE exists, so a test can speak to it over stdio while it loads (calls wait WAIT seconds at
most for the records: 0.2 unless given), logging on stderr at `PAPERCODE_LOG_LEVEL`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio

from papercode.corpus.reload import LiveCorpus
from papercode.corpus.stages import Corpus, Stage
from papercode.edge import stderr_log
from papercode.edge.app import build_server
from papercode.settings import bundled_records_dir

HOLD_SECONDS = 60  # the longest the load is held, so no test can hang on it


def held(release: Path) -> Iterator[Stage]:
    until = time.monotonic() + HOLD_SECONDS
    while not release.exists() and time.monotonic() < until:
        time.sleep(0.01)
    yield Stage("complete", Corpus.load([bundled_records_dir()]), None)


if __name__ == "__main__":
    stderr_log.configure(os.environ.get("PAPERCODE_LOG_LEVEL", "WARNING"))
    release = Path(sys.argv[1])
    wait = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    server = build_server(LiveCorpus(lambda key: held(release), fingerprint=lambda: b"records"), ready_timeout=wait)
    anyio.run(server.run_stdio_async)
