"""The index's storage: papers and samples as columns, materialised into rows only when a query reads them.

Samples live in arrays of small ints into one string table; papers keep only what lists and
lookups need, and each paper's display details (authors, links, tasks, methods) sit in one
compact JSON blob decoded on demand. Columns of plain ints and strings restore from a snapshot
far faster than objects do (strings are packed into one buffer there: see `packed`).
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Collection, Iterator, Sequence
from typing import Any, NamedTuple, cast

import msgspec

from papercode.core.ids import GITHUB_URL, SHA_PREFIX_FORMAT, paper_key, repo_key
from papercode.core.records import OFFICIAL_KIND

from .packed import PackedBytes, PackedStrings

NONE = -1  # "no value" in a column of string ids or years
NO_LEVEL = -(2**63)  # "no value" in the verification level column (records.LEVEL_MIN is above it)


class SampleRow(NamedTuple):
    """One sample, materialised from the columns when a query needs it: a tuple, built in one step (pages of
    them are built per call; a frozen dataclass sets each field by a call of its own)."""

    code_sha256: str
    entry: str
    repo: str
    repo_kind: str
    path: str
    language: str | None
    status: str
    contract_check: str | None
    verification_level: int | None
    licence: str | None
    inline_ok: bool
    paper: int
    file_url: str

    @property
    def is_official(self) -> bool:
        return self.repo_kind == OFFICIAL_KIND


class CodeLinkRow(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """A paper's code link: as answers read it, and as the details blob keeps it (a JSON array of these fields, in this
    order: its bytes are those every build, the archive's included, has written)."""

    repo: str | None  # normalised owner/name when the URL is a GitHub repository
    repo_url: str
    is_official: bool
    mentioned_in_paper: bool | None
    framework: str | None
    reach_status: str | None
    licence: str | None


_LAST = operator.itemgetter(-1)


def link_row(
    url: str, official: bool, mentioned: bool | None, framework: str | None, *, reach: str | None = None, licence: str | None = None
) -> CodeLinkRow:
    """A code link as the details blob keeps it (its repository key worked out here)."""
    return CodeLinkRow(repo_key(url), url, official, mentioned, framework, reach, licence)


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


class PaperDetails(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A paper's display fields, kept as one compact JSON blob per paper (`details_blob`; `PaperRow.details` reads it
    back): short keys, and no `p` or `pdf` when there is none."""

    authors: list[str] = msgspec.field(name="a")
    tasks: list[tuple[str, str]] = msgspec.field(name="t")  # (slug, name)
    methods: list[str] = msgspec.field(name="m")
    code_links: list[CodeLinkRow] = msgspec.field(name="l")
    proceeding: str | None = msgspec.field(default=None, name="p")
    url_pdf: str | None = msgspec.field(default=None, name="pdf")


_DETAILS_ENCODER = msgspec.json.Encoder()
_DETAILS_DECODER = msgspec.json.Decoder(PaperDetails)


def details_blob(
    *,
    authors: list[str],
    tasks: list[tuple[str, str]],
    methods: list[str],
    links: list[CodeLinkRow],
    proceeding: str | None,
    url_pdf: str | None,
) -> bytes:
    """A paper's display details as one compact JSON blob (`PaperRow.details` reads it back)."""
    details = PaperDetails(authors, tasks, methods, links, proceeding, url_pdf)
    # A copy of its own size: the encoder's bytes keep the spare room of the buffer it wrote into, and an index holds
    # one blob per paper.
    return memoryview(_DETAILS_ENCODER.encode(details)).tobytes()


class PaperRow(NamedTuple):
    """One paper, materialised from the paper columns when a query needs it: a tuple, built in one step (a frozen
    dataclass sets each of its 13 fields by a call of its own, a cost get_paper's lookup would pay on every call)."""

    ordinal: int
    arxiv_id: str | None
    slug: str | None
    title: str
    date: str | None
    year: int | None
    url_abs: str | None
    snapshot: str | None
    read_at: str | None
    claim: str | None
    n_authors: int
    samples: range  # sample ids, in the paper's default order
    blob: bytes

    @property
    def key(self) -> str:
        """The id agents use: the arXiv id, else the slug."""
        return paper_key(self.arxiv_id, self.slug)

    def details(self) -> PaperDetails:
        """Display fields; the abstract is kept once, by the search engine's full text."""
        return _DETAILS_DECODER.decode(self.blob)


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


