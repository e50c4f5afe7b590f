"""Where the archive lives, under attack and accident (issue #21): a build writes only into what papercode wrote,
follows a symlinked `--out`, survives a kill between its two renames (its build into `builds/`, its link over
`current`), sweeps only its own leftovers, locks the archive and not its directory; a path setting reads the same
everywhere; a manifest is checked before anything in it is used.

The real command line runs in a child process wherever that is where the defect shows (`@pytest.mark.process`).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from papercode.archive import build_archive, builds, check_data_date, location
from papercode.archive.build_progress import ArchiveBuildProgress
from papercode.cli import main as cli
from papercode.core.paths import given_path
from papercode.index.mapped_archive import BUILDS, CURRENT, MANIFEST
from papercode.settings import settings_for, user_cache_dir
from tests.support.archive_tables import (
    assert_bundled_papers_back,
    bundled_rows,
    current_manifest,
    served_papers,
    write_json,
    write_parquet,
)
from tests.support.checkout import THIS_CHECKOUT
from tests.support.processes import run_papercode

DATA_DATE = "2025-07-28"
NO_PROCESS = 4_194_304  # above every process id Linux (2**22 at most) and macOS hand out: its owner is dead
COMMITS = {"pwc-archive/papers-with-abstracts": "a" * 40, "pwc-archive/links-between-paper-and-code": "b" * 40}


def sources(directory: Path) -> list[Path]:
    papers, links = bundled_rows()
    return [write_json(directory / "papers-with-abstracts.json.gz", papers), write_json(directory / "links.json.gz", links)]


def files_of(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


def entries(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def one_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert (result.returncode, result.stdout, result.stderr.count("\n")) == (code, "", 1), result.stderr
    return result.stderr


# -- D7: a build replaces only a directory papercode wrote -------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("manifest", [b"", b"{}", b'{"format": "someone-elses"}', b"[1, 2]", b"not json"])
def test_a_directory_with_any_archive_json_and_files_of_its_own_is_refused_and_left_as_it_is(tmp_path: Path, manifest: bytes) -> None:
    mine = tmp_path / "mine"
    (mine / "src").mkdir(parents=True)
    (mine / "archive.json").write_bytes(manifest)
    (mine / "notes.txt").write_text("three years of notes")
    (mine / "src" / "model.py").write_text("import torch\n")
    before = files_of(mine)
    result = run_papercode("archive", "build", *sources(tmp_path / "src"), "--out", mine, "--snapshot", DATA_DATE)
    assert one_line(result, 2) == (
        f"papercode: archive build: --out {mine}: not empty and not an archive papercode wrote (no current link, no archive.json "
        "with papercode's format marker); it was left as it is. Next: pass a new or empty directory, or an archive papercode built\n"
    )
    assert files_of(mine) == before
    assert entries(tmp_path) == ["mine", "src"]


@pytest.mark.process
@pytest.mark.parametrize(
    ("added", "named"),
    [("notes.txt", "notes.txt"), ("records/mine.jsonl", "records"), (".DS_Store", ".DS_Store"), ("builds/notes.txt", "builds/notes.txt")],
)
def test_an_archive_holding_a_file_papercode_did_not_write_is_not_written(tmp_path: Path, added: str, named: str) -> None:
    archive = tmp_path / "archive"
    build_archive(sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    (archive / added).parent.mkdir(exist_ok=True)
    (archive / added).write_text("mine")
    before = files_of(archive)
    result = run_papercode("archive", "build", *sources(tmp_path / "src"), "--out", archive, "--snapshot", "2025-08-01")
    assert one_line(result, 2) == (
        f"papercode: archive build: --out {archive}: holds {named}, which papercode did not write; it was left as it is. "
        "Next: pass a new or empty directory, or an archive papercode built\n"
    )
    assert files_of(archive) == before


def test_a_file_put_into_the_archive_while_the_build_runs_is_not_removed_with_it(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    build_archive(sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    before = files_of(archive)

    class Meanwhile(ArchiveBuildProgress):
        def update(self, *args: Any) -> None:
            (archive / "notes.txt").write_text("written during the build")

    with pytest.raises(location.NotAnArchive, match=r"holds notes\.txt, which papercode did not write"):
        build_archive(sources(tmp_path / "src"), archive, data_date="2025-08-01", progress=Meanwhile(1))
    assert files_of(archive) == {**before, "notes.txt": b"written during the build"}
    assert entries(tmp_path) == ["archive", "src"]


# -- D8: a symlinked --out is followed ---------------------------------------------------------------------------------


@pytest.mark.process
def test_a_symlinked_out_is_rebuilt_where_it_points_and_stays_a_symlink(tmp_path: Path) -> None:
    target, home = tmp_path / "disk2" / "archive", tmp_path / "home"
    target.parent.mkdir()
    home.mkdir()
    (home / "archive").symlink_to(target)
    for data_date in (DATA_DATE, "2025-08-01"):
        result = run_papercode("archive", "build", *sources(tmp_path / "src"), "--out", home / "archive", "--snapshot", data_date)
        assert (result.returncode, result.stderr) == (0, "")
        assert result.stdout.startswith(f"archive: {target}, build ") and f" MB, given as {home / 'archive'})\n" in result.stdout
    assert (home / "archive").is_symlink() and os.readlink(home / "archive") == str(target)
    assert entries(home) == ["archive"] and entries(target.parent) == ["archive"]  # nothing orphaned, nothing left aside
    assert_bundled_papers_back(served_papers(target), snapshot="2025-08-01")


@pytest.mark.process
def test_a_symlinked_out_pointing_nowhere_is_refused(tmp_path: Path) -> None:
    (tmp_path / "archive").symlink_to(tmp_path / "unmounted" / "disk" / "archive")
    result = run_papercode("archive", "build", *sources(tmp_path / "src"), "--out", tmp_path / "archive", "--snapshot", DATA_DATE)
    assert "points where nothing is. Next: create " in one_line(result, 2)
    assert not (tmp_path / "unmounted").exists() and (tmp_path / "archive").is_symlink()


# -- D9 and D19: a build killed between its two renames; the sweep removes only its own leftovers -----------------------

KILLED_BETWEEN_THE_RENAMES = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from papercode.archive import build_archive

    renames, rename = [], os.rename

    def killed_before_the_second(source, target):
        renames.append(source)
        if len(renames) == 2:  # the new build is in builds/, the link naming it not yet over `current`
            os.kill(os.getpid(), signal.SIGKILL)
        rename(source, target)

    os.rename = killed_before_the_second
    build_archive([Path(path) for path in sys.argv[2:]], Path(sys.argv[1]), data_date="2025-08-01")
    """
)


