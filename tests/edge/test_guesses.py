"""The names agents guess (`edge.guesses`): names made comparable, the nearest names (the table of agents' names
first, then a few edits away: `core.names`, tested in tests/core/test_names.py), and the refusals' texts at their bounds. The calls as agents make them are
in tests/product/test_mistaken_calls.py."""

from __future__ import annotations

import pytest

from papercode.edge import guesses
from tests.support.mcp import TOOL_NAMES

SEARCH_TAKES = ("query", "task", "method", "framework", "has_samples", "status", "official_code", "year_from", "year_to", "limit", "cursor")


@pytest.mark.parametrize(
    ("name", "key"),
    [("maxResults", "max_results"), ("Top-K", "top_k"), ("mcp__papercode__searchPapers", "search_papers"), ("papercode.search", "search")],
)
def test_a_name_is_compared_as_snake_case_without_a_hosts_prefix(name: str, key: str) -> None:
    assert guesses.normalised(name) == key


def test_the_table_comes_before_edit_distance_and_a_pair_needs_both() -> None:
    assert guesses.nearest("q", SEARCH_TAKES, guesses.ARGUMENT_GUESSES) == ["query"]
    assert guesses.nearest("year", SEARCH_TAKES, guesses.ARGUMENT_GUESSES) == ["year_from+year_to"]
    assert guesses.nearest("year", ("year_from",), guesses.ARGUMENT_GUESSES) == []
    assert guesses.nearest("limt", SEARCH_TAKES, guesses.ARGUMENT_GUESSES) == ["limit"]
    assert guesses.nearest("methd", SEARCH_TAKES, guesses.ARGUMENT_GUESSES) == ["method"]  # not metric: three edits away
    assert guesses.nearest("x" * 10_000, SEARCH_TAKES, guesses.ARGUMENT_GUESSES) == []


def test_every_name_the_tables_mean_is_papercodes() -> None:
    arguments = {"arxiv_id", "paper", "code_sha256", "name", "kind", "repo", *SEARCH_TAKES, "dataset", "metric", "order", "has_code"}
    arguments |= {"repo_kind", "language", "licence", "inline_only"}
    assert {part for meant in guesses.ARGUMENT_GUESSES.values() for name in meant for part in name.split("+")} <= arguments
    assert {name for meant in guesses.TOOL_GUESSES.values() for name in meant} <= set(TOOL_NAMES)
    assert all(guesses.normalised(name) == name for name in (*guesses.ARGUMENT_GUESSES, *guesses.TOOL_GUESSES))


def test_arguments_a_tool_takes_are_not_refused() -> None:
    assert guesses.unknown_arguments("search_papers", SEARCH_TAKES, {"query": "bert", "limit": 2}) is None


def test_two_names_for_one_argument_give_it_the_first_value() -> None:
    text = guesses.unknown_arguments("search_papers", SEARCH_TAKES, {"q": "bert", "text": "gpt"})
    assert text is not None and text.endswith("Next: call again with query=\"bert\" and without 'text'.")


def test_only_the_first_unknown_names_of_a_call_are_guessed_at(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    monkeypatch.setattr(guesses, "normalised", lambda name: looked_up.append(name) or name)
    arguments = {f"qu{i}": i for i in range(10_000)}
    text = guesses.unknown_arguments("search_papers", SEARCH_TAKES, arguments)
    assert text is not None and text.endswith("Next: call again without 'qu0', 'qu1', 'qu2', 'qu3', 'qu4' and 9995 more.")
    assert len(looked_up) == guesses.MOST_GUESSED < len(arguments) and looked_up == list(arguments)[: len(looked_up)]


def test_a_refusal_is_bounded_however_many_and_long_the_names_and_values() -> None:
    arguments = {f"{'x' * 1_000}{i}": "v" * 10_000 for i in range(1_000)} | {"q": "w" * 10_000}
    text = guesses.unknown_arguments("search_papers", SEARCH_TAKES, arguments)
    assert text is not None and len(text) < 1_000 and "and 996 more" in text
    message = guesses.unknown_tool_message("x" * 10_000, arguments, {"search_papers": SEARCH_TAKES})
    assert len(message) < 300
