"""The archive's tables of results and the catalogues beside them: evaluation tables, methods, datasets, read in both forms.

An evaluation-tables entry is a task: its name, description, categories, synonyms, its benchmarks (`datasets`: each a
dataset with its `sota` table of `metrics` names and result `rows`, and `subdatasets` of the same shape) and its
`subtasks` (entries of the same shape, nested). A methods row and a datasets row are flat, with a few lists.

Both forms become the same plain values before anything else looks at them. A JSON dump is cut into pieces
(`dumps.array_pieces`) and each piece decoded whole; a piece nested past the parser's thousand levels is decoded again
with everything deeper than `CUT_DEPTH` cut (`dumps.cut_deep`). A parquet file is converted column by column
(`_python`): a row's `metrics` struct, which holds a field for every metric name in the file (null where the row has
none), is read field by field, its reported values only, never a dict of every name per row; a nested field stored
as JSON text is decoded as a dump's would be. Subtasks past `SUBTASK_DEPTH` levels are cut, and counted.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from papercode.core.days import latest_day
from papercode.core.safe_text import URL_PROBLEMS, visible, web_url

from .dumps import EXPANSION, PIECE_BYTES, DumpError, array_pieces, check_expansion, cut_deep, gunzipped_chunks, plain_chunks
from .rows import Tally, day, flag, quoted, text
from .tables import CUT_DEPTH, BadInput, TableFile, arrow

SUBTASK_DEPTH: Final = 32  # levels of subtasks kept below a top-level task (the real archive nests a few)
SUBDATASET_DEPTH: Final = 8  # levels of subdatasets kept below a benchmark
NAME_CHARS: Final = 300  # a name (task, dataset, method) or title longer than this is cut
METRIC_CHARS: Final = 120  # a metric's name longer than this is cut (the real ones are a few words)
MODEL_CHARS: Final = 160  # a model's name likewise
URL_CHARS: Final = 300  # a code link longer than this is not a repository's address: left out
DESCRIPTION_CHARS: Final = 8_000  # a description is kept this long at most (answers show less)
LIST_ITEMS: Final = 100  # of a list of names (categories, synonyms, modalities, ...), the first kept
CODE_LINKS: Final = 20  # of a result row's code links, the first kept
BATCH_ROWS: Final = 1_024  # parquet rows converted at a time (an evaluation-tables row is a whole task, nested; fewer batches of
# a wide file cost far less: each batch decodes every column)

# Nested fields no answer shows: a parquet row's are not converted (they can be most of a wide file's values).
_UNREAD: Final = frozenset({"model_links", "dataset_citations", "dataset_links", "data_loaders", "source_link"})
_ANY = msgspec.json.Decoder(list[Any])
_ONE = msgspec.json.Decoder()


@dataclass(slots=True)
class Cuts:
    """What reading the tables cut: subtask entries nested too deep (with everything below them) and other values
    nested so; and what the build's summary warns of (`warned`: each reason's count, `examples`: its first), a part
    of a value left out or rewritten by the server's rules (`hidden_characters_removed`, `bad_homepage`, ...)."""

    subtasks: int = 0
    values: int = 0
    warned: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)

    def warn(self, reason: str, example: str) -> None:
        self.warned[reason] = self.warned.get(reason, 0) + 1
        self.examples.setdefault(reason, example)


@dataclass(slots=True)
class ResultRow:
    """One row of a benchmark's table, as given (its paper is joined later)."""

    model: str | None
    paper_title: str | None
    paper_url: str | None
    paper_date: str | None
    code_links: list[str]
    extra_data: bool | None
    metrics: dict[str, Any]  # metric name -> the value as given; reported values only


@dataclass(slots=True)
class Benchmark:
    """A dataset a task is evaluated on, with its table; `parent` is the benchmark (of the same task) it is a subdataset of."""

    dataset: str
    description: str | None
    metrics: list[str]
    rows: list[ResultRow]
    parent: int = -1


