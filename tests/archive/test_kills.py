"""The archive's serving form with real processes: what a start or a build killed outright (kill -9) leaves is only what
the next start sweeps or the next build removes, and the current build serves throughout; a server ended while its
build child runs ends quietly; a build a live server holds is kept; the archive is served from a read-only mount and by
a user who cannot write it, and never written.

Processes are held at known points (`core.holds`: `PAPERCODE_TEST_HOLD`), so each kill lands where it is meant to.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from papercode.archive import build_archive
from papercode.index.mapped_archive import BUILDS, current_build_id
from papercode.index.overlay import OVERLAY_PREFIX
from papercode.ingest import parallel
from papercode.settings import bundled_records_dir
from tests.support.archive_tables import bundled_rows, contents, generated_rows, write_json
from tests.support.checkout import SERVER_DIR
from tests.support.processes import WAIT, children, end_all, gone_within, kill_hard, wait_for

pytestmark = pytest.mark.process

# Its `sitecustomize` makes a server's exit wait until no thread is in a build (a race otherwise: see there).
EXIT_AFTER_BUILDS = Path(__file__).resolve().parent / "exit_after_builds"
DATA_DATE = "2025-07-28"


class Stand:
    """A private temporary directory, cache and code store, the bundled records, an archive built once beneath them,
    and a hold file (empty until a test names the points to hold at)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp, self.cache, self.code, self.records = root / "tmp", root / "cache", root / "code", root / "records"
        for directory in (self.tmp, self.cache, self.code):
            directory.mkdir()
        shutil.copytree(bundled_records_dir(), self.records, ignore=shutil.ignore_patterns("README.md"))
        papers, links = generated_rows(60, 80, seed=3, description_words=(2, 4))
        more_papers, more_links = bundled_rows()
        self.sources = [
            write_json(root / "src" / "papers.json.gz", papers + more_papers),
            write_json(root / "src" / "links.json", links + more_links),
        ]
        self.archive = root / "archive"
        self.build_id = build_archive(self.sources, self.archive, data_date=DATA_DATE).build_id
        self.hold = root / "hold"
        self.processes: list[subprocess.Popen[bytes]] = []

    def env(self, *, hold: bool = False) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "TMPDIR": str(self.tmp),
            "PYTHONPATH": os.pathsep.join([str(EXIT_AFTER_BUILDS), str(SERVER_DIR)]),
            "PAPERCODE_CACHE_DIR": str(self.cache),
            "PAPERCODE_CODE_DIR": str(self.code),
            "PAPERCODE_OFFLINE": "1",
        }
        return {**env, "PAPERCODE_TEST_HOLD": str(self.hold)} if hold else env

    def start(self, *args: str | Path, held_at: str) -> subprocess.Popen[bytes]:
        """`papercode ARGS` held at `held_at` (stdin kept open, as a host does; its stderr kept in `root/stderr`)."""
        self.hold.write_text(held_at + "\n")
        with open(self.root / "stderr", "wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "papercode", *map(str, args)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=self.env(hold=True),
            )
        self.processes.append(process)
        return process

    def reached(self, point: str, pid: int) -> None:
        """Wait until process `pid` is held at `point`."""
        reached = Path(f"{self.hold}.reached")
        wait_for(lambda: 1 if reached.exists() and f"{point} {pid}" in reached.read_text().splitlines() else None, WAIT)

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        """`papercode ARGS` to the end, unheld: a next start."""
        return subprocess.run(
            [sys.executable, "-m", "papercode", *map(str, args)], env=self.env(), capture_output=True, text=True, timeout=120, check=False
        )

    def check(self, archive: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run("check", "--records", self.records, "--archive", "--archive-dir", archive or self.archive)

    def owned(self, pid: int) -> list[Path]:
        """What process `pid` made in the temporary directory."""
        return sorted(path for path in self.tmp.iterdir() if f"-{pid}-" in path.name)

    def end(self) -> None:
        self.hold.unlink(missing_ok=True)
        end_all(self.processes)


@pytest.fixture
def stand(tmp_path: Path) -> Iterator[Stand]:
    made = Stand(tmp_path)
    try:
        yield made
    finally:
        made.end()


def serving(stand: Stand, build_id: str, done: subprocess.CompletedProcess[str]) -> None:
    """`check` served the archive's build `build_id` beneath the records."""
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"archive: build {build_id} (" in done.stdout


# -- kill -9 at each stage of a start and of a build -------------------------------------------------


@pytest.mark.parametrize("point", ["archive-opened", "overlay-written"])
def test_a_start_killed_while_it_opens_the_archive_leaves_only_what_the_next_start_sweeps(stand: Stand, point: str) -> None:
    before = contents(stand.archive)
    server = stand.start("serve", "--records", stand.records, "--archive", "--archive-dir", stand.archive, held_at=point)
    stand.reached(point, server.pid)
    left = stand.owned(server.pid)
    overlays = [path.name for path in left if path.name.startswith(OVERLAY_PREFIX)]
    assert len(overlays) == (1 if point == "overlay-written" else 0), left
    kill_hard(server)
    assert contents(stand.archive) == before
    assert all(path.exists() for path in left)  # what kill -9 leaves
    serving(stand, stand.build_id, stand.check())  # the next start, of any command
    assert not any(path.exists() for path in left)
    assert contents(stand.archive) == before


@pytest.mark.parametrize(("point", "then"), [("archive-reading", "build"), ("archive-indexed", "start")])
def test_a_build_killed_midway_leaves_the_current_build_serving_and_its_directory_to_the_next(stand: Stand, point: str, then: str) -> None:
    before = contents(stand.archive)
    builder = stand.start("archive", "build", *stand.sources, "--out", stand.archive, "--snapshot", DATA_DATE, held_at=point)
    stand.reached(point, builder.pid)
    kill_hard(builder)
    (left,) = [path for path in (stand.archive / BUILDS).iterdir() if path.name.startswith(".building-")]
    assert left.name.endswith(f"-{builder.pid}")
    if point == "archive-indexed":  # every paper and the search index were written; the manifest and the switch were not
        assert (left / "search" / "meta.json").is_file() and (left / "papers" / "title.data").stat().st_size > 0
    assert {name: entry for name, entry in contents(stand.archive).items() if not name.startswith(f"{BUILDS}/{left.name}")} == before
    assert current_build_id(stand.archive) == stand.build_id
    if then == "start":
        serving(stand, stand.build_id, stand.check())  # served meanwhile, and what the build left swept
        assert contents(stand.archive) == before
    else:
        rebuilt = stand.run("archive", "build", *stand.sources, "--out", stand.archive, "--snapshot", DATA_DATE)
        assert rebuilt.returncode == 0, rebuilt.stderr
        new = current_build_id(stand.archive)
        assert new not in (None, stand.build_id)
        assert sorted(os.listdir(stand.archive / BUILDS)) == [new]  # what the killed build left, and the old build, gone
        serving(stand, str(new), stand.check())


# -- a server ended while its build child runs ---------------------------------------------------------


@pytest.mark.parametrize("how", ["end-of-input", "SIGTERM"])
def test_a_server_ended_while_its_build_child_runs_ends_quietly_without_building_again(stand: Stand, how: str) -> None:
    """The server (records large enough for a build child: `CHILD_PROCESS_BYTES`) needs its child's part of the build;
    the child is stopped (SIGSTOP), so the server is ended mid-build, whatever it reached. On its way out it stops the
    child itself: that is no failed build, to warn of and build again. (The server's exit waits for its build thread
    to see the child's end: `exit_after_builds/sitecustomize.py`.)"""
    with open(stand.records / "zz_padding.jsonl", "wb") as padding:
        padding.truncate(parallel.CHILD_PROCESS_BYTES)  # sparse: no disk, no time
    server = stand.start("serve", "--records", stand.records, "--archive", "--archive-dir", stand.archive, held_at="build-started")
    stand.reached("build-started", server.pid)
    child = wait_for(lambda: children(server.pid)[0] if children(server.pid) else None)
    stand.reached("build-started", child)
    os.kill(child, signal.SIGSTOP)
    stand.hold.unlink()  # the server builds on: it cannot finish without the child
    if how == "SIGTERM":
        server.send_signal(signal.SIGTERM)
    else:
        assert server.stdin is not None
        server.stdin.close()
    assert server.wait(WAIT) == 0
    assert gone_within(child)
    said = (stand.root / "stderr").read_text()
    assert "build process failed" not in said and "building" not in said, said
    assert stand.owned(server.pid) == []


# -- builds a live server holds ---------------------------------------------------------------------------


def test_a_build_a_live_server_holds_is_kept_until_the_server_is_gone(stand: Stand) -> None:
    server = stand.start("serve", "--records", stand.records, "--archive", "--archive-dir", stand.archive, held_at="overlay-written")
    stand.reached("overlay-written", server.pid)  # it opened the current build
    newer = stand.run("archive", "build", *stand.sources, "--out", stand.archive, "--snapshot", DATA_DATE)
    assert newer.returncode == 0, newer.stderr
    second = current_build_id(stand.archive)
    assert sorted(os.listdir(stand.archive / BUILDS)) == sorted([stand.build_id, str(second)])  # the server's: kept
    kill_hard(server)  # its lock goes with it
    newest = stand.run("archive", "build", *stand.sources, "--out", stand.archive, "--snapshot", DATA_DATE)
    assert newest.returncode == 0, newest.stderr
    assert sorted(os.listdir(stand.archive / BUILDS)) == [str(current_build_id(stand.archive))]


# -- an archive the server cannot write ----------------------------------------------------------------------


def _can_mount_read_only() -> bool:
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False) if shutil.which("unshare") else None
    return probe is not None and probe.returncode == 0 and shutil.which("mount") is not None


