"""The index's storage: papers and samples as columns, materialised into rows only when a query reads them.

A column a field of `fields.PaperRow` and `fields.SampleRow`, made from that declaration. Samples live in arrays of
small ints into one string table; papers keep only what lists and lookups need, and each paper's display details
(authors, links, tasks, methods) sit in one compact JSON blob decoded on demand. Columns of plain ints and strings
restore from a snapshot far faster than objects do (strings are packed into one buffer there: see `packed`).
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, cast

from papercode.core.ids import GITHUB_URL, SHA_PREFIX_FORMAT, paper_key

from .fields import (
    LAYOUT,
    NO_LEVEL,
    NONE,
    PAPER_FIELDS,
    SAMPLE_ENDS,
    SAMPLE_FIELDS,
    SAMPLE_STARTS,
    SHOWN_SAMPLE_FIELDS,
    CodeLinkRow,
    Details,
    Field,
    FileUrl,
    Flag,
    Hash,
    Int32,
    Int64,
    Interned,
    Ordinal,
    PaperRow,
    SampleIds,
    SampleRow,
    Text,
    generated,
)
from .packed import PackedBytes, PackedStrings

_LAST = operator.itemgetter(-1)


def ordered_links(rows: list[CodeLinkRow]) -> list[CodeLinkRow]:
    """A paper's code links as every answer lists them: official first, then those the paper mentions, then by URL
    (any case), then as given."""
    if len(rows) < 2:
        return rows
    keyed = sorted(
        zip(
            [not row.is_official for row in rows],
            [not row.mentioned_in_paper for row in rows],
            [row.repo_url.lower() for row in rows],
            range(len(rows)),
            strict=True,
        )
    )
    return list(map(rows.__getitem__, map(_LAST, keyed)))


class StringIds(dict[str | None, int]):
    """string -> id; a miss appends the string (a C-level lookup on the hot path, Python only on a miss)."""

    def __init__(self, strings: list[str]) -> None:
        super().__init__({None: NONE})
        self._strings = strings

    def __missing__(self, value: str) -> int:
        found = self[value] = len(self._strings)
        self._strings.append(value)
        return found


class StringTable:
    """Interns strings to small ints; one table serves every string column.

    A snapshot stores it packed; a restored table only reads (`ids` is for building).
    """

    def __init__(self) -> None:
        building: list[str] = []
        self.values: Sequence[str] = building
        self.ids = StringIds(building)

    def id(self, value: str | None) -> int:
        return self.ids[value]

    def seal(self) -> None:
        """Building is over: drop the reverse map (it is not needed to serve)."""
        self.ids = StringIds([])

    def __getstate__(self) -> PackedStrings:
        return PackedStrings(self.values)

    def __setstate__(self, packed: PackedStrings) -> None:
        self.values = cast(Sequence[str], packed)  # a string table holds no None
        self.ids = StringIds([])


def text(values: Sequence[str], string_id: int) -> str | None:
    return None if string_id == NONE else values[string_id]


def _named(values: Sequence[str], column: array[int], ids: Sequence[int]) -> list[str]:
    return [values[column[i]] for i in ids]


def _optional(values: Sequence[str], column: array[int], ids: Sequence[int]) -> list[str | None]:
    return [None if (string_id := column[i]) == NONE else values[string_id] for i in ids]


BLOB_PATH = "/blob/HEAD/"  # a file's URL on GitHub: GITHUB_URL + owner/name + BLOB_PATH + path


def blob_url(repo: str, path: str) -> str:
    return f"{GITHUB_URL}{repo}{BLOB_PATH}{path}"


def _row_expression(field: Field) -> str:
    """How `PaperColumns` reads paper `i`'s value of `field` (`self`: the columns; `values`: the string table's)."""
    name, kind = field.name, field.kind
    if isinstance(kind, Ordinal):
        return "i"
    if isinstance(kind, SampleIds):
        return f"range(self.{SAMPLE_STARTS}[i], self.{SAMPLE_ENDS}[i])"
    if isinstance(kind, Interned):
        return f"(None if (v := self.{name}[i]) == NONE else values[v])" if field.optional else f"values[self.{name}[i]]"
    if isinstance(kind, Int32) and field.optional:
        return f"(None if (v := self.{name}[i]) == NONE else v)"
    if isinstance(kind, Text | Int32 | Details):
        return f"self.{name}[i]"
    raise TypeError(f"PaperRow.{name}: a paper field cannot be {type(kind).__name__}")


def _row_reader() -> Callable[[PaperColumns, int], PaperRow]:
    """`PaperColumns.__getitem__`, paper `i` read from the columns: generated from the declaration, one expression a
    field, so that a row is one tuple built in one step, as fast as the hand-written reader it replaces; a getter a
    field (a call each) would cost 1.3x, on every call of get_paper and once a paper at every start with an overlay
    (docs/decisions/fields-declared-once.md)."""
    source = (
        "def paper_row(self, i):\n"
        "    if i < 0:\n"
        "        i += len(self)\n"
        "    values = self.strings.values\n"
        f"    return make(({', '.join(map(_row_expression, PAPER_FIELDS))},))\n"
    )
    return cast(Callable[["PaperColumns", int], PaperRow], generated(source, {"make": PaperRow._make, "NONE": NONE}))


def _new_paper_column(field: Field) -> list[Any] | array[int]:
    """A paper field's column while the index is built: a list of its values, or an array of ints."""
    return [] if isinstance(field.kind, Text | Details) else array("i")


