"""Leaderboard tables that are odd or hostile (issue #30): a benchmark without rows, names that differ only in case or
repeat, strings that are not what they seem, metrics whose direction a word turns around.

Each test builds the few tables it needs (`leaderboard_tables.serve_tables`) and checks what an agent reads.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from papercode.answers import models
from papercode.archive import catalogues
from papercode.archive.build import BuildSummary
from papercode.core.errors import QueryError
from papercode.core.metrics import lower_is_better
from papercode.corpus.stages import Corpus
from papercode.index.mapped_archive import current_build
from tests.support.leaderboard_tables import benchmark, board, dataset, describe, method, refused, result, serve_tables, task

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


def test_a_benchmark_that_reports_no_metric_lists_its_rows_unranked_and_names_no_other_benchmarks_metric(tmp_path: Path) -> None:
    unscored = [result("first", {}, paper_url=FIRST), result("second", {}, code=["https://github.com/o/second"])]
    scored = benchmark("Scored", ["Accuracy"], [result("scored-model", {"Accuracy": "77.7"})])
    tables = [
        task("Tagging", [benchmark("Listed", [], []), benchmark("Unscored", [], unscored), scored]),
        task("Parsing", [benchmark("Last", [], [result("last-model", {})])]),  # the build's last benchmark: no metric after it
    ]
    _, corpus = serve_tables(tmp_path, tables)
    listed = board(corpus, "Tagging", "Listed")
    assert listed == {"task": "Tagging", "dataset": "Listed", "metrics": [], "total": 0, "rows": [], "attribution": listed["attribution"]}
    answer = board(corpus, "Tagging", "Unscored")
    assert [(row["model"], row.get("rank"), row["values"]) for row in answer["rows"]] == [("first", None, []), ("second", None, [])]
    assert not {"metric", "direction", "order"} & answer.keys()
    assert answer["note"] == "this benchmark reports no metric: its rows come in the archive's order, unranked"
    assert [row["model"] for row in board(corpus, "Tagging", "Unscored", has_code=True)["rows"]] == ["second"]
    assert [row["model"] for row in board(corpus, "Tagging", "Unscored", limit=1, order="asc")["rows"]] == ["first"]
    assert [row["model"] for row in board(corpus, "Parsing", "Last")["rows"]] == ["last-model"]
    assert refused(lambda: board(corpus, "Tagging", "Unscored", metric="Accuracy")).code == "not_found"
    assert board(corpus, "Tagging", "Scored")["metric"] == "Accuracy"


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


# -- names that differ only in case, or repeat ------------------------------------------------------


def offered(error: QueryError) -> list[str]:
    """The names an `ambiguous` error offers, as it quotes them after its colon."""
    assert error.code == "ambiguous" and error.next_step.startswith("call again with one of")
    return [ast.literal_eval(quoted) for quoted in re.findall(r"'[^']*'", error.detail.split(": ", 1)[1])]


def one_row(model: str) -> list[dict[str, Any]]:
    return [benchmark(f"{model} set", ["Accuracy"], [result(model, {"Accuracy": "1"})])]


def tasks_named_alike() -> list[dict[str, Any]]:
    return [
        task("Shared", one_row("top")),  # a top-level task, and the subtask of another under the same name
        task(
            "Parent",
            subtasks=[
                task("Shared", one_row("sub")),
                task("Dup", one_row("dup-1")),
                task("Dup", one_row("dup-2"), subtasks=[task("Below", one_row("below"))]),  # alike all the way up: one task
            ],
        ),
        task("Loop", one_row("loop-1"), subtasks=[task("Loop", one_row("loop-2"), subtasks=[task("Loop", one_row("loop-3"))])]),
        task("A", one_row("a-1"), subtasks=[task("B", one_row("b"), subtasks=[task("A", one_row("a-2"))])]),  # a cycle by name
        task("P1", subtasks=[task("Twin", one_row("twin-1"))]),
        task("P2", subtasks=[task("Twin", one_row("twin-2"))]),
        task("Case", one_row("upper")),
        task("case", one_row("lower")),
    ]


@pytest.fixture(scope="module")
def alike(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    metrics = benchmark("Set", ["Accuracy", "accuracy"], [result("m", {"Accuracy": "90", "accuracy": "0.9"})])
    _, corpus = serve_tables(
        tmp_path_factory.mktemp("alike"),
        [task("Metrics", [metrics]), *tasks_named_alike()],
        methods=[method("BERT"), method("Bert")],
    )
    return corpus


def model_of(corpus: Corpus, task_name: str) -> str:
    """The one row's model of a task's one benchmark: which of the tasks named alike a name reached."""
    (listed,) = board(corpus, task_name)["benchmarks"]
    return str(board(corpus, task_name, listed["dataset"])["rows"][0]["model"])


def test_an_exact_spelling_wins_over_a_case_variant_and_a_case_variant_offers_both(alike: Corpus) -> None:
    assert board(alike, "Metrics", "Set", metric="Accuracy")["rows"][0]["values"][0] == "90"
    assert board(alike, "Metrics", "Set", metric="accuracy")["rows"][0]["values"][0] == "0.9"
    choices = offered(refused(lambda: board(alike, "Metrics", "Set", metric="ACCURACY")))
    assert sorted(choices) == ["Accuracy", "accuracy"]
    assert sorted(board(alike, "Metrics", "Set", metric=choice)["metric"] for choice in choices) == ["Accuracy", "accuracy"]
    assert (describe(alike, "method", "BERT")["name"], describe(alike, "method", "Bert")["name"]) == ("BERT", "Bert")
    choices = offered(refused(lambda: describe(alike, "method", "bert")))
    assert sorted(describe(alike, "method", choice)["name"] for choice in choices) == ["BERT", "Bert"]
    assert (model_of(alike, "Case"), model_of(alike, "case")) == ("upper", "lower")
    assert sorted(model_of(alike, choice) for choice in offered(refused(lambda: board(alike, "CASE")))) == ["lower", "upper"]


def test_a_name_a_top_level_task_and_a_subtask_share_means_the_top_level_one_and_the_subtask_is_reached_by_its_parent(
    alike: Corpus,
) -> None:
    assert model_of(alike, "Shared") == "top"
    parent = describe(alike, "task", "Parent")
    assert parent["subtasks"] == ["Parent > Shared", "Dup"]
    assert model_of(alike, "Parent > Shared") == "sub" and describe(alike, "task", "parent > shared")["parent"] == "Parent"


def test_tasks_alike_all_the_way_up_are_one_task_with_the_benchmarks_and_subtasks_of_both(alike: Corpus) -> None:
    """No name tells two subtasks of one parent with one name apart: every name an answer gives for either leads to
    one task, which answers with both's benchmarks (and rows) and subtasks."""
    both = [{"dataset": "dup-1 set", "rows": 1}, {"dataset": "dup-2 set", "rows": 1}]
    assert describe(alike, "task", "Parent")["subtasks"] == ["Parent > Shared", "Dup"]
    named = {describe(alike, "dataset", f"{dup} set")["benchmarks"][0]["task"] for dup in ("dup-1", "dup-2")}
    named.add(describe(alike, "task", "Below")["parent"])
    assert named == {"Dup"}
    for name in ("Dup", "Parent > Dup"):
        described = describe(alike, "task", name)
        assert (described["benchmarks"], described["subtasks"], described["parent"]) == (both, ["Below"], "Parent")
        assert [listed["dataset"] for listed in board(alike, name)["benchmarks"]] == ["dup-1 set", "dup-2 set"]
        assert [board(alike, name, f"{dup} set")["rows"][0]["model"] for dup in ("dup-1", "dup-2")] == ["dup-1", "dup-2"]
        assert board(alike, name)["subtasks"] == ["Below"]
    assert model_of(alike, "Dup > Below") == "below"


