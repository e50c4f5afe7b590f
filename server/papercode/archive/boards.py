"""The archive's leaderboards, tasks, methods and datasets, written in their serving form (`index.board_columns`) in two
parts: what the tables alone give (`write_catalogued`: every board sorted by each of its metrics, the tasks, methods and
datasets with their keys), and what needs the papers (`results_join.join_results`: each result row joined to its paper).
The first needs no paper, so for a large archive it runs in a process of its own while the papers are read
(`boards_child`); what the join needs of it crosses as a `Catalogued`.

Values are kept as typed and parsed (`core.metrics.parse_value`); each board is sorted by each metric both ways (one
numpy sort over every board at once), ties by the earlier paper date, values that do not parse after those that do,
rows that do not report the metric last.
"""

from __future__ import annotations

import functools
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np
import orjson

from papercode.core.days import day_number
from papercode.core.metrics import MAX_VALUE_CHARS, lower_is_better, parse_value
from papercode.core.names import NameKind, name_key, name_keys, name_slug
from papercode.core.safe_text import visible
from papercode.index.board_columns import BOARDS, EXTRA_NO, EXTRA_UNKNOWN, EXTRA_YES, KEY_KINDS, LIST_SEPARATOR, ORDERS
from papercode.index.mapped import ColumnWriter, FileFacts

from .catalogues import Benchmark, Cuts, DatasetEntry, MethodEntry, TaskEntry, clean_name, dataset_of, method_of, raw_rows, tasks_of
from .rows import Tally, quoted, repo_url
from .tables import TableFile

MAX_METRICS: Final = 64  # metrics a board keeps (the real ones have a few; past this a table is not one people read)
_NO_DATE: Final = 99_999_999  # after every YYYYMMDD: a row without a date loses a tie


class BoardCounts(msgspec.Struct):
    """What the leaderboards hold, counted from the tables alone."""

    tasks: int = 0
    benchmarks: int = 0
    results: int = 0
    values: int = 0
    unparsed_values: int = 0
    methods: int = 0
    datasets: int = 0


@dataclass(slots=True)
class BoardsSummary:
    """What the leaderboards hold, and how their rows joined the papers."""

    counts: BoardCounts = field(default_factory=BoardCounts)
    joined_by: Counter[str] = field(default_factory=Counter)  # arxiv, slug, title
    unjoined: int = 0
    cuts: Cuts = field(default_factory=Cuts)
    files: dict[str, FileFacts] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        counts = self.counts
        return {
            "tasks": counts.tasks,
            "benchmarks": counts.benchmarks,
            "results": counts.results,
            "results_joined": sum(self.joined_by.values()),
            "results_joined_by": dict(sorted(self.joined_by.items())),
            "results_unjoined": self.unjoined,
            "values": counts.values,
            "values_unparsed": counts.unparsed_values,
            "methods": counts.methods,
            "datasets": counts.datasets,
            "subtasks_cut": self.cuts.subtasks,
        }


class JoinRow(msgspec.Struct, frozen=True, array_like=True):
    """What the join needs of a result row (in the order of the rows' columns): its board, the paper it names, its
    model (shown when it names none), and whether its own code links name a repository."""

    board: int
    url: str | None
    title: str | None
    model: str | None
    own_code: bool


class BoardName(msgspec.Struct, frozen=True, array_like=True):
    """A board as the build's summary names it: its task (a number in `Catalogued.task_names`) and dataset."""

    task: int
    dataset: str


class PaperNamed(msgspec.Struct, frozen=True, array_like=True):
    """The paper a method says introduced it: its URL and title, as given."""

    url: str | None
    title: str | None


class Catalogued(msgspec.Struct, frozen=True):
    """The leaderboards as written without the papers (`write_catalogued`), and what the join needs of them: each
    board's task and dataset, each row's `JoinRow`, each task's name and each method's introducing paper (URL, title)."""

    files: dict[str, FileFacts]  # relative to the build
    task_names: list[str]
    board_names: list[BoardName]
    rows: list[JoinRow]
    method_papers: list[PaperNamed]
    counts: BoardCounts
    cuts: Cuts


