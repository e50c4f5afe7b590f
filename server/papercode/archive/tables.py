"""The archive's source files: find them, tell which table each holds, and read it in batches of row tuples.

A source is a parquet file (the Hugging Face mirror, or a copy made through pandas) or a JSON dump (one array
of row objects, optionally gzipped). Which table a file holds is decided by its columns (a JSON dump: its first
row's keys), never by its name; unknown columns are ignored. Every problem with a file is a `BadInput` naming
it. pyarrow is imported only when a parquet file is met (`MissingDependency` without it).

Readers yield `Batch`es of named rows (`rows.PapersTableRow`, `rows.LinksTableRow`), so the build has one loop for
both forms. From parquet only the columns the records use are read, and of `methods`
only the `name` leaf (the long descriptions are most of those files' bytes and are never decoded); a JSON dump
is read a piece of about 16 MiB at a time (`dumps`), never whole, each row decoded into a struct of those
columns alone (of `methods` the names alone). Tasks and methods arrive already turned into their shared record
entries, sorted by name, each once.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any, Final, Generic, Literal, TypeVar

import msgspec

from .dumps import (
    EXPANSION,
    PIECE_BYTES,
    Decode,
    DumpError,
    Expansion,
    array_pieces,
    check_expansion,
    cut_deep,
    deepest,
    gunzipped_chunks,
    plain_chunks,
)
from .rows import LICENCE, Json, LinksTableRow, PapersTableRow, Vocabulary

Row = TypeVar("Row", PapersTableRow, LinksTableRow)
Table = Literal["papers", "links", "evaluations", "methods", "datasets"]
# The tables of results and the catalogues beside them (`archive.catalogues` reads them), read after the papers.
CATALOGUE_TABLES: Final = ("evaluations", "methods", "datasets")
Form = Literal["parquet", "json", "json.gz"]

PAPER_COLUMNS: Final = PapersTableRow.__struct_fields__
PAPER_REQUIRED: Final = ("paper_url", "title")
LINK_COLUMNS: Final = LinksTableRow.__struct_fields__
LINK_REQUIRED: Final = ("paper_url", "repo_url")
# A column only one table has: how a file is told apart (links first: its rows carry `paper_title`, not `title`).
_LINK_MARKS: Final = frozenset({"repo_url", "is_official", "mentioned_in_paper", "mentioned_in_github", "paper_title"})
_PAPER_MARKS: Final = frozenset({"title", "abstract", "short_abstract", "authors", "arxiv_id", "tasks", "methods", "url_abs", "url_pdf"})
# The catalogue tables, told apart by columns only they have (checked before the papers': a datasets table has `tasks`).
_CATALOGUE_MARKS: Final[tuple[tuple[Table, frozenset[str], tuple[str, ...]], ...]] = (
    ("evaluations", frozenset({"subtasks", "source_link", "synonyms", "categories"}), ("task", "datasets")),
    ("methods", frozenset({"collections", "introduced_year", "code_snippet_url"}), ("name",)),
    ("datasets", frozenset({"modalities", "homepage", "variants", "languages", "data_loaders"}), ("name",)),
)
_KINDS: Final[dict[Table, str]] = {
    "papers": "papers-with-abstracts",
    "links": "links-between-papers-and-code",
    "evaluations": "evaluation-tables",
    "methods": "methods",
    "datasets": "datasets",
}

SUFFIXES: Final = (".parquet", ".json", ".json.gz")
INSTALL_HINT: Final = "pip install 'papercode[archive]'"
BATCH_ROWS: Final = 16_384
# A parquet file may hold this many rows whatever its size; past them, at most one row per byte of the file. A real
# table holds a row in a hundred bytes or more (its paper_url, at least, differs from row to row); a file of one row
# run-length encoded millions of times holds thousands of rows a byte, and its build would take hours.
PARQUET_ROWS_FLOOR: Final = 1 << 20
PARQUET_ROWS_PER_BYTE: Final = 1
_PEEK_FIRST, _PEEK_MOST = 1 << 16, 1 << 28
_HUB_COMMIT = re.compile(r"[0-9a-f]{40}")
_BOM = b"\xef\xbb\xbf"

CUT_DEPTH: Final = 200  # a catalogue table's JSON nested deeper than this is cut before it is decoded (parsers stop near 1,000)
# A JSON dump's row that is not an object: its row carries this as `paper_url`, so the build can say so.
NOT_AN_OBJECT: Final = object()


class BadInput(Exception):
    """A source the build cannot use: `path: problem`, one line."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


