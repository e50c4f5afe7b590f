"""The tools' arguments checked: bounds, statuses, repository kinds, list lengths, search filters, leaderboard names
and orders, and the one reading of an argument that takes several values.

Each check returns the argument as the answers use it, or raises `QueryError` (`invalid_argument`) saying what was
wrong and what to send instead. What an argument names is found in `resolving`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from papercode.core.errors import QueryError
from papercode.core.ids import normalize_hex, parse_arxiv_id, parse_slug
from papercode.core.records import KNOWN_STATUSES, MAX_WORD_CHARS, REPO_KINDS
from papercode.corpus.stages import Corpus
from papercode.index.board_columns import ORDERS, Order
from papercode.index.search_queries import SearchFilters

MAX_LIMIT = 100
MAX_ID_CHARS = 300
MAX_QUERY_CHARS = 1_000
MAX_YEAR = 9999
MAX_STATUSES = 20  # a list argument's bound: there are five statuses, and a few unknown ones at most
MAX_STATUS_CHARS = MAX_WORD_CHARS  # a status longer than the records allow cannot match
MAX_PAPERS_ASKED = 25  # get_paper's list of ids
MAX_CODES_ASKED = 10  # get_code's list of hashes
MAX_ASKED_NAME_CHARS = 300  # a task, method, dataset or metric name asked of the leaderboards
MAX_SPLIT = 100  # a comma-separated string of more parts is no list anyone meant: it is read as one value (and refused)


@dataclass(frozen=True)
class SeveralValues:
    """An argument that takes one value or several: a JSON list, or a comma-separated string. The string is split only
    when every part reads as one value (`reads_as_one`): a title holds commas ("BERT has a Mouth, and It Must Speak"),
    an id never does. One value comes back as the string it was given; several as a list."""

    argument: str
    example: tuple[str, str]  # two values, for the error that shows both forms
    reads_as_one: Callable[[str], bool]

    def read(self, value: object) -> str | list[str]:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return value
        if not isinstance(value, str):
            raise QueryError(
                "invalid_argument",
                f"{self.argument} takes a string or a list of strings, not {_json_kind(value)}",
                f"call again with {self.forms}",
            )
        if "," not in value:
            return value
        parts = [part.strip() for part in value.split(",", MAX_SPLIT)]
        values = [part for part in parts if part]
        if len(parts) > MAX_SPLIT or not values or not all(self.reads_as_one(part) for part in values):
            return value
        return values[0] if len(values) == 1 else values

    @property
    def forms(self) -> str:
        """Both forms, as the call to make: a JSON list or a comma-separated string."""
        first, second = self.example
        return f'{self.argument}=["{first}", "{second}"] (a JSON list) or {self.argument}="{first},{second}" (comma-separated)'


_JSON_KINDS = {type(None): "null", bool: "true or false", int: "a number", float: "a number", dict: "an object", list: "a list"}


def _json_kind(value: object) -> str:
    """What a JSON value that is not a string or a list of strings is, in JSON's words."""
    if isinstance(value, list):
        odd = [item for item in value if not isinstance(item, str)][:1]
        return f"a list holding {_JSON_KINDS.get(type(odd[0]), type(odd[0]).__name__)}" if odd else "a list"
    return _JSON_KINDS.get(type(value), type(value).__name__)


def _reads_as_paper_id(text: str) -> bool:
    """Whether a part of a comma-separated paper argument is an id nobody would write as a title's word: an arXiv id, a
    paper's URL or `/paper/` path, or a bare slug as slugs are written, in lower case with a hyphen (`Zero-Shot` and
    `Attention` may be a title's words; `parse_slug` would lower-case the first)."""
    if parse_arxiv_id(text) is not None:
        return True
    slug = parse_slug(text)
    return slug is not None and ("/" in text or ("-" in slug and slug == text))


_STATUS_WORD = re.compile(r"[\w-]+").fullmatch

STATUSES = SeveralValues("status", (KNOWN_STATUSES[0], KNOWN_STATUSES[1]), lambda text: _STATUS_WORD(text) is not None)
PAPERS = SeveralValues("paper", ("1902.04094", "2406.04823"), _reads_as_paper_id)
CODE_HASHES = SeveralValues("code_sha256", ("2a890c3f8ff19f47", "013a68b0ac4716fe"), lambda text: normalize_hex(text) is not None)


def check_limit(limit: int, most: int = MAX_LIMIT) -> int:
    """A page's size: 1 to `most` (a tool's own bound, where its entries are larger than a list's)."""
    if not 1 <= limit <= most:
        raise QueryError("invalid_argument", f"limit must be 1..{most}, got {limit}", f"call again with a limit between 1 and {most}")
    return limit


