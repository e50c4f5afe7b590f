"""The archive directory however a user names it (issue #30, defects 1, 10 and 11): relative, a symlink, under a
symlinked parent, or the default location under a symlinked home; by flag (`--archive-dir`, `--out`) or by
`PAPERCODE_ARCHIVE_DIR`. It is read as its real path once, where the setting is read, and every command compares and
removes by it: the current build is never removed. `archive verify` removes unused builds as every command's start
does, and a stray `.current-<pid>` of a pid past the platform's range crashes no command.

The real command line runs in child processes where the defect shows there (`@pytest.mark.process`).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, StdioServerParameters

from papercode.archive import build_archive, builds
from papercode.cli import main as cli
from papercode.core import liveness
from papercode.index.mapped import verify
from papercode.index.mapped_archive import BUILDS, CURRENT, ArchiveUnavailable, open_archive
from papercode.settings import settings_for
from tests.support.archive_overlay import DATA_DATE, small_archive_sources
from tests.support.archive_tables import current_manifest
from tests.support.checkout import THIS_CHECKOUT
from tests.support.fetching import fetch, hub_datasets
from tests.support.hub_stand_in import HubStandIn
from tests.support.processes import WAIT, run_papercode

ARCHIVE_ONLY = "2003.00003"  # a paper only the small archive has: found only when the archive is served
PAST_ANY_PID = 9_999_999_999  # ten digits, as a leftover's name may hold; past every platform's range of process ids
UNUSED = "20200101T000000Z-0000beef"  # a complete build that `current` does not name


def intact_current(archive: Path) -> str:
    """The id of the archive's current build, after checking every byte of it against its manifest."""
    mapped = open_archive(archive)
    try:
        assert verify(mapped.build, mapped.manifest.files) == []
        return mapped.build_id
    finally:
        mapped.close()


def builds_in(archive: Path) -> list[str]:
    return sorted(os.listdir(archive / BUILDS))


def add_unused_build(archive: Path) -> None:
    """A copy of the current build under another id: what a build leaves once another is current and no server holds it."""
    shutil.copytree(archive / BUILDS / current_manifest(archive)["build_id"], archive / BUILDS / UNUSED)


# -- where the archive is, as a user names it --------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where the archive really is (`real`), how a command names it (`given`: by `how`, from `cwd`), and the
    environment the command runs in (its own HOME; no archive setting but the one under test)."""

    real: Path
    given: str
    how: str  # "flag", "env" or "default"
    cwd: Path
    env: dict[str, str]

    @property
    def archive_dir(self) -> list[str]:
        return ["--archive-dir", self.given] if self.how == "flag" else []

    @property
    def out(self) -> list[str]:
        return ["--out", self.given] if self.how == "flag" else []


FORMS = [
    ("relative", "flag"),
    ("relative", "env"),
    ("symlink", "flag"),
    ("symlink", "env"),
    ("symlinked parent", "flag"),
    ("symlinked parent", "env"),
    ("symlinked home", "default"),
]
# Each form once as a process (the flag and the variable are read by one function, tested above for every form), and
# the two the issue reproduced by both: a relative --archive-dir, a relative PAPERCODE_ARCHIVE_DIR.
PROCESS_FORMS = [("relative", "flag"), ("relative", "env"), ("symlink", "flag"), ("symlinked parent", "env"), ("symlinked home", "default")]


def place(tmp_path: Path, form: str, how: str) -> Place:
    """The archive's directory in `tmp_path`, named as `form` says."""
    home = tmp_path / "home"
    disk = tmp_path / "disk"
    disk.mkdir()
    real, cwd = disk / "archive", tmp_path
    if form == "relative":
        given, cwd = "archive", disk
    elif form == "symlink":
        (tmp_path / "link").symlink_to(real)
        given = str(tmp_path / "link")
    elif form == "symlinked parent":
        (tmp_path / "parent").symlink_to(disk)
        given = str(tmp_path / "parent" / "archive")
    else:  # the default location, under a home that is a symlink
        home.symlink_to(disk)
        real = disk / ".local" / "share" / "papercode" / "archive"
        given = str(home / ".local" / "share" / "papercode" / "archive")
    if not home.exists():
        home.mkdir()
    env = {
        "HOME": str(home),
        "XDG_DATA_HOME": "",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PAPERCODE_ARCHIVE": "",
        "PAPERCODE_ARCHIVE_DIR": given if how == "env" else "",
    }
    return Place(real, given, how, cwd, env)


# -- in-process: each part of the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("form", "how"), FORMS)
def test_the_archive_dir_setting_is_read_as_its_real_path_with_the_users_path_kept_for_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str, how: str
) -> None:
    where = place(tmp_path, form, how)
    monkeypatch.chdir(where.cwd)
    for name, value in where.env.items():
        monkeypatch.setenv(name, value)
    for command, flag in (("serve", where.archive_dir), ("check", where.archive_dir), ("archive build", where.out)):
        chosen = settings_for(command, dict([flag]) if flag else {}).archive_dir
        assert (chosen.real, str(chosen.given)) == (where.real, where.given)
        assert chosen.shown == f"{where.given} (that is {where.real})"