@dataclass(slots=True)
class TaskEntry:
    """A task or subtask; `parent` is the index of its parent in the flattened list (-1 for a top-level task)."""

    name: str
    description: str | None
    categories: list[str]
    synonyms: list[str]
    parent: int
    benchmarks: list[Benchmark] = field(default_factory=list)


@dataclass(slots=True)
class MethodEntry:
    name: str
    full_name: str | None
    description: str | None
    year: int | None
    paper_title: str | None
    paper_url: str | None
    collections: list[str]  # "collection (area)"
    papers: int | None


@dataclass(slots=True)
class DatasetEntry:
    name: str
    full_name: str | None
    description: str | None
    homepage: str | None
    modalities: list[str]
    tasks: list[str]
    languages: list[str]
    variants: list[str]
    papers: int | None


# -- reading -------------------------------------------------------------------------------


def raw_rows(source: TableFile, cuts: Cuts, progress: Callable[[float], None] | None = None) -> Iterator[dict[str, Any]]:
    """A catalogue table's rows as plain values (dicts; a row that is not an object is skipped), either form."""
    rows = _parquet_rows(source, cuts) if source.form == "parquet" else _dump_rows(source, cuts)
    count = 0
    for row, share in rows:
        count += 1
        if progress is not None and share is not None:
            progress(share)
        if type(row) is dict:
            yield row
    source.rows = count


def _dump_rows(source: TableFile, cuts: Cuts) -> Iterator[tuple[Any, float | None]]:
    path, size = source.path, max(source.size, 1)
    decoded = _BoundedDecode(cuts)
    try:
        with open(path, "rb") as stream:
            if source.form == "json.gz":
                check_expansion(stream, EXPANSION)
                stream.seek(0)
                chunks: Iterator[bytes] = gunzipped_chunks(stream, bound=EXPANSION)
            else:
                chunks = plain_chunks(stream, PIECE_BYTES)
            first_key = source.columns[0] if source.columns else None
            for rows in array_pieces(chunks, decoded, first_key=first_key):
                decoded.commit()
                share = min(stream.tell() / size, 1.0)
                for row in rows:
                    yield row, share
    except (OSError, EOFError, zlib.error) as exc:
        raise BadInput(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except DumpError as exc:
        raise BadInput(path, str(exc)) from None


class _BoundedDecode:
    """Decodes a dump's piece (`dumps.Decode`); one nested past the parser is decoded again with its deepest parts cut.
    The cuts of the piece last decoded count once `commit` says that piece was kept (a piece tried at a place that
    is not between two rows is decoded again, shorter)."""

    def __init__(self, cuts: Cuts) -> None:
        self._cuts, self._pending = cuts, (0, 0)

    def __call__(self, piece: memoryview) -> list[Any]:
        self._pending = (0, 0)
        try:
            return _ANY.decode(piece)
        except RecursionError:
            data, subtasks = cut_deep(piece, CUT_DEPTH)
            self._pending = (subtasks, 1)
            return _ANY.decode(data)

    def commit(self) -> None:
        self._cuts.subtasks += self._pending[0]
        self._cuts.values += self._pending[1]
        self._pending = (0, 0)


def _parquet_rows(source: TableFile, cuts: Cuts) -> Iterator[tuple[Any, float | None]]:
    pa, _, pq = arrow()
    path = source.path
    try:
        parquet = pq.ParquetFile(path)
        total, done = max(int(parquet.metadata.num_rows), 1), 0
        names = list(dict.fromkeys(parquet.schema_arrow.names))
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=names):
            columns = [_column(name, column, cuts, 0) for name, column in zip(batch.schema.names, batch.columns, strict=True)]
            done += batch.num_rows
            share = done / total
            for values in zip(*columns, strict=True):
                yield dict(zip(batch.schema.names, values, strict=True)), share
    except (OSError, pa.ArrowException) as exc:
        raise BadInput(path, f"cannot read the parquet data (truncated or corrupt?): {' '.join(str(exc).split())[:300]}") from None
    except RecursionError:
        raise BadInput(path, "its columns are nested too deep to read") from None


