"""The archive's leaderboards asked as the answers ask them, each answer a named row read from the mapped columns.

`BoardQueries` answers what `answers.leaderboards` shapes: a benchmark's rows filtered by code and by harvested
samples, ordered by one of its metrics and paged (`RankedRow`); a task's or a dataset's benchmarks, the busiest first,
and each one's best (`BestRow`); a task, method or dataset as stored (`TaskFacts`, `MethodFacts`, `DatasetFacts`); a
paper's results (`ResultRow`); and what a name means as people write it (`core.names`): within a task for its
benchmarks and within a benchmark for its metrics, an exact spelling first, a task whose name others have too named by
its parents' names as well (`Parent > Task`), and tasks named alike all the way up one task (`Boards.task_twins`). The
columns are `board_columns`' layout; a row's paper is read through the overlaid index (`overlaid.Ordinals`): the
archive paper it joined, or the record that replaces it, whose code links and samples are then the row's. Tasks,
methods, datasets, benchmarks and board-metrics are named by their ids in the columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import msgspec
import numpy as np

from papercode.core.names import NameKind, name_key, name_keys, same_numbers

from .board_columns import EXTRA_NO, EXTRA_YES, LIST_SEPARATOR, ROW_OWN_CODE, Boards, BoardView, Order
from .fields import PaperRow
from .overlaid import Ordinals, OverlaidIndex
from .paper_index import PaperIndex, best_status

NO_ROWS: Final = np.zeros(0, dtype=np.int64)
_EXTRA_DATA: Final = {EXTRA_YES: True, EXTRA_NO: False}  # `row.extra`; unknown: None
PATH: Final = " > "  # between a task's parent's name and its own: `Parent > Task`, where the name alone is not one task's


# The named rows are Structs: built in C (a call builds dozens; a NamedTuple costs 5x as much), never in a cycle.
class RankedRow(msgspec.Struct, frozen=True, gc=False):
    """A row of a benchmark as stored: its rank in the order asked (0: unranked), its values of the metrics asked (as
    typed; None where it reports none), its paper (the archive paper it joined, or the record replacing it; else its
    own title and paper id, if any), its date, whether it used extra training data, its own code links, and the
    harvest of its paper (its samples, and their best status: None when it has none)."""

    rank: int
    model: str | None
    values: tuple[str | None, ...]
    paper: PaperRow | None
    date: str | None
    title: str | None
    ref: str | None
    extra_data: bool | None
    links: tuple[str, ...]
    samples: int
    best_status: str | None


class BestRow(msgspec.Struct, frozen=True, gc=False):
    """A benchmark's best row, in brief: its value of the first metric (as typed), its model, and the id of the paper
    it joined (`paper_key`: the arXiv id, else the slug), or its own paper id (`ref`) when it joined none."""

    value: str | None
    model: str | None
    paper: str | None
    ref: str | None


class ResultRow(msgspec.Struct, frozen=True, gc=False):
    """One of a paper's rows: its benchmark, model, values of the benchmark's first metrics (those it reports, by
    metric name) and its rank by the first metric in that metric's direction (0: unranked)."""

    benchmark: BoardView
    model: str | None
    values: dict[str, str]
    rank: int


class TaskFacts(msgspec.Struct, frozen=True, gc=False):
    """A task as stored: its parent task (None: a top-level task) and how many papers the archive counts for it."""

    name: str | None
    description: str | None
    area: str | None
    parent: int | None
    papers: int


class MethodFacts(msgspec.Struct, frozen=True, gc=False):
    """A method as stored (None: not known): its introducing paper when the archive has it, else that paper's title
    (if known)."""

    name: str | None
    full_name: str | None
    description: str | None
    papers: int | None
    year: int | None
    paper: PaperRow | None
    paper_title: str | None
    collections: list[str] | None


class DatasetFacts(msgspec.Struct, frozen=True, gc=False):
    """A dataset as stored (None: not known)."""

    name: str | None
    full_name: str | None
    description: str | None
    papers: int | None
    modalities: list[str] | None
    tasks: list[str] | None
    homepage: str | None


