"""Leaderboard tables that are odd or hostile (issue #30): a benchmark without rows, names that differ only in case or
repeat, strings that are not what they seem, metrics whose direction a word turns around.

Each test builds the few tables it needs (`leaderboard_tables.serve_tables`) and checks what an agent reads.
"""

from __future__ import annotations

from pathlib import Path

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