def _column(name: str, array: Any, cuts: Cuts, depth: int) -> list[Any]:
    """A field of a struct (or a column of the table, `depth` 0) as plain values: `subtasks` one level further down."""
    return _python(array, cuts, depth + 1, True) if name == "subtasks" else _python(array, cuts, depth)


def _python(array: Any, cuts: Cuts, depth: int, subtasks: bool = False) -> list[Any]:
    """An arrow array as plain values, as `to_pylist` would give them but for two things: a struct field named `metrics`
    becomes a dict of its non-null fields, read field by field (`_reported`), and a list of subtasks more than
    `SUBTASK_DEPTH` levels down is left out (None), its entries counted in `cuts`. `subtasks`: `array` is a list of
    subtasks, `depth` levels down."""
    pa, pc, _ = arrow()
    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.dictionary_decode(), kind.value_type
    if pa.types.is_struct(kind):
        kept = [i for i in range(kind.num_fields) if kind.field(i).name not in _UNREAD]
        names = [kind.field(i).name for i in kept]
        flattened = array.flatten()  # each field as the struct's rows see it (its slice, its nulls)
        children = [flattened[i] for i in kept]
        columns = [
            _reported(child, cuts, depth) if name == "metrics" and pa.types.is_struct(child.type) else _column(name, child, cuts, depth)
            for name, child in zip(names, children, strict=True)
        ]
        valid = array.is_valid().to_pylist() if array.null_count else [True] * len(array)
        return [dict(zip(names, values, strict=True)) if ok else None for ok, values in zip(valid, zip(*columns, strict=True), strict=True)]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        lengths = pc.list_value_length(array).to_pylist()
        if subtasks and depth > SUBTASK_DEPTH:
            cuts.subtasks += _entries_below(array)
            return [None] * len(array)
        flat = _python(pc.list_flatten(array), cuts, depth)
        out: list[Any] = []
        start = 0
        for length in lengths:
            if length is None:
                out.append(None)
            else:
                out.append(flat[start : start + length])
                start += length
        return out
    if pa.types.is_map(kind):
        return [dict(pairs) if pairs is not None else None for pairs in array.to_pylist()]
    return array.to_pylist()  # type: ignore[no-any-return]


def _reported(array: Any, cuts: Cuts, depth: int) -> list[dict[str, Any] | None]:
    """A `metrics` struct (a field per metric name in the file) as one dict per row of the names it reports."""
    pa, pc, _ = arrow()
    rows: list[dict[str, Any] | None] = [{} for _ in range(len(array))]
    kind = array.type
    for index, child in enumerate(array.flatten()):
        if child.null_count == len(child):
            continue
        name = kind.field(index).name
        if pa.types.is_nested(child.type):  # not a value someone typed; kept as the row has it
            for row, value in zip(rows, _python(child, cuts, depth), strict=True):
                if value is not None and row is not None:
                    row[name] = value
            continue
        at = pc.indices_nonzero(child.is_valid())
        for i, value in zip(at.to_pylist(), child.take(at).to_pylist(), strict=True):
            row = rows[i]
            if row is not None:
                row[name] = value
    if array.null_count:
        for i, ok in enumerate(array.is_valid().to_pylist()):
            if not ok:
                rows[i] = None
    return rows


def _entries_below(array: Any) -> int:
    """How many subtask entries a list of them holds, all levels down (counted level by level, no recursion)."""
    pa, pc, _ = arrow()
    count = 0
    while array is not None and (pa.types.is_list(array.type) or pa.types.is_large_list(array.type)):
        entries = pc.list_flatten(array)
        count += len(entries) - entries.null_count
        if not pa.types.is_struct(entries.type) or entries.type.get_field_index("subtasks") < 0:
            break
        array = pc.struct_field(entries, "subtasks")
    return count