@pytest.mark.skipif(
    not _can_mount_read_only(), reason="needs unshare and mount, and user namespaces: a read-only bind mount without privileges"
)
def test_an_archive_on_a_read_only_mount_is_served_and_nothing_is_written(stand: Stand) -> None:
    """In a mount namespace of its own (`unshare -rm`), the archive is bound read-only (a write there fails), and
    papercode starts over it cold, then warm (from the snapshot the first wrote): nothing it does fails."""
    mount = stand.root / "mounted"
    mount.mkdir()
    before = contents(stand.archive)
    script = (
        'mount --bind -o ro "$1" "$2" && touch "$2/.probe" 2>/dev/null && exit 3; shift 2; '
        'for call in "$@"; do eval "$call" || exit $?; done'
    )
    served = f'"{sys.executable}" -m papercode %s --records "{stand.records}" --archive --archive-dir "{mount}"'
    calls = [served % "call corpus_stats", served % "call search_papers query=model"]
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(stand.archive), str(mount), *calls],
        env=stand.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    stats, found = (orjson.loads(line) for line in done.stdout.splitlines())
    assert stats["by_source"] == {"records": 2, "archive": stats["papers"] - 2, "archive_rows_replaced": 2} and stats["papers"] > 60
    assert found["total"] > 0 and found["hits"]
    assert contents(stand.archive) == before and not (mount / ".probe").exists()