class CatalogueReader:
    """The catalogue tables' entries, each table file read in turn (`read`). A task, method or dataset named again (the
    same table given in two forms) is dropped and counted in `rejected`: the first is kept."""

    def __init__(self, rejected: Tally) -> None:
        self.rejected = rejected
        self.tasks: list[TaskEntry] = []
        self.methods: list[MethodEntry] = []
        self.datasets: list[DatasetEntry] = []
        self.cuts = Cuts()
        self._seen: dict[str, set[str]] = {"task": set(), "method": set(), "dataset": set()}  # names read, to drop repeats

    def read(self, source: TableFile, progress: Callable[[float], None] | None = None) -> None:
        cuts, rejected, label = self.cuts, self.rejected, source.path.name
        for number, raw in enumerate(raw_rows(source, cuts, progress), 1):
            where = f"{label} row {number}"
            if source.table == "evaluations":
                named = clean_name(raw.get("task"))
                if named is not None and named in self._seen["task"]:
                    rejected.add("duplicate_task", where, f"task {named!r} again (the first is kept)")
                    continue
                self._seen["task"].add(named or "")
                tasks_of(raw, self.tasks, cuts, rejected, where)
                continue
            entry = method_of(raw, cuts) if source.table == "methods" else dataset_of(raw, cuts)
            kind = "method" if source.table == "methods" else "dataset"
            if entry is None:
                rejected.add(f"no_{kind}_name", where, f"a {kind} with name {str(raw.get('name'))[:60]!r}")
            elif entry.name in self._seen[kind]:
                rejected.add(f"duplicate_{kind}", where, f"{kind} {entry.name!r} again (the first is kept)")
            else:
                self._seen[kind].add(entry.name)
                if isinstance(entry, MethodEntry):
                    self.methods.append(entry)
                else:
                    self.datasets.append(entry)


def write_catalogued(reader: CatalogueReader, build: Path, warnings: Tally) -> Catalogued:
    """Write into `build/boards` every column of the leaderboards that needs no paper; what the join needs of them."""
    for reason, count in reader.cuts.warned.items():  # what reading left out, before what the layout does
        warnings.add(reason, "leaderboard tables", reader.cuts.examples[reason], count)
    writer = ColumnWriter(build / BOARDS)
    try:
        layout = _Layout(reader, writer, warnings)
        layout.write()
    except BaseException:
        writer.discard()
        raise
    if reader.cuts.subtasks:
        warnings.add("subtasks_too_deep", "evaluation tables", f"{reader.cuts.subtasks:,} subtask entries nested past the depth kept: cut")
    return Catalogued(
        files={f"{BOARDS}/{name}": facts for name, facts in writer.close().items()},
        task_names=[task.name for task in reader.tasks],
        board_names=[BoardName(board.task, board.benchmark.dataset) for board in layout.boards],
        rows=layout.join_rows,
        method_papers=[PaperNamed(method.paper_url, method.paper_title) for method in reader.methods],
        counts=layout.counts,
        cuts=reader.cuts,
    )


@dataclass(slots=True)
class _Board:
    task: int
    benchmark: Benchmark
    parent: int  # global board id, -1
    metrics: list[str]
    row_start: int
    value_start: int  # of its first metric's values