class PaperColumns:
    """Every paper, one list or array per field; `papers[i]` materialises paper i."""

    _PACKED = ("arxiv_id", "slug", "title", "date", "url_abs", "read_at")

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        # Lists while the index is built; packed once it is (see `pack`) and in a snapshot.
        self.arxiv_id: Sequence[str | None] = []
        self.slug: Sequence[str | None] = []
        self.title: Sequence[str] = []
        self.date: Sequence[str | None] = []
        self.url_abs: Sequence[str | None] = []
        self.read_at: Sequence[str | None] = []
        self.blob: Sequence[bytes] = []
        self.snapshot = array("i")
        self.claim = array("i")
        self.year = array("i")
        self.n_authors = array("i")
        self.start = array("i")  # paper i's samples are ids start[i]..end[i]-1
        self.end = array("i")

    def __len__(self) -> int:
        return len(self.title)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        for name in self._PACKED:
            state[name] = _packed_strings(state[name])
        state["blob"] = self.blob if isinstance(self.blob, PackedBytes) else PackedBytes(self.blob)
        return state

    def pack(self) -> None:
        """Hold the string and blob columns packed, as a restored snapshot holds them: the same values in about half
        the memory (a string object costs 49 bytes beyond its text), and a snapshot pickles them as they are. Once
        building is over; one column at a time, so that each list goes as its packed copy comes."""
        for name in self._PACKED:
            setattr(self, name, _packed_strings(getattr(self, name)))
        if not isinstance(self.blob, PackedBytes):
            self.blob = PackedBytes(self.blob)

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    def __getitem__(self, i: int) -> PaperRow:
        if i < 0:
            i += len(self)
        values = self.strings.values
        year = self.year[i]
        return PaperRow(  # positional, in PaperRow's field order
            i,  # ordinal
            self.arxiv_id[i],
            self.slug[i],
            self.title[i],
            self.date[i],
            None if year == NONE else year,
            self.url_abs[i],
            text(values, self.snapshot[i]),  # snapshot
            self.read_at[i],
            text(values, self.claim[i]),  # claim
            self.n_authors[i],
            range(self.start[i], self.end[i]),  # samples
            self.blob[i],
        )

    def __iter__(self) -> Iterator[PaperRow]:
        return (self[i] for i in range(len(self)))

    def key(self, i: int) -> str:
        return paper_key(self.arxiv_id[i], self.slug[i])


def _packed_strings(values: Sequence[str | None]) -> PackedStrings:
    return values if isinstance(values, PackedStrings) else PackedStrings(values)


class SampleColumns:
    """Every sample, one array per field; `columns[i]` materialises sample i.

    Entries and paths are nearly all distinct, so they are packed (interning them would cost a
    table entry each for nothing, and a string object each costs three times its text); the
    other strings are ids into the table.
    """

    def __init__(self, strings: StringTable) -> None:
        self.strings = strings
        self.sha = array("Q")  # the code hash (`SHA_PREFIX_LENGTH` hex characters: 64 bits) as an int
        self.entry = PackedStrings(())
        self.repo = array("i")
        self.repo_kind = array("i")
        self.path = PackedStrings(())
        self.language = array("i")
        self.status = array("i")
        self.contract_check = array("i")
        self.verification_level = array("q")
        self.licence = array("i")
        self.inline_ok = bytearray()
        self.paper = array("i")
        self.file_url: dict[int, str] = {}  # only where it is not the usual blob/HEAD URL

    def __len__(self) -> int:
        return len(self.paper)

    def __getstate__(self) -> dict[str, object]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    def shown(self, ids: Sequence[int]) -> Iterator[tuple[Any, ...]]:
        """The fields answers show of samples `ids` (`SampleRow`'s first eleven: a sample's repository group and its own
        fields, as `answers.shaping` groups them), in order, read column by column: a page costs one comprehension a
        field, not a call a sample, and no row."""
        values, levels, inline = self.strings.values, self.verification_level, self.inline_ok
        return zip(
            [format(self.sha[i], SHA_PREFIX_FORMAT) for i in ids],  # code_sha256
            self.entry.take(ids),
            _named(values, self.repo, ids),
            _named(values, self.repo_kind, ids),
            self.path.take(ids),
            _optional(values, self.language, ids),
            _named(values, self.status, ids),
            _optional(values, self.contract_check, ids),
            [None if (level := levels[i]) == NO_LEVEL else level for i in ids],
            _optional(values, self.licence, ids),
            [bool(inline[i]) for i in ids],
            strict=True,
        )

    def rows(self, ids: Sequence[int]) -> list[SampleRow]:
        """Samples `ids` materialised (none negative)."""
        urls, paper = self.file_url, self.paper
        return [
            SampleRow._make((*shown, paper[i], urls.get(i) or blob_url(shown[2], shown[4])))
            for i, shown in zip(ids, self.shown(ids), strict=True)
        ]

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