def test_an_archive_another_user_owns_is_served_by_one_who_cannot_write_it(stand: Stand) -> None:
    """The server runs as `nobody`, over an archive root owns (directories 755, files 644) and so cannot change."""
    if os.getuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("running as another user needs root and setpriv")
    home = Path(tempfile.mkdtemp(prefix="papercode-nobody-"))  # pytest's own directories are root's alone (700)
    try:
        home.chmod(0o755)
        for name in ("tmp", "cache", "code"):
            (home / name).mkdir()
            os.chown(home / name, 65534, 65534)
        archive, records = home / "archive", home / "records"
        shutil.copytree(stand.archive, archive, symlinks=True)
        shutil.copytree(stand.records, records)
        for path in [archive, records, *archive.rglob("*"), *records.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
        before = contents(archive)
        env = {**stand.env(), "HOME": str(home / "tmp"), "TMPDIR": str(home / "tmp"), "PAPERCODE_CACHE_DIR": str(home / "cache")}
        env["PAPERCODE_CODE_DIR"] = str(home / "code")
        nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", sys.executable, "-m", "papercode"]
        done = subprocess.run(
            [*nobody, "check", "--records", str(records), "--archive", "--archive-dir", str(archive)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"archive: build {stand.build_id} (" in done.stdout
        assert contents(archive) == before
        assert list((home / "tmp").iterdir()) == []
    finally:
        shutil.rmtree(home, ignore_errors=True)
