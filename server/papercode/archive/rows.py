"""One archive row's fields in the record's shape: slugs, arXiv ids, dates, flags, repository URLs.

Pure functions over Python values (what a parquet batch or a JSON dump gives), no pyarrow here. Each returns
None for a value it cannot use; the caller decides whether that rejects the row or only drops the field.
The tallies of rejected rows and warnings (`Tally`) live here too, with one example of each reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, Final, cast

from papercode.core.ids import canonical_arxiv_id
from papercode.core.names import name_slug

LICENCE: Final = "CC BY-SA 4.0"
LICENCE_URL: Final = "https://creativecommons.org/licenses/by-sa/4.0/legalcode"

_NEW_STYLE_ARXIV = re.compile(r"\d{4}\.\d{4,5}").fullmatch  # the common case, checked before the full parser
_BARE_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9_.\-]+").fullmatch
# http(s), a host, then a path with something in it; no white space anywhere
_REPO_URL = re.compile(r"https?://[^\s/?#]+/+[^\s/]\S*", re.IGNORECASE).fullmatch
_BAD_SLUG_CHARS = frozenset("/?# \t\r\n")
_EXAMPLE_CHARS = 200

Json = dict[str, Any]


def paper_slug(paper_url: object) -> str | None:
    """The slug of a `paper_url` (its last path part: `https://paperswithcode.com/paper/<slug>`), or None."""
    if type(paper_url) is not str:
        return None
    slug = paper_url.rstrip("/").rpartition("/")[2]
    if not slug or not _BAD_SLUG_CHARS.isdisjoint(slug):
        return None
    return slug


def arxiv_id(value: object) -> str | None:
    """The bare arXiv id (no version) of the archive's `arxiv_id`; None when it is not one."""
    if type(value) is str and _NEW_STYLE_ARXIV(value):
        return value
    return canonical_arxiv_id(value)


def text(value: object) -> str | None:
    """An optional text field: a non-empty string, else None (the record leaves the field out)."""
    return value if type(value) is str and value else None


def day(value: object) -> str | None:
    """`YYYY-MM-DD` from a date in any form the archive's copies use: a string (a time after the date is
    dropped), a date, a datetime, or a number of epoch milliseconds. None when it is none of these."""
    if type(value) is str:
        candidate = value[:10]
        if len(candidate) == 10 and candidate[4] == "-" == candidate[7] and (len(value) == 10 or value[10] in "T "):
            try:
                date.fromisoformat(candidate)
            except ValueError:
                return None
            return candidate
        return None
    if isinstance(value, datetime):
        moment = value.astimezone(UTC) if value.tzinfo is not None else value
        return moment.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:  # NaN != NaN
        try:
            return datetime.fromtimestamp(value / 1000, UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return None


_FLAGS: Final[dict[object, int]] = {
    True: 1,
    False: 0,
    "true": 1,
    "false": 0,
    "True": 1,
    "False": 0,
    "1": 1,
    "0": 0,
}  # 1, 0, 1.0, 0.0 hash as True/False


def flag(value: object) -> int | None:
    """A link flag as 0/1 (booleans, 0/1, 0.0/1.0 and their spellings); None when missing or anything else."""
    try:
        return _FLAGS.get(value)
    except TypeError:  # unhashable (a list, an object)
        return None


def repo_url(value: object) -> tuple[str | None, str | None]:
    """(the repository URL to write, None) or (None, the rejection reason: `no_repo_url` or `bad_repo_url`).

    A URL is kept as given (GitLab groups, Bitbucket, the Hugging Face Hub, a `/tree/<branch>/<dir>` tail); a
    bare `owner/name` means GitHub. Malformed: not http(s), no host, no path, or white space inside.
    """
    if value is None or (type(value) is str and not value.strip()):
        return None, "no_repo_url"
    if type(value) is not str:
        return None, "bad_repo_url"
    url = value.strip()
    if _BARE_REPO(url):
        return f"https://github.com/{url}", None
    if not _REPO_URL(url):
        return None, "bad_repo_url"
    return url, None


def example(where: str, detail: str) -> str:
    """A rejection's example as shown in the summary: where it was, then what was wrong (bounded)."""
    shown = detail if len(detail) <= _EXAMPLE_CHARS else detail[: _EXAMPLE_CHARS - 1] + "…"
    return f"{where}: {shown}"


class Tally:
    """Counts by reason with the first example of each: the rejected rows, or the warnings."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def add(self, reason: str, where: str, detail: str, count: int = 1) -> None:
        self.counts[reason] += count
        if reason not in self.examples:
            self.examples[reason] = example(where, detail)

    def total(self) -> int:
        return sum(self.counts.values())

    def as_json(self) -> dict[str, Json]:
        return {reason: {"count": count, "example": self.examples[reason]} for reason, count in sorted(self.counts.items())}


class Vocabulary:
    """Task and method names to their record entries, each built once and shared by every record
    that names it (`{task_slug, task_name}`, `{method_slug, method_name}`); None for an unusable name."""

    def __init__(self) -> None:
        self.tasks: dict[str, Json | None] = {}
        self.methods: dict[str, Json | None] = {}

    def task(self, name: str) -> Json | None:
        try:
            return self.tasks[name]
        except KeyError:
            slug = name_slug(name)
            entry = self.tasks[name] = {"task_slug": slug, "task_name": name} if slug else None
            return entry

    def method(self, name: str) -> Json | None:
        try:
            return self.methods[name]
        except KeyError:
            slug = name_slug(name)
            if not name.strip():
                entry = None
            else:
                entry = {"method_slug": slug, "method_name": name} if slug else {"method_name": name}
            self.methods[name] = entry
            return entry

    def tasks_of(self, value: object) -> list[Json]:
        """A JSON row's `tasks` (names; `{name}` objects too), sorted by name, each once."""
        return self._entries(value, self.task)

    def methods_of(self, value: object) -> list[Json]:
        """A JSON row's `methods` (`{name, full_name, ...}` objects; bare names too), sorted by name, each once."""
        return self._entries(value, self.method)

    @staticmethod
    def _entries(value: object, lookup: Callable[[str], Json | None]) -> list[Json]:
        if type(value) is not list or not value:
            return []
        try:  # the common cases: all names, or all objects with a name
            names = set(value) if type(value[0]) is str else {item["name"] for item in value}
            ordered = sorted(names)
        except (TypeError, KeyError):  # a mix, a null, an object without a name
            ordered = sorted({name for item in value if type(name := item.get("name") if type(item) is dict else item) is str})
        if not ordered or type(ordered[0]) is not str:
            return []
        entries = list(map(lookup, ordered))
        return [entry for entry in entries if entry is not None] if None in entries else cast(list[Json], entries)
