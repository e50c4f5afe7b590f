"""One archive row's fields in the record's shape: slugs, arXiv ids, dates, flags, URLs, texts and lists.

Pure functions over Python values (what a parquet batch or a JSON dump gives), no pyarrow here. Each returns
None (or a reason) for a value it cannot use; the caller decides whether that rejects the row or only drops the
field. The rules are the server's own where it has one (the slug rule, repository keys, the caps on texts,
lists and lines), imported from `core`, so that what a build writes is what the server serves. The tallies of
rejected rows and warnings (`Tally`) live here too, with one example of each reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, Final, cast

from papercode.core.ids import bare_repo_url, repo_key
from papercode.core.limits import Limits
from papercode.core.names import name_slug
from papercode.core.records import MAX_LIST_ENTRIES, MAX_NAME_CHARS, MAX_URL_CHARS, MAX_WORD_CHARS

LICENCE: Final = "CC BY-SA 4.0"
LICENCE_URL: Final = "https://creativecommons.org/licenses/by-sa/4.0/legalcode"

# The server's caps as it applies them by default: a longer text is cut there (`ingest.decode`), a longer line lost.
MAX_TEXT_CHARS: Final = Limits().max_string_chars
MAX_LINE_BYTES: Final = Limits().max_line_bytes

_EXAMPLE_CHARS = 200

Json = dict[str, Any]


def paper_url_problem(paper_url: object) -> str:
    """Why a row's `paper_url` gives no slug by the server's rule (`ids.parse_slug`, which the build applies to
    `https://paperswithcode.com/paper/<slug>`): `no_paper_url` when there is none, else `bad_paper_url`."""
    return "no_paper_url" if type(paper_url) is not str or not paper_url.strip() else "bad_paper_url"


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


# -- URLs ------------------------------------------------------------------------------------
#
# A URL is written only when a client can follow it safely: http or https, a host name (not an address, no port,
# no credentials), no control, bidi or zero-width characters, no `.` or `..` path step, at most MAX_URL_CHARS.
# Nearly every URL in the archive has the plain shape `_PLAIN_URL` accepts (a lower-case host name, then ASCII
# that means nothing special in a path: no `%` (an encoded dot), no `\\` (a slash to browsers)), with no `/.` and
# no `..` anywhere: checked in C, one pattern and two searches. Only the others are taken apart (`_taken_apart`),
# which says what is wrong, and accepts every URL the plain shape does.

_PLAIN_URL = re.compile(r"https?://[a-z0-9.-]*\.[a-z]{2,63}/[A-Za-z0-9_~!$&'()*+,;=:@-][.A-Za-z0-9_~!$&'()*+,;=:@/?#-]*").fullmatch
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff]").search
_SPACE = re.compile(r"\s").search
_URL_PARTS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):(?://(?P<authority>[^/?#]*))?(?P<rest>.*)", re.DOTALL).fullmatch
_HOST_NAME = re.compile(r"(?:[a-z0-9-]+\.)+[a-z]{2,63}").fullmatch  # labels of letters, digits and `-`; a top level of letters

# What is wrong with a URL (`web_url`), as the summary says it.
URL_PROBLEMS: Final = {
    "malformed": "not a URL",
    "not_http": "not http or https",
    "credentials": "a user name or password in it",
    "not_a_host_name": "not a host name (an address, a port, or no domain)",
    "hidden_characters": "control, bidi or zero-width characters in it",
    "dot_segments": "a . or .. path step in it",
    "too_long": f"over {MAX_URL_CHARS:,} characters",
}


def web_url(value: object, need_path: bool = False) -> tuple[str | None, str | None]:
    """(the URL to write, None) or (None, what is wrong: a key of `URL_PROBLEMS`). The URL written has its scheme
    and host in lower case; white space around it is dropped. `need_path`: a path must follow the host."""
    if type(value) is str and len(value) <= MAX_URL_CHARS and _PLAIN_URL(value) and "/." not in value and ".." not in value:
        return value, None
    return _taken_apart(value, need_path)


def _taken_apart(value: object, need_path: bool) -> tuple[str | None, str | None]:
    if type(value) is not str:
        return None, "malformed"
    url = value.strip()
    if len(url) > MAX_URL_CHARS:
        return None, "too_long"
    if _HIDDEN(url):
        return None, "hidden_characters"
    parts = _URL_PARTS(url)
    if parts is None or _SPACE(url) or "\\" in url:
        return None, "malformed"
    scheme, authority, rest = parts["scheme"].lower(), parts["authority"], parts["rest"]
    if scheme not in ("http", "https"):
        return None, "not_http"
    if not authority:
        return None, "malformed"
    if "@" in authority:
        return None, "credentials"
    host = authority.lower()
    if not host.isascii() or not _HOST_NAME(host):
        return None, "not_a_host_name"
    path = rest.partition("?")[0].partition("#")[0]
    if any(step.lower().replace("%2e", ".") in (".", "..") for step in path.split("/")):
        return None, "dot_segments"
    if need_path and not path.strip("/"):
        return None, "malformed"
    return f"{scheme}://{host}{rest}", None


def repo_url(value: object) -> tuple[str | None, str | None]:
    """(the repository URL to write, None) or (None, the rejection reason: `no_repo_url`, `bad_repo_url` when it
    is not an http(s) URL with a path, else `repo_url_<problem>` (`URL_PROBLEMS`)).

    A URL is kept as given but for its scheme and host in lower case (GitLab groups, Bitbucket, the Hugging Face
    Hub, a `/tree/<branch>/<dir>` tail); a bare `owner/name` means GitHub.
    """
    if value is None or (type(value) is str and not value.strip()):
        return None, "no_repo_url"
    url, problem = web_url(value, need_path=True)
    if url is not None:
        return url, None
    if type(value) is str and (github := bare_repo_url(value.strip())) is not None:
        return github, None
    return None, "bad_repo_url" if problem in (None, "malformed", "not_http") else f"repo_url_{problem}"


def link_key(url: str) -> str:
    """Which repository a code link names, to keep it once per paper: the server's key (`ids.repo_key`: GitHub's
    owner/name in any letter case, `.git` or not), else the URL (its host in lower case already) without a
    trailing slash."""
    return repo_key(url) or url.rstrip("/")


# -- texts and lists ---------------------------------------------------------------------------

_TEXT_FIELDS: Final = ("title", "abstract", "proceeding")
_LIST_FIELDS: Final = ("authors", "tasks", "methods")
# A record line this short holds no text over MAX_TEXT_CHARS characters and no list over MAX_LIST_ENTRIES entries
# (a character takes a byte at least, an entry three: `"",`): only a longer one is looked at field by field.
SURELY_WITHIN_CAPS: Final = min(MAX_TEXT_CHARS, 3 * MAX_LIST_ENTRIES)

Cuts = tuple[tuple[str, str], ...]  # (warning reason, what was cut), one per cut made


def within_caps(record: Json) -> tuple[Json, Cuts]:
    """`record` with its texts cut to the server's cap (`MAX_TEXT_CHARS` characters, author names too) and its
    lists to `MAX_LIST_ENTRIES` entries (tasks and methods are sorted by name: the first by name are kept), and
    the cuts made; `record` itself when nothing is over."""
    changed: Json = {}
    cuts: list[tuple[str, str]] = []
    for name in _TEXT_FIELDS:
        text = record.get(name)
        if text is not None and len(text) > MAX_TEXT_CHARS:
            changed[name] = text[:MAX_TEXT_CHARS]
            cuts.append(("string_truncated", f"{name} cut from {len(text):,} to {MAX_TEXT_CHARS:,} characters"))
    for name in _LIST_FIELDS:
        entries = record.get(name)
        if entries is not None and len(entries) > MAX_LIST_ENTRIES:
            changed[name] = entries[:MAX_LIST_ENTRIES]
            cuts.append(("list_truncated", f"{name} over {MAX_LIST_ENTRIES:,} entries: the first {MAX_LIST_ENTRIES:,} kept"))
    authors = changed.get("authors", record.get("authors")) or ()
    long_names = sum(len(author) > MAX_TEXT_CHARS for author in authors)
    if long_names:
        changed["authors"] = [author[:MAX_TEXT_CHARS] for author in authors]
        cuts.append(("string_truncated", f"{long_names:,} author name(s) cut to {MAX_TEXT_CHARS:,} characters"))
    return ({**record, **changed} if changed else record), tuple(cuts)


def authors_of(value: object) -> list[str] | None:
    """A row's `authors` (a list of names, or one name as text) as the record's list of names: anything not text
    dropped; None when no name is left."""
    if type(value) is list:
        try:
            "".join(value)  # the usual row, all names: checked in C, without a loop here
        except TypeError:
            value = [name for name in value if type(name) is str]
        return value or None
    return [value] if type(value) is str and value else None


def framework_of(value: object) -> str | None:
    """A link's `framework` (`pytorch`, `tf`, ...): printable, at most `MAX_WORD_CHARS`; None otherwise."""
    return value if type(value) is str and value and len(value) <= MAX_WORD_CHARS and value.isprintable() else None