class MissingDependency(Exception):
    """An optional dependency of `papercode archive` is not installed."""

    def __init__(self, module: str, purpose: str) -> None:
        super().__init__(f"{purpose} needs {module}, which is not installed. Next: {INSTALL_HINT}")
        self.module = module


@dataclass(slots=True)
class TableFile:
    """One source file, classified. `dataset`/`commit` are known for a file in a Hugging Face cache snapshot."""

    path: Path
    form: Form
    table: Table
    size: int
    mtime: float
    columns: tuple[str, ...]
    rows: int | None = None  # parquet: from its footer; a JSON dump: once read
    dataset: str | None = None
    commit: str | None = None
    commit_date: str | None = None

    @property
    def label(self) -> str:
        """The record's `source.archive`: which dataset or file the row came from, and the licence."""
        if self.dataset:
            return f"{self.dataset} (Hugging Face), {LICENCE}"
        parent = self.path.parent
        name = parent.parent.name if parent.name == "data" and parent.parent.name else self.path.name
        return f"{name} (Papers with Code archive, local copy), {LICENCE}"


@dataclass(slots=True)
class Batch(Generic[Row]):
    """Rows `first`..`first + count - 1` (0-based) of a file."""

    rows: Iterable[Row]
    count: int
    first: int
    share: float  # of the file read once this batch is done


# -- finding -------------------------------------------------------------------------------


def find_sources(paths: Sequence[Path], skip: Sequence[Path] = ()) -> list[Path]:
    """Every source file the arguments name: files as given, directories searched (hidden names skipped,
    and the directories in `skip`: the archive being built, when it lies inside a source directory).

    In a Hugging Face cache repository folder only the snapshot `refs/main` names is read. A file reached
    twice is read once.
    """
    found: list[Path] = []
    seen: set[str] = set()
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise BadInput(path, _cannot_reach(exc)) from None
        if stat.S_ISDIR(mode):
            listed = sorted(_walk(path, {os.path.realpath(directory) for directory in skip}))
            if not listed:
                raise BadInput(path, f"no {', '.join(SUFFIXES)} files in this directory")
        elif stat.S_ISREG(mode):
            listed = [path]
        else:
            raise BadInput(path, "not a regular file or directory")
        for item in listed:
            real = os.path.realpath(item)
            if real not in seen:
                seen.add(real)
                found.append(item)
    return found


def _walk(directory: Path, seen: set[str] | None = None) -> Iterator[Path]:
    seen = set() if seen is None else seen
    real = os.path.realpath(directory)
    if real in seen:  # a directory reached again through a symlink (or a loop)
        return
    seen.add(real)
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError as exc:
        raise BadInput(directory, f"cannot list: {exc.strerror or exc}") from None
    names = {entry.name for entry in entries}
    if {"snapshots", "refs"} <= names and (directory / "refs" / "main").is_file():  # a Hugging Face cache repo folder
        refs_main = directory / "refs" / "main"
        try:
            commit = refs_main.read_text(encoding="ascii", errors="replace").strip()
        except OSError as exc:
            raise BadInput(refs_main, _cannot_reach(exc)) from None
        snapshot = directory / "snapshots" / commit
        if snapshot.is_dir():
            yield from _walk(snapshot, seen)
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:  # what a symbolic link leads to: a loop, or one that cannot be followed, is named, never guessed
            is_dir = entry.is_dir()
            is_source = not is_dir and entry.name.endswith(SUFFIXES) and entry.is_file()
        except OSError as exc:
            raise BadInput(entry.path, _cannot_reach(exc)) from None
        if is_dir:  # a symlinked directory is followed, once
            yield from _walk(Path(entry.path), seen)
        elif is_source:
            yield Path(entry.path)


def _cannot_reach(exc: OSError) -> str:
    """Why a source path cannot be read, as its error says (a missing file, a symbolic link loop, a permission)."""
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop (too many levels of symbolic links)"
    return f"cannot read: {exc.strerror or exc}"


