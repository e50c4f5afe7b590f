"""The archive's leaderboards, tasks, methods and datasets as a server reads them: mapped columns, no object per row.

`papercode archive build` writes them into the build's `boards/` directory (`archive.boards`) when the archive's
evaluation tables, methods or datasets are among its sources; `MappedArchive` opens them when the manifest lists them.
The layout is declared here, once, for the writer and the reader:

- tasks (`task.*`): name, description, area, parent task, paper count, their benchmarks (`task.boards`: offsets into
  the boards, which are laid out task by task) and subtasks (`task.children` offsets into `task.child`);
- benchmarks (`board.*`): task, dataset name, dataset entity, parent benchmark (a subdataset's), their rows
  (`board.rows` offsets: rows are laid out board by board) and metrics (`board.metrics` offsets into `metric.*`);
- metrics (`metric.*`): name, where their values start (`metric.values`), and whether lower is better as the build
  decided (`metric.lower`, which earlier servers read; a server now decides from the name, `core.metrics`, so that a
  change to that table needs no rebuild: both orders are stored);
- values, one per (metric, row of its board), metric by metric: the number (`value.num`, NaN when none), the text as
  typed (`value.text`, missing when not reported); and for each order (`desc`, `asc`) the board's rows best first
  (`order.<o>`: a row's place in its board), the rank at each place (`rank.<o>`, 0: unranked), and each row's place
  (`place.<o>`). Rows whose value does not parse come after those ranked, then rows that do not report the metric;
- rows (`row.*`): model, archive paper (-1: joined to none; then its own title and paper id), date, extra training
  data, its own code links, whether it has code (`ROW_OWN_CODE`, `ROW_PAPER_CODE`), its board; `paper.papers` /
  `paper.rows`: the rows of each archive paper, sorted by paper;
- methods and datasets (`method.*`, `dataset.*`), and for tasks, methods and datasets their names' keys
  (`core.names`), sorted, a key repeated for every entity it names (`keys.<kind>.keys` / `.values`).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, cast

import numpy as np

from papercode.core.metrics import lower_is_better
from papercode.core.names import NameKind, name_key, shared_prefix

from .mapped import ColumnProblem, FileFacts, MappedColumns
from .packed import PackedStrings, lower_bound

BOARDS: Final = "boards"  # the directory in a build
Order = Literal["desc", "asc"]
ORDERS: Final[tuple[Order, Order]] = ("desc", "asc")
EXTRA_NO, EXTRA_YES, EXTRA_UNKNOWN = 0, 1, 2  # `row.extra`
ROW_OWN_CODE, ROW_PAPER_CODE = 1, 2  # bits of `row.code`: the row's own links name a repository; its archive paper's do
LIST_SEPARATOR: Final = "\n"  # between the items of a stored list (modalities, collections, a row's links)

TASK_STRINGS: Final = ("task.name", "task.description", "task.area")
TASK_INTS: Final = ("task.parent", "task.papers")  # int32
BOARD_STRINGS: Final = ("board.dataset",)
BOARD_INTS: Final = ("board.task", "board.dataset_id", "board.parent")  # int32
METRIC_STRINGS: Final = ("metric.name",)
ROW_STRINGS: Final = ("row.model", "row.title", "row.ref", "row.date", "row.links")
ROW_INTS: Final = ("row.paper", "row.board")  # int32
ROW_BYTES: Final = ("row.extra", "row.code")  # uint8
METHOD_STRINGS: Final = ("method.name", "method.full_name", "method.description", "method.paper_title", "method.collections")
METHOD_INTS: Final = ("method.year", "method.papers", "method.paper")  # int32, -1: none
DATASET_STRINGS: Final = (
    "dataset.name",
    "dataset.full_name",
    "dataset.description",
    "dataset.homepage",
    "dataset.modalities",
    "dataset.tasks",
    "dataset.languages",
)
DATASET_INTS: Final = ("dataset.papers",)  # int32, -1: none
OFFSETS: Final = ("task.boards", "task.children", "board.rows", "board.metrics", "metric.values", "dataset.boards")  # int64
LISTS: Final = ("task.child", "dataset.board", "paper.papers", "paper.rows")  # int32
KEY_KINDS: Final[tuple[NameKind, ...]] = ("task", "method", "dataset")


class NameKeys:
    """Names' keys (sorted by their UTF-8 bytes, a key once for each thing it names) and what they name."""

    def __init__(self, keys: PackedStrings, values: memoryview) -> None:
        if len(keys) != len(values):
            raise ColumnProblem("a name table's keys and values disagree (cut short or damaged)")
        self.keys, self.values = keys, values

    def find(self, key: str) -> list[int]:
        """Everything `key` names, each once, in order."""
        wanted = key.encode("utf-8", "surrogatepass")
        start = lower_bound(self.keys, wanted)
        found: list[int] = []
        data, ends = self.keys._data, self.keys._ends
        position = start
        while position < len(ends) and data[ends[position - 1] if position else 0 : ends[position]] == wanted:
            found.append(self.values[position])
            position += 1
        return found if len(found) < 2 else sorted(set(found))  # most keys name one thing

    def near(self, key: str, most: int) -> list[int]:
        """What the keys sorted next to `key` name (those sharing its beginning first): the nearest names, cheaply."""
        start = lower_bound(self.keys, key.encode("utf-8", "surrogatepass"))
        window = range(max(0, start - most), min(len(self.values), start + most))
        keys = cast(Sequence[str], self.keys)
        ranked = sorted(window, key=lambda i: (-shared_prefix(keys[i], key), abs(i - start)))
        return list(dict.fromkeys(self.values[i] for i in ranked))[:most]