def test_a_task_that_is_its_own_subtask_or_in_a_cycle_by_name_is_reached_by_each_name_its_answers_give(alike: Corpus) -> None:
    assert model_of(alike, "Loop") == "loop-1"
    assert describe(alike, "task", "Loop")["subtasks"] == ["Loop > Loop"]
    assert model_of(alike, "Loop > Loop") == "loop-2"
    assert describe(alike, "task", "Loop > Loop") | {"description": None} == {
        "kind": "task",
        "name": "Loop",
        "description": None,
        "area": "Computer Vision",
        "parent": "Loop",
        "subtasks": ["Loop > Loop > Loop"],
        "benchmarks": [{"dataset": "loop-2 set", "rows": 1}],
        "papers": 0,
        "attribution": models.ARCHIVE_ATTRIBUTION,
    }
    assert model_of(alike, "Loop > Loop > Loop") == "loop-3"
    assert describe(alike, "task", "Loop > Loop > Loop")["parent"] == "Loop > Loop"
    assert (model_of(alike, "A"), model_of(alike, "B"), model_of(alike, "B > A")) == ("a-1", "b", "a-2")
    assert describe(alike, "task", "B")["subtasks"] == ["B > A"]


def test_a_name_only_subtasks_share_is_ambiguous_and_each_choice_offered_resolves(alike: Corpus) -> None:
    choices = offered(refused(lambda: board(alike, "Twin")))
    assert choices == ["P1 > Twin", "P2 > Twin"]
    assert [model_of(alike, choice) for choice in choices] == ["twin-1", "twin-2"]
    assert [describe(alike, "task", choice)["parent"] for choice in choices] == ["P1", "P2"]
    assert describe(alike, "task", "P1")["subtasks"] == ["P1 > Twin"]