class _Layout:
    """One write of the leaderboards without their papers (a single use)."""

    def __init__(self, reader: CatalogueReader, writer: ColumnWriter, warnings: Tally) -> None:
        self.reader, self.writer, self.warnings = reader, writer, warnings
        self.counts = BoardCounts()
        self.boards: list[_Board] = []
        self.join_rows: list[JoinRow] = []
        self._dates = np.zeros(0, dtype=np.int64)  # each row's paper date as YYYYMMDD (`_rows`), for ties
        self._dataset_keys: list[set[str]] = []  # each dataset entity's keys (`_datasets`)

    def write(self) -> None:
        self._boards()
        dataset_ids, entities = self._datasets()
        self._tasks()
        self._write_boards(dataset_ids)
        self._rows()
        self._values()
        self._methods()
        self._write_datasets(entities, dataset_ids)

    # -- tasks and boards ------------------------------------------------------------------

    def _boards(self) -> None:
        rows = values = 0
        dropped = 0
        for t, task in enumerate(self.reader.tasks):
            first = len(self.boards)
            _tell_apart(task.benchmarks)
            for benchmark in task.benchmarks:
                metrics = list(dict.fromkeys(benchmark.metrics))
                seen = set(metrics)
                for row in benchmark.rows:
                    for key in row.metrics:
                        if key not in seen:
                            seen.add(key)
                            metrics.append(key)
                dropped += max(0, len(metrics) - MAX_METRICS)
                metrics = metrics[:MAX_METRICS]
                parent = first + benchmark.parent if benchmark.parent >= 0 else -1
                self.boards.append(_Board(t, benchmark, parent, metrics, rows, values))
                rows += len(benchmark.rows)
                values += len(benchmark.rows) * len(metrics)
        if dropped:
            self.warnings.add(
                "metrics_over_limit", "evaluation tables", f"{dropped:,} metrics past the first {MAX_METRICS} of a board: left out"
            )
        self.counts.tasks, self.counts.benchmarks, self.counts.results = len(self.reader.tasks), len(self.boards), rows

    def _tasks(self) -> None:
        tasks, writer = self.reader.tasks, self.writer
        writer.packed("task.name", (task.name for task in tasks))
        writer.packed("task.description", (task.description for task in tasks))
        writer.packed("task.area", (", ".join(task.categories) or None for task in tasks))
        writer.ints("task.parent", array("i", (task.parent for task in tasks)))
        per_task = Counter(board.task for board in self.boards)
        writer.ints("task.boards", offsets(per_task[t] for t in range(len(tasks))))
        children: list[list[int]] = [[] for _ in tasks]
        for t, task in enumerate(tasks):
            if task.parent >= 0:
                children[task.parent].append(t)
        writer.ints("task.children", offsets(map(len, children)))
        writer.ints("task.child", array("i", (child for group in children for child in group)))
        self._keys("task", ((t, name_keys("task", [task.name, *task.synonyms])) for t, task in enumerate(tasks)))

    def _write_boards(self, dataset_ids: list[int]) -> None:
        boards, writer = self.boards, self.writer
        writer.packed("board.dataset", (board.benchmark.dataset for board in boards))
        writer.ints("board.task", array("i", (board.task for board in boards)))
        writer.ints("board.dataset_id", array("i", dataset_ids))
        writer.ints("board.parent", array("i", (board.parent for board in boards)))
        writer.ints("board.rows", offsets(len(board.benchmark.rows) for board in boards))
        writer.ints("board.metrics", offsets(len(board.metrics) for board in boards))
        names = [metric for board in boards for metric in board.metrics]
        writer.packed("metric.name", names)
        # for servers of earlier versions, which read the direction here (a server now decides it from the name)
        writer.ints("metric.lower", array("B", (lower_is_better(metric) for metric in names)))
        writer.ints("metric.values", offsets(len(board.benchmark.rows) for board in boards for _ in board.metrics))

    # -- rows ------------------------------------------------------------------------------

    def _rows(self) -> None:
        model: list[str | None] = []
        date: list[str | None] = []
        links: list[str | None] = []
        board_of, extra = array("i"), array("B")
        join_rows = self.join_rows
        for b, board in enumerate(self.boards):
            for row in board.benchmark.rows:
                own = [url for link in row.code_links if (url := repo_url(link)[0]) is not None] if row.code_links else []
                model.append(row.model)
                date.append(row.paper_date)
                links.append(LIST_SEPARATOR.join(own) if own else None)
                extra.append(EXTRA_UNKNOWN if row.extra_data is None else EXTRA_YES if row.extra_data else EXTRA_NO)
                board_of.append(b)
                join_rows.append(JoinRow(b, row.paper_url, row.paper_title, row.model, bool(own)))
        writer = self.writer
        for column, values in (("row.model", model), ("row.date", date), ("row.links", links)):
            writer.packed(column, values)
        writer.ints("row.board", board_of)
        writer.ints("row.extra", extra)
        self._dates = np.array([_NO_DATE if (day := day_number(text)) is None else day for text in date], dtype=np.int64)

    # -- values and orders -----------------------------------------------------------------

    def _values(self) -> None:
        boards, counts = self.boards, self.counts
        total = sum(len(board.benchmark.rows) * len(board.metrics) for board in boards)
        number = np.full(total, np.nan)
        texts: list[str | None] = [None] * total
        lengths = np.zeros(sum(len(board.metrics) for board in boards), dtype=np.int64)  # rows of each board-metric's board
        metric_row_start = np.zeros(len(lengths), dtype=np.int64)  # the global row id of each board-metric's first row
        unparsed = 0
        m = 0
        start = 0
        for board in boards:
            n = len(board.benchmark.rows)
            columns = {metric: start + j * n for j, metric in enumerate(board.metrics)}
            for j in range(len(board.metrics)):
                lengths[m + j], metric_row_start[m + j] = n, board.row_start
            for i, row in enumerate(board.benchmark.rows):
                for key, value in row.metrics.items():
                    at = columns.get(key)
                    if at is None:
                        continue
                    shown, parsed, warned = _value(value)
                    if warned is not None:
                        where = f"task {self.reader.tasks[board.task].name!r}, benchmark {board.benchmark.dataset!r}"
                        self.warnings.add(warned, where, f"a metric value {quoted(value)} shown as {shown!r}")
                    if not shown:  # nothing anyone could see: not reported
                        continue
                    texts[at + i] = shown
                    if parsed is None:
                        unparsed += 1
                    else:
                        number[at + i] = parsed
            m += len(board.metrics)
            start += n * len(board.metrics)
        reported = np.fromiter((text is not None for text in texts), dtype=bool, count=total)
        counts.values, counts.unparsed_values = int(reported.sum()), unparsed
        writer = self.writer
        writer.ints("value.num", _floats(number))
        writer.packed("value.text", texts)
        del texts
        for order in ORDERS:
            ordered, rank, place = _sort(number, reported, lengths, metric_row_start, self._dates, order=order)
            writer.ints(f"order.{order}", int32s(ordered))
            writer.ints(f"rank.{order}", int32s(rank))
            writer.ints(f"place.{order}", int32s(place))

    # -- methods and datasets --------------------------------------------------------------

    def _methods(self) -> None:
        methods, writer = self.reader.methods, self.writer
        self.counts.methods = len(methods)
        writer.packed("method.name", (method.name for method in methods))
        writer.packed("method.full_name", (method.full_name for method in methods))
        writer.packed("method.description", (method.description for method in methods))
        writer.packed("method.paper_title", (method.paper_title for method in methods))
        writer.packed("method.collections", (LIST_SEPARATOR.join(method.collections) or None for method in methods))
        writer.ints("method.year", array("i", (_int(method.year) for method in methods)))
        writer.ints("method.papers", array("i", (_int(method.papers) for method in methods)))
        self._keys("method", ((i, name_keys("method", [method.name, method.full_name or ""])) for i, method in enumerate(methods)))

    def _datasets(self) -> tuple[list[int], list[DatasetEntry]]:
        """Each board's dataset entity (the datasets table's, by its names; else one made for a name only the evaluation
        tables have), and every entity."""
        entities = list(self.reader.datasets)
        # each entity's keys, by how surely they name it: its name, its full name, its variants
        ranked = [
            (name_keys("dataset", [d.name]), name_keys("dataset", [d.full_name or ""]), name_keys("dataset", d.variants)) for d in entities
        ]
        by_key: dict[str, int] = {}
        for rank in range(3):
            for i, keys in enumerate(ranked):
                for key in keys[rank]:
                    by_key.setdefault(key, i)
        self._dataset_keys = [name | full | variants for name, full, variants in ranked]
        ids: list[int] = []
        for board in self.boards:
            named = board.benchmark.dataset
            found = by_key.get(name_key("dataset", named))
            if found is None:
                found = by_key.get(name_key("dataset", name_slug(named)))
            if found is None:
                found = len(entities)
                entities.append(DatasetEntry(named, None, board.benchmark.description, None, [], [], [], [], None))
                made = name_keys("dataset", [named])
                self._dataset_keys.append(made)
                for key in made:
                    by_key.setdefault(key, found)
            ids.append(found)
        return ids, entities

    def _write_datasets(self, entities: list[DatasetEntry], dataset_ids: list[int]) -> None:
        writer = self.writer
        self.counts.datasets = len(self.reader.datasets)
        writer.packed("dataset.name", (dataset.name for dataset in entities))
        writer.packed("dataset.full_name", (dataset.full_name for dataset in entities))
        writer.packed("dataset.description", (dataset.description for dataset in entities))
        writer.packed("dataset.homepage", (dataset.homepage for dataset in entities))
        for column, attribute in (("dataset.modalities", "modalities"), ("dataset.tasks", "tasks"), ("dataset.languages", "languages")):
            writer.packed(column, (LIST_SEPARATOR.join(getattr(dataset, attribute)) or None for dataset in entities))
        writer.ints("dataset.papers", array("i", (_int(dataset.papers) for dataset in entities)))
        boards_of: list[list[int]] = [[] for _ in entities]
        for b, dataset in enumerate(dataset_ids):
            boards_of[dataset].append(b)
        writer.ints("dataset.boards", offsets(map(len, boards_of)))
        writer.ints("dataset.board", array("i", (b for group in boards_of for b in group)))
        self._keys("dataset", enumerate(self._dataset_keys))
        assert set(KEY_KINDS) == {"task", "method", "dataset"}

    def _keys(self, kind: NameKind, keyed: Iterable[tuple[int, Iterable[str]]]) -> None:
        """The keys of every task, method or dataset (`keyed`: each one's number and keys), sorted by their bytes."""
        pairs = sorted({(key.encode("utf-8", "surrogatepass"), i) for i, keys in keyed for key in keys})
        self.writer.packed(f"keys.{kind}.keys", (key.decode("utf-8", "surrogatepass") for key, _ in pairs))
        self.writer.ints(f"keys.{kind}.values", array("i", (i for _, i in pairs)))