@dataclass(frozen=True, slots=True)
class BoardView:
    """One benchmark's rows, metrics and values, as slices of the mapped columns."""

    board: int
    task: int
    dataset: str
    rows: range  # global row ids
    metrics: range  # board-metric ids


class Boards:
    """The leaderboards of one archive build, mapped (see the module docstring for the layout)."""

    def __init__(self, build: Path, files: Mapping[str, FileFacts]) -> None:
        prefix = BOARDS + "/"
        self._columns = MappedColumns(build, {name: facts for name, facts in files.items() if name.startswith(prefix)})
        try:
            self._open(prefix)
        except BaseException:
            self.close()
            raise

    def _open(self, prefix: str) -> None:
        columns = self._columns
        strings = {name: columns.strings(prefix + name) for name in (*TASK_STRINGS, *BOARD_STRINGS, *METRIC_STRINGS, *ROW_STRINGS)}
        strings.update({name: columns.strings(prefix + name) for name in (*METHOD_STRINGS, *DATASET_STRINGS)})
        ints = {
            name: columns.ints(prefix + name, "i") for name in (*TASK_INTS, *BOARD_INTS, *ROW_INTS, *METHOD_INTS, *DATASET_INTS, *LISTS)
        }
        ints.update({name: columns.ints(prefix + name, "B") for name in (*ROW_BYTES, "metric.lower")})
        ints.update({name: columns.ints(prefix + name, "q") for name in OFFSETS})
        self.strings, self.ints = strings, ints
        self.num = columns.floats(prefix + "value.num")
        self.text = columns.strings(prefix + "value.text")
        self.order = {order: columns.ints(f"{prefix}order.{order}", "i") for order in ORDERS}
        self.rank = {order: columns.ints(f"{prefix}rank.{order}", "i") for order in ORDERS}
        self.place = {order: columns.ints(f"{prefix}place.{order}", "i") for order in ORDERS}
        self.keys = {
            kind: NameKeys(columns.strings(f"{prefix}keys.{kind}.keys"), columns.ints(f"{prefix}keys.{kind}.values", "i"))
            for kind in KEY_KINDS
        }
        self.tasks, self.boards = len(strings["task.name"]), len(strings["board.dataset"])
        self.metrics, self.rows = len(strings["metric.name"]), len(strings["row.model"])
        self.methods, self.datasets = len(strings["method.name"]), len(strings["dataset.name"])
        self.values = len(self.num)
        self.row_code = np.frombuffer(ints["row.code"], dtype=np.uint8)
        self.row_paper = np.frombuffer(ints["row.paper"], dtype=np.int32)
        self._lower: dict[int, bool] = {}
        self._check()

    def _check(self) -> None:
        """Every column holds as many values as its table, and every offsets column ends where its values end."""
        ints, strings = self.ints, self.strings
        sizes = {
            "task": self.tasks,
            "board": self.boards,
            "metric": self.metrics,
            "row": self.rows,
            "method": self.methods,
            "dataset": self.datasets,
        }
        for name, column in [*strings.items(), *ints.items()]:
            table = name.split(".", 1)[0]
            if name in OFFSETS or name in LISTS or name == "metric.lower" or table not in sizes:
                continue
            if len(column) != sizes[table]:
                raise ColumnProblem(f"{BOARDS}/{name} holds {len(column):,} values, not the {sizes[table]:,} of its table")
        ends = {
            "task.boards": (self.tasks, self.boards),
            "task.children": (self.tasks, len(ints["task.child"])),
            "board.rows": (self.boards, self.rows),
            "board.metrics": (self.boards, self.metrics),
            "metric.values": (self.metrics, self.values),
            "dataset.boards": (self.datasets, len(ints["dataset.board"])),
        }
        for name, (count, end) in ends.items():
            offsets = ints[name]
            if len(offsets) != count + 1 or offsets[0] != 0 or offsets[count] != end:
                raise ColumnProblem(f"{BOARDS}/{name} does not span its values (cut short or damaged)")
        parts = [len(ints["metric.lower"]), *(len(column) for column in (*self.order.values(), *self.rank.values(), *self.place.values()))]
        if parts[0] != self.metrics or any(part != self.values for part in parts[1:]) or len(self.text) != self.values:
            raise ColumnProblem(f"{BOARDS}/ metric and value columns disagree (cut short or damaged)")
        if len(ints["paper.papers"]) != len(ints["paper.rows"]):
            raise ColumnProblem(f"{BOARDS}/paper.papers and paper.rows disagree (cut short or damaged)")

    def close(self) -> None:
        self._columns.close()

    # -- lookups -------------------------------------------------------------------------

    def find(self, kind: NameKind, name: str) -> list[int]:
        return self.keys[kind].find(name_key(kind, name))

    def near(self, kind: NameKind, name: str, most: int = 5) -> list[int]:
        return self.keys[kind].near(name_key(kind, name), most)

    def board(self, b: int) -> BoardView:
        ints = self.ints
        rows, metrics = ints["board.rows"], ints["board.metrics"]
        return BoardView(
            b,
            ints["board.task"][b],
            cast(str, self.strings["board.dataset"][b]),
            range(rows[b], rows[b + 1]),
            range(metrics[b], metrics[b + 1]),
        )

    def task_boards(self, task: int) -> range:
        offsets = self.ints["task.boards"]
        return range(offsets[task], offsets[task + 1])

    def children(self, task: int) -> Sequence[int]:
        offsets = self.ints["task.children"]
        return self.ints["task.child"][offsets[task] : offsets[task + 1]]

    def dataset_boards(self, dataset: int) -> Sequence[int]:
        offsets = self.ints["dataset.boards"]
        return self.ints["dataset.board"][offsets[dataset] : offsets[dataset + 1]]

    def values_of(self, metric: int) -> range:
        """The value ids of a board-metric: one per row of its board, in row order (and its orders' places)."""
        offsets = self.ints["metric.values"]
        return range(offsets[metric], offsets[metric + 1])

    def lower_is_better(self, metric: int) -> bool:
        """Whether a board-metric ranks lower first, decided now from its name (`core.metrics`), not by its build;
        remembered for the metrics asked (a name is decoded from its column: microseconds, where a call is tens)."""
        lower = self._lower.get(metric)
        if lower is None:
            lower = self._lower[metric] = lower_is_better(self.strings["metric.name"][metric] or "")
        return lower

    @functools.cached_property
    def repeated_task_names(self) -> frozenset[int]:
        """The tasks whose name another task has too (a subtask named as a top-level task, a task its own subtask):
        answers name them by their parents' names as well."""
        names = list(self.strings["task.name"])
        counts = Counter(names)
        return frozenset(i for i, name in enumerate(names) if counts[name] > 1)

    @functools.cached_property
    def task_twins(self) -> dict[int, tuple[int, ...]]:
        """Tasks named alike all the way up (the same names from the top, which no name can tell apart), each to all
        of them in the build's order: answers serve them as one task, the first, with the benchmarks and subtasks of
        all. Most archives have none."""
        alike: dict[tuple[str, ...], list[int]] = {}
        for task in sorted(self.repeated_task_names):
            alike.setdefault(tuple(self.task_path(task)), []).append(task)
        return {task: tuple(twins) for twins in alike.values() if len(twins) > 1 for task in twins}

    def task_path(self, task: int, levels: int | None = None) -> list[str]:
        """The names of a task and of its parents, `levels` of them at most (None: all), the top first."""
        names, parents = self.strings["task.name"], self.ints["task.parent"]
        chain = [names[task] or ""]
        parent = parents[task]
        while parent >= 0 and (levels is None or len(chain) < levels):
            chain.append(names[parent] or "")
            parent = parents[parent]
        return chain[::-1]

    def value(self, metric: int, local_row: int) -> tuple[str | None, float | None]:
        """(the value as typed, its number) of a row (its place in its board) for a board-metric."""
        at = self.ints["metric.values"][metric] + local_row
        number = self.num[at]
        return self.text[at], None if math.isnan(number) else number

    def ordered(self, metric: int, order: Order, start: int, stop: int) -> tuple[Sequence[int], Sequence[int]]:
        """(the rows at places start..stop-1 of a board-metric's order, as places in the board; their ranks, 0: none).
        Places past the board's rows are none: the next metric's values follow in the same columns."""
        values = self.values_of(metric)
        first, last = values.start + min(start, len(values)), values.start + min(stop, len(values))
        return self.order[order][first:last], self.rank[order][first:last]

    def place_of(self, metric: int, order: Order, local_row: int) -> int:
        return self.place[order][self.ints["metric.values"][metric] + local_row]

    def rank_at(self, metric: int, order: Order, place: int) -> int:
        return self.rank[order][self.ints["metric.values"][metric] + place]

    def rows_of_paper(self, a: int) -> Sequence[int]:
        """The rows joined to archive paper `a`, in row order."""
        papers, rows = self.ints["paper.papers"], self.ints["paper.rows"]
        start = bisect.bisect_left(papers, a)
        stop = bisect.bisect_right(papers, a, lo=start)
        return rows[start:stop]

    def metric_places(self, metric: int, order: Order) -> np.ndarray:
        """A board-metric's order as a numpy view (rows as places in their board), for filters over a whole board."""
        values = self.values_of(metric)
        return np.frombuffer(self.order[order], dtype=np.int32)[values.start : values.stop]
