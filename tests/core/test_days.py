"""`core.days.day_number`: the one rule the orders by date (the search's newest first, a leaderboard's ties) read a
date's day by."""

from __future__ import annotations

import pytest

from papercode.core.days import day_number
from papercode.index.search_schema import browse_value


@pytest.mark.parametrize(
    ("date", "number"),
    [
        ("2018-10-11", 20181011),
        ("2018-10-11T12:00:00Z", 20181011),
        ("2018/10/11", 20181011),  # a record's date is free text: its digits where a day's are
        ("2018-10", None),
        ("2018-1-11x", None),
        ("2018-1²-11", None),  # a digit int() cannot read
        ("", None),
        (None, None),
    ],
)
def test_a_dates_day_is_read_from_its_digits_or_it_has_none(date: str | None, number: int | None) -> None:
    assert day_number(date) == number


def test_the_search_browses_newest_first_and_a_date_without_a_day_last() -> None:
    newest, older, none = (browse_value(date, "key") for date in ("2020-01-02", "2019-12-31", "2018-1²-11"))
    assert newest < older < none
