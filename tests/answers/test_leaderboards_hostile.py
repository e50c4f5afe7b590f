"""Leaderboard tables that are odd or hostile (issue #30): a benchmark without rows, names that differ only in case or
repeat, strings that are not what they seem, metrics whose direction a word turns around.

Each test builds the few tables it needs (`leaderboard_tables.serve_tables`) and checks what an agent reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from papercode.core.metrics import lower_is_better
from papercode.corpus.stages import Corpus
from papercode.index.archive_layer import current_build
from tests.support.leaderboard_tables import benchmark, board, result, serve_tables, task

FIRST = "https://arxiv.org/abs/2001.00001"


# -- a benchmark without rows ------------------------------------------------------------------


def test_a_benchmark_without_rows_has_no_best_and_never_shows_the_next_ones(tmp_path: Path) -> None:
    empty = benchmark("Empty", ["Accuracy"], [])  # laid out first: its metric's values start where the next board's do
    full = benchmark("Full", ["Accuracy"], [result("full-model", {"Accuracy": "77.7"}, paper_url=FIRST)])
    _, corpus = serve_tables(tmp_path, [task("Classification", [empty, full])])
    listed = {entry["dataset"]: entry for entry in board(corpus, "Classification")["benchmarks"]}
    assert listed["Empty"] == {"dataset": "Empty", "metrics": ["Accuracy"], "rows": 0}
    assert listed["Full"]["best"] == "77.7, full-model (2001.00001)"
    empty_board = board(corpus, "Classification", "Empty")
    assert (empty_board["total"], empty_board["rows"]) == (0, [])


# -- which way a metric is better ----------------------------------------------------------------

# The 13 names issue #30 found ranked the wrong way, each with its family: names built the same way.
HIGHER_IS_BETTER = [
    *("Error reduction (%)", "Relative Error Reduction", "Error rate reduction", "Parameter reduction"),
    *("Error-free rate", "Collision-free rate"),
    *("Latency speedup", "Speedup over runtime", "Speed-up", "Speed up (x)"),
    *("Throughput (images/time)", "Throughput (tokens/s)", "Inference throughput"),
    # a condition after `@` or `at` is where it was measured, not what: a true positive rate stays one
    *("TPR@FPR=1%", "TAR @ FAR=0.01", "Accuracy at 1% FPR"),
    # what must not change direction for a word the table learnt
    *("Rank-1", "Rank-5 accuracy", "Speed (FPS)", "MS-SSIM", "Accuracy (MS-COCO)", "Format accuracy", "Recall@10"),
]
LOWER_IS_BETTER = [
    *("Average Rank", "Avg. Rank", "Average ranking", "Mean rank", "Median Rank"),
    *("False Positive Rate", "False positive rate (%)", "FPR95", "FPR@95%TPR", "FPR at 95% TPR", "False Negative Rate"),
    *("Collision Rate", "Collisions"),
    *("Memory (GB)", "GPU Memory (MB)", "Peak memory"),
    *("Speed (ms)", "Speed (ms/image)", "Speed (s)", "Inference speed (seconds per image)"),
]


@pytest.mark.parametrize("name", HIGHER_IS_BETTER)
def test_a_reduction_a_speedup_a_throughput_or_a_rate_free_of_errors_is_higher_is_better(name: str) -> None:
    assert lower_is_better(name) is False


@pytest.mark.parametrize("name", LOWER_IS_BETTER)
def test_an_average_rank_a_false_positive_or_collision_rate_memory_or_a_time_is_lower_is_better(name: str) -> None:
    assert lower_is_better(name) is True


def test_a_build_made_before_the_table_changed_ranks_by_the_table_of_the_server_that_serves_it(tmp_path: Path) -> None:
    names = ["Average Rank", "Error reduction (%)", "Accuracy"]
    rows = [result(f"model-{i}", dict.fromkeys(names, str(i)), paper_url=FIRST) for i in (1, 2, 3)]
    _, corpus = serve_tables(tmp_path, [task("Ranking", [benchmark("Set", names, rows)])])
    build = current_build(tmp_path / "archive")
    assert build is not None and corpus.archive is not None
    corpus.archive.close()
    # as an earlier build wrote its directions: every metric higher-is-better but the reduction, lower-is-better
    (build / "boards" / "metric.lower.B").write_bytes(bytes([0, 1, 0]))
    corpus = Corpus.load([Path(corpus.index.report.roots[0])], archive_dir=tmp_path / "archive")
    ranked = board(corpus, "Ranking", "Set")
    assert (ranked["metric"], ranked["direction"], ranked["order"]) == ("Average Rank", "lower is better", "asc")
    assert [row["model"] for row in ranked["rows"]] == ["model-1", "model-2", "model-3"]
    reduction = board(corpus, "Ranking", "Set", metric="error reduction (%)")
    assert reduction["direction"] == "higher is better" and reduction["rows"][0]["model"] == "model-3"
    assert board(corpus, "Ranking")["benchmarks"][0]["best"] == "1, model-1 (2001.00001)"  # by its first metric, the rank
