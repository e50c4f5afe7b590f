"""One archive row's fields in the record's shape: slugs, arXiv ids, dates, flags, URLs, texts and lists.

The rows of the two tables every build reads, as the readers (`tables`) give them whatever the file's form, are
declared here: `PapersTableRow` and `LinksTableRow`. `RecordAssembly` makes a row's fields into a record (or a code
link), leaving out each field it cannot use with a warning; which rows are kept (the join, the duplicates) is
`build`'s. Below it, pure functions over Python values (what a parquet batch or a JSON dump gives), no pyarrow here:
each returns None (or a reason) for a value it cannot use. The rules are the server's own where it has one (the slug
rule, repository keys, the caps on texts, lists and lines), imported from `core`, so that what a build writes is what
the server serves. The tallies of rejected rows and warnings (`Tally`) live here too, with one example of each reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, Final, cast

import msgspec
import orjson

from papercode.core.ids import bare_repo_url, canonical_arxiv_id, repo_key
from papercode.core.limits import Limits
from papercode.core.names import name_slug
from papercode.core.records import MAX_LIST_ENTRIES, MAX_NAME_CHARS, MAX_WORD_CHARS
from papercode.core.safe_text import URL_PROBLEMS, web_url
from papercode.index.fields import CodeLinkRow, link_row

LICENCE: Final = "CC BY-SA 4.0"
LICENCE_URL: Final = "https://creativecommons.org/licenses/by-sa/4.0/legalcode"

# The server's caps as it applies them by default: a longer text is cut there (`ingest.decode`), a longer line lost.
MAX_TEXT_CHARS: Final = Limits().max_string_chars
MAX_LINE_BYTES: Final = Limits().max_line_bytes

_EXAMPLE_CHARS = 200

Json = dict[str, Any]


class PapersTableRow(msgspec.Struct, gc=False):
    """A row of a papers table (papers-with-abstracts), the columns the build reads, as the file held them but for
    `tasks` and `methods`: their record entries already (`Vocabulary`), sorted by name, each once. A JSON dump's row
    that is not an object has `paper_url` `tables.NOT_AN_OBJECT`."""

    paper_url: Any = None
    title: Any = None
    arxiv_id: Any = None
    date: Any = None
    proceeding: Any = None
    authors: Any = None
    abstract: Any = None
    url_abs: Any = None
    url_pdf: Any = None
    tasks: list[Json] | None = None
    methods: list[Json] | None = None


class LinksTableRow(msgspec.Struct, gc=False):
    """A row of a links table (links-between-papers-and-code), the columns the build reads, as the file held them (a
    JSON dump's rows are decoded straight into it)."""

    paper_url: Any = None
    repo_url: Any = None
    is_official: Any = None
    mentioned_in_paper: Any = None
    mentioned_in_github: Any = None
    framework: Any = None
    paper_title: Any = None
    paper_arxiv_id: Any = None
    paper_url_abs: Any = None
    paper_url_pdf: Any = None


class PaperLink(msgspec.Struct, gc=False):
    """One code link of a paper, while the links tables are read: where it goes among the paper's links (official
    first, then mentioned in the paper, then mentioned on GitHub, then by URL), which repository it names (`link_key`:
    a paper lists one once) and the link as the serving form keeps it (`columns.link_row`)."""

    order: tuple[int, int, int, str]
    key: str
    row: CodeLinkRow


class RecordAssembly:
    """A row's fields into the record's shape (`url` and `title` first, then `arxiv_id`, `date`, `proceeding`,
    `authors`, `abstract`, `url_abs`, `url_pdf`, `tasks`, `methods`: those it has), and a links row into its code link.
    A field the server's rules cannot use is left out and counted in `warnings`; a row that cannot be used at all
    (a link without a usable repository, a record over the server's cap once cut) in `rejected`.

    Where a problem was is said as `source` (a file's name) and `number` (the row's): None for a paper only a links
    row names, whose `source` says where already."""

    def __init__(self, rejected: Tally, warnings: Tally) -> None:
        self.rejected = rejected
        self.warnings = warnings

    def arxiv_id(self, raw: object, slug: str, source: str, number: int | None) -> str | None:
        """The paper's bare arXiv id from a row's `arxiv_id` (a links row's `paper_arxiv_id`); None, with a warning,
        when it is not one."""
        arxiv = canonical_arxiv_id(raw)
        if arxiv is None:
            if number is None:
                self.warnings.add("bad_arxiv_id", source, f"paper_arxiv_id {quoted(raw)}: written without it")
            else:
                self.warnings.add("bad_arxiv_id", f"{source} row {number}", f"arxiv_id {quoted(raw)} of /paper/{slug}: written without it")
        return arxiv

    def paper(self, row: PapersTableRow, slug: str, arxiv: str | None, source: str, number: int) -> Json:
        """The record of a papers row with a usable slug and title (`arxiv`: its id, once the build kept it)."""
        record: Json = {"url": "/paper/" + slug, "title": row.title}
        if arxiv is not None:
            record["arxiv_id"] = arxiv
        raw_date = row.date
        if raw_date is not None:
            written_date = day(raw_date)
            if written_date is None:
                self.warnings.add("bad_date", f"{source} row {number}", f"date {quoted(raw_date)} of /paper/{slug}: written without it")
            else:
                record["date"] = written_date
        proceeding, authors, abstract = row.proceeding, row.authors, row.abstract
        if type(proceeding) is str and proceeding:
            record["proceeding"] = proceeding
        if authors:
            names = authors_of(authors)
            if names:
                record["authors"] = names
        if type(abstract) is str and abstract:
            record["abstract"] = abstract
        if row.url_abs or row.url_pdf:
            self._paper_urls(record, row.url_abs, row.url_pdf, source, number)
        if row.tasks:
            record["tasks"] = row.tasks
        if row.methods:
            record["methods"] = row.methods
        return record

    def named_by_link(self, row: LinksTableRow, slug: str, arxiv: str | None, where: str) -> Json:
        """The record of a paper only the links tables name, from its first link's `paper_*` fields (its title usable)."""
        record: Json = {"url": "/paper/" + slug, "title": row.paper_title}
        if arxiv is not None:
            record["arxiv_id"] = arxiv
        if row.paper_url_abs or row.paper_url_pdf:
            self._paper_urls(record, row.paper_url_abs, row.paper_url_pdf, where, None)
        return record

    def _paper_urls(self, record: Json, url_abs: Any, url_pdf: Any, source: str, number: int | None) -> None:
        """The paper's `url_abs` and `url_pdf` (a links row's `paper_url_abs` and `paper_url_pdf`), each written only
        if a client can follow it safely (`web_url`); else it is left out, with a warning, and the paper kept."""
        for field_name, value in (("url_abs", url_abs), ("url_pdf", url_pdf)):
            if not value:
                continue
            url, problem = web_url(value)
            if url is not None:
                record[field_name] = url
                continue
            where, given = (f"{source} row {number}", field_name) if number is not None else (source, f"paper_{field_name}")
            what = URL_PROBLEMS[problem or "malformed"]
            self.warnings.add(f"bad_{field_name}", where, f"{given} of {record['url']} ({what}), written without it: {quoted(value)}")

    def link(self, row: LinksTableRow, slug: str, source: str, number: int) -> PaperLink | None:
        """The code link of a links row whose paper is `slug`; None, the row rejected, without a usable repository."""
        url, problem = repo_url(row.repo_url)
        if url is None:
            self.rejected.add(problem or "bad_repo_url", f"{source} row {number}", _repo_detail(row.repo_url, problem, slug))
            return None
        official, in_paper, in_github = flag(row.is_official), flag(row.mentioned_in_paper), flag(row.mentioned_in_github)
        framework = row.framework
        if framework is not None and framework != "":
            written = framework_of(framework)
            if written is None:
                self.warnings.add(
                    "bad_framework",
                    f"{source} row {number}",
                    f"framework {quoted(framework)} of a link of /paper/{slug}: written without it",
                )
            framework = written
        else:
            framework = None
        order = (-(official or 0), -(in_paper or 0), -(in_github or 0), url)
        return PaperLink(order, link_key(url), link_row(url, bool(official), None if in_paper is None else bool(in_paper), framework))

    def within_caps(self, record: Json, where: str) -> Json | None:
        """A long record with its texts and lists cut to the server's caps (each cut a warning), or None, the record
        rejected, when it is still over the server's cap on a record."""
        capped, cuts = within_caps(record)
        for reason, detail in cuts:
            self.warnings.add(reason, where, f"{detail} ({record['url']})")
        size = len(orjson.dumps(capped))
        if size <= MAX_LINE_BYTES:
            return capped
        self.rejected.add(
            "record_too_large", where, f"{record['url']}: {size:,} bytes, over the server's {MAX_LINE_BYTES:,}-byte record cap"
        )
        return None


def _repo_detail(raw: object, problem: str | None, slug: str) -> str:
    """What is wrong first (an example is cut to its first 200 characters), then the value."""
    what = URL_PROBLEMS.get(problem.removeprefix("repo_url_")) if problem and problem.startswith("repo_url_") else None
    return f"repo_url of /paper/{slug}" + (f" ({what})" if what else "") + f": {quoted(raw)}"


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
# A URL is written only when a client can follow it safely (`core.safe_text.web_url`, which the server applies again
# where an older build's strings reach an answer).


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
