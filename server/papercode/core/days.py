"""A day as the archive's data names it: `YYYY-MM-DD`, a real date, and not after today anywhere on Earth.

One rule for every day papercode takes from outside (`--snapshot`, a manifest's dates, a dataset commit's date), so a
hand-edited or future date never reaches an answer.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def latest_day() -> date:
    """Today where it is latest (UTC+14): a date after it is in the future everywhere."""
    return (datetime.now(UTC) + timedelta(hours=14)).date()


def checked_day(text: object) -> str:
    """`text` when it is a real day written YYYY-MM-DD, not after today; ValueError (saying why) otherwise."""
    if not isinstance(text, str) or not _DAY.fullmatch(text):
        raise ValueError(f"{text!r} is not a date written YYYY-MM-DD")
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a real date") from None
    if day > latest_day():
        raise ValueError(f"{text!r} is after today")
    return text


def is_day(value: object) -> bool:
    """Whether `checked_day` takes `value`."""
    try:
        checked_day(value)
    except ValueError:
        return False
    return True


def year_of(date: str | None) -> int | None:
    """The year a record's date starts with, or None when it starts with none (dates in records are free text)."""
    if date and len(date) >= 4 and date[:4].isdigit():
        return int(date[:4])
    return None


def day_number(date: str | None) -> int | None:
    """`YYYYMMDD` of the day a date starts with (`2018-10-11…` -> 20181011), or None when it starts with none: what the
    orders by date compare (the search's newest first, a leaderboard's ties)."""
    if date and len(date) >= 10 and (digits := date[:4] + date[5:7] + date[8:10]).isascii() and digits.isdigit():
        return int(digits)
    return None