class PaperColumns:
    """Every paper, a column a field of `fields.PaperRow` (its samples: `start` and `end`); `papers[i]` materialises
    paper i."""

    # The columns other modules read by name, typed for them (every column is made from the declaration).
    arxiv_id: Sequence[str | None]
    slug: Sequence[str | None]
    title: Sequence[str]
    read_at: Sequence[str | None]
    snapshot: array[int]
    start: array[int]  # paper i's samples are ids start[i]..end[i]-1
    end: array[int]

    _PACKED = tuple(field.name for field in PAPER_FIELDS if isinstance(field.kind, Text | Details))
    __getitem__ = _row_reader()

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        # Lists while the index is built; packed once it is (see `pack`) and in a snapshot.
        for field in PAPER_FIELDS:
            if isinstance(field.kind, SampleIds):
                self.start, self.end = array("i"), array("i")
            elif not isinstance(field.kind, Ordinal):
                setattr(self, field.name, _new_paper_column(field))

    def __len__(self) -> int:
        return len(self.title)

    def column(self, name: str) -> Any:
        """The column `name` (`fields.paper_columns` names them)."""
        return getattr(self, name)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        for name in self._PACKED:
            state[name] = _packed(state[name], name)
        state["layout"] = LAYOUT
        return state

    def pack(self) -> None:
        """Hold the string and blob columns packed, as a restored snapshot holds them: the same values in about half
        the memory (a string object costs 49 bytes beyond its text), and a snapshot pickles them as they are. Once
        building is over; one column at a time, so that each list goes as its packed copy comes."""
        for name in self._PACKED:
            setattr(self, name, _packed(getattr(self, name), name))

    def __setstate__(self, state: dict[str, object]) -> None:
        _check_layout(state, "paper")
        self.__dict__.update(state)

    def __iter__(self) -> Iterator[PaperRow]:
        return (self[i] for i in range(len(self)))

    def key(self, i: int) -> str:
        return paper_key(self.arxiv_id[i], self.slug[i])


_TEXT_COLUMNS = frozenset(field.name for field in PAPER_FIELDS if isinstance(field.kind, Text))


def _packed(values: Sequence[Any], name: str) -> PackedStrings | PackedBytes:
    """Paper column `name`, of text or of blobs, packed (as it is, when it is already)."""
    if isinstance(values, PackedStrings | PackedBytes):
        return values
    return PackedStrings(values) if name in _TEXT_COLUMNS else PackedBytes(values)


def _check_layout(state: dict[str, object], what: str) -> None:
    """A snapshot's columns must have been written for this declaration: else it is refused (and rebuilt)."""
    written = state.pop("layout", None)
    if written != LAYOUT:
        raise ValueError(f"the {what} columns were written for another declaration of their fields ({written}, not {LAYOUT})")


def _new_sample_column(field: Field) -> Any:
    """A sample field's column: an array, packed strings, or (file URLs) a dict of the unusual ones."""
    kind = field.kind
    if isinstance(kind, Text):
        return PackedStrings(())
    if isinstance(kind, FileUrl):
        return {}
    if isinstance(kind, Flag):
        return bytearray()
    typecodes: dict[type, str] = {Hash: "Q", Interned: "i", Int32: "i", Int64: "q"}
    if type(kind) not in typecodes:
        raise TypeError(f"SampleRow.{field.name}: a sample field cannot be {type(kind).__name__}")
    return array(typecodes[type(kind)])


_SHOWN_SAMPLE_FIELDS = tuple(field for field in SAMPLE_FIELDS if field.name in SHOWN_SAMPLE_FIELDS)