def hub_origin(path: Path) -> tuple[str | None, str | None]:
    """(dataset id, commit) for a file inside a Hugging Face cache snapshot
    (`.../datasets--<owner>--<name>/snapshots/<commit>/...`), else (None, None)."""
    parts = Path(os.path.abspath(path)).parts
    for i, part in enumerate(parts[:-3]):
        if part.startswith("datasets--") and parts[i + 1] == "snapshots" and _HUB_COMMIT.fullmatch(parts[i + 2]):
            owner, sep, name = part.removeprefix("datasets--").partition("--")
            if sep and owner and name:
                return f"{owner}/{name}", parts[i + 2]
    return None, None


# -- classifying ---------------------------------------------------------------------------


def classify(path: Path) -> TableFile:
    """Which table `path` holds and in what form, from its first bytes and its columns. Reads a parquet
    footer or the start of a JSON dump, never the whole file. Raises `BadInput`, `MissingDependency`."""
    try:
        info = path.stat()
        with open(path, "rb") as stream:
            head = stream.read(64)
    except OSError as exc:
        raise BadInput(path, f"cannot read: {exc.strerror or exc}") from None
    if not head:
        raise BadInput(path, "empty file")
    form: Form
    hollow: frozenset[str] = frozenset()
    if head[:4] == b"PAR1":
        form = "parquet"
        columns, rows, hollow = _parquet_columns(path, info.st_size)
    elif head[:2] == b"\x1f\x8b":
        form = "json.gz"
        columns, rows = _json_columns(path, gzipped=True), None
    elif head.removeprefix(_BOM).lstrip(b" \t\r\n")[:1] in (b"[", b""):
        form = "json"
        columns, rows = _json_columns(path, gzipped=False), None
    else:
        raise BadInput(path, "not a parquet file, a JSON array or a gzipped JSON array")
    table = _table_of(path, columns, hollow)
    dataset, commit = hub_origin(path)
    return TableFile(path, form, table, info.st_size, info.st_mtime, columns, rows, dataset, commit)


def _table_of(path: Path, columns: tuple[str, ...], hollow: frozenset[str] = frozenset()) -> Table:
    """The table `columns` make (with repeats, in order), or `BadInput`: neither table, a required column missing or
    `hollow` (typed null: it holds nothing in any row), or a column the build reads given twice (which one is meant
    cannot be told; a repeated column the build ignores is ignored)."""
    names = set(columns)
    catalogue = next(((table, required) for table, marks, required in _CATALOGUE_MARKS if names & marks), None)
    if names & _LINK_MARKS:
        table: Table = "links"
        required: tuple[str, ...] = LINK_REQUIRED
        read: tuple[str, ...] = LINK_COLUMNS
    elif catalogue is not None:
        (table, required), read = catalogue, catalogue[1]
    elif names & _PAPER_MARKS:
        table, required, read = "papers", PAPER_REQUIRED, PAPER_COLUMNS
    else:
        shown = ", ".join(columns[:12]) + (", …" if len(columns) > 12 else "")
        raise BadInput(path, f"not one of the archive's tables: {', '.join(_KINDS.values())} (columns: {shown or 'none'})")
    kind = _KINDS[table]
    missing = [name for name in required if name not in names]
    if missing:
        raise BadInput(path, f"looks like a {kind} table but has no {' or '.join(repr(m) for m in missing)} column")
    if len(names) < len(columns):
        repeated = [name for name in read if columns.count(name) > 1]
        if repeated:
            raise BadInput(path, f"has the column {repeated[0]!r} {columns.count(repeated[0])} times: which one to read cannot be told")
    empty = [name for name in required if name in hollow]
    if empty:
        which = " and ".join(repr(name) for name in empty) + (" columns hold" if len(empty) > 1 else " column holds")
        raise BadInput(path, f"looks like a {kind} table but its {which} nothing (typed null: no value in any row)")
    return table


