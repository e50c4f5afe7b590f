"""The leaderboards' generator and benchmark harness on a tiny archive (issue #23): the three tables in both forms
holding the same entries in the real shapes, papercode reading them to the counts the generator wrote, and the harness
giving every figure. No timing thresholds."""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import orjson
import pyarrow.parquet as pq  # the test extra installs it: a missing pyarrow fails here, never skips
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import boards_bench  # noqa: E402
from benchmarks.archive_boards import (  # noqa: E402
    DATASETS_DUMP,
    EVALUATIONS_DUMP,
    EVALUATIONS_PARQUET,
    METHODS_DUMP,
    BoardSizes,
)
from benchmarks.archive_data import write_archive  # noqa: E402
from papercode.archive import build_archive  # noqa: E402
from papercode.archive.tables import classify  # noqa: E402

SIZES = BoardSizes(top_tasks=40, subtasks=30, benchmarks=120, results=600, methods=50, datasets=80, metric_names=100)

# The archive benchmark's generator and harness, not papercode: with the other process-level tests, out of the default run.
pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("archive")
    stats = write_archive(out, 300, 150, seed=3, boards=SIZES)
    assert stats.boards is not None
    (out / "stats.json").write_text(json.dumps(stats.boards.__dict__, default=str))
    return out


def test_the_tables_are_the_real_shapes_in_both_forms(archive: Path) -> None:
    tasks = orjson.loads(gzip.decompress((archive / EVALUATIONS_DUMP).read_bytes()))
    assert len(tasks) == SIZES.top_tasks
    assert set(tasks[0]) == {"task", "description", "categories", "synonyms", "source_link", "datasets", "subtasks"}
    rows = [row for task in tasks for board in task["datasets"] for row in board["sota"]["rows"]]
    assert rows and set(rows[0]) == {
        "model_name",
        "metrics",
        "paper_title",
        "paper_url",
        "paper_date",
        "code_links",
        "model_links",
        "uses_additional_data",
    }
    assert sum(pq.read_metadata(archive / name).num_rows for name in EVALUATIONS_PARQUET) == SIZES.top_tasks
    for name, table in ((EVALUATIONS_DUMP, "evaluations"), (METHODS_DUMP, "methods"), (DATASETS_DUMP, "datasets")):
        assert classify(archive / name).table == table
    for directory, table in (("evaluation-tables", "evaluations"), ("methods", "methods"), ("datasets", "datasets")):
        assert {classify(path).table for path in (archive / directory / "data").glob("*.parquet")} == {table}


@pytest.mark.parametrize("form", ["json.gz", "parquet"])
def test_papercode_reads_what_the_generator_wrote(archive: Path, form: str, tmp_path: Path) -> None:
    papers, tables = boards_bench.TABLES[form]
    summary = build_archive([archive / name for name in (*papers, *tables)], tmp_path / "out", data_date="2025-07-28")
    written = json.loads((archive / "stats.json").read_text())
    counts = summary.manifest()["counts"]["boards"]
    assert (counts["tasks"], counts["benchmarks"], counts["results"]) == (written["tasks"], written["benchmarks"], written["results"])
    assert (counts["methods"], counts["datasets"]) == (SIZES.methods, SIZES.datasets)
    joined = counts["results_joined_by"]
    assert (joined["arxiv"], joined["slug"]) == (written["by_arxiv_url"], written["by_paper_url"])
    assert joined["title"] <= written["by_title"] and counts["results_unjoined"] >= written["absent_papers"] > 0
    assert counts["values_unparsed"] == written["unparsed_values"] > 0


def test_the_harness_gives_every_figure(archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    boards_bench.add_arguments(parser)
    report = tmp_path / "report.json"
    arguments = ["--archive", str(archive), "--out", str(tmp_path / "builds"), "--runs", "1", "--records", "20", "--calls", "20"]
    assert boards_bench.main(parser.parse_args([*arguments, "--json", str(report)])) == 0
    saved = json.loads(report.read_text())
    assert saved["command"] == "boards" and saved["machine"]
    figures = saved["result"]
    build = figures["build"]
    assert build["ratio"] > 0 and build["cpu_ratio"] > 0 and set(build["runs"]) == {"without", "with"}
    assert 0 < build["boards_cpu_s"] < build["cpu_with_s"] and build["boards_share"] > 0
    assert figures["open"]["with_ms"] > 0 and figures["sizes"]["boards"] > 0
    assert set(figures["calls"]) == {
        "get_leaderboard(task)",
        "get_leaderboard(task, dataset)",
        "get_leaderboard(..., has_code=true)",
        "get_leaderboard(..., status)",
        "describe(task)",
        "describe(method)",
        "describe(dataset)",
    }
    assert all(call["p50_ms"] > 0 for call in figures["calls"].values())
    assert len(figures["targets"]) == 2 + len(figures["calls"]) and all(len(row) == 3 for row in figures["targets"])
    assert len(build["paired_ratios"]) == 1 and build["paired_ratio"] > 0
    assert "build:" in capsys.readouterr().out
