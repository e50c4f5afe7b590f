"""`python -m benchmarks suite-time`'s split of a grown suite: the tests both checkouts ran, apart from the new ones."""

from __future__ import annotations

import pytest

from benchmarks.suite_time import split_by_test


def test_the_tests_both_sides_ran_are_compared_at_their_medians_and_the_new_ones_apart() -> None:
    before = [{"a::x": 1.0, "a::y": 2.0, "a::gone": 5.0}, {"a::x": 3.0, "a::y": 2.0, "a::gone": 5.0}, {"a::x": 2.0, "a::y": 4.0}]
    after = [{"a::x": 2.0, "a::y": 3.0, "b::new": 7.0}] * 3

    split = split_by_test({"before": before, "after": after})

    # x: median 2.0 before, y: median 2.0 before; after 2.0 + 3.0.
    assert split["common"] == {"tests": 2, "before_s": 4.0, "after_s": 5.0, "ratio": pytest.approx(1.25)}
    assert split["new"] == {"tests": 1, "after_s": 7.0}
    assert split["gone"] == {"tests": 1}


def test_no_test_on_both_sides_has_no_ratio() -> None:
    split = split_by_test({"before": [{"a::x": 1.0}], "after": [{"b::y": 1.0}]})

    assert split["common"]["ratio"] is None
    assert split["new"] == {"tests": 1, "after_s": 1.0}