def _parquet_columns(path: Path, size: int) -> tuple[tuple[str, ...], int, frozenset[str]]:
    """(the column names, repeats included; the row count; the columns typed null) from the footer of a parquet file
    of `size` bytes, which must not hold more rows than `PARQUET_ROWS_FLOOR` and `PARQUET_ROWS_PER_BYTE` allow."""
    pa, _, pq = arrow()
    try:
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
        hollow = frozenset(field.name for field in schema if _holds_nothing(field.type))
        rows = int(parquet.metadata.num_rows)
    except (OSError, pa.ArrowException) as exc:
        raise BadInput(path, f"not a readable parquet file (truncated or corrupt?): {_one_line(exc)}") from None
    if rows > PARQUET_ROWS_FLOOR and rows > size * PARQUET_ROWS_PER_BYTE:
        raise BadInput(
            path,
            f"holds {rows:,} rows in {size:,} bytes, more than {PARQUET_ROWS_PER_BYTE} a byte past {PARQUET_ROWS_FLOOR:,} rows: "
            "refused as a decompression bomb (a real table holds a row in a hundred bytes or more)",
        )
    return tuple(schema.names), rows, hollow


def _holds_nothing(kind: Any) -> bool:
    """A column of this type is null in every row (pandas and pyarrow type a column of nothing but nulls so)."""
    pa, _, _ = arrow()
    return bool(pa.types.is_null(kind) or (pa.types.is_dictionary(kind) and pa.types.is_null(kind.value_type)))


class _Pairs(list[tuple[str, Any]]):
    """A JSON object's members in order, repeated keys kept (what `_json_columns` decodes objects into)."""


def _json_columns(path: Path, gzipped: bool) -> tuple[str, ...]:
    """The keys of a JSON dump's first row, repeats included, from the start of the file (a bigger start each time
    the row is cut). A key repeated in the first row is a repeated column (`_table_of` refuses it); within later rows
    a repeated key is read as JSON parsers read it, the last value winning: checking every row would cost every row."""
    size = _PEEK_FIRST
    while True:
        try:
            with gzip.open(path, "rb") if gzipped else open(path, "rb") as stream:
                prefix = stream.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            raise BadInput(path, _gzip_problem(exc)) from None
        whole = len(prefix) < size
        text = prefix.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
        if not text.startswith("["):
            raise BadInput(path, "not a JSON array of rows")
        body = text[1:].lstrip(" \t\r\n")
        if body.startswith("]"):
            raise BadInput(path, "an empty JSON array: no rows, so neither table")
        try:
            try:
                first, _ = json.JSONDecoder(object_pairs_hook=_Pairs).raw_decode(body)
            except RecursionError:
                # A catalogue table's row may nest past the parser (its subtasks): its reader cuts what is too deep.
                first = _cut_deep_row(body)
                if not _catalogue(tuple(key for key, _ in first)):
                    depth, at = deepest(prefix)  # the array's own level included
                    more = "" if whole else " or more"
                    raise BadInput(path, f"its first row is nested too deep to read: {depth - 1:,} levels{more} at byte {at:,}") from None
        except json.JSONDecodeError as exc:
            if whole:
                raise BadInput(path, f"not valid JSON: {exc}") from None
            if size >= _PEEK_MOST:
                raise BadInput(path, f"its first row is over {_PEEK_MOST:,} bytes") from None
            size *= 8
            continue
        if type(first) is not _Pairs:
            raise BadInput(path, "not a JSON array of row objects")
        return tuple(key for key, _ in first)


def _cut_deep_row(body: str) -> Any:
    """The first row of a dump's start (`body`), decoded with what is nested past `CUT_DEPTH` cut (`dumps.cut_deep`)."""
    data, _ = cut_deep(body.encode("utf-8", "surrogatepass"), CUT_DEPTH)
    first, _ = json.JSONDecoder(object_pairs_hook=_Pairs).raw_decode(data.decode("utf-8", "surrogatepass"))
    return first if type(first) is _Pairs else _Pairs()


def _catalogue(columns: tuple[str, ...]) -> bool:
    names = set(columns)
    return not names & _LINK_MARKS and any(names & marks for _, marks, _ in _CATALOGUE_MARKS)


def _gzip_problem(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "cut short: the gzip stream ends before its end marker (an interrupted download?)"
    if isinstance(exc, gzip.BadGzipFile | zlib.error):
        return f"not a valid gzip file: {_one_line(exc)}"
    return f"cannot read: {getattr(exc, 'strerror', None) or exc}"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:299] + "…"