class SampleColumns:
    """Every sample, a column a field of `fields.SampleRow`; `columns[i]` materialises sample i.

    Entries and paths are nearly all distinct, so they are packed (interning them would cost a
    table entry each for nothing, and a string object each costs three times its text); the
    other strings are ids into the table.
    """

    # The columns other modules read by name, typed for them (every column is made from the declaration).
    code_sha256: array[int]  # the code hash (`SHA_PREFIX_LENGTH` hex characters: 64 bits) as an int
    repo: array[int]
    repo_kind: array[int]
    language: array[int]
    status: array[int]
    licence: array[int]
    inline_ok: bytearray
    paper: array[int]
    file_url: dict[int, str]  # only where it is not the usual blob/HEAD URL

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        for field in SAMPLE_FIELDS:
            setattr(self, field.name, _new_sample_column(field))

    def __len__(self) -> int:
        return len(self.paper)

    def column(self, name: str) -> Any:
        """The column of sample field `name`."""
        return getattr(self, name)

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "layout": LAYOUT}

    def __setstate__(self, state: dict[str, object]) -> None:
        _check_layout(state, "sample")
        self.__dict__.update(state)

    def _take(self, field: Field, ids: Sequence[int], taken: dict[str, list[Any]]) -> list[Any]:
        """The values of `field` for samples `ids`, in order, read column by column (`taken`: the fields read so far)."""
        kind, column, values = field.kind, getattr(self, field.name), self.strings.values
        if isinstance(kind, Hash):
            return [format(column[i], SHA_PREFIX_FORMAT) for i in ids]
        if isinstance(kind, Text):
            return cast(list[Any], column.take(ids))
        if isinstance(kind, Interned):
            return _optional(values, column, ids) if field.optional else _named(values, column, ids)
        if isinstance(kind, Int64):
            return [None if (level := column[i]) == NO_LEVEL else level for i in ids]
        if isinstance(kind, Flag):
            return [bool(column[i]) for i in ids]
        if isinstance(kind, FileUrl):
            return [column.get(i) or blob_url(repo, path) for i, repo, path in zip(ids, taken["repo"], taken["path"], strict=True)]
        return [column[i] for i in ids]

    def shown(self, ids: Sequence[int]) -> Iterator[tuple[Any, ...]]:
        """The fields answers show of samples `ids` (`fields.SHOWN_SAMPLE_FIELDS`, in that order: a sample's repository
        group and its own fields, as `answers.shaping` groups them), read column by column: a page costs one
        comprehension a field, not a call a sample, and no row."""
        taken: dict[str, list[Any]] = {}
        for field in _SHOWN_SAMPLE_FIELDS:
            taken[field.name] = self._take(field, ids, taken)
        return zip(*taken.values(), strict=True)

    def rows(self, ids: Sequence[int]) -> list[SampleRow]:
        """Samples `ids` materialised (none negative)."""
        taken: dict[str, list[Any]] = {}
        for field in SAMPLE_FIELDS:
            taken[field.name] = self._take(field, ids, taken)
        return list(map(SampleRow._make, zip(*taken.values(), strict=True)))

    def __getitem__(self, i: int) -> SampleRow:
        return self.rows((i + len(self) if i < 0 else i,))[0]

    def __iter__(self) -> Iterator[SampleRow]:
        return (self[i] for i in range(len(self)))

    def status_of(self, i: int) -> str:
        return self.strings.values[self.status[i]]

    def select(self, ids: Sequence[int], statuses: Collection[str] | None, repo_kind: str | None) -> Sequence[int]:
        """The samples among `ids` with one of `statuses` and of `repo_kind` (None: any), in order; read from the
        columns, without building a row."""
        if statuses is None and repo_kind is None:
            return ids
        values, status, kind = self.strings.values, self.status, self.repo_kind
        return [
            i for i in ids if (statuses is None or values[status[i]] in statuses) and (repo_kind is None or values[kind[i]] == repo_kind)
        ]

    def counts(self, ids: Sequence[int]) -> dict[str, Any]:
        """How many of these samples there are (`total`), by status and by repo kind (`by_status`, `by_repo_kind`,
        each in first-seen order), and how many are pointer-only (`pointer_only`): the fields of the answers'
        `SampleCounts`, which declares them. Read from the columns, without building a row."""
        # C-level passes (a paper's samples are a range: slices of the columns), one step a distinct value: this
        # runs on the event loop for get_paper and get_harvested_code_for_paper.
        values = self.strings.values
        if isinstance(ids, range) and ids.step == 1:
            statuses, kinds, inline = (
                self.status[ids.start : ids.stop],
                self.repo_kind[ids.start : ids.stop],
                self.inline_ok[ids.start : ids.stop],
            )
        else:
            statuses, kinds = array("i", [self.status[i] for i in ids]), array("i", [self.repo_kind[i] for i in ids])
            inline = bytearray(self.inline_ok[i] for i in ids)
        return {
            "total": len(ids),
            "by_status": {values[status]: statuses.count(status) for status in dict.fromkeys(statuses)},
            "by_repo_kind": {values[kind]: kinds.count(kind) for kind in dict.fromkeys(kinds)},
            "pointer_only": inline.count(0),
        }
