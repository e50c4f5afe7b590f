"""Nothing left behind: a papercode process removes its temporary files and directories however it
ends (SIGTERM included), its build child dies with it, and a start removes what a killed one left,
only this user's, never a running process's.

Real processes, killed for real (kill -9). `PAPERCODE_TEST_HOLD` (`core.holds`) holds a cold build at a known
point (the server just after starting its build child, the child before reading anything), so each
kill lands mid-build. The corpus is large enough for a build child (`CHILD_PROCESS_BYTES`): the
bundled records plus a sparse file, which nothing reads while the build is held.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import papercode
from papercode.core import scratch
from papercode.ingest import parallel
from papercode.settings import bundled_records_dir
from tests.support.processes import PROMPTLY, children, end_all, gone_within, kill_hard, wait_for

pytestmark = pytest.mark.process

SERVER_DIR = Path(papercode.__file__).resolve().parents[1]


class Box:
    """A private temporary directory, cache and code store, and a records directory that needs a build child."""

    def __init__(self, root: Path) -> None:
        self.tmp, self.cache, self.code, self.records = root / "tmp", root / "cache", root / "code", root / "records"
        for directory in (self.tmp, self.cache, self.code):
            directory.mkdir()
        shutil.copytree(bundled_records_dir(), self.records, ignore=shutil.ignore_patterns("README.md"))
        with open(self.records / "zz_padding.jsonl", "wb") as padding:
            padding.truncate(parallel.CHILD_PROCESS_BYTES)  # sparse: no disk, no time
        self.hold = root / "hold"
        self.hold.touch()
        self.processes: list[subprocess.Popen[bytes]] = []
        self.small = root / "small"
        shutil.copytree(bundled_records_dir(), self.small, ignore=shutil.ignore_patterns("README.md"))

    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp.parent),
            "TMPDIR": str(self.tmp),
            "PYTHONPATH": str(SERVER_DIR),
            "PAPERCODE_CACHE_DIR": str(self.cache),
            "PAPERCODE_CODE_DIR": str(self.code),
            "PAPERCODE_OFFLINE": "1",
            "PAPERCODE_TEST_HOLD": str(self.hold),
        }

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """`papercode ARGS` (stdin kept open, as a host does), tracked so the test ends it."""
        process = subprocess.Popen(
            [sys.executable, "-m", "papercode", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env(),
        )
        self.processes.append(process)
        return process

    def run(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """`papercode ARGS` to the end: a next start."""
        return subprocess.run([sys.executable, "-m", "papercode", *args], env=self.env(), capture_output=True, timeout=120)

    def serving_mid_build(self) -> tuple[subprocess.Popen[bytes], int]:
        """A stdio server held mid-build, once its temporary directories and its build child are there."""
        server = self.start("serve", "--records", str(self.records))
        child = wait_for(lambda: _one(children(server.pid)) if len(self.owned(server.pid)) == 2 else None)
        return server, child

    def owned(self, pid: int) -> list[Path]:
        """The temporary directories process `pid` made here."""
        return sorted(path for prefix in (parallel.BUILD_PREFIX, parallel.SEARCH_PREFIX) for path in self.tmp.glob(f"{prefix}{pid}-*"))

    def end(self) -> None:
        self.hold.unlink(missing_ok=True)
        end_all(self.processes)


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Box]:
    made = Box(tmp_path)
    try:
        yield made
    finally:
        made.end()


def _one(pids: list[int]) -> int | None:
    return pids[0] if len(pids) == 1 else None


def dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


# -- the cold build's temporary directories and its child -------------------------------------------


def test_a_start_removes_what_a_killed_server_left_and_never_a_running_ones(box: Box) -> None:
    running_server, _ = box.serving_mid_build()
    killed, _ = box.serving_mid_build()
    left = box.owned(killed.pid)
    assert [path.name.split("-")[1] for path in left] == ["build", "search"]
    kill_hard(killed)
    assert all(path.exists() for path in left)  # what kill -9 leaves
    kept = box.owned(running_server.pid)

    done = box.run("check", "--records", str(box.small))  # the next start, of any command
    assert done.returncode == 0, done.stderr
    assert not any(path.exists() for path in left)
    assert box.owned(running_server.pid) == kept and all(path.exists() for path in kept)  # a running server's: untouched
    assert running_server.poll() is None


def test_the_build_child_dies_with_its_parent(box: Box) -> None:
    server, child = box.serving_mid_build()
    kill_hard(server)
    assert gone_within(child), "the build child outlived the server it builds for"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_on_a_stdio_server_mid_build_ends_it_and_removes_its_temporary_directories(box: Box, signum: int) -> None:
    server, child = box.serving_mid_build()
    own = box.owned(server.pid)
    server.send_signal(signum)
    assert server.wait(PROMPTLY) == 0  # at once, as Ctrl-C does, though the build it stopped was mid-way
    assert not any(path.exists() for path in own)
    assert gone_within(child)


# -- temporary files of snapshot and code-store writes ----------------------------------------------

_HELD_WRITE = """
import os, sys, time
from pathlib import Path

