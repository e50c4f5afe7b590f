"""The nearest names of a misspelt one among a few (`core.names`): edit distance, a swap of neighbours one edit, and the
names a few edits away, nearest first. The tools' arguments, the tools and describe's kinds are guessed by it."""

from __future__ import annotations

import pytest

from papercode.core.names import MOST_EDITED_CHARS, edit_distance, near_by_edits


@pytest.mark.parametrize(
    ("a", "b", "edits"),
    [("query", "query", 0), ("querry", "query", 1), ("year_form", "year_from", 1), ("", "abc", 3), ("kitten", "sitting", 3)],
)
def test_edit_distance_counts_a_swap_of_neighbours_as_one_edit(a: str, b: str, edits: int) -> None:
    assert edit_distance(a, b) == edits == edit_distance(b, a)


def test_the_names_a_few_edits_away_come_nearest_first_then_in_their_order() -> None:
    names = ["metric", "methods", "method", "task"]
    assert near_by_edits("methhod", names) == ["method", "methods"]  # one edit, then two; metric is more than two
    assert near_by_edits("metohd", names) == ["method", "methods"]  # a swap is one edit
    assert near_by_edits("tsak", ["tasks", "task"]) == ["task"]  # tasks: two edits, more than a third of 4
    assert near_by_edits("tas", ["tax", "tab"]) == ["tax", "tab"]  # as near: in their order


def test_a_name_more_than_a_third_of_its_length_away_or_too_long_to_compare_is_near_nothing() -> None:
    assert near_by_edits("set", ["dataset"]) == []  # four edits: a fragment, not a misspelling
    assert near_by_edits("q", ["query"]) == []  # the tables of agents' names find these (`edge.guesses`)
    assert near_by_edits("x", ["y"]) == ["y"]  # one edit, at least
    assert near_by_edits("a" * (MOST_EDITED_CHARS + 1), ["a" * MOST_EDITED_CHARS]) == []