def arrow() -> tuple[Any, Any, Any]:
    """(pyarrow, pyarrow.compute, pyarrow.parquet), imported on first use."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped,unused-ignore]
        import pyarrow.compute as pc  # type: ignore[import-untyped,unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependency("pyarrow", "reading parquet") from None
    return pa, pc, pq


# -- reading: JSON dumps -------------------------------------------------------------------


class _Named(msgspec.Struct, gc=False):
    """A method object of a papers row: only its `name` is decoded (its descriptions are skipped unread)."""

    name: Any = None


# A papers row as a dump is decoded: `PapersTableRow`'s columns, as given but for `methods`, of which the names alone
# are decoded (`_Named`); other keys are skipped.
_PaperDump: Any = msgspec.defstruct(
    "_PaperDump", [*((name, Any, None) for name in PAPER_COLUMNS[:-1]), ("methods", list[_Named | str] | None, None)], gc=False
)

_ANY_ROWS = msgspec.json.Decoder(list[Any])


def _lean_decoder(row: type[msgspec.Struct]) -> Decode:
    """Decode a piece of a dump into `row` structs; a piece with a row of another shape (a methods entry that is
    neither an object nor a name, a row that is not an object) is decoded as plain JSON instead."""
    lean = msgspec.json.Decoder(list[row]).decode  # type: ignore[valid-type]

    def decode(piece: memoryview) -> list[Any]:
        try:
            return lean(piece)
        except msgspec.ValidationError:
            return _ANY_ROWS.decode(piece)

    return decode


_DECODE_PAPERS: Final = _lean_decoder(_PaperDump)
_DECODE_LINKS: Final = _lean_decoder(LinksTableRow)


def json_batches(
    source: TableFile, vocab: Vocabulary | None, piece_bytes: int = PIECE_BYTES, expansion: Expansion = EXPANSION
) -> Iterator[Batch[Any]]:
    """A JSON dump's rows (`PapersTableRow`s with `vocab`, else `LinksTableRow`s), a piece of the file at a time
    (`dumps.array_pieces`): never the whole file in memory. With `vocab` (a papers table), tasks and methods become
    their record entries. A gzipped dump that expands past `expansion` is refused, before its
    rows are read when that shows within `expansion.floor` bytes. Sets `source.rows` once the file is read."""
    path = source.path
    decode = _DECODE_PAPERS if vocab is not None else _DECODE_LINKS
    size = max(source.size, 1)
    first = 0
    try:
        with open(path, "rb") as stream:
            if source.form == "json.gz":
                check_expansion(stream, expansion)
                stream.seek(0)
                chunks = gunzipped_chunks(stream, bound=expansion)
            else:
                chunks = plain_chunks(stream, min(piece_bytes, PIECE_BYTES))
            for rows in array_pieces(chunks, decode, first_key=source.columns[0] if source.columns else None, piece_bytes=piece_bytes):
                count = len(rows)
                named = _links_named(rows) if vocab is None else _papers_named(rows, vocab)
                del rows
                yield Batch(named, count, first, min(stream.tell() / size, 1.0))
                first += count
                del named
    except (OSError, EOFError, zlib.error) as exc:
        raise BadInput(path, _gzip_problem(exc)) from None
    except DumpError as exc:
        raise BadInput(path, str(exc)) from None
    source.rows = first


_NOT_A_PAPER: Final = PapersTableRow(NOT_AN_OBJECT)
_NOT_A_LINK: Final = LinksTableRow(NOT_AN_OBJECT)


def _links_named(rows: list[Any]) -> list[LinksTableRow]:
    """A piece's links rows: as decoded (`LinksTableRow`s), or, for a piece decoded as plain JSON, each made one."""
    if rows and type(rows[0]) is LinksTableRow:  # a piece is decoded lean whole, or not at all
        return rows
    return [LinksTableRow(*map(row.get, LINK_COLUMNS)) if type(row) is dict else _NOT_A_LINK for row in rows]


def _papers_named(rows: list[Any], vocab: Vocabulary) -> list[PapersTableRow]:
    return [_paper_named(row, vocab) for row in rows]


