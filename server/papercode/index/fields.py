"""A paper's and a sample's fields, declared once: how the index stores each, how its value is read from a record and
from an archive row, and whether answers show it as stored.

The declaration is three classes, a field a line: `PaperRow` (a paper as a query reads it), `PaperDetails` (its
display details, kept as one JSON blob a paper) and `SampleRow` (a sample). A field's type is its value's; the
metadata in its annotation is its kind, which says how it is stored (`Text`, `Interned`, `Int32`, `Int64`, `Hash`,
`Flag`, `Details`, `SampleIds`, `FileUrl`; `Ordinal`: a row's own place; `Detail`: in the details), with its readers:
`record`, of a record (`RecordData`; a sample's, `SampleData`), and `row`, of an archive row (the record-shaped dict
`papercode archive build` makes of it, `archive.rows`); a paper's readers take a `PaperSource`. Everything else is
made from them, in order:

- the columns (`columns.PaperColumns`, `columns.SampleColumns`): a column a field (a paper's samples: `start` and
  `end`), and a row read from them in one step;
- the records' build (`ingest.builder`): each field read from a record, or copied in bulk from the other process's part;
- the archive's build and its reader (`archive.serving`, `mapped_archive.MappedArchive`): a paper field with a `row`
  reader is a file of the build's `papers/` directory, as `index.mapped` writes it: `<name>` packed strings (`Text`),
  `<name>.i` int32 (`Int32`, `NONE`: none), `blob` packed bytes (`Details`); a field without one is the same for every
  archive paper: none, or the build's data date (`Interned(data_date=True)`); archive papers have no samples;
- the snapshot: the columns as they are, refused when written for another declaration (`LAYOUT`);
- the answers: get_paper shows each field marked `shown` as stored, under its name (`answers.shaping`), where its
  answer model (`answers.models.PaperAnswer`) places it; `SampleColumns.shown` reads the sample fields marked `shown`,
  in this order, for `answers.shaping.grouped_samples`. The others are shown by rules of the answers' own (a title
  cut, authors and links cut and counted, tasks merged, samples counted).

Adding a field is a line here; a field get_paper shows is a line of its answer model too (the model the client sees
orders and describes it), and a sample field marked `shown` a name in `grouped_samples` (each refused at import until
it is); a snapshot written before it is refused, and rebuilt; an archive build without a new column of its is of
another format: refused, with the command that rebuilds it.
"""

# No `from __future__ import annotations`: the annotations are the declaration, read as written (`get_type_hints`).

import hashlib
import linecache
import operator
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, NamedTuple, TypeVar, Union, cast, get_args, get_origin, get_type_hints

import msgspec
import msgspec.inspect

from papercode.core.days import year_of
from papercode.core.ids import paper_key, repo_key
from papercode.core.records import OFFICIAL_KIND, RecordData

NONE = -1  # "no value" in a column of string ids or int32s
NO_LEVEL = -(2**63)  # "no value" in the verification level column (records.LEVEL_MIN is above it)

Json = dict[str, Any]
Source = TypeVar("Source")


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


def link_row(
    url: str, official: bool, mentioned: bool | None, framework: str | None, *, reach: str | None = None, licence: str | None = None
) -> CodeLinkRow:
    """A code link as the details blob keeps it (its repository key worked out here)."""
    return CodeLinkRow(repo_key(url), url, official, mentioned, framework, reach, licence)


class PaperSource(NamedTuple, Generic[Source]):
    """What a paper's fields are read from: its record (a `RecordData`, or the dict an archive build makes of a row)
    and what its builder worked out of it first."""

    record: Source
    arxiv_id: str | None  # as admitted
    slug: str | None  # as admitted (None: another paper has it)
    links: list[CodeLinkRow]  # its code links, in their order (`columns.ordered_links`)
    samples: range  # its samples' ids (an archive paper has none)


RecordSource = PaperSource[RecordData]
RowSource = PaperSource[Json]


# -- the kinds: how a field is stored ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Kind:
    """A field's kind, with its readers: `record` (None: the builder sets it) and `row` (a paper's, of an archive row;
    None: the archive's build does not keep it); `shown`: answers show it as stored (see the module docstring)."""

    record: Callable[[Any], Any] | None = None
    row: Callable[[RowSource], Any] | None = None
    shown: bool = False


class Ordinal(Kind):
    """A paper's number in the index: its place, not stored."""