def check_name(value: str, what: str) -> str:
    """A task, method, dataset or metric name (`what`), stripped: not empty, at most `MAX_ASKED_NAME_CHARS`."""
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > MAX_ASKED_NAME_CHARS:
        raise QueryError(
            "invalid_argument",
            f"{what} is empty" if not text else f"{what} is over {MAX_ASKED_NAME_CHARS} characters",
            f"pass a {what} name as people write it (any case; a slug will do)",
        )
    return text


def check_order(order: str | None) -> Order | None:
    """A leaderboard's order: asc, desc, or None (its metric's direction)."""
    if order is not None and order not in ORDERS:
        raise QueryError(
            "invalid_argument", f"order must be asc or desc, not {str(order)[:20]!r}", "call again with order asc or desc, or without it"
        )
    return order


def check_count(asked: Sequence[object], most: int, what: str) -> None:
    """A list argument holds 1 to `most` items."""
    if not 1 <= len(asked) <= most:
        raise QueryError("invalid_argument", f"a list takes 1 to {most} {what}, got {len(asked)}", f"call again with at most {most}")


def check_statuses(corpus: Corpus, status: str | Sequence[str]) -> list[str]:
    """One status or several (a list, or comma-separated: `STATUSES`); statuses seen in the corpus count."""
    values = STATUSES.read(status if isinstance(status, str) else list(status[: MAX_STATUSES + 1]))
    raw = [values] if isinstance(values, str) else values[: MAX_STATUSES + 1]
    if len(raw) > MAX_STATUSES or any(isinstance(value, str) and len(value) > MAX_STATUS_CHARS for value in raw):
        raise QueryError(
            "invalid_argument",
            f"status takes at most {MAX_STATUSES} values of at most {MAX_STATUS_CHARS} characters",
            f"call again with one or more of: {', '.join(corpus.index.statuses())}",
        )
    wanted = [value.strip().lower() for value in raw if isinstance(value, str) and value.strip()]
    valid = corpus.index.statuses()
    unknown = [value for value in wanted if value not in valid]
    if not wanted or unknown:
        what = f"unknown status {quote(', '.join(unknown))}" if unknown else "no status given"
        raise QueryError(
            "invalid_argument", f"{what}; valid: {', '.join(valid)}", f"call again with one of them, or several: {STATUSES.forms}"
        )
    return list(dict.fromkeys(wanted))


def check_repo_kind(corpus: Corpus, repo_kind: str | None) -> str | None:
    if repo_kind is None:
        return None
    valid = sorted(set(REPO_KINDS) | corpus.index.repo_kind_counts.keys())
    value = repo_kind.strip().lower()
    if value not in valid:
        raise QueryError(
            "invalid_argument",
            f"unknown repo_kind {quote(repo_kind)}; valid: {', '.join(valid)}",
            "call again with a valid repo_kind, or without it",
        )
    return value


def check_search(corpus: Corpus, query: str, filters: SearchFilters) -> SearchFilters:
    """search_papers' query and filters checked; the filters with their statuses resolved."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError("invalid_argument", f"query is over {MAX_QUERY_CHARS} characters", "search with a few distinctive words")
    if filters.status:
        filters = replace(filters, status=tuple(check_statuses(corpus, filters.status)))
    for name, text in (("query", query), ("task", filters.task), ("method", filters.method), ("framework", filters.framework)):
        if text is not None and not is_unicode_text(text):  # lone surrogates: only in-process, never on the wire
            raise QueryError("invalid_argument", f"{name} is not valid Unicode text", f"call again with {name} as plain text")
    for name, year in (("year_from", filters.year_from), ("year_to", filters.year_to)):
        if year is not None and not 0 <= year <= MAX_YEAR:  # the year filter holds 4 digits
            raise QueryError("invalid_argument", f"{name} must be a year between 0 and {MAX_YEAR}", f"call again with a 4-digit {name}")
    if filters.year_from is not None and filters.year_to is not None and filters.year_from > filters.year_to:
        raise QueryError("invalid_argument", f"year_from {filters.year_from} is after year_to {filters.year_to}", "swap them or drop one")
    return filters


def is_unicode_text(text: str) -> bool:
    """Whether `text` can be written as UTF-8: a lone surrogate cannot (only an in-process caller can send one)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def quote(text: str, most: int = 60) -> str:
    """An argument quoted in an error, cut to `most` characters."""
    return repr(text if len(text) <= most else text[:most] + "…")