def _paper_named(row: Any, vocab: Vocabulary) -> PapersTableRow:
    if type(row) is _PaperDump:
        methods = row.methods
        names = [item.name if type(item) is _Named else item for item in methods] if methods else None
        return PapersTableRow(
            row.paper_url,
            row.title,
            row.arxiv_id,
            row.date,
            row.proceeding,
            row.authors,
            row.abstract,
            row.url_abs,
            row.url_pdf,
            vocab.tasks_of(row.tasks),
            vocab.methods_of(names),
        )
    if type(row) is dict:
        get = row.get
        given = {name: get(name) for name in PAPER_COLUMNS[:-2]}
        return PapersTableRow(**given, tasks=vocab.tasks_of(get("tasks")), methods=vocab.methods_of(get("methods")))
    return _NOT_A_PAPER


# -- reading: parquet ----------------------------------------------------------------------


def parquet_batches(source: TableFile, vocab: Vocabulary | None) -> Iterator[Batch[Any]]:
    """A parquet table's rows (`PapersTableRow`s with `vocab`, else `LinksTableRow`s), a batch at a time."""
    pa, _, pq = arrow()
    path = source.path
    wanted = PAPER_COLUMNS if vocab is not None else LINK_COLUMNS
    named = PapersTableRow if vocab is not None else LinksTableRow
    try:
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
        leaves = [parquet.schema.column(i).path for i in range(len(parquet.schema))]
        present = [name for name in wanted if name in schema.names]
        # Only the names of `tasks` and `methods` (a leaf path): never the methods' descriptions. (Not read as
        # dictionaries: a nested dictionary column fails once the writer fell back to plain encoding mid-chunk.)
        select = [
            _list_leaf(path, name, schema.field(name).type, leaves) or name if name in ("tasks", "methods") else name for name in present
        ]
        total, first = int(parquet.metadata.num_rows), 0
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=select):
            arrays = dict(zip(batch.schema.names, batch.columns, strict=True))
            count = batch.num_rows
            try:
                columns = [_column(path, name, arrays.get(name), vocab, count) for name in wanted]
            except UnicodeDecodeError:
                raise BadInput(path, _not_utf8(arrays, wanted, first)) from None
            yield Batch(map(named, *columns), count, first, (first + count) / max(total, 1))
            first += count
    except (OSError, pa.ArrowException) as exc:
        raise BadInput(path, f"cannot read the parquet data (truncated or corrupt?): {_one_line(exc)}") from None


def _list_leaf(path: Path, name: str, kind: Any, leaves: list[str]) -> str | None:
    """The parquet leaf to read for a list of names (`tasks`) or of `{name, ...}` structs (`methods`): the
    names alone. None for a list of plain strings read whole."""
    pa, _, _ = arrow()
    if _holds_nothing(kind):  # every value missing (pandas types such a column null)
        return None
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        raise BadInput(path, f"column {name!r} is {kind}, expected a list of names or of {{name, ...}} objects")
    item = kind.value_type
    if pa.types.is_null(item):  # every list empty (or null): any writer types such a column list<null>
        return None
    if pa.types.is_struct(item):
        named = len(item.get_all_field_indices("name"))
        if named != 1:
            problem = "without a 'name' field" if not named else f"with {named} 'name' fields"
            raise BadInput(path, f"column {name!r} is a list of objects {problem}")
        candidates = [leaf for leaf in leaves if leaf.split(".", 1)[0] == name and leaf.rsplit(".", 1)[-1] == "name"]
        return min(candidates, key=lambda leaf: leaf.count(".")) if candidates else None
    if _is_text(item):
        candidates = [leaf for leaf in leaves if leaf.split(".", 1)[0] == name]
        return candidates[0] if len(candidates) == 1 else None
    raise BadInput(path, f"column {name!r} is {kind}, expected a list of names or of {{name, ...}} objects")


def _is_text(kind: Any) -> bool:
    """Text in any of arrow's forms: string, large_string, string_view, or a dictionary of one of them."""
    pa, _, _ = arrow()
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind))