def test_a_path_that_names_no_task_is_not_found(alike: Corpus) -> None:
    for written in ("P3 > Twin", "Twin > P1", " > Twin", "P1 > ", "P1 > Twin > Twin"):
        assert refused(lambda written=written: board(alike, written)).code == "not_found", written


# -- strings served as they came -----------------------------------------------------------------

UNSEEN = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\U000e0000-\U000e007f]")


def hostile_strings() -> list[dict[str, Any]]:
    rows = [
        result("\x1b[31mRed\x1b[0m", {"Acc\x00uracy": "90", "F1\u202e": "0.5", "\u200b": "1"}, paper_url=FIRST, date="2999-01-01"),
        result("Lists", {"Acc\x00uracy": [1, 2], "F1\u202e": {"a": 1}}, paper_title="Listed", date="2020-05-01"),
        result("Flags", {"Acc\x00uracy": True, "F1\u202e": "9\u200b1"}, paper_title="Flagged", date="2999-12-31"),
    ]
    hidden = task(
        "Seg\u202ementation\u200b",
        [benchmark("City\x1b]8;;https://evil.example\x07scapes", ["Acc\x00uracy", "F1\u202e", "\u200b"], rows)],
        description="Street \x1b[2Jscenes\u2028and\r\nmore.",
    )
    return [hidden]


def hostile_datasets() -> list[dict[str, Any]]:
    return [
        dataset("Script", homepage="javascript:alert(document.cookie)"),
        dataset("Local", homepage="file:///etc/passwd"),
        dataset("Good", homepage="https://good.example.org/home"),
    ]