def nested(value: Any, cuts: Cuts, *, entries: bool = False) -> Any:
    """A nested field's value: as it is, or decoded when it was stored as JSON text (a parquet copy's way with a field
    of no fixed shape), its parts nested past `CUT_DEPTH` cut (`entries`: the text is a list of subtasks, whose
    entries are counted when cut)."""
    if type(value) is not str:
        return value
    stripped = value.lstrip()
    if not stripped.startswith(("[", "{")):
        return value
    data = value.encode("utf-8", "surrogatepass")
    try:
        return _ONE.decode(data)
    except RecursionError:
        data, subtasks = cut_deep(data, CUT_DEPTH, top_entries=entries)
        cuts.subtasks += subtasks
        cuts.values += 1
    except msgspec.DecodeError:
        return value
    try:
        return _ONE.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


# -- evaluation tables -----------------------------------------------------------------------


def tasks_of(raw: dict[str, Any], out: list[TaskEntry], cuts: Cuts, rejected: Tally, where: str) -> None:
    """A top-level evaluation-tables entry and its subtasks, appended to `out` parent first (each subtask's `parent`
    its index there). Subtasks past `SUBTASK_DEPTH` are cut and counted; an entry without a task name is dropped
    with its subtasks, and counted."""
    stack: list[tuple[Any, int, int]] = [(raw, -1, 0)]
    while stack:
        entry, parent, depth = stack.pop()
        entry = nested(entry, cuts)
        if type(entry) is not dict:
            continue
        if depth > SUBTASK_DEPTH:
            cuts.subtasks += 1 + _subtasks_below(entry, cuts)
            continue
        name = clean_name(entry.get("task"), cuts=cuts)
        if name is None:
            below = _subtasks_below(entry, cuts)
            rejected.add(
                "no_task_name", where, f"a task entry with task {_shown(entry.get('task'))}" + (f" ({below} subtasks)" if below else "")
            )
            continue
        index = len(out)
        out.append(
            TaskEntry(
                name=name,
                description=_description(entry.get("description"), cuts),
                categories=_names(nested(entry.get("categories"), cuts), cuts),
                synonyms=_names(nested(entry.get("synonyms"), cuts), cuts),
                parent=parent,
                benchmarks=_benchmarks(nested(entry.get("datasets"), cuts), cuts, rejected, f"{where}, task {name!r}"),
            )
        )
        subtasks = nested(entry.get("subtasks"), cuts, entries=True)
        if type(subtasks) is list:
            stack.extend((sub, index, depth + 1) for sub in reversed(subtasks))


def _subtasks_below(entry: dict[str, Any], cuts: Cuts) -> int:
    count = 0
    stack = [entry]
    while stack:
        subtasks = nested(stack.pop().get("subtasks"), cuts, entries=True)
        if type(subtasks) is list:
            children = [child for child in (nested(sub, cuts) for sub in subtasks) if type(child) is dict]
            count += len(children)
            stack.extend(children)
    return count


def _benchmarks(value: Any, cuts: Cuts, rejected: Tally, where: str) -> list[Benchmark]:
    out: list[Benchmark] = []
    if type(value) is not list:
        return out
    stack: list[tuple[Any, int, int]] = [(item, -1, 0) for item in reversed(value)]
    today = latest_day().isoformat()  # a result dated after it is dated in the future everywhere
    while stack:
        item, parent, depth = stack.pop()
        item = nested(item, cuts)
        if type(item) is not dict:
            continue
        name = clean_name(item.get("dataset"), cuts=cuts)
        if name is None:
            rejected.add("no_dataset_name", where, f"a benchmark with dataset {_shown(item.get('dataset'))}")
            continue
        sota = nested(item.get("sota"), cuts)
        sota = sota if type(sota) is dict else {}
        rows = nested(sota.get("rows"), cuts)
        index = len(out)
        out.append(
            Benchmark(
                dataset=name,
                description=_description(item.get("description"), cuts),
                metrics=_names(nested(sota.get("metrics"), cuts), cuts, most=None, chars=METRIC_CHARS),
                rows=[_result(row, cuts, today) for row in rows if type(row) is dict] if type(rows) is list else [],
                parent=parent,
            )
        )
        subdatasets = nested(item.get("subdatasets"), cuts)
        if type(subdatasets) is list and subdatasets:
            if depth < SUBDATASET_DEPTH:
                stack.extend((sub, index, depth + 1) for sub in reversed(subdatasets))
            else:
                cuts.values += 1
    return out