def _not_utf8(arrays: dict[str, Any], wanted: tuple[str, ...], first: int) -> str:
    """Where a batch's text is not UTF-8 (found value by value: only once the batch has failed), as the problem."""
    for name in wanted:
        array = arrays.get(name)
        if array is None:
            continue
        for index in range(len(array)):
            try:
                array[index].as_py()
            except UnicodeDecodeError as exc:
                return f"column {name!r} holds text that is not UTF-8 (row {first + index + 1:,}: {exc.reason})"
    return "a column holds text that is not UTF-8"


def _column(path: Path, name: str, array: Any, vocab: Vocabulary | None, count: int) -> Iterable[Any]:
    """One column of a batch (`count` rows) as Python values (None in each row for a column the file lacks)."""
    pa, _, _ = arrow()
    if array is None or _holds_nothing(array.type):
        return repeat(None, count)
    kind = array.type
    if name in ("tasks", "methods") and vocab is not None:
        return _entries(array, vocab.task if name == "tasks" else vocab.method)
    if name == "date":
        return _dates(path, array)
    if name == "authors" and _is_text(kind):
        return [[author] if author else None for author in array.to_pylist()]
    if pa.types.is_dictionary(kind):
        array = array.dictionary_decode()
    return array.to_pylist()  # type: ignore[no-any-return]


def _dates(path: Path, array: Any) -> list[Any]:
    """A date column as `YYYY-MM-DD` strings, converted column-wise (dates, timestamps), or as the values the
    row check (`rows.day`) turns into one (text, numbers of epoch milliseconds as a pandas copy has them)."""
    pa, pc, _ = arrow()
    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.dictionary_decode(), kind.value_type
    if pa.types.is_timestamp(kind):
        if kind.tz is not None:
            array = array.cast(pa.timestamp(kind.unit, tz="UTC"))
        return pc.strftime(array, format="%Y-%m-%d").to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_date(kind):
        return array.cast(pa.string()).to_pylist()  # type: ignore[no-any-return]
    if _is_text(kind):
        return array.to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_floating(kind) or pa.types.is_integer(kind):  # epoch milliseconds: one out of range is that row's problem only
        return array.to_pylist()  # type: ignore[no-any-return]
    raise BadInput(path, f"column 'date' is {kind}, expected a date, a timestamp, text or epoch milliseconds")


def _entries(array: Any, lookup: Any) -> list[list[Json]]:
    """Each row's list of names as its record entries (`lookup(name)`), sorted by name, each once: worked out
    on the batch's distinct names, then spread over the rows with numpy, no Python loop over the names."""
    import numpy as np

    pa, pc, _ = arrow()
    rows = len(array)
    offsets = np.asarray(array.offsets, dtype=np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    values = array.values
    if pa.types.is_struct(values.type):
        values = pc.struct_field(values, [values.type.get_field_index("name")])
    values = values.slice(start, end - start)
    if not pa.types.is_dictionary(values.type):
        values = pc.dictionary_encode(values)
    words: list[Any] = values.dictionary.to_pylist()
    distinct = sorted({word for word in words if type(word) is str and word})
    rank_of = {word: rank for rank, word in enumerate(distinct)}
    missing = len(distinct)  # the rank of a null or unusable name: dropped below
    entries = [lookup(word) for word in distinct] + [None]
    word_rank = np.array([rank_of.get(word, missing) if type(word) is str else missing for word in words] + [missing], dtype=np.int64)
    indices = values.indices.fill_null(len(words)) if values.indices.null_count else values.indices
    ranks = word_rank[np.asarray(indices, dtype=np.int64)]
    row_of = np.repeat(np.arange(rows, dtype=np.int64), np.diff(offsets))
    if array.null_count:  # a null list's entries (if any) are dropped
        ranks[~np.asarray(array.is_valid(), dtype=bool)[row_of]] = missing
    usable = np.array([entry is not None for entry in entries], dtype=bool)
    keep = usable[ranks]
    width = missing + 1
    keys = np.unique(row_of[keep] * width + ranks[keep])  # sorted by row, then by name; each (row, name) once
    table = np.empty(width, dtype=object)
    table[:] = entries
    flat: list[Json] = table[keys % width].tolist()
    bounds = np.concatenate(([0], np.cumsum(np.bincount(keys // width, minlength=rows)))).tolist()
    return [flat[bounds[i] : bounds[i + 1]] for i in range(rows)]