def serve_hostile(directory: Path) -> tuple[BuildSummary, Corpus]:
    return serve_tables(directory, hostile_strings(), methods=[method("\u200bAd\u00adam\U000e0041")], datasets=hostile_datasets())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuildSummary, Corpus]:
    return serve_hostile(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """The hostile tables as a build made before the leaderboards' rules (issue 30) wrote them: every string as given."""
    with pytest.MonkeyPatch.context() as before_the_rules:
        before_the_rules.setattr(catalogues, "web_url", lambda value, need_path=False: (value, None))
        _, corpus = serve_hostile(tmp_path_factory.mktemp("older"))
    return corpus


def test_names_keep_no_control_bidi_or_zero_width_character_nor_terminal_escape(hostile: tuple[BuildSummary, Corpus]) -> None:
    summary, corpus = hostile
    answer = board(corpus, "Segmentation", "Cityscapes")
    assert (answer["task"], answer["dataset"], answer["metrics"]) == ("Segmentation", "Cityscapes", ["Accuracy", "F1"])
    assert [row["model"] for row in answer["rows"]] == ["Red", "Lists", "Flags"]
    assert answer["rows"][0]["values"] == ["90", "0.5"]  # the metric named only by a zero-width space is left out
    described = describe(corpus, "task", "segmentation")
    assert described["description"] == "Street scenes\nand\nmore."
    assert describe(corpus, "method", "adam")["name"] == "Adam"
    for shown in (answer, described, describe(corpus, "method", "adam"), board(corpus, "Segmentation")):
        assert not UNSEEN.search(orjson.dumps(shown).decode("utf-8")), shown
    warned = summary.warnings
    assert warned.counts["hidden_characters_removed"] >= 6
    assert warned.examples["hidden_characters_removed"].endswith("'Seg\\u202ementation\\u200b' read as 'Segmentation'")


def test_a_value_that_is_a_list_an_object_or_a_flag_is_shown_as_json_never_as_a_python_repr(hostile: tuple[BuildSummary, Corpus]) -> None:
    summary, corpus = hostile
    rows = {row["model"]: row["values"] for row in board(corpus, "Segmentation", "Cityscapes")["rows"]}
    assert rows["Lists"] == ["[1,2]", '{"a":1}'] and rows["Flags"] == ["true", "91"]
    assert [row.get("rank") for row in board(corpus, "Segmentation", "Cityscapes")["rows"]] == [1, None, None]  # not numbers
    assert summary.warnings.counts["value_as_json"] == 3
    assert "shown as '[1,2]'" in summary.warnings.examples["value_as_json"]


def test_a_result_dated_in_the_future_keeps_its_row_and_loses_its_date(hostile: tuple[BuildSummary, Corpus]) -> None:
    summary, corpus = hostile
    rows = {row["model"]: row for row in board(corpus, "Segmentation", "Cityscapes")["rows"]}
    assert rows["Red"]["paper"]["date"] == "2020-01-02"  # its paper's own date
    assert rows["Flags"]["paper"] == {"title": "Flagged"} and rows["Lists"]["paper"] == {"title": "Listed", "date": "2020-05-01"}
    assert summary.warnings.counts["future_result_date"] == 2
    assert "dated 2999-01-01: written without its date" in summary.warnings.examples["future_result_date"]


def test_a_build_made_before_the_rules_shows_no_homepage_a_client_cannot_follow_safely(older: Corpus) -> None:
    assert older.archive is not None and older.archive.boards is not None
    stored = set(older.archive.boards.strings["dataset.homepage"])
    assert {"javascript:alert(document.cookie)", "file:///etc/passwd"} <= stored  # what such a build holds
    assert "homepage" not in describe(older, "dataset", "Script") and "homepage" not in describe(older, "dataset", "Local")
    assert describe(older, "dataset", "Good")["homepage"] == "https://good.example.org/home"


def test_a_homepage_no_client_can_follow_safely_is_left_out_and_counted(hostile: tuple[BuildSummary, Corpus]) -> None:
    summary, corpus = hostile
    assert "homepage" not in describe(corpus, "dataset", "Script") and "homepage" not in describe(corpus, "dataset", "Local")
    assert describe(corpus, "dataset", "Good")["homepage"] == "https://good.example.org/home"
    assert summary.warnings.counts["bad_homepage"] == 2
    assert "javascript:alert(document.cookie)" in summary.warnings.examples["bad_homepage"]
    assert "not http or https" in summary.warnings.examples["bad_homepage"]