def quoted(value: object) -> str:
    """A value as an example shows it: its repr, of a text's first `_EXAMPLE_CHARS` characters only (a hostile
    value may be megabytes long, and a detail is built for every row rejected)."""
    if type(value) is str and len(value) > _EXAMPLE_CHARS:
        return f"{value[:_EXAMPLE_CHARS]!r}… ({len(value):,} characters)"
    return repr(value)


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
    that names it (`{task_slug, task_name}`, `{method_slug, method_name}`); None for an unusable name.

    A name the records cannot carry (over `MAX_NAME_CHARS`, or with a control character) is dropped, counted in
    `warnings` once per distinct name. Past `MOST_NAMES` distinct names (the archive has a few thousand of each)
    entries are built but no longer kept, so a table of a million names costs no more than its rows do.
    """

    MOST_NAMES: Final = 100_000

    def __init__(self, warnings: Tally | None = None) -> None:
        self.tasks: dict[str, Json | None] = {}
        self.methods: dict[str, Json | None] = {}
        self.warnings = warnings if warnings is not None else Tally()

    def task(self, name: str) -> Json | None:
        try:
            return self.tasks[name]
        except KeyError:
            slug = name_slug(name) if self._usable("task", name) else ""
            entry = {"task_slug": slug, "task_name": name} if slug else None
            if len(self.tasks) < self.MOST_NAMES:
                self.tasks[name] = entry
            return entry

    def method(self, name: str) -> Json | None:
        try:
            return self.methods[name]
        except KeyError:
            if not name.strip() or not self._usable("method", name):
                entry = None
            else:
                slug = name_slug(name)
                entry = {"method_slug": slug, "method_name": name} if slug else {"method_name": name}
            if len(self.methods) < self.MOST_NAMES:
                self.methods[name] = entry
            return entry

    def _usable(self, kind: str, name: str) -> bool:
        if len(name) <= MAX_NAME_CHARS and name.isprintable():
            return True
        problem = f"over {MAX_NAME_CHARS:,} characters" if len(name) > MAX_NAME_CHARS else "a control character in it"
        self.warnings.add(f"bad_{kind}_name", f"{kind} names", f"{quoted(name)} ({problem}): left out of every paper naming it")
        return False

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
        # Looked up only as far as a record keeps them (one more: the caller sees the list was longer, and cuts it).
        entries = list(map(lookup, ordered[: MAX_LIST_ENTRIES + 1]))
        return [entry for entry in entries if entry is not None] if None in entries else cast(list[Json], entries)
