"""Building the search database beside the index build: in this process for small corpora, in a
child process for large ones.

FTS5 tokenising and indexing costs about as much CPU as the rest of a cold build, and a thread
would not overlap it (the GIL). So for a large corpus a child process
(`python -m papercode.search_build`) reads and decodes the same records itself, admits them by
the same rules (`builder.Admission`), and builds the database on the other core while this
process builds the index: nothing per record crosses between them, and the keyed index is ready
without waiting for the full text. The child's fingerprint of what it admitted must equal the
index's (same records, same ordinals), else its database is thrown away and the search is built
here. The child is a fresh interpreter started with `subprocess` (fork + exec), never a bare
`fork`: the server builds in a background thread while its event loop runs.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Protocol

from .builder import Admission, DocumentSink, search_document
from .loading import Limits, LoadReport, iter_records
from .search import SearchBuilder, SearchEngine

log = logging.getLogger(__name__)

# Raw bytes of record files from which a child process pays for itself (it costs ~0.3 s to start).
CHILD_PROCESS_BYTES = 64 * 1024 * 1024


class SearchMismatch(RuntimeError):
    """The child's records were not the index's (they changed between the two reads)."""


class SearchBuild(Protocol):
    @property
    def documents(self) -> DocumentSink | None:
        """Where the index builder sends each paper's document; None when the builder reads the records itself."""
        ...

    def result(self, fingerprint: bytes) -> SearchEngine:
        """Wait for the database of the index with this fingerprint, and open it."""
        ...

    def cancel(self) -> None:
        """The index build failed: stop, and leave nothing behind."""
        ...


def start_search_build(roots: list[Path], limits: Limits, raw_bytes: int, *, child: bool = True) -> SearchBuild:
    """A child process for a corpus of `raw_bytes` over `CHILD_PROCESS_BYTES`, else this process."""
    if child and raw_bytes >= CHILD_PROCESS_BYTES:
        try:
            return ChildSearchBuild(roots, limits)
        except OSError as exc:
            log.warning("cannot start the search builder process (%s); building search here", exc)
    return LocalSearchBuild()


def _database_path() -> Path:
    return Path(tempfile.mkdtemp(prefix="papercode-search-")) / "search.db"


class LocalSearchBuild:
    """Builds in this process, from the documents the index builder sends as it goes."""

    def __init__(self) -> None:
        self._builder = SearchBuilder()

    @property
    def documents(self) -> DocumentSink:
        return self._builder.add

    def result(self, fingerprint: bytes) -> SearchEngine:
        path = _database_path()
        self._builder.write(path)
        return SearchEngine(path, unlink=True)

    def cancel(self) -> None:
        self._builder.close()


class ChildSearchBuild:
    """A child process that reads the records and builds the database on the other core."""

    def __init__(self, roots: list[Path], limits: Limits) -> None:
        self._path = _database_path()
        # The child imports this very copy of papercode, wherever it was imported from.
        package_root = str(Path(__file__).resolve().parents[1])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
        job = {"roots": [str(root) for root in roots], "limits": [limits.max_file_bytes, limits.max_line_bytes, limits.max_string_chars]}
        # Its errors go to a file, not a pipe: nobody reads them until it ends, and a full pipe would stall it.
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - it outlives this call: closed by result() or cancel()
        self._child = subprocess.Popen(
            [sys.executable, "-m", "papercode.search_build", str(self._path), json.dumps(job)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            env=env,
        )

    @property
    def documents(self) -> None:
        return None

    def result(self, fingerprint: bytes) -> SearchEngine:
        out, _ = self._child.communicate()
        self._errors.seek(0)
        err = self._errors.read()
        self._errors.close()
        if self._child.returncode != 0 or not out.startswith(b"ok "):
            shutil.rmtree(self._path.parent, ignore_errors=True)
            detail = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"the search builder process failed (exit {self._child.returncode}): {detail}")
        if out.split()[1].decode() != fingerprint.hex():
            shutil.rmtree(self._path.parent, ignore_errors=True)
            raise SearchMismatch("the records changed between the index build and the search build")
        return SearchEngine(self._path, unlink=True)

    def cancel(self) -> None:
        self._child.kill()
        self._child.communicate()
        self._errors.close()
        shutil.rmtree(self._path.parent, ignore_errors=True)


def main(argv: list[str]) -> int:
    """The child: builds the database for the records in the job (argv[1]) into argv[0]; prints "ok <fingerprint>"."""
    job = json.loads(argv[1])
    roots, limits = [Path(root) for root in job["roots"]], Limits(*job["limits"])
    report = LoadReport()  # the index build reports the problems; this one is scratch
    admission = Admission(report)
    builder = SearchBuilder()
    for item in iter_records(roots, report, limits):
        admitted = admission.admit(item)
        if admitted is not None:
            builder.add(search_document(item.record, admitted))
    builder.write(Path(argv[0]))
    sys.stdout.write(f"ok {admission.fingerprint.hex()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