def killed_between_the_renames(archive: Path, source_files: list[Path]) -> None:
    """A real build of `archive`, killed (SIGKILL) after it renamed its new build into `builds/` and before the link
    naming it replaced `current`: what it leaves is exactly what such a kill leaves."""
    current = os.readlink(archive / CURRENT)
    build = subprocess.Popen(
        [sys.executable, "-c", KILLED_BETWEEN_THE_RENAMES, str(archive), *map(str, source_files)],
        env={**os.environ, **THIS_CHECKOUT},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, err = build.communicate(timeout=300)
    assert build.returncode == -signal.SIGKILL, err
    assert os.readlink(archive / CURRENT) == current  # the previous build is still current
    assert os.readlink(archive / f".current-{build.pid}").startswith(f"{BUILDS}/")  # the link it was about to rename
    assert len(entries(archive / BUILDS)) == 2  # and its complete build, which no `current` names


def users_own(parent: Path) -> dict[str, bytes]:
    """Entries a user made beside the archive, with names like papercode's leftovers: never papercode's to remove."""
    for name in (".archive.old-backup-2025", ".archive.building-mine", ".archive.papercode-old-backup", ".archive.papercode-building-x"):
        (parent / name).mkdir()
        (parent / name / "notes.txt").write_text(f"{name} is mine")
    return {name: (parent / name / "notes.txt").read_bytes() for name in entries(parent) if (parent / name / "notes.txt").exists()}


@pytest.mark.process
@pytest.mark.parametrize("command", [("check",), ("call", "corpus_stats")])
def test_after_a_build_killed_between_its_renames_the_next_start_serves_the_previous_build_and_sweeps_the_rest(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    archive = tmp_path / "data" / "archive"
    source_files = sources(tmp_path / "src")
    build_archive(source_files, archive, data_date=DATA_DATE)
    before = files_of(archive)
    mine = users_own(archive.parent)
    killed_between_the_renames(archive, source_files)
    result = run_papercode(
        *command, "--archive", "--archive-dir", archive, "--code-dir", tmp_path / "code", env={"XDG_CACHE_HOME": str(tmp_path)}
    )
    assert result.returncode == 0, result.stderr
    assert "not served" not in result.stdout + result.stderr
    assert (
        (f"archive: build {current_manifest(archive)['build_id']} (" in result.stdout)
        if command == ("check",)
        else (
            orjson.loads(result.stdout)["by_source"]["archive"] == 0  # the two bundled papers: the records replace both rows
        )
    )
    assert files_of(archive) == before  # the previous build, current; the killed build's leftovers gone
    assert entries(archive.parent) == sorted(["archive", *mine])  # the user's kept
    assert {name: (archive.parent / name / "notes.txt").read_bytes() for name in mine} == mine


@pytest.mark.process
def test_the_next_build_after_the_kill_finds_the_previous_build_and_replaces_it(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    source_files = sources(tmp_path / "src")
    build_archive(source_files, archive, data_date=DATA_DATE)
    mine = users_own(tmp_path)
    killed_between_the_renames(archive, source_files)
    result = run_papercode("archive", "build", *source_files, "--out", archive, "--snapshot", "2025-08-02")
    assert (result.returncode, result.stderr) == (0, "")
    assert_bundled_papers_back(served_papers(archive), snapshot="2025-08-02")
    assert entries(archive) == [".lock", BUILDS, CURRENT] and entries(archive / BUILDS) == [current_manifest(archive)["build_id"]]
    assert entries(tmp_path) == sorted(["archive", "src", *mine])


@pytest.mark.parametrize("fails", ["rename", "lock"])
def test_a_read_only_archive_directory_does_not_crash_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fails: str
) -> None:
    """What a killed build left cannot be removed (the lock cannot be taken, or a build cannot be renamed aside to be
    removed: a read-only volume): the start serves the current build all the same, and leaves the rest as it is."""
    archive = tmp_path / "archive"
    first = build_archive(sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    unswitched = archive / BUILDS / "20250101T000000Z-0000abcd"  # what a build killed before its switch leaves
    (archive / BUILDS / first.build_id).rename(unswitched)
    shutil.copytree(unswitched, archive / BUILDS / first.build_id, symlinks=True)
    os.symlink(f"{BUILDS}/{unswitched.name}", archive / f".current-{NO_PROCESS}")
    before = files_of(archive)
    real_open, real_rename = os.open, os.rename

    def read_only_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if fails == "lock" and str(path).endswith("/.lock") and flags & (os.O_RDWR | os.O_WRONLY):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args, **kwargs)

    def read_only_rename(source: Any, target: Any) -> None:
        if str(archive) in str(source):
            raise OSError(errno.EROFS, "Read-only file system", str(source))
        real_rename(source, target)

    monkeypatch.setattr(os, "open", read_only_open)
    monkeypatch.setattr(os, "rename", read_only_rename)
    code = cli.main(["check", "--archive", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert f"archive: build {first.build_id} (" in out
    if fails == "lock":  # nothing could be swept
        assert files_of(archive) == before
    else:  # the link it could unlink; the unswitched build it could not rename aside, so it kept it
        assert files_of(archive) == {name: data for name, data in before.items() if not name.startswith(".current-")}


# -- D20: the lock is the archive's, not its directory's ---------------------------------------------------------------


def test_builds_of_two_archives_in_one_directory_do_not_wait_for_each_other(tmp_path: Path) -> None:
    with builds.NewBuild(tmp_path / "papers") as first, builds.NewBuild(tmp_path / "other") as second:
        assert first.parent.parent.parent == second.parent.parent.parent == tmp_path
    with builds.NewBuild(tmp_path / "papers"), pytest.raises(builds.ArchiveBusy, match=f"writing {tmp_path / 'papers'}"):
        builds.NewBuild(tmp_path / "papers").__enter__()
    assert entries(tmp_path) == []  # no lock file left behind (nor the directories of builds that never completed)


# -- D11: a path setting reads the same in every command ---------------------------------------------------------------


@pytest.mark.process
def test_an_archive_dir_with_a_trailing_newline_is_where_the_build_goes_and_serve_looks(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    chosen = {"PAPERCODE_ARCHIVE_DIR": f"{archive}\n"}  # as `$(cat file)` or an env file leaves it
    built = run_papercode("archive", "build", *sources(tmp_path / "src"), "--snapshot", DATA_DATE, env=chosen)
    assert (built.returncode, built.stderr) == (0, "")
    assert built.stdout.startswith(f"archive: {archive}, build ")
    assert built.stdout.endswith("Serve it beneath the records: papercode serve --archive\n")  # the hint works as printed
    checked = run_papercode("check", "--archive", "--code-dir", tmp_path / "code", env=chosen)
    assert checked.returncode == 0, checked.stderr


def test_every_path_setting_is_read_by_one_function(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert given_path(f"  {tmp_path}/x\n") == tmp_path / "x" and given_path(" \n") is None
    monkeypatch.setenv("PAPERCODE_ARCHIVE_DIR", f"{tmp_path}/archive\r\n")
    assert settings_for("serve", {}).archive_dir.given == location.default_archive_dir() == tmp_path / "archive"
    environ = {"PAPERCODE_CODE_DIR": f"{tmp_path}/code\n", "PAPERCODE_RECORDS": f"{tmp_path}/a\n{os.pathsep}{tmp_path}/b "}
    settings = settings_for("serve", {}, environ)
    assert settings.code_dir == tmp_path / "code" and settings.records == (tmp_path / "a", tmp_path / "b")
    monkeypatch.setenv("XDG_CACHE_HOME", f"{tmp_path}/cache\n")
    assert user_cache_dir() == tmp_path / "cache" / "papercode"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # as the XDG spec says, and as XDG_DATA_HOME already was
    assert user_cache_dir() == tmp_path / "home" / ".cache" / "papercode"


# -- D10 and D20: dates and manifests are checked before they are used -------------------------------------------------


def hub_snapshot_sources(root: Path) -> list[Path]:
    """The two tables where huggingface_hub's cache keeps them: the build knows each file's dataset and commit."""
    papers, links = bundled_rows()
    made = []
    for (dataset, commit), rows in zip(COMMITS.items(), (papers, links), strict=True):
        folder = root / f"datasets--{dataset.replace('/', '--')}" / "snapshots" / commit / "data"
        made.append(write_parquet(folder / "train-00000-of-00001.parquet", rows))
    return made


@pytest.mark.process
@pytest.mark.parametrize("edited", ["<img src=x onerror=alert(1)>", "9999-12-31", "2025-02-30", 20250728])
def test_a_hand_edited_commit_date_in_the_manifest_never_reaches_the_records(tmp_path: Path, edited: object) -> None:
    archive = tmp_path / "archive"
    source_files = hub_snapshot_sources(tmp_path / "hub")
    build_archive(source_files, archive, commit_dates=dict.fromkeys(COMMITS.values(), "2025-07-30"))
    manifest = current_manifest(archive)
    assert manifest["snapshot"] == "2025-07-30"
    for source in manifest["sources"]:
        source["commit_date"] = edited
    (archive / CURRENT / MANIFEST).write_bytes(orjson.dumps(manifest))
    result = run_papercode("archive", "build", *source_files, "--out", archive)
    assert (result.returncode, result.stderr) == (0, "")
    assert "(the newest source file's modification date (UTC))" in result.stdout
    today = datetime.now(UTC).date().isoformat()
    assert {paper["snapshot"] for paper in served_papers(archive).values()} == {today}


@pytest.mark.process
def test_a_manifest_of_an_unknown_format_is_refused_by_serve_and_check_and_replaced_by_a_rebuild(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    build_archive(sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    manifest = current_manifest(archive)
    (archive / CURRENT / MANIFEST).write_bytes(orjson.dumps({**manifest, "format_version": 99}))
    result = run_papercode("check", "--archive", "--archive-dir", archive, "--code-dir", tmp_path / "code")
    assert result.returncode == 1  # the records served alone, and why the archive is not
    assert (
        "archive: the archive is not served: the archive is of format 99, and this papercode serves format 2. Next: run "
        "`papercode archive fetch` (downloads it) or `papercode archive build SOURCE...` (from files you have)\n"
    ) in result.stdout
    rebuilt = run_papercode("archive", "build", *sources(tmp_path / "src"), "--out", archive, "--snapshot", DATA_DATE)
    assert (rebuilt.returncode, rebuilt.stderr) == (0, "")
    assert run_papercode("check", "--archive", "--archive-dir", archive, "--code-dir", tmp_path / "code").returncode == 0


@pytest.mark.process
def test_a_snapshot_date_after_today_is_refused(tmp_path: Path) -> None:
    for future in ("9999-12-31", (datetime.now(UTC) + timedelta(days=2)).date().isoformat()):
        result = run_papercode("archive", "build", *sources(tmp_path / "src"), "--out", tmp_path / "archive", "--snapshot", future)
        assert one_line(result, 2) == (
            f"papercode: --snapshot '{future}' is after today. Next: pass the date of the data, e.g. --snapshot 2025-07-28\n"
        )
    assert not (tmp_path / "archive").exists()


def test_today_is_a_snapshot_date_wherever_it_is_today() -> None:
    assert check_data_date(datetime.now(UTC).date().isoformat())
    assert check_data_date((datetime.now(UTC) + timedelta(hours=14)).date().isoformat())  # already today in Kiribati
    with pytest.raises(ValueError, match="is not a date written YYYY-MM-DD"):
        check_data_date("２０２５-07-28")  # full-width digits are digits to `\d`, not to a date


@pytest.mark.process
def test_a_start_with_the_archive_in_place_leaves_every_entry_beside_it_that_papercode_did_not_leave(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    build_archive(sources(tmp_path / "src"), archive, data_date=DATA_DATE)
    mine = users_own(tmp_path)
    result = run_papercode("check", "--archive", "--archive-dir", archive, "--code-dir", tmp_path / "code")
    assert result.returncode == 0, result.stderr
    assert {name: (tmp_path / name / "notes.txt").read_bytes() for name in mine} == mine