def _spelled_alike(found: Sequence[int], spelled: Callable[[int], str], text: str) -> list[int]:
    """Of `found`, those spelled exactly `text`, else those spelled so in another case, else all of them: an exact
    spelling wins over a case variant (`Accuracy` and `accuracy` are two metrics)."""
    lower = text.lower()
    for alike in ([i for i in found if spelled(i) == text], [i for i in found if spelled(i).lower() == lower]):
        if alike:
            return alike
    return list(found)


def _within(names: Sequence[str], kind: NameKind, asked: str) -> list[int]:
    """Which of `names` (a task's benchmarks, a benchmark's metrics) `asked` means, as `core.names` keys them."""
    wanted = name_key(kind, asked)
    return [i for i, name in enumerate(names) if wanted in name_keys(kind, [name])]


def _listed(text: str | None) -> list[str] | None:
    return text.split(LIST_SEPARATOR) if text else None


def _known(value: int) -> int | None:
    return value if value >= 0 else None


class BoardQueries:
    """The questions the leaderboards' answers ask of one archive's boards and the index laid over that archive."""

    __slots__ = ("_boards", "_index", "_ordinals")

    def __init__(self, boards: Boards, index: OverlaidIndex, ordinals: Ordinals) -> None:
        self._boards, self._index, self._ordinals = boards, index, ordinals

    @classmethod
    def over(cls, index: PaperIndex) -> BoardQueries | None:
        """The leaderboards of the archive beneath `index`; None when it has none (no archive, or one built without)."""
        if not isinstance(index, OverlaidIndex) or index.archive is None or index.archive.boards is None or index.ordinals is None:
            return None
        return cls(index.archive.boards, index, index.ordinals)

    # -- names ---------------------------------------------------------------------------

    def count(self, kind: NameKind) -> int:
        """How many tasks, methods or datasets the archive has."""
        boards = self._boards
        return boards.tasks if kind == "task" else boards.methods if kind == "method" else boards.datasets

    def name(self, kind: NameKind, i: int) -> str | None:
        """The name of a task, method or dataset, as stored."""
        return self._boards.strings[f"{kind}.name"][i]

    def near(self, kind: NameKind, text: str) -> list[int]:
        """What the names nearest `text` name."""
        return self._boards.near(kind, text)

    def meant(self, kind: NameKind, text: str) -> list[int]:
        """What `text` names, narrowed to what its writer meant (one, when that can be told): those spelled exactly so,
        else so in another case (`_spelled_alike`). A task under a name other tasks have too is named by its parents'
        names first, `Parent > Task` (`PATH`); of tasks spelled alike, the one whose names from the top are those written
        wins (the top-level task, for a name alone), and entries alike all the way up cannot be told apart: the first
        stands for them (for tasks, with the benchmarks and subtasks of all: `task_benchmarks`, `subtasks`)."""
        segments = [text]
        found = self._boards.find(kind, text)
        if kind == "task":  # the task key merges doubled digits: `Atari 2600` must not find `Atari 260`
            names = self._boards.strings["task.name"]
            found = [i for i in found if same_numbers(text, names[i] or "")]
            if not found and PATH in text:
                segments = [segment.strip() for segment in text.split(PATH)]
                found = self._under(segments)
        if len(found) <= 1:
            return found
        spelled = {i: PATH.join(self._path(kind, i, len(segments))) for i in found}
        alike = _spelled_alike(found, spelled.__getitem__, PATH.join(segments))
        if len(alike) > 1 and kind == "task":
            first_of_path: dict[tuple[str, ...], int] = {}
            for i in alike:
                first_of_path.setdefault(tuple(self._path(kind, i, None)), self._first_twin(i))
            anchored = [i for path, i in first_of_path.items() if len(path) == len(segments)]
            alike = anchored if len(anchored) == 1 else list(first_of_path.values())
        return alike

    def label(self, kind: NameKind, i: int) -> str:
        """A name that leads to `i` alone (or to the first of its twins, which answers for them all): its own, or, for a
        task under a name others have too, the fewest of its parents' names before it that tell it apart
        (`Parent > Task`)."""
        name = self._boards.strings[f"{kind}.name"][i] or ""
        if kind != "task" or i not in self._boards.repeated_task_names:
            return name
        i = self._first_twin(i)
        path = self._path(kind, i, None)
        for levels in range(1, len(path) + 1):
            label = PATH.join(path[-levels:])
            if self.meant(kind, label) == [i]:
                return label
        return PATH.join(path)

    def _path(self, kind: NameKind, i: int, levels: int | None) -> list[str]:
        """The names of `i` and, for a task, of its parents, `levels` of them at most (None: all), the top first."""
        if kind == "task":
            return self._boards.task_path(i, levels)
        return [self._boards.strings[f"{kind}.name"][i] or ""]

    def _first_twin(self, task: int) -> int:
        """The task that answers for `task` and the tasks named alike all the way up (`Boards.task_twins`): the first."""
        twins = self._boards.task_twins.get(task)
        return task if twins is None else twins[0]

    def _under(self, segments: list[str]) -> list[int]:
        """The tasks named `segments[-1]` whose parents are named, upwards, by the segments before it."""
        *parents, own = segments
        if not own or not all(parents):
            return []
        names = self._boards.strings["task.name"]
        found = []
        for i in self._boards.find("task", own):
            if not same_numbers(own, names[i] or ""):
                continue
            chain = self._path("task", i, len(segments))[:-1]
            if len(chain) == len(parents) and all(
                name_key("task", p) in name_keys("task", [c]) for p, c in zip(parents, chain, strict=True)
            ):
                found.append(i)
        return found

    def benchmarks_named(self, task: int, text: str) -> list[int]:
        """The task's benchmarks a dataset name means: by their own name, else by their dataset's names (full name,
        variants); an exact spelling first."""
        ids = self.task_benchmarks(task)
        datasets = self.benchmark_datasets(ids)
        found = _within(datasets, "dataset", text)
        if not found:
            entities, entity = set(self._boards.find("dataset", text)), self._boards.ints["board.dataset_id"]
            found = [i for i, b in enumerate(ids) if entity[b] in entities]
        return [ids[i] for i in _spelled_alike(found, datasets.__getitem__, text)]

    def metrics_named(self, metrics: range, text: str) -> list[int]:
        """The board-metrics of `metrics` (a benchmark's) a metric name means; an exact spelling first."""
        names = [name or "" for name in self.metric_names(metrics)]
        return [metrics[i] for i in _spelled_alike(_within(names, "metric", text), names.__getitem__, text)]

    def subtasks(self, task: int) -> Sequence[int]:
        """A task's subtasks (and its twins'), tasks named alike all the way up once, as the first of them."""
        boards = self._boards
        if not boards.task_twins:
            return boards.children(task)
        children = [child for twin in boards.task_twins.get(task, (task,)) for child in boards.children(twin)]
        return list(dict.fromkeys(self._first_twin(child) for child in children))

    # -- benchmarks ----------------------------------------------------------------------

    def benchmark(self, b: int) -> BoardView:
        return self._boards.board(b)

    def benchmarks(self, ids: Sequence[int]) -> list[BoardView]:
        board = self._boards.board
        return [board(b) for b in ids]

    def task_benchmarks(self, task: int) -> Sequence[int]:
        """A task's benchmarks, in the build's order (laid out together), and its twins' after them (`Boards.task_twins`)."""
        twins = self._boards.task_twins.get(task)
        if twins is None:
            return self._boards.task_boards(task)
        return [b for twin in twins for b in self._boards.task_boards(twin)]

    def dataset_benchmarks(self, *datasets: int) -> list[int]:
        """The benchmarks on any of `datasets`, the busiest first."""
        if len(datasets) == 1:
            return self.busiest(self._boards.dataset_boards(datasets[0]))
        return self.busiest([b for d in datasets for b in self._boards.dataset_boards(d)])

    def busiest(self, ids: Sequence[int]) -> list[int]:
        """Benchmarks, the most rows first (then in the build's order)."""
        if len(ids) < 2:  # most datasets have one benchmark at most
            return list(ids)
        offsets = self._boards.ints["board.rows"]
        return sorted(ids, key=lambda b: (offsets[b] - offsets[b + 1], b))

    def benchmark_datasets(self, ids: Sequence[int]) -> list[str]:
        """The dataset names of benchmarks."""
        names = self._boards.strings["board.dataset"]
        return [names[b] or "" for b in ids]

    def metric_names(self, metrics: Sequence[int]) -> list[str | None]:
        """The names of board-metrics (a benchmark's: `BoardView.metrics`), as stored."""
        names = self._boards.strings["metric.name"]
        return [names[m] for m in metrics]

    def lower_is_better(self, metric: int) -> bool:
        """Whether a board-metric ranks lower first, as the server decides it now (`Boards.lower_is_better`)."""
        return self._boards.lower_is_better(metric)

    # -- rows ----------------------------------------------------------------------------

    def rows(
        self,
        benchmark: BoardView,
        metric: int | None,
        order: Order,
        *,
        values: Sequence[int],
        has_code: bool | None = None,
        statuses: Sequence[str] | None = None,
        offset: int = 0,
        limit: int,
    ) -> tuple[int, list[RankedRow]]:
        """(how many rows pass the filters, those of one page) of a benchmark ordered by its board-metric `metric`
        (`order`; None, for a benchmark that reports no metric: the build's order, unranked), each with its values of
        the board-metrics `values`. `has_code`: the row's own links or its paper's name a repository (or none does);
        `statuses`: its paper has a harvested sample with one of them."""
        boards, start = self._boards, benchmark.rows.start
        if metric is not None and has_code is None and statuses is None:  # one slice of the order
            local, ranks = boards.ordered(metric, order, offset, offset + limit)
            return len(benchmark.rows), [self._row(start + r, r, values, rank) for r, rank in zip(local, ranks, strict=True)]
        ordered = boards.metric_places(metric, order) if metric is not None else np.arange(len(benchmark.rows), dtype=np.int32)
        matching = self._filtered(start, ordered, has_code=has_code, statuses=statuses)
        page = matching[offset : offset + limit]
        rows = [
            self._row(start + r, r, values, boards.rank_at(metric, order, place) if metric is not None else 0)
            for place, r in zip(page.tolist(), ordered[page].tolist(), strict=True)
        ]
        return len(matching), rows

    def best(self, benchmark: BoardView) -> BestRow | None:
        """A benchmark's best row by its first metric, in that metric's direction; None when it has no metric or no row
        ranked."""
        if not benchmark.metrics:
            return None
        boards, m = self._boards, benchmark.metrics.start
        local, ranks = boards.ordered(m, "asc" if boards.lower_is_better(m) else "desc", 0, 1)
        if not local or not ranks[0]:
            return None
        g = benchmark.rows.start + local[0]
        a = boards.ints["row.paper"][g]
        paper = self._index.papers.key(self._ordinals.of_archive(a)) if a >= 0 else None
        return BestRow(
            boards.value(m, local[0])[0], boards.strings["row.model"][g], paper, None if a >= 0 else boards.strings["row.ref"][g]
        )

    def results(self, paper: PaperRow, *, most: int, metrics: int) -> tuple[int, list[ResultRow]]:
        """(how many rows the paper has, the first `most` as results with the values of their benchmarks' first
        `metrics` metrics). A record's rows are those of the archive paper it replaces."""
        ordinals, archive = self._ordinals, self._index.archive
        assert archive is not None  # an overlaid index has its archive
        if paper.ordinal >= ordinals.records:
            archived = [ordinals.archive_paper(paper.ordinal)]
        else:
            found = {
                archive.by_arxiv.get(paper.arxiv_id) if paper.arxiv_id else None,
                archive.by_slug.get(paper.slug) if paper.slug else None,
            }
            archived = sorted(a for a in found if a is not None and ordinals.replaced.get(a) == paper.ordinal)
        rows = [g for a in archived for g in self._boards.rows_of_paper(a)]
        return len(rows), [self._result(g, metrics) for g in rows[:most]]

    def _result(self, g: int, metrics: int) -> ResultRow:
        boards = self._boards
        benchmark = boards.board(boards.ints["row.board"][g])
        local = g - benchmark.rows.start
        rank = 0
        if benchmark.metrics:
            m = benchmark.metrics.start
            order: Order = "asc" if boards.lower_is_better(m) else "desc"
            rank = boards.rank_at(m, order, boards.place_of(m, order, local))
        names = boards.strings["metric.name"]
        values: dict[str, str] = {}
        for m in benchmark.metrics[:metrics]:
            typed, _ = boards.value(m, local)
            if typed is not None:
                values[names[m] or ""] = typed
        return ResultRow(benchmark, boards.strings["row.model"][g], values, rank)

    def _row(self, g: int, local: int, metrics: Sequence[int], rank: int) -> RankedRow:
        """Row `g` (`local`: its place in its board), with its values of the board-metrics `metrics`."""
        boards = self._boards
        strings, value = boards.strings, boards.value
        a = boards.ints["row.paper"][g]
        paper = title = ref = None
        samples, status = 0, None
        if a >= 0:
            paper = self._index.papers[self._ordinals.of_archive(a)]
            if paper.samples:
                samples, status = len(paper.samples), best_status(self._index, paper)
        else:
            title, ref = strings["row.title"][g], strings["row.ref"][g]
        links = strings["row.links"][g]
        return RankedRow(  # by position: a page builds a row for each of its rows and for each benchmark's best
            rank,
            strings["row.model"][g],
            tuple([value(m, local)[0] for m in metrics]),
            paper,
            strings["row.date"][g],
            title,
            ref,
            _EXTRA_DATA.get(boards.ints["row.extra"][g]),
            tuple([url for url in links.split(LIST_SEPARATOR) if url]) if links else (),
            samples,
            status,
        )

    def _filtered(self, row_start: int, places: np.ndarray, *, has_code: bool | None, statuses: Sequence[str] | None) -> np.ndarray:
        """The places (in the order's sequence) whose rows pass the filters: code as the build knew it, corrected for the
        rows whose paper a record replaces (its links are the record's), and harvested samples of a status."""
        boards, index, ordinals = self._boards, self._index, self._ordinals
        rows = row_start + places.astype(np.int64)
        keep = np.ones(len(rows), dtype=bool)
        if has_code is None and statuses is None:
            return np.flatnonzero(keep)
        archive_papers = boards.row_paper[rows]
        replaced = ordinals.replaced_sorted
        by_record = np.flatnonzero(np.isin(archive_papers, replaced)) if len(replaced) else NO_ROWS
        replacing = [(i, index.papers[ordinals.of_archive(int(archive_papers[i]))]) for i in by_record.tolist()]  # (row, record)
        if has_code is not None:
            code = boards.row_code[rows] != 0
            for i, record in replacing:
                code[i] = bool(boards.row_code[rows[i]] & ROW_OWN_CODE) or any(link.repo for link in record.details().code_links)
            keep &= code if has_code else ~code
        if statuses is not None:
            wanted = set(statuses)
            harvested = np.zeros(len(rows), dtype=bool)
            for i, record in replacing:
                harvested[i] = bool(record.samples) and not wanted.isdisjoint(index.statuses_of(record))
            keep &= harvested
        return np.flatnonzero(keep)

    # -- tasks, methods and datasets -----------------------------------------------------

    def task(self, task: int) -> TaskFacts:
        strings, ints = self._boards.strings, self._boards.ints
        return TaskFacts(
            strings["task.name"][task],
            strings["task.description"][task],
            strings["task.area"][task],
            _known(ints["task.parent"][task]),
            ints["task.papers"][task],
        )

    def method(self, method: int) -> MethodFacts:
        strings, ints = self._boards.strings, self._boards.ints
        a = ints["method.paper"][method]
        return MethodFacts(
            strings["method.name"][method],
            strings["method.full_name"][method],
            strings["method.description"][method],
            _known(ints["method.papers"][method]),
            _known(ints["method.year"][method]),
            self._index.papers[self._ordinals.of_archive(a)] if a >= 0 else None,
            None if a >= 0 else strings["method.paper_title"][method],
            _listed(strings["method.collections"][method]),
        )

    def dataset(self, dataset: int) -> DatasetFacts:
        strings = self._boards.strings
        return DatasetFacts(
            strings["dataset.name"][dataset],
            strings["dataset.full_name"][dataset],
            strings["dataset.description"][dataset],
            _known(self._boards.ints["dataset.papers"][dataset]),
            _listed(strings["dataset.modalities"][dataset]),
            _listed(strings["dataset.tasks"][dataset]),
            strings["dataset.homepage"][dataset],
        )