@pytest.mark.parametrize("form", ["relative", "symlink", "symlinked parent"])
def test_removing_unused_builds_keeps_the_current_one_however_the_directory_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    where = place(tmp_path, form, "flag")
    build_archive(small_archive_sources(tmp_path / "src"), where.real, data_date=DATA_DATE)
    current = intact_current(where.real)
    add_unused_build(where.real)
    monkeypatch.chdir(where.cwd)
    assert builds.remove_unused(Path(where.given)) == [Path(where.given) / BUILDS / UNUSED]
    assert intact_current(where.real) == current and builds_in(where.real) == [current]


def test_a_build_under_a_symlinked_parent_stays_current_and_says_where_it_went(tmp_path: Path) -> None:
    where = place(tmp_path, "symlinked parent", "flag")
    for data_date in (DATA_DATE, "2025-08-01"):
        summary = build_archive(small_archive_sources(tmp_path / "src"), where.given, data_date=data_date)
        assert summary.archive_dir == where.real
        assert intact_current(where.real) == summary.build_id and builds_in(where.real) == [summary.build_id]


def test_a_current_link_that_names_no_build_of_its_directory_leaves_every_build(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    build_archive(small_archive_sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    before = builds_in(archive)
    os.unlink(archive / CURRENT)
    os.symlink(tmp_path / "elsewhere" / BUILDS / before[0], archive / CURRENT)
    assert builds.remove_unused(archive) == [] and builds_in(archive) == before


@pytest.mark.parametrize("current", ["names a missing build", "is missing"])
def test_without_a_current_build_a_commands_start_removes_no_build(
    tmp_path: Path, current: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a half-done copy or a hand edit, the build `current` names may be gone: the builds left are what it can
    be pointed at again, and a plain `papercode check` (no `--archive`) used to remove them all."""
    archive = tmp_path / "archive"
    build_archive(small_archive_sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    add_unused_build(archive)
    served = intact_current(archive)
    shutil.rmtree(archive / BUILDS / served) if current == "names a missing build" else os.unlink(archive / CURRENT)
    left = builds_in(archive)
    assert UNUSED in left
    assert builds.remove_unused(archive) == [] and builds_in(archive) == left
    assert cli.main(["check", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")]) == 0, capsys.readouterr()
    assert builds_in(archive) == left


def test_a_build_that_cannot_be_locked_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system without locks no server can say it holds a build: each stays, and nothing fails."""
    archive = tmp_path / "archive"
    build_archive(small_archive_sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    add_unused_build(archive)
    before = builds_in(archive)

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(liveness.fcntl, "flock", no_locks)
    assert builds.remove_unused(archive) == [] and builds_in(archive) == before


def test_a_current_link_naming_a_missing_build_says_so(tmp_path: Path) -> None:
    """Not "the archive kept changing": nothing changes, the build `current` names is not there."""
    archive = tmp_path / "archive"
    build_archive(small_archive_sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    (build,) = builds_in(archive)
    shutil.rmtree(archive / BUILDS / build)
    with pytest.raises(ArchiveUnavailable) as raised:
        open_archive(archive)
    assert str(raised.value) == f"current names the build {build}, which is missing from builds/"


def test_archive_verify_removes_unused_builds_as_every_commands_start_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "archive"
    build_archive(small_archive_sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    current = intact_current(archive)
    add_unused_build(archive)
    assert cli.main(["archive", "verify", "--out", str(archive)]) == 0
    files = len(current_manifest(archive)["files"])
    assert capsys.readouterr().out == f"archive: build {current} intact ({files} files, 4 papers)\n"
    assert builds_in(archive) == [current]


# -- every command, as a real process ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hugging Face cache one fetch from the loopback stand-in filled: `archive fetch` builds from it offline."""
    tmp = tmp_path_factory.mktemp("hub")
    with HubStandIn(hub_datasets(tmp)) as hub:
        result = fetch(tmp / "fetched", tmp / "hf", hub.url)
    assert result.returncode == 0, result.stderr
    return tmp / "hf"


@dataclass(frozen=True)
class Command:
    """A papercode command line, its exit code, and what its result must show (`shows`) besides no traceback."""

    name: str
    args: list[str]
    code: int
    shows: Callable[[subprocess.CompletedProcess[str]], bool] = lambda result: True


def every_command(where: Place, tmp_path: Path) -> list[Command]:
    """Every papercode command that reads the archive's directory, naming it as `where` says."""
    sources = [str(path) for path in small_archive_sources(tmp_path / "src")]
    code_dir = ["--code-dir", str(tmp_path / "code")]
    empty = tmp_path / "no-clones"
    empty.mkdir(exist_ok=True)

    def names_the_archive(result: subprocess.CompletedProcess[str]) -> bool:
        build = current_manifest(where.real)["build_id"]
        return f"archive: build {build} (4 papers, data of {DATA_DATE}), {where.given} (that is {where.real})\n" in result.stdout

    return [
        Command("check", ["check", *where.archive_dir, *code_dir], 0),
        Command("check --archive", ["check", "--archive", *where.archive_dir, *code_dir], 0, names_the_archive),
        Command(
            "call --archive",
            ["call", "--archive", *where.archive_dir, *code_dir, "corpus_stats"],
            0,
            lambda result: orjson.loads(result.stdout)["by_source"]["archive"] == 4,
        ),
        Command(
            "materialize --archive",  # the paper only the archive has: found, so the archive is served; no code to store
            ["materialize", "--archive", *where.archive_dir, *code_dir, "--repos", str(empty), "--paper", ARCHIVE_ONLY],
            1,
            lambda result: result.stdout.startswith("0 samples: 0 stored now in "),
        ),
        Command(
            "config --archive",
            ["config", "claude-desktop", "--archive", *where.archive_dir],
            0,
            lambda result: f'"{where.real}"' in result.stdout,
        ),
        Command(
            "archive build",
            ["archive", "build", *sources, *where.out, "--snapshot", DATA_DATE],
            0,
            lambda result: result.stdout.startswith(f"archive: {where.real}, build "),
        ),
        Command("archive fetch", ["archive", "fetch", *where.out, "--snapshot", DATA_DATE], 0),
        Command("archive verify", ["archive", "verify", *where.out], 0),
    ]


def run(command: Command, where: Place, hub_cache: Path) -> subprocess.CompletedProcess[str]:
    offline = {
        "HF_HOME": str(hub_cache),
        "HF_HUB_CACHE": str(hub_cache / "hub"),
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    result = run_papercode(*command.args, env={**where.env, **offline}, cwd=where.cwd)
    assert result.returncode == command.code and "Traceback" not in result.stderr, f"{command.name}: {result.stderr}"
    assert command.shows(result), f"{command.name}: {result.stdout}"
    return result


async def served_stats(where: Place, tmp_path: Path) -> dict[str, Any]:
    """`corpus_stats` from `papercode serve --archive` over stdio, the archive named as `where` says."""
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "papercode", "serve", "--archive", *where.archive_dir, "--code-dir", str(tmp_path / "code")],
        env={**where.env, **THIS_CHECKOUT, "PATH": os.environ.get("PATH", "")},
        cwd=where.cwd,
    )
    with anyio.fail_after(WAIT):
        async with Client(server, mode="auto") as client:
            stats = await client.call_tool("corpus_stats", {})
    assert stats.structured_content is not None
    return stats.structured_content


@pytest.mark.process
@pytest.mark.parametrize(("form", "how"), PROCESS_FORMS)
def test_no_command_removes_the_current_build_however_the_archive_dir_is_named(
    tmp_path: Path, hub_cache: Path, form: str, how: str
) -> None:
    where = place(tmp_path, form, how)
    build_archive(small_archive_sources(tmp_path / "first"), where.real, data_date=DATA_DATE)
    intact_current(where.real)
    assert anyio.run(served_stats, where, tmp_path)["by_source"]["archive"] == 4, "serve --archive"
    intact_current(where.real)
    for command in every_command(where, tmp_path):
        before = builds_in(where.real)
        run(command, where, hub_cache)
        current = intact_current(where.real)
        assert builds_in(where.real) == [current], command.name  # the one before, once replaced, removed: no other
        assert command.name.startswith(("archive build", "archive fetch")) or [current] == before, command.name


# -- a stray leftover of a pid past the platform's range ---------------------------------------------------------------


@pytest.mark.process
def test_a_stray_leftover_of_a_pid_past_any_range_crashes_no_command_and_stays(tmp_path: Path, hub_cache: Path) -> None:
    where = place(tmp_path, "symlink", "env")  # PAPERCODE_ARCHIVE_DIR: even the commands without --archive sweep it
    build_archive(small_archive_sources(tmp_path / "first"), where.real, data_date=DATA_DATE)
    stray_link = where.real / f".current-{PAST_ANY_PID}"
    stray_build = where.real / BUILDS / f".building-20200101T000000Z-0000beef-{PAST_ANY_PID}"
    os.symlink(f"{BUILDS}/{UNUSED}", stray_link)
    stray_build.mkdir()
    assert anyio.run(served_stats, where, tmp_path)["by_source"]["archive"] == 4, "serve --archive"
    for command in every_command(where, tmp_path):
        run(command, where, hub_cache)
        intact_current(where.real)
        assert stray_link.is_symlink() and stray_build.is_dir(), command.name  # what papercode cannot judge, it leaves