def _result(row: dict[str, Any], cuts: Cuts, today: str) -> ResultRow:
    # Every result of the archive passes here: the usual shapes are taken as they are, the rest through the checks.
    get = row.get
    metrics = get("metrics")
    if type(metrics) is not dict:
        metrics = nested(metrics, cuts)
    links = get("code_links")
    urls: list[str] = []
    if links:
        links = nested(links, cuts)
        for link in links[: CODE_LINKS * 2] if type(links) is list else ():
            url = link.get("url") if type(link) is dict else link
            if type(url) is str and url.strip() and len(url) <= URL_CHARS and len(urls) < CODE_LINKS:
                urls.append(url.strip())
    extra = get("uses_additional_data")
    if type(extra) is not bool:
        extra = None if (given := flag(extra)) is None else bool(given)
    date = get("paper_date")
    if date is not None and not (
        type(date) is str and len(date) == 10 and date[4] == "-" == date[7] and "01" <= date[5:7] <= "12" and "01" <= date[8:] <= "31"
    ):
        date = day(date)
    model = clean_name(get("model_name"), MODEL_CHARS, cuts)
    if date is not None and date > today:
        cuts.warn("future_result_date", f"the result of {model!r} dated {date}: written without its date")
        date = None
    paper_url = get("paper_url")
    return ResultRow(
        model=model,
        paper_title=clean_name(get("paper_title"), cuts=cuts),
        paper_url=paper_url if type(paper_url) is str and paper_url else None,
        paper_date=date,
        code_links=urls,
        extra_data=extra,
        metrics={
            named: value
            for key, value in metrics.items()
            if value is not None and value != "" and (named := clean_name(key, METRIC_CHARS, cuts)) is not None
        }
        if type(metrics) is dict
        else {},
    )


# -- methods and datasets --------------------------------------------------------------------


def method_of(raw: dict[str, Any], cuts: Cuts) -> MethodEntry | None:
    name = clean_name(raw.get("name"), cuts=cuts)
    if name is None:
        return None
    paper = nested(raw.get("paper"), cuts)
    paper_title = paper_url = None
    if type(paper) is dict:
        paper_title, paper_url = clean_name(paper.get("title"), cuts=cuts), text(paper.get("url"))
    elif type(paper) is str:
        paper_url = paper
    collections: list[str] = []
    found = nested(raw.get("collections"), cuts)
    for item in found if type(found) is list else ():
        item = nested(item, cuts)
        if type(item) is dict and (collection := clean_name(item.get("collection") or item.get("name"), cuts=cuts)):
            area = clean_name(item.get("area"), cuts=cuts)
            collections.append(f"{collection} ({area})" if area else collection)
        elif type(item) is str and (collection := clean_name(item, cuts=cuts)):
            collections.append(collection)
    return MethodEntry(
        name=name,
        full_name=clean_name(raw.get("full_name"), cuts=cuts),
        description=_description(raw.get("description"), cuts),
        year=_count(raw.get("introduced_year")),
        paper_title=paper_title or clean_name(raw.get("source_title"), cuts=cuts),
        paper_url=paper_url or text(raw.get("source_url")),
        collections=list(dict.fromkeys(collections))[:LIST_ITEMS],
        papers=_count(raw.get("num_papers")),
    )