def held(*args):  # the write is done; the rename into place never comes
    print("writing", flush=True)
    time.sleep(600)

os.replace = held
what, where = sys.argv[1], Path(sys.argv[2])
if what == "snapshot":
    from papercode.corpus import snapshot
    from papercode.corpus.stages import Corpus
    corpus = Corpus.load([Path(sys.argv[3])])
    snapshot.save(where / "index-0000000000000000.snapshot", b"k" * 32, corpus.index, corpus.search)
else:
    from papercode.verified.store import CodeStore
    CodeStore(where).write("x = 1\\n")
"""


def held_write(box: Box, what: str, where: Path) -> subprocess.Popen[bytes]:
    """A process stopped in the middle of a snapshot or code-store write (its temporary file written)."""
    process = subprocess.Popen([sys.executable, "-c", _HELD_WRITE, what, str(where), str(box.small)], stdout=subprocess.PIPE, env=box.env())
    box.processes.append(process)
    assert process.stdout is not None and process.stdout.readline() == b"writing\n"
    return process


@pytest.mark.parametrize(
    ("what", "prefix", "command"),
    [("snapshot", ".snapshot-", ("call", "corpus_stats")), ("code", ".writing-", ("check",))],
    ids=["snapshot-then-call", "materialize-then-check"],
)
def test_a_killed_write_leaves_a_temporary_file_the_next_run_removes(box: Box, what: str, prefix: str, command: tuple[str, ...]) -> None:
    where = box.cache if what == "snapshot" else box.code
    alive, killed = held_write(box, what, where), held_write(box, what, where)
    left, kept = (sorted(where.glob(f"{prefix}{process.pid}-*")) for process in (killed, alive))
    # A snapshot write holds two: the snapshot file and the copy of its search index; a code write one file.
    kinds = sorted(entry.is_dir() for entry in left)
    assert kinds == sorted(entry.is_dir() for entry in kept) == ([False, True] if what == "snapshot" else [False])
    kill_hard(killed)

    done = box.run(*command, "--records", str(box.small))
    assert done.returncode == 0, done.stderr
    assert not any(entry.exists() for entry in left)
    assert all(entry.exists() for entry in kept)  # a running writer's: untouched
    if what == "snapshot":  # one search index for each snapshot written (the call's own): none left over
        assert len(list(where.glob("index-*.search-*"))) == len(list(where.glob("index-*.snapshot"))) == 1


# -- the rules of a sweep ---------------------------------------------------------------------------


def test_a_sweep_removes_an_entry_only_when_its_owner_is_gone_and_its_lock_is_free(tmp_path: Path) -> None:
    entry = tmp_path / f"papercode-build-{dead_pid()}-abc"
    entry.mkdir()
    (entry / "part.pickle").write_bytes(b"x")
    held = os.open(entry, os.O_RDONLY)
    try:  # its owner's pid is not running here, but it holds the lock: a process in another pid namespace
        fcntl.flock(held, fcntl.LOCK_EX)
        assert scratch.sweep(tmp_path, ["papercode-build-"]) == [] and entry.exists()
    finally:
        os.close(held)
    mine = scratch.directory("papercode-build-", tmp_path)  # this process's, held
    unowned = tmp_path / "papercode-build-abc"  # no owner in its name (an older papercode's): not judged
    unowned.mkdir()
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    unlocked = tmp_path / f"papercode-search-{owner.pid}-abc"  # its owner runs (it has not locked it yet, say)
    unlocked.mkdir()
    try:
        assert scratch.sweep(tmp_path, ["papercode-build-", "papercode-search-"]) == [entry]
        assert not entry.exists() and mine.path.exists() and unowned.exists() and unlocked.exists()
    finally:
        mine.remove()
        owner.kill()
        owner.wait()
    assert not mine.path.exists()


@pytest.mark.skipif(os.getuid() != 0, reason="making another user's file needs root")
def test_a_sweep_never_touches_another_users_entry(tmp_path: Path) -> None:
    entry = tmp_path / f".snapshot-{dead_pid()}-abc"
    entry.write_bytes(b"someone else's")
    os.chown(entry, 65534, 65534)
    assert scratch.sweep(tmp_path, [".snapshot-"]) == [] and entry.exists()
