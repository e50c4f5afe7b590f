"""`python -m benchmarks report`: BENCHMARKS.md from saved runs, on runs made up here (the committed ones are checked
against BENCHMARKS.md by tests/product/test_docs.py)."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report

BEFORE = report.CHANGES[0].before  # issue #22's "before" commit, measured after the change with the same harness
AFTER = "38406bdd9a98a769dddedc3520ad7d5010b85e71"
REPO = Path(__file__).resolve().parents[2]


def save(
    directory: Path, name: str, *, command: str = "archive", commit: str = AFTER, date: str = "2026-12-02 01:44 UTC", **fields: Any
) -> Path:
    targets = fields.pop("targets", [["build from parquet <= 5x the parquet floor (wall)", True, "1.50x"]])
    document = {
        "command": command,
        "argv": fields.pop("argv", [command, "--data", "../bench-data/archive-600k"]),
        "machine": {
            "date": date,
            "cpu": fields.pop("cpu", "Some CPU"),
            "cores": 2,
            "ram_gib": 23.5,
            "python": "3.11.7",
            "loadavg": "0.50 0.40 0.30",
            "papercode_source": {"path": "server", "commit": commit, "dirty": fields.pop("dirty", False)},
        },
        "result": {"targets": targets, **fields},
    }
    path = directory / f"{name}.json"
    path.write_text(json.dumps(document))
    return path


def test_the_current_figures_are_the_newest_commits_not_a_later_before_run(tmp_path: Path) -> None:
    save(tmp_path, "a", commit=AFTER, date="2026-12-02 01:00 UTC", targets=[["build <= 5x", False, "6.07x"]])
    save(tmp_path, "b", commit=BEFORE + "0" * 33, date="2026-12-02 03:00 UTC", targets=[["build <= 5x", True, "1.42x"]])
    runs = report.load_runs(tmp_path)
    assert [run.file for run in report.current_runs(runs, "archive")] == ["a.json"]
    text = report.report(runs)
    section = text[text.index("## The archive build") : text.index("## Serving the archive")]
    assert f"### Before and after: {report.CHANGES[0].title} (`{BEFORE}` → `{AFTER[:7]}`)" in section
    assert "| build <= 5x | 1.42x | 6.07x | PASS → MISS |" in section


def test_runs_of_one_commit_are_merged_the_newest_figure_winning(tmp_path: Path) -> None:
    save(tmp_path, "parquet", date="2026-12-02 01:00 UTC", targets=[["parquet <= 5x", True, "4.00x"], ["shared", True, "old"]])
    save(tmp_path, "dumps", date="2026-12-02 02:00 UTC", targets=[["json.gz <= 6x", True, "2.84x"], ["shared", False, "new"]])
    rows = report.merged(report.current_runs(report.load_runs(tmp_path), "archive"), report.BENCHMARKS[0])
    assert [(row[0], row[2]) for row, _ in rows] == [("parquet <= 5x", "4.00x"), ("shared", "new"), ("json.gz <= 6x", "2.84x")]


def test_a_figure_the_last_commit_did_not_measure_names_the_commit_it_was_measured_at(tmp_path: Path) -> None:
    later = "1c171b436327b6d29faf5b04af9aecd7bc8097e0"
    save(tmp_path, "both", date="2026-12-02 01:00 UTC", targets=[["parquet <= 5x", False, "6.07x"], ["json.gz <= 6x", True, "2.84x"]])
    save(tmp_path, "parquet", commit=later, date="2026-12-02 02:00 UTC", targets=[["parquet <= 5x", False, "7.50x"]])
    text = report.report(report.load_runs(tmp_path))
    assert "| parquet <= 5x | 7.50x | MISS |" in text
    assert f"| json.gz <= 6x | 2.84x (at `{AFTER[:7]}`) | PASS |" in text
    assert "`both.json`" in text and "`parquet.json`" in text


def test_a_target_only_one_side_measured_shows_a_dash(tmp_path: Path) -> None:
    save(tmp_path, "after", targets=[["new target", True, "1"]])
    save(tmp_path, "before", commit=BEFORE, targets=[["old target", False, "2"]])
    text = report.report(report.load_runs(tmp_path))
    assert "| new target | — | 1 | PASS |" in text and "| old target | 2 | — | MISS → — |" in text


def test_when_the_changes_after_is_the_newest_run_one_table_holds_every_figure_beside_its_before(tmp_path: Path) -> None:
    save(tmp_path, "after", targets=[["build <= 5x", True, "3.24x"], ["disk <= 3x", True, "1.83x"], ["new", True, "1"]])
    save(tmp_path, "before", commit=BEFORE, targets=[["build <= 5x", False, "5.50x"], ["disk <= 3x", True, "1.90x"], ["gone", True, "2"]])
    text = report.report(report.load_runs(tmp_path))
    section = text[text.index("## The archive build") : text.index("## Serving the archive")]
    assert "| figure or target | measured | |" not in section and section.count("3.24x") == 1
    assert "| figure or target | before | now | verdict |" in section
    assert "| build <= 5x | 5.50x | 3.24x | MISS → PASS |" in section and "| disk <= 3x | 1.90x | 1.83x | PASS |" in section
    assert "| new | — | 1 | PASS |" in section and "| gone | 2 | — | PASS → — |" in section
    assert section.count("`after.json`") == 1 and section.count("`before.json`") == 1


def test_a_change_measured_at_an_older_commit_keeps_the_newest_figures_in_their_own_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = "1c171b436327b6d29faf5b04af9aecd7bc8097e0"
    monkeypatch.setattr(report, "CHANGES", (report.Change("a change", BEFORE, ("archive",), after=AFTER),))
    save(tmp_path, "before", commit=BEFORE, date="2026-12-02 01:00 UTC", targets=[["build <= 5x", False, "5.50x"]])
    save(tmp_path, "after", date="2026-12-02 02:00 UTC", targets=[["build <= 5x", True, "3.24x"]])
    save(tmp_path, "later", commit=later, date="2026-12-02 03:00 UTC", targets=[["build <= 5x", True, "3.10x"]])
    text = report.report(report.load_runs(tmp_path))
    section = text[text.index("## The archive build") : text.index("## Serving the archive")]
    assert "| figure or target | measured | |\n|---|---:|---|\n| build <= 5x | 3.10x | PASS |" in section
    assert f"### Before and after: a change (`{BEFORE}` → `{AFTER[:7]}`)" in section
    assert "| figure or target | before | after | verdict |" in section and "| build <= 5x | 5.50x | 3.24x | MISS → PASS |" in section
    assert all(section.count(f"`{name}.json`") == 1 for name in ("before", "after", "later"))


def test_the_machine_most_runs_were_made_on_is_named_once(tmp_path: Path) -> None:
    save(tmp_path, "a", date="2026-12-02 01:00 UTC")
    save(tmp_path, "b", command="boards")
    save(tmp_path, "c", command="something-new", cpu="Other CPU")
    text = " ".join(report.report(report.load_runs(tmp_path)).split())
    assert "Every run was made on Some CPU, 2 cores, 23.5 GiB, Python 3.11.7, unless its line names another machine." in text
    assert text.count("Some CPU") == 1
    assert "`c.json`: 2026-12-02 01:44 UTC, commit `38406bd`, Other CPU, 2 cores, 23.5 GiB, Python 3.11.7, load average 0.50" in text
    assert "`a.json`: 2026-12-02 01:00 UTC, commit `38406bd`, load average 0.50" in text


def test_without_a_before_run_there_is_no_before_and_after(tmp_path: Path) -> None:
    save(tmp_path, "after")
    assert "### Before and after" not in report.report(report.load_runs(tmp_path))


def test_a_benchmark_without_a_saved_run_says_where_its_last_figures_are(tmp_path: Path) -> None:
    text = report.report([])
    load = text[text.index("## HTTP under load") :]
    assert "No run saved yet: its harness (`python -m benchmarks.load" in load
    assert f'(`git show {report.LOG_COMMIT}:BENCHMARKS.md`, "Issue #11: HTTP under load …")' in " ".join(load.split())
    assert "No run saved yet: `python -m benchmarks archive --data ../bench-data/archive-600k --json benchmarks/results` saves one" in (
        " ".join(text.split())
    )


def test_a_command_the_report_does_not_describe_still_gets_its_section(tmp_path: Path) -> None:
    save(tmp_path, "new", command="something-new", targets=[["fast", True, "1 ms"]])
    text = report.report(report.load_runs(tmp_path))
    assert "## something-new (`something-new`)" in text and "| fast | 1 ms | PASS |" in text


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"argv": ["archive", "--data", "/mnt/dev/bench-data/archive-600k"]}, "names a path of the machine it ran on"),
        ({"out": "BuildSummary(archive_dir=PosixPath('/tmp/x'))"}, "names a path of the machine it ran on"),
        ({"dirty": True}, "measured uncommitted changes"),
        ({"commit": "unknown"}, "the commit measured is unknown"),
    ],
)
def test_a_run_the_report_cannot_trust_is_refused(tmp_path: Path, fields: dict[str, Any], said: str) -> None:
    save(tmp_path, "bad", **fields)
    with pytest.raises(report.ReportError, match=rf"^bad\.json: {said}\b.*\. Next: "):
        report.load_runs(tmp_path)


def test_a_file_that_is_not_a_run_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"data": "../bench-data"}')
    with pytest.raises(report.ReportError, match=r"^x\.json: not a saved run"):
        report.load_runs(tmp_path)


def test_a_relative_path_is_fine(tmp_path: Path) -> None:
    save(tmp_path, "ok", argv=["archive", "--data", "../bench-data/archive-600k", "--build-out", ".../b22/built30k"])
    assert [run.file for run in report.load_runs(tmp_path)] == ["ok.json"]


def test_the_command_writes_the_file_and_check_says_whether_it_is_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save(tmp_path, "run")
    out = tmp_path / "BENCHMARKS.md"
    check = argparse.Namespace(results=tmp_path, out=out, check=True)
    assert report.main(check) == 1
    assert "is not what the saved runs give" in capsys.readouterr().err
    assert report.main(argparse.Namespace(results=tmp_path, out=out, check=False)) == 0
    assert capsys.readouterr().err.startswith("wrote BENCHMARKS.md")
    assert out.read_text() == report.report(report.load_runs(tmp_path))
    assert report.main(check) == 0
    save(tmp_path, "bad", dirty=True)
    assert report.main(check) == 2
    assert capsys.readouterr().err.startswith("benchmarks report: bad.json: measured uncommitted changes")


@pytest.mark.process
def test_the_commits_the_report_points_to_are_in_the_history() -> None:
    """The old BENCHMARKS.md it sends readers to has a heading starting as each section it names, and each change's
    "before" is a commit."""
    old = subprocess.run(["git", "show", f"{report.LOG_COMMIT}:BENCHMARKS.md"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    headings = {line.lstrip("#").strip() for line in old.splitlines() if line.startswith("#")}
    named = [benchmark.log_section for benchmark in report.BENCHMARKS if benchmark.log_section]
    missing = [section for section in named if not any(heading.startswith(section) for heading in headings)]
    assert not missing, f"not a heading of {report.LOG_COMMIT}:BENCHMARKS.md: {missing}"
    for change in report.CHANGES:
        subprocess.run(["git", "cat-file", "-e", f"{change.before}^{{commit}}"], cwd=REPO, check=True)


@pytest.mark.parametrize("saved_to", [["--json", "../bench-data/results"], ["--json=benchmarks/results"]])
def test_a_runs_command_is_shown_without_where_it_was_saved(tmp_path: Path, saved_to: list[str]) -> None:
    save(tmp_path, "a", argv=["archive", "--data", "../bench-data/archive-600k", *saved_to, "--runs", "3"])
    text = " ".join(report.report(report.load_runs(tmp_path)).split())  # as read, not as wrapped
    line = text[text.index("- `a.json`") :].split(" | ", 1)[0]
    assert line.endswith("; `python -m benchmarks archive --data ../bench-data/archive-600k --runs 3`.")