def _tell_apart(benchmarks: list[Benchmark]) -> None:
    """A task's benchmarks named alike (the same dataset twice) made apart by a number (`ImageNet #2`), so that each can
    be asked for by name."""
    seen: Counter[str] = Counter()
    for benchmark in benchmarks:
        key = name_key("dataset", benchmark.dataset)
        seen[key] += 1
        if seen[key] > 1:
            benchmark.dataset = f"{benchmark.dataset} #{seen[key]}"


@functools.lru_cache(maxsize=1 << 16)  # values repeat across rows (`-`, `88.5`, ...)
def _parsed_text(value: str) -> tuple[str, float | None, str | None]:
    seen = visible(value)
    shown = " ".join(seen.split())
    if len(shown) > MAX_VALUE_CHARS:
        shown = shown[: MAX_VALUE_CHARS - 1] + "…"
    return shown, parse_value(seen), "hidden_characters_removed" if len(seen) != len(value) else None


def _value(value: Any) -> tuple[str, float | None, str | None]:
    """A metric value as shown (as typed, bounded), its number, and the warning it is worth (None, or its reason): a
    value typed with characters no one sees is shown without them; one that is not text or a number (a list, an
    object, true or false) is shown as JSON, never as a Python repr, and is not a number."""
    if type(value) is str:
        return _parsed_text(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = " ".join(visible(orjson.dumps(value, default=_json_text, option=orjson.OPT_NON_STR_KEYS).decode()).split())
        return (shown if len(shown) <= MAX_VALUE_CHARS else shown[: MAX_VALUE_CHARS - 1] + "…"), None, "value_as_json"
    number = parse_value(value)
    return (repr(value) if isinstance(value, float) else str(value))[:MAX_VALUE_CHARS], number, None


def _json_text(value: Any) -> str:
    """What a value JSON has no type for (bytes, a decimal from a parquet file) is shown as: its text."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes | bytearray) else str(value)


def _sort(
    number: np.ndarray,
    reported: np.ndarray,
    lengths: np.ndarray,
    row_start: np.ndarray,
    dates: np.ndarray,
    *,
    order: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every board-metric's rows in `order` (`desc`: higher first), in one sort: (each place's row, as its place in the
    board; each place's rank, 0 for none; each row's place). Ranks are shared by rows of equal value and date; an
    earlier date wins a tie."""
    total = len(number)
    metric = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)  # each value's board-metric
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    local = np.arange(total, dtype=np.int64) - starts[metric]  # each value's row, as its place in the board
    date = dates[row_start[metric] + local] if total else np.zeros(0, dtype=np.int64)
    parsed = ~np.isnan(number)
    kind = np.where(parsed, 0, np.where(reported, 1, 2))  # ranked, then values that do not parse, then none
    key = np.where(parsed, number, 0.0)
    if order == "desc":
        key = -key
    ordered = np.lexsort((local, date, key, kind, metric))  # the last key sorts first
    place_local = np.arange(total, dtype=np.int64) - starts[metric]  # a place, counted in its board-metric
    rows_at = local[ordered]
    rank = np.zeros(total, dtype=np.int64)
    if total:
        ranked = kind[ordered] == 0
        sorted_key, sorted_date, sorted_metric = key[ordered], date[ordered], metric[ordered]
        new = np.ones(total, dtype=bool)
        new[1:] = (sorted_metric[1:] != sorted_metric[:-1]) | (sorted_key[1:] != sorted_key[:-1]) | (sorted_date[1:] != sorted_date[:-1])
        first = np.maximum.accumulate(np.where(new, np.arange(total), 0))  # where each tie starts
        rank = np.where(ranked, first - starts[sorted_metric] + 1, 0)
    place = np.empty(total, dtype=np.int64)
    place[ordered] = place_local
    return rows_at, rank, place


def offsets(counts: Iterable[int]) -> array[int]:
    """Where each group starts, and the end: the offsets of groups of these sizes."""
    offsets = array("q", [0])
    total = 0
    for count in counts:
        total += count
        offsets.append(total)
    return offsets


def int32s(values: np.ndarray) -> array[int]:
    """`values` as a column of 32-bit integers."""
    out = array("i")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int32).tobytes())
    return out


def _floats(values: np.ndarray) -> array[float]:
    out = array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    return out


def _int(value: int | None) -> int:
    return -1 if value is None or not -(2**31) < value < 2**31 else value
