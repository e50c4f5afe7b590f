"""The leaderboards' tables read and written in a process of their own while the papers are read, for a large archive.

Reading the three tables and writing what they alone give (`boards.write_catalogued`) needs no paper, and the papers'
part of a build leaves the other core partly idle, the keys' step after it wholly: there the tables cost little of the
build's time, where read after the papers they would add to it. The child (`python -m papercode.archive.boards_child`,
`core.child`) is given the table files (pickled, in a scratch directory) and the build's directory, lowers its
priority so that the papers come first, writes its columns into `boards/` and answers with a `Beside` (msgpack, on
stdout): the `Catalogued` and what it counted, or the table it could not read (`BadInput`, raised here as it would be
in the build's own process).

For a small archive (papers' files under `CHILD_PROCESS_BYTES`) starting a process costs more than it saves: the build
reads the tables itself (`read_here`). A child that fails otherwise costs the same: the build reads them itself.
"""

from __future__ import annotations

import functools
import logging
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final

import msgspec

from papercode.core import scratch
from papercode.core.child import ChildProcess, watch_parent

from .boards import Catalogued, CatalogueReader, write_catalogued
from .rows import Tally
from .tables import BadInput, TableFile

log = logging.getLogger(__name__)

# The papers' files' bytes from which the tables are read beside them (the real archive's are hundreds of MB; a child
# costs about half a second to start).
CHILD_PROCESS_BYTES = 64 * 1024 * 1024
_NICENESS: Final = 10  # the child's, above the build's: the papers' reading and indexing come first
_SCRATCH_PREFIX: Final = "papercode-boards-"  # the child's errors file lives in a scratch directory (`core.scratch`)


class TallyState(msgspec.Struct, frozen=True):
    """A `rows.Tally` as it crosses between the processes."""

    counts: dict[str, int]
    examples: dict[str, str]

    @classmethod
    def of(cls, tally: Tally) -> TallyState:
        return cls(dict(tally.counts), dict(tally.examples))

    def add_to(self, tally: Tally) -> None:
        """Counted in `tally` as if added after what it holds: its first example of a reason stays first."""
        for reason, count in self.counts.items():
            tally.counts[reason] += count
            tally.examples.setdefault(reason, self.examples[reason])


class Written(msgspec.Struct, frozen=True, tag=True):
    catalogued: Catalogued
    source_rows: list[int | None]  # each table file's rows, as `raw_rows` counted them
    rejected: TallyState
    warnings: TallyState


class Unreadable(msgspec.Struct, frozen=True, tag=True):
    path: str
    problem: str


Beside = Written | Unreadable


def read_here(
    sources: list[TableFile], build: Path, *, rejected: Tally, warnings: Tally, progress: Callable[[TableFile, float], None]
) -> Catalogued:
    """The tables read in this process, one after another (`progress`: each file's share read so far)."""
    reader = CatalogueReader(rejected)
    for source in sources:
        progress(source, 0.0)
        reader.read(source, functools.partial(progress, source))
    return write_catalogued(reader, build, warnings)


class BoardsBeside:
    """The child reading `sources` into `build` while this process reads the papers; `result` waits for it."""

    def __init__(self, sources: list[TableFile], build: Path) -> None:
        self._sources = sources
        self._scratch = scratch.directory(_SCRATCH_PREFIX)
        try:
            job = self._scratch.path / "job"
            job.write_bytes(pickle.dumps(sources, protocol=pickle.HIGHEST_PROTOCOL))
            self._child = ChildProcess("papercode.archive.boards_child", [str(build), str(job)], self._scratch.path / "errors")
        except BaseException:
            self._scratch.remove()
            raise

    def result(self, rejected: Tally, warnings: Tally) -> Catalogued | None:
        """The child's `Catalogued`, its counts added to `rejected` and `warnings` (None: it failed, and the tables are
        to be read here). A table it could not read is raised as `BadInput`."""
        process = self._child.process
        out, _ = process.communicate()
        try:
            answer = msgspec.msgpack.decode(out, type=Beside) if process.returncode == 0 else None
        except msgspec.DecodeError:
            answer = None
        if isinstance(answer, Unreadable):
            raise BadInput(answer.path, answer.problem)
        if answer is None:
            log.warning("the leaderboards' process failed (%s); reading their tables here", self._child.failure())
            return None
        for source, rows in zip(self._sources, answer.source_rows, strict=True):
            source.rows = rows
        answer.rejected.add_to(rejected)
        answer.warnings.add_to(warnings)
        return answer.catalogued

    def close(self) -> None:
        """Stop the child if it still runs (before anything removes the build it writes into); let go of it."""
        if self._child.process.returncode is None:
            self._child.kill()
        self._child.close()
        self._scratch.remove()


def start_beside(sources: list[TableFile], build: Path, paper_bytes: int) -> BoardsBeside | None:
    """A child reading the tables, when the papers' files are large enough to hide it (else None: read them here)."""
    if not sources or paper_bytes < CHILD_PROCESS_BYTES:
        return None
    try:
        return BoardsBeside(sources, build)
    except OSError as exc:
        log.warning("cannot start the leaderboards' process (%s); reading their tables after the papers", exc)
        return None


def _unseen(source: TableFile, share: float) -> None:
    """The child's progress: nobody draws it (the build shows its papers' progress)."""


def main(argv: list[str]) -> int:
    """The child: argv[0] is the build's directory, argv[1] the table files (pickled), and the last, on POSIX, the pipe
    `core.child.watch_parent` watches."""
    argv = watch_parent(argv)
    if hasattr(os, "nice"):
        os.nice(_NICENESS)
    sources: list[TableFile] = pickle.loads(Path(argv[1]).read_bytes())  # written by the build that started this process
    rejected, warnings = Tally(), Tally()
    try:
        catalogued = read_here(sources, Path(argv[0]), rejected=rejected, warnings=warnings, progress=_unseen)
    except BadInput as exc:
        answer: Beside = Unreadable(exc.path, exc.problem)
    else:
        answer = Written(catalogued, [source.rows for source in sources], TallyState.of(rejected), TallyState.of(warnings))
    sys.stdout.buffer.write(msgspec.msgpack.encode(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