class Text(Kind):
    """Text, packed (`packed.PackedStrings`; a paper's: a list while the index is built)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Interned(Kind):
    """Text of few distinct values: an int32 id into the index's string table (`NONE`: none). Not in the archive's
    build: an archive paper's is none, or with `data_date` the build's data date."""

    data_date: bool = False


class Int32(Kind):
    """An int32 (`NONE`: none)."""


class Int64(Kind):
    """An int64 (`NO_LEVEL`: none)."""


class Hash(Kind):
    """A code hash: its hex digits as one uint64."""


class Flag(Kind):
    """A boolean, a byte."""


class Details(Kind):
    """The display details (`PaperDetails`), one compact JSON blob a paper; read from the details' own readers."""


class Detail(Kind):
    """A field of the display details (`PaperDetails`), kept in its paper's blob."""


class SampleIds(Kind):
    """A paper's samples: ids start..end-1 (the `start` and `end` columns), in its default order."""


class FileUrl(Kind):
    """A sample's file URL, kept only where it is not the usual one (`blob_url` of its repository and path)."""


# -- readers -------------------------------------------------------------------------------------


def _attribute(name: str) -> Callable[[RecordSource], Any]:
    return operator.attrgetter(f"record.{name}")


def _key(name: str) -> Callable[[RowSource], Any]:
    return lambda source: source.record.get(name)


def _list_attribute(name: str) -> Callable[[RecordSource], list[Any]]:
    read = _attribute(name)
    return lambda source: read(source) or []


def _list_key(name: str) -> Callable[[RowSource], list[Any]]:
    return lambda source: source.record.get(name) or []


def _count_attribute(name: str) -> Callable[[RecordSource], int]:
    read = _attribute(name)
    return lambda source: len(read(source) or ())


def _count_key(name: str) -> Callable[[RowSource], int]:
    return lambda source: len(source.record.get(name) or ())


def _harvest(name: str) -> Callable[[RecordSource], Any]:
    read = operator.attrgetter(name)

    def read_harvest(source: RecordSource) -> Any:
        harvest = source.record.syntology
        return None if harvest is None else read(harvest)

    return read_harvest


def _record_snapshot(source: RecordSource) -> str | None:
    where = source.record.source
    return None if where is None else where.snapshot


def _record_tasks(source: RecordSource) -> list[tuple[str, str]]:
    return [(task.task_slug, task.task_name or task.task_slug) for task in source.record.tasks or ()]


def _row_tasks(source: RowSource) -> list[tuple[str, str]]:
    return [(task["task_slug"], task.get("task_name") or task["task_slug"]) for task in source.record.get("tasks") or ()]


def _record_methods(source: RecordSource) -> list[str]:
    return [method.method_name for method in source.record.methods or ()]


def _row_methods(source: RowSource) -> list[str]:
    return [method["method_name"] for method in source.record.get("methods") or ()]


def _record_year(source: RecordSource) -> int | None:
    return year_of(source.record.date)


def _row_year(source: RowSource) -> int | None:
    return year_of(source.record.get("date"))


_ARXIV_ID, _SLUG, _LINKS = (operator.attrgetter(name) for name in ("arxiv_id", "slug", "links"))


# -- the declaration -----------------------------------------------------------------------------


class PaperRow(NamedTuple):
    """One paper, materialised from the paper columns when a query needs it: a tuple, built in one step (a frozen
    dataclass sets each field by a call of its own, a cost get_paper's lookup would pay on every call)."""

    ordinal: Annotated[int, Ordinal()]
    arxiv_id: Annotated[str | None, Text(record=_ARXIV_ID, row=_ARXIV_ID)]
    slug: Annotated[str | None, Text(record=_SLUG, row=_SLUG)]
    title: Annotated[str, Text(record=_attribute("title"), row=_key("title"))]
    date: Annotated[str | None, Text(record=_attribute("date"), row=_key("date"), shown=True)]
    year: Annotated[int | None, Int32(record=_record_year, row=_row_year)]
    url_abs: Annotated[str | None, Text(record=_attribute("url_abs"), row=_key("url_abs"), shown=True)]
    snapshot: Annotated[str | None, Interned(record=_record_snapshot, data_date=True, shown=True)]
    read_at: Annotated[str | None, Text(record=_harvest("read_at"), shown=True)]
    claim: Annotated[str | None, Interned(record=_harvest("claim"), shown=True)]
    n_authors: Annotated[int, Int32(record=_count_attribute("authors"), row=_count_key("authors"), shown=True)]
    samples: Annotated[range, SampleIds(record=operator.attrgetter("samples"))]
    blob: Annotated[bytes, Details()]

    @property
    def key(self) -> str:
        """The id agents use: the arXiv id, else the slug."""
        return paper_key(self.arxiv_id, self.slug)

    def details(self) -> "PaperDetails":
        """Display fields; the abstract is kept once, by the search engine's full text."""
        return _DETAILS_DECODER.decode(self.blob)