def dataset_of(raw: dict[str, Any], cuts: Cuts) -> DatasetEntry | None:
    name = clean_name(raw.get("name"), cuts=cuts)
    if name is None:
        return None
    tasks = nested(raw.get("tasks"), cuts)
    task_names = [
        task
        for item in (tasks if type(tasks) is list else ())
        if (task := clean_name(item.get("task") if type(item) is dict else item, cuts=cuts))
    ]
    return DatasetEntry(
        name=name,
        full_name=clean_name(raw.get("full_name"), cuts=cuts),
        description=_description(raw.get("description"), cuts),
        homepage=_homepage(raw.get("homepage"), name, cuts),
        modalities=_names(nested(raw.get("modalities"), cuts), cuts),
        tasks=list(dict.fromkeys(task_names))[:LIST_ITEMS],
        languages=_names(nested(raw.get("languages"), cuts), cuts),
        variants=_names(nested(raw.get("variants"), cuts), cuts),
        papers=_count(raw.get("num_papers")),
    )


# -- values ----------------------------------------------------------------------------------


def _homepage(value: Any, dataset: str, cuts: Cuts) -> str | None:
    """A dataset's homepage, when a client can follow it safely (`safe_text.web_url`, as a paper's `url_abs`)."""
    if not text(value):
        return None
    url, problem = web_url(value)
    if url is None:
        what = URL_PROBLEMS[problem or "malformed"]
        cuts.warn("bad_homepage", f"homepage of dataset {dataset!r} ({what}), written without it: {quoted(value)}")
    return url


def clean_name(value: Any, most: int = NAME_CHARS, cuts: Cuts | None = None) -> str | None:
    """A name: a non-empty string without characters no one sees (`safe_text.visible`; counted in `cuts`), its white space
    runs made one space, cut to `most` characters."""
    if type(value) is not str:
        return None
    name, unseen = _clean_name(value, most)
    if unseen and cuts is not None:
        cuts.warn("hidden_characters_removed", f"{quoted(value)} read as {name!r}" if name else f"{quoted(value)}: nothing left, left out")
    return name


@functools.lru_cache(maxsize=1 << 16)  # metric and model names repeat across a table's rows
def _clean_name(value: str, most: int) -> tuple[str | None, bool]:
    """(the name, whether characters no one sees were taken out of it)."""
    if value.isprintable() and "  " not in value and value == value.strip():
        name, unseen = value, False
    else:
        seen = visible(value)
        name, unseen = " ".join(seen.split()), len(seen) != len(value)
    if not name:
        return None, unseen
    return (name if len(name) <= most else name[: most - 1] + "…"), unseen


def _names(value: Any, cuts: Cuts, most: int | None = LIST_ITEMS, chars: int = NAME_CHARS) -> list[str]:
    if type(value) is str:
        value = [value]
    if type(value) is not list:
        return []
    names = list(dict.fromkeys(name for item in value if (name := clean_name(item, chars, cuts)) is not None))
    return names if most is None else names[:most]


_BREAKS = re.compile("\r\n?|[\x0b\x0c\x1c-\x1f\x85\u2028\u2029]")  # line breaks a description may hold: each one `\n`


def _description(value: Any, cuts: Cuts) -> str | None:
    if type(value) is not str:
        return None
    described: str = value[: DESCRIPTION_CHARS * 2].strip()
    if not described.isprintable():
        seen = visible(described)
        if len(seen) != len(described):
            cuts.warn("hidden_characters_removed", f"a description {quoted(described)} read without them")
        described = _BREAKS.sub("\n", seen).strip()
    if not described:
        return None
    return (
        described
        if len(described) <= DESCRIPTION_CHARS and len(value) <= DESCRIPTION_CHARS * 2
        else described[: DESCRIPTION_CHARS - 1] + "…"
    )


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value == value and abs(value) < 1e12:
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 12:
        value = int(value)
    return value if isinstance(value, int) and 0 <= value < 10**12 else None


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:59] + "…"