class PaperDetails(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """A paper's display fields, kept as one compact JSON blob per paper (`PaperRow.blob`; `PaperRow.details` reads
    it back): short keys, in this order, a field at its default left out (its bytes are a format: snapshots and every
    archive build hold them). A field added here takes a default, so that blobs written before it read back."""

    authors: Annotated[list[str], Detail(record=_list_attribute("authors"), row=_list_key("authors"))] = msgspec.field(name="a")
    tasks: Annotated[list[tuple[str, str]], Detail(record=_record_tasks, row=_row_tasks)] = msgspec.field(name="t")  # (slug, name)
    methods: Annotated[list[str], Detail(record=_record_methods, row=_row_methods)] = msgspec.field(name="m")
    code_links: Annotated[list[CodeLinkRow], Detail(record=_LINKS, row=_LINKS)] = msgspec.field(name="l")
    proceeding: Annotated[str | None, Detail(record=_attribute("proceeding"), row=_key("proceeding"), shown=True)] = msgspec.field(
        default=None, name="p"
    )
    url_pdf: Annotated[str | None, Detail(record=_attribute("url_pdf"), row=_key("url_pdf"), shown=True)] = msgspec.field(
        default=None, name="pdf"
    )


class SampleRow(NamedTuple):
    """One sample, materialised from the columns when a query needs it: a tuple, built in one step (pages of
    them are built per call; a frozen dataclass sets each field by a call of its own)."""

    code_sha256: Annotated[str, Hash(record=operator.attrgetter("code_sha256_prefix"), shown=True)]
    entry: Annotated[str, Text(record=operator.attrgetter("entry"), shown=True)]
    repo: Annotated[str, Interned(record=operator.attrgetter("repo"), shown=True)]
    repo_kind: Annotated[str, Interned(record=operator.attrgetter("repo_kind"), shown=True)]
    path: Annotated[str, Text(record=operator.attrgetter("path"), shown=True)]
    language: Annotated[str | None, Interned(record=operator.attrgetter("language"), shown=True)]
    status: Annotated[str, Interned(record=operator.attrgetter("status"), shown=True)]
    contract_check: Annotated[str | None, Interned(record=operator.attrgetter("contract_check"), shown=True)]
    verification_level: Annotated[int | None, Int64(record=operator.attrgetter("verification_level"), shown=True)]
    licence: Annotated[str | None, Interned(record=operator.attrgetter("licence"), shown=True)]
    inline_ok: Annotated[bool, Flag(record=operator.attrgetter("inline_ok"), shown=True)]
    paper: Annotated[int, Int32()]  # its paper's ordinal (the builder's)
    file_url: Annotated[str, FileUrl(record=operator.attrgetter("file_url"))]

    @property
    def is_official(self) -> bool:
        return self.repo_kind == OFFICIAL_KIND


_DETAILS_DECODER = msgspec.json.Decoder(PaperDetails)
_DETAILS_ENCODER = msgspec.json.Encoder()


# -- what the declaration gives --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Field:
    """One declared field: its name, its kind (with its readers) and whether it may be none."""

    name: str
    kind: Kind
    optional: bool

    @property
    def in_archive(self) -> bool:
        """Whether the archive's build keeps it (a file of `papers/`)."""
        return self.kind.row is not None or isinstance(self.kind, Details)


def _declared(declaration: type) -> tuple[Field, ...]:
    """The fields of a declaring class, in order, from their annotations."""
    declared = []
    for name, hint in get_type_hints(declaration, include_extras=True).items():
        if get_origin(hint) is not Annotated:
            raise TypeError(f"{declaration.__name__}.{name} has no kind in its annotation")
        value, *metadata = get_args(hint)
        kinds = [item for item in metadata if isinstance(item, Kind)]
        if len(kinds) != 1:
            raise TypeError(f"{declaration.__name__}.{name} must have exactly one kind")
        optional = get_origin(value) in (Union, types.UnionType) and type(None) in get_args(value)
        declared.append(Field(name, kinds[0], optional))
    return tuple(declared)


PAPER_FIELDS: tuple[Field, ...] = _declared(PaperRow)
DETAIL_FIELDS: tuple[Field, ...] = _declared(PaperDetails)
SAMPLE_FIELDS: tuple[Field, ...] = _declared(SampleRow)
SHOWN_SAMPLE_FIELDS: tuple[str, ...] = tuple(field.name for field in SAMPLE_FIELDS if field.kind.shown)
SAMPLE_STARTS, SAMPLE_ENDS = "start", "end"  # the columns of a `SampleIds` field


def paper_columns() -> tuple[str, ...]:
    """The paper columns' names, in the declaration's order (a `SampleIds` field: two)."""
    return tuple(
        name
        for field in PAPER_FIELDS
        if not isinstance(field.kind, Ordinal)
        for name in ((SAMPLE_STARTS, SAMPLE_ENDS) if isinstance(field.kind, SampleIds) else (field.name,))
    )


def readers(fields: tuple[Field, ...], of: str) -> tuple[Callable[[Any], Any], ...]:
    """The `record` or `row` reader (`of`) of each of `fields`; every one must have it."""
    found = tuple(getattr(field.kind, of) for field in fields)
    missing = [field.name for field, read in zip(fields, found, strict=True) if read is None]
    if missing:
        raise TypeError(f"{', '.join(missing)}: no {of} reader")
    return found


def _details_reader(of: str) -> Callable[[Any], PaperDetails]:
    """A paper's details, each field read by its `of` reader: generated (`generated`), a call a field and no loop, as
    this runs once a record and once an archive paper."""
    namespace: dict[str, Any] = {f"read_{field.name}": read for field, read in zip(DETAIL_FIELDS, readers(DETAIL_FIELDS, of), strict=True)}
    calls = ", ".join(f"read_{field.name}(source)" for field in DETAIL_FIELDS)
    return generated(f"def details_of_{of}(source):\n    return PaperDetails({calls})\n", {**namespace, "PaperDetails": PaperDetails})


def details_blob(details: PaperDetails) -> bytes:
    """A paper's display details as one compact JSON blob (`PaperRow.details` reads it back)."""
    # A copy of its own size: the encoder's bytes keep the spare room of the buffer it wrote into, and an index holds
    # one blob per paper.
    return memoryview(_DETAILS_ENCODER.encode(details)).tobytes()


def generated(source: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """The one function `source` defines, compiled with the names of `namespace`: how a fast path is made from the
    declaration (as `collections.namedtuple` makes its methods), its source written from the fields alone. Its source
    is kept where tracebacks and debuggers look (`linecache`, under `<papercode generated NAME>`) and on the function
    (`__source__`), so what runs can be read."""
    defined: dict[str, Any] = dict(namespace)
    name = source.split("(", 1)[0].removeprefix("def ").strip()
    filename = f"<papercode generated {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), defined)
    (function,) = (value for key, value in defined.items() if key not in namespace and key != "__builtins__")
    function.__source__ = source
    return cast(Callable[..., Any], function)


details_of_record: Callable[[RecordSource], PaperDetails] = _details_reader("record")  # a record's details
details_of_row: Callable[[RowSource], PaperDetails] = _details_reader("row")  # an archive row's details


def _layout() -> str:
    """What a snapshot's columns must have been written for: every field's name, kind and whether it may be none, and
    how the details blob writes each of its fields (its key, and whether it has a default)."""
    described = [
        f"{declaration}.{field.name}:{type(field.kind).__name__}:{field.optional}:{field.in_archive}"
        for declaration, fields in (("paper", PAPER_FIELDS), ("details", DETAIL_FIELDS), ("sample", SAMPLE_FIELDS))
        for field in fields
    ]
    described += [f"blob.{name}:{key}:{default is not msgspec.NODEFAULT}" for name, key, default in _details_wire()]
    return hashlib.sha256("\n".join(described).encode()).hexdigest()[:16]


# The details every blob holds, those of the archive's format 2 and every snapshot: any other takes a default, so that
# blobs written before it was declared read back (without it).
_DETAILS_ALWAYS_WRITTEN = ("authors", "tasks", "methods", "code_links")


def _details_wire(declaration: type[msgspec.Struct] = PaperDetails) -> list[tuple[str, str, object]]:
    """Each details field's name, its key in the blob and its default (`TypeError` if one of those that must have a
    default has none)."""
    info = msgspec.inspect.type_info(declaration)
    assert isinstance(info, msgspec.inspect.StructType)
    wire = [(field.name, field.encode_name, field.default) for field in info.fields]
    required = tuple(name for name, _, default in wire if default is msgspec.NODEFAULT)
    if required != _DETAILS_ALWAYS_WRITTEN:
        raise TypeError(
            f"PaperDetails fields without a default must be {_DETAILS_ALWAYS_WRITTEN}, not {required}: give a new one a default"
        )
    return wire


LAYOUT = _layout()
