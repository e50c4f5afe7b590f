"""What `get_leaderboard`, `describe` and `get_paper`'s results answer: the archive's leaderboards joined with the harvest.

A benchmark's rows come best first by one of its metrics, in the order the build sorted them (`index.board_columns`); a row's
paper is the archive paper it joined, or the record that replaces that paper (`index.layers.Ordinals`), so the rows of
a paper with harvested samples say how many there are and how the best of them ran. Names are resolved as people
write them (`core.names`), within the task for its benchmarks and metrics, an exact spelling first; a task whose name
others have too is named by its parents' names as well (`Parent > Task`); a name of another kind than asked is
answered with what it is and the call to make. Answers are built as shown (`shaping.shown`), as the keyed tools' are.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

import numpy as np

from papercode.core.errors import QueryError
from papercode.core.ids import parse_arxiv_id, repo_key
from papercode.core.metrics import direction_text
from papercode.core.names import NameKind, name_key, name_keys, same_numbers, shared_prefix
from papercode.corpus.stages import Corpus
from papercode.index.board_columns import EXTRA_NO, EXTRA_YES, LIST_SEPARATOR, ROW_OWN_CODE, Boards, Order
from papercode.index.layers import LayeredIndex, Ordinals
from papercode.index.paper_index import PaperRow, best_status

from . import models
from .checks import check_statuses
from .shaping import TITLE_CHARS, shorten, shown

NAME_CHARS: Final = 300
DESCRIPTION_CHARS: Final = 1_500
MAX_ROWS: Final = 50  # a page of a leaderboard (or of a task's benchmarks) at most
VALUES_SHOWN: Final = 6  # of a row's metric values, the sorted one and the board's first ones
METRICS_SHOWN: Final = 3  # of a benchmark's metrics, in a task's list of benchmarks
SUBTASKS_SHOWN: Final = 20
BENCHMARKS_SHOWN: Final = 10  # in describe
RESULTS_SHOWN: Final = 5  # in get_paper
RESULT_VALUES: Final = 3  # of a result's metric values, in get_paper
NAMES_SHOWN: Final = 10  # in an `ambiguous` or `not_found` error
PATH: Final = " > "  # between a task's parent's name and its own: `Parent > Task`, where the name alone is not one task's
KINDS: Final[tuple[NameKind, ...]] = ("task", "method", "dataset")
# The words for a kind that describe reads as it: plurals, and what people call a method or a dataset.
KIND_WORDS: Final[dict[str, NameKind]] = {
    **{word: "task" for word in ("task", "tasks", "subtask", "subtasks")},
    **{word: "method" for word in ("method", "methods", "model", "models", "architecture", "architectures", "technique", "techniques")},
    **{word: "dataset" for word in ("dataset", "datasets", "benchmark", "benchmarks")},
}
Tool = Literal["describe", "get_leaderboard"]
ADD_BOARDS: Final = (
    "papercode archive fetch (it downloads pwc-archive/evaluation-tables, methods and datasets too), or papercode archive "
    "build with evaluation-tables.json.gz, methods.json.gz and datasets.json.gz beside the papers and links; then restart "
    "or reload the server"
)


def _boards(corpus: Corpus) -> Boards:
    archive = corpus.archive
    if archive is None:
        raise QueryError(
            "not_found", "leaderboards come with the Papers-with-Code archive, and none is served", f"serve it with --archive: {ADD_BOARDS}"
        )
    if archive.boards is None:
        raise QueryError("not_found", "the archive served has no leaderboards (its build read no evaluation tables)", ADD_BOARDS)
    return archive.boards


def _layers(corpus: Corpus) -> tuple[LayeredIndex, Ordinals]:
    index = corpus.index
    assert isinstance(index, LayeredIndex) and index.ordinals is not None  # an archive is served: the index is layered
    return index, index.ordinals


# -- names -----------------------------------------------------------------------------------


def _asked(value: str, what: str) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not text or len(text) > NAME_CHARS:
        raise QueryError(
            "invalid_argument",
            f"{what} is empty" if not text else f"{what} is over {NAME_CHARS} characters",
            f"pass a {what} name as people write it (any case; a slug will do)",
        )
    return text


def _listed(names: Sequence[str | None], total: int | None = None) -> str:
    """The first `NAMES_SHOWN` of `names` quoted, and how many more there are (of `total`, when only those are given)."""
    total = len(names) if total is None else total
    quoted = [repr(name) for name in names[:NAMES_SHOWN] if name]
    return ", ".join(quoted) + (f" and {total - NAMES_SHOWN} more" if total > NAMES_SHOWN else "")


def resolve(boards: Boards, kind: NameKind, asked: str, *, tool: Tool = "describe") -> int:
    """The task, method or dataset a name means (`_meant`): `ambiguous` when it names several, listing a name for each
    that leads to it alone (`_label`); `not_found` saying what it names instead, with the call `tool` is answered by
    (`_another_kind`), else with the nearest names."""
    text = _asked(asked, kind)
    meant = _meant(boards, kind, text)
    if len(meant) == 1:
        return meant[0]
    if meant:
        raise QueryError(
            "ambiguous",
            f"{text!r} names {len(meant)} {kind}s: {_listed([_label(boards, kind, i) for i in meant[:NAMES_SHOWN]], len(meant))}",
            f"call again with one of these {kind} names",
        )
    other = {k: found for k in KINDS if k != kind and (found := _meant(boards, k, text))}
    if other:
        raise _another_kind(boards, kind, text, other, tool)
    near = list(dict.fromkeys(_label(boards, kind, i) for i in boards.near(kind, text)))
    nearest = f"; nearest: {_listed(near)}" if near else ""
    raise QueryError(
        "not_found",
        f"no {kind} named {text!r} among the archive's {getattr(boards, kind + 's'):,} {kind}s{nearest}",
        f"call again with one of the nearest names, or search_papers({kind if kind != 'dataset' else 'query'}=...) for papers on it",
    )


def _another_kind(boards: Boards, kind: NameKind, text: str, other: dict[NameKind, list[int]], tool: Tool) -> QueryError:
    """The error for a name of another kind than asked (`other`: what it names of each): which kind it is, and the call
    to make, `tool`'s own when it can answer (a dataset's benchmarks, for get_leaderboard)."""
    what = f"no {kind} named {text!r}; it is a " + " and a ".join(other)
    if "dataset" in other and tool == "get_leaderboard":
        benchmarked = _by_rows(boards, [b for d in other["dataset"] for b in boards.dataset_boards(d)])
        if benchmarked:
            return _benchmarked_in(boards, what, benchmarked)
        what += " with no benchmarks"
    first_kind, found = next(iter(other.items()))
    name = _label(boards, first_kind, found[0])
    also = f", or search_papers(method={name!r}) for the papers using it" if first_kind == "method" else ""
    return QueryError("not_found", what, f"call describe(kind={first_kind!r}, name={name!r}){also}")


def _benchmarked_in(boards: Boards, what: str, benchmarked: list[int]) -> QueryError:
    """The error for a dataset named where its tasks' leaderboards are meant: its tasks, and the call to its busiest board."""
    tasks = list(dict.fromkeys(_label(boards, "task", boards.board(b).task) for b in benchmarked))
    first = boards.board(benchmarked[0])
    others = f", or another of its {len(benchmarked)} benchmarks" if len(benchmarked) > 1 else ""
    return QueryError(
        "not_found",
        f"{what}, benchmarked in {'task' if len(tasks) == 1 else 'tasks'} {_listed(tasks)}",
        f"call get_leaderboard(task={tasks[0]!r}, dataset={first.dataset!r}){others}",
    )


def _meant(boards: Boards, kind: NameKind, text: str) -> list[int]:
    """What `text` names, narrowed to what its writer meant (one, when that can be told): those spelled exactly so, else
    so in another case (`_spelled_alike`). A task under a name other tasks have too is named by its parents' names
    first, `Parent > Task` (`PATH`); of tasks spelled alike, the one whose names from the top are those written wins
    (the top-level task, for a name alone), and entries alike all the way up cannot be told apart: the first stands
    for them."""
    names = boards.strings[f"{kind}.name"]
    segments = [text]
    found = boards.find(kind, text)
    if kind == "task":  # the task key merges doubled digits: `Atari 2600` must not find `Atari 260`
        found = [i for i in found if same_numbers(text, names[i] or "")]
        if not found and PATH in text:
            segments = [segment.strip() for segment in text.split(PATH)]
            found = _under(boards, segments)
    if len(found) <= 1:
        return found
    spelled = {i: PATH.join(_path(boards, kind, i, len(segments))) for i in found}
    alike = _spelled_alike(found, spelled.__getitem__, PATH.join(segments))
    if len(alike) > 1 and kind == "task":
        first_of_path: dict[tuple[str, ...], int] = {}
        for i in alike:
            first_of_path.setdefault(tuple(_path(boards, kind, i, None)), i)
        anchored = [i for path, i in first_of_path.items() if len(path) == len(segments)]
        alike = anchored if len(anchored) == 1 else list(first_of_path.values())
    return alike


def _spelled_alike(found: Sequence[int], spelled: Callable[[int], str], text: str) -> list[int]:
    """Of `found`, those spelled exactly `text`, else those spelled so in another case, else all of them: an exact
    spelling wins over a case variant (`Accuracy` and `accuracy` are two metrics)."""
    lower = text.lower()
    for alike in ([i for i in found if spelled(i) == text], [i for i in found if spelled(i).lower() == lower]):
        if alike:
            return alike
    return list(found)


def _path(boards: Boards, kind: NameKind, i: int, levels: int | None) -> list[str]:
    """The names of `i` and of its parents, `levels` of them at most (None: all), the top first."""
    names, chain = boards.strings[f"{kind}.name"], [boards.strings[f"{kind}.name"][i] or ""]
    if kind == "task":
        parent = boards.ints["task.parent"][i]
        while parent >= 0 and (levels is None or len(chain) < levels):
            chain.append(names[parent] or "")
            parent = boards.ints["task.parent"][parent]
    return chain[::-1]


def _under(boards: Boards, segments: list[str]) -> list[int]:
    """The tasks named `segments[-1]` whose parents are named, upwards, by the segments before it."""
    *parents, own = segments
    if not own or not all(parents):
        return []
    names = boards.strings["task.name"]
    found = []
    for i in boards.find("task", own):
        if not same_numbers(own, names[i] or ""):
            continue
        chain = _path(boards, "task", i, len(segments))[:-1]
        if len(chain) == len(parents) and all(name_key("task", p) in name_keys("task", [c]) for p, c in zip(parents, chain, strict=True)):
            found.append(i)
    return found


def _label(boards: Boards, kind: NameKind, i: int) -> str:
    """A name that leads to `i` alone: its own, or, for a task under a name others have too, the fewest of its
    parents' names before it that tell it apart (`Parent > Task`)."""
    name = boards.strings[f"{kind}.name"][i] or ""
    if kind != "task" or i not in boards.repeated_task_names:
        return name
    path = _path(boards, kind, i, None)
    for levels in range(1, len(path) + 1):
        label = PATH.join(path[-levels:])
        if _meant(boards, kind, label) == [i]:
            return label
    return PATH.join(path)


def _within(names: Sequence[str], kind: NameKind, asked: str) -> list[int]:
    """Which of `names` (a task's benchmarks, a benchmark's metrics) `asked` means, as `core.names` keys them."""
    wanted = name_key(kind, asked)
    return [i for i, name in enumerate(names) if wanted in name_keys(kind, [name])]


def _board(boards: Boards, task: int, asked: str) -> int:
    """The task's benchmark a dataset name means: its own name, else its dataset's name, full name or a variant."""
    text = _asked(asked, "dataset")
    ids = list(boards.task_boards(task))
    datasets: list[str] = [boards.strings["board.dataset"][b] or "" for b in ids]
    found = [ids[i] for i in _within(datasets, "dataset", text)]
    if not found:
        entities = set(boards.find("dataset", text))
        found = [b for b in ids if boards.ints["board.dataset_id"][b] in entities]
    found = _spelled_alike(found, lambda b: boards.strings["board.dataset"][b] or "", text)
    if len(found) == 1:
        return found[0]
    task_name = _label(boards, "task", task)
    if found:
        raise QueryError(
            "ambiguous",
            f"{text!r} names {len(found)} benchmarks of {task_name!r}: {_listed([boards.strings['board.dataset'][b] for b in found])}",
            "call again with one of these datasets",
        )
    elsewhere = _by_rows(boards, [b for d in _meant(boards, "dataset", text) for b in boards.dataset_boards(d)])
    if elsewhere:  # a dataset benchmarked in other tasks
        raise _benchmarked_in(boards, f"{task_name!r} has no benchmark on {text!r}; it is a dataset", elsewhere)
    wanted = name_key("dataset", text)
    nearest: list[str] = sorted(datasets, key=lambda name: -shared_prefix(name_key("dataset", name), wanted))
    listed = _listed(nearest) if datasets else ""
    raise QueryError(
        "not_found",
        f"{task_name!r} has no benchmark on {text!r}" + (f"; its benchmarks: {listed}" if listed else " (it has no benchmarks)"),
        f"call get_leaderboard(task={task_name!r}) for its benchmarks, or describe(kind='dataset', name={text!r}) for the tasks "
        "evaluated on it",
    )


def _metric(boards: Boards, metrics: range, asked: str | None) -> int:
    names = [boards.strings["metric.name"][m] or "" for m in metrics]
    if asked is None:
        return metrics.start
    text = _asked(asked, "metric")
    found = _spelled_alike(_within(names, "metric", text), names.__getitem__, text)
    if len(found) == 1:
        return metrics[found[0]]
    if found:
        raise QueryError(
            "ambiguous", f"{text!r} names {len(found)} metrics: {_listed([names[i] for i in found])}", "call again with one of them"
        )
    raise QueryError(
        "not_found", f"this benchmark has no metric {text!r}; its metrics: {_listed(names)}", "call again with one of its metrics"
    )


# -- get_leaderboard -------------------------------------------------------------------------


def leaderboard_shown(
    corpus: Corpus,
    task: str,
    dataset: str | None = None,
    *,
    metric: str | None = None,
    order: str | None = None,
    has_code: bool | None = None,
    status: str | Sequence[str] | None = None,
    limit: int = 10,
    cursor: str | None = None,
) -> dict[str, Any]:
    """A benchmark's rows best first (`models.Leaderboard`, as shown); without `dataset`, the task's benchmarks."""
    boards = _boards(corpus)
    if not 1 <= limit <= MAX_ROWS:
        raise QueryError(
            "invalid_argument", f"limit must be 1..{MAX_ROWS}, got {limit}", f"call again with a limit between 1 and {MAX_ROWS}"
        )
    t = resolve(boards, "task", task, tool="get_leaderboard")
    if order is not None and order not in ("asc", "desc"):
        raise QueryError(
            "invalid_argument", f"order must be asc or desc, not {str(order)[:20]!r}", "call again with order asc or desc, or without it"
        )
    statuses = check_statuses(corpus, status) if status else None
    if dataset is None:
        if metric is not None or order is not None or has_code is not None or statuses:
            raise QueryError(
                "invalid_argument",
                "metric, order, has_code and status rank one benchmark's rows",
                "call again with a dataset (this call without them lists them)",
            )
        return _benchmarks(corpus, boards, t, limit, cursor)
    b = _board(boards, t, dataset)
    view = boards.board(b)
    m = _metric(boards, view.metrics, metric)
    lower = boards.lower_is_better(m)
    default: Order = "asc" if lower else "desc"
    chosen: Order = "asc" if order == "asc" else "desc" if order == "desc" else default
    page_query = {"tool": "leaderboard", "board": b, "metric": m, "order": chosen, "has_code": has_code, "status": statuses, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    n = len(view.rows)
    if has_code is None and statuses is None:
        total = n
        places: Sequence[int] = range(offset, min(offset + limit, n))
    else:
        matching = _filtered(corpus, boards, view.rows.start, boards.metric_places(m, chosen), has_code=has_code, statuses=statuses)
        total = len(matching)
        places = matching[offset : offset + limit].tolist()
    shown_metrics = _shown_metrics(view.metrics, m)
    rows, harvested = _rows(corpus, boards, view.rows.start, metrics=shown_metrics, metric=m, order=chosen, places=places)
    direction = direction_text(lower) + ("" if chosen == default else f"; shown {chosen} as asked")
    end = offset + len(rows)
    return shown(
        task=boards.strings["task.name"][t],
        dataset=view.dataset,
        metric=boards.strings["metric.name"][m],
        direction=direction,
        order=chosen,
        metrics=[boards.strings["metric.name"][i] for i in shown_metrics],
        other_metrics=[boards.strings["metric.name"][i] for i in view.metrics if i not in shown_metrics] or None,
        total=total,
        rows=rows,
        next_cursor=corpus.pager.encode(page_query, end) if end < total else None,
        note=_note(total, n, has_code, statuses),
        attribution=models.BOTH_ATTRIBUTION if harvested else models.ARCHIVE_ATTRIBUTION,
    )


def _note(total: int, rows: int, has_code: bool | None, statuses: list[str] | None) -> str | None:
    if total or not rows:
        return None
    asked = " and ".join(
        part
        for part in (
            "with code" if has_code else "without code" if has_code is False else "",
            "with samples of that status" if statuses else "",
        )
        if part
    )
    return f"none of its {rows:,} rows is {asked}. Next: call again without the filter, or with another status"


def _filtered(
    corpus: Corpus, boards: Boards, row_start: int, places: np.ndarray, *, has_code: bool | None, statuses: list[str] | None
) -> np.ndarray:
    """The places (in the order's sequence) whose rows pass the filters: code as the build knew it, corrected for the
    rows whose paper a record replaces (its links are the record's), and harvested samples of a status."""
    index, ordinals = _layers(corpus)
    rows = row_start + places.astype(np.int64)
    archive_papers = boards.row_paper[rows]
    replaced = _replaced(ordinals)
    by_record = np.flatnonzero(np.isin(archive_papers, replaced)) if len(replaced) else np.zeros(0, dtype=np.int64)
    keep = np.ones(len(rows), dtype=bool)
    if has_code is not None:
        code = boards.row_code[rows] != 0
        for i in by_record.tolist():
            record = index.papers[ordinals.of_archive(int(archive_papers[i]))]
            code[i] = bool(boards.row_code[rows[i]] & ROW_OWN_CODE) or any(link.repo for link in record.details().code_links)
        keep &= code if has_code else ~code
    if statuses is not None:
        wanted = set(statuses)
        harvested = np.zeros(len(rows), dtype=bool)
        for i in by_record.tolist():
            record = index.papers[ordinals.of_archive(int(archive_papers[i]))]
            harvested[i] = bool(record.samples) and not wanted.isdisjoint(index.statuses_of(record))
        keep &= harvested
    return np.flatnonzero(keep)


@functools.lru_cache(maxsize=4)  # one per corpus composed over the archive
def _replaced(ordinals: Ordinals) -> np.ndarray:
    """The archive papers a record replaces, sorted, for `np.isin`."""
    return np.array(sorted(ordinals.replaced), dtype=np.int32)


def _rows(
    corpus: Corpus, boards: Boards, row_start: int, *, metrics: list[int], metric: int, order: Order, places: Sequence[int]
) -> tuple[list[dict[str, Any]], bool]:
    """The rows at `places` of a board-metric's order, as shown (their values: of `metrics`); and whether any carries
    harvest facts."""
    if not places:
        return [], False
    local, ranks = [], []
    for place in places:
        at, ranked = boards.ordered(metric, order, place, place + 1)
        local.append(at[0])
        ranks.append(ranked[0])
    out: list[dict[str, Any]] = []
    harvested = False
    for r, rank in zip(local, ranks, strict=True):
        row = _row(corpus, boards, row_start + r, local=r, metrics=metrics, rank=rank)
        harvested = harvested or "harvest" in row
        out.append(row)
    return out, harvested


def _shown_metrics(metrics: range, metric: int) -> list[int]:
    first = [m for m in metrics[:VALUES_SHOWN] if m != metric]
    return [metric, *first][:VALUES_SHOWN]


def _values(boards: Boards, metrics: Sequence[int], local: int) -> dict[str, str]:
    """A row's values of `metrics` it reports, by metric name."""
    values: dict[str, str] = {}
    for m in metrics:
        typed, _ = boards.value(m, local)
        if typed is not None:
            values[boards.strings["metric.name"][m] or ""] = typed
    return values


def _aligned(boards: Boards, metrics: Sequence[int], local: int) -> list[str]:
    """A row's values of `metrics`, in their order ("" where it reports none): the metrics are named once, above."""
    return [boards.value(m, local)[0] or "" for m in metrics]


def _row(corpus: Corpus, boards: Boards, g: int, *, local: int, metrics: Sequence[int], rank: int) -> dict[str, Any]:
    paper, record = _paper_of_row(corpus, boards, g)
    own = (boards.strings["row.links"][g] or "").split(LIST_SEPARATOR)
    extra = boards.ints["row.extra"][g]
    harvest = None
    if record is not None and record.samples:
        status = best_status(corpus.index, record)
        harvest = shown(samples=len(record.samples), best_status=status) if status else None
    return shown(
        rank=rank or None,
        model=boards.strings["row.model"][g],
        values=_aligned(boards, metrics, local),
        paper=paper,
        extra_data=True if extra == EXTRA_YES else False if extra == EXTRA_NO else None,
        code=_code([url for url in own if url], record),
        harvest=harvest,
    )


def _paper_of_row(corpus: Corpus, boards: Boards, g: int) -> tuple[dict[str, Any] | None, PaperRow | None]:
    """A row's paper as shown, and the paper itself when it joined one (an archive paper, or the record replacing it)."""
    a = boards.ints["row.paper"][g]
    date = boards.strings["row.date"][g]
    if a >= 0:
        index, ordinals = _layers(corpus)
        paper = index.papers[ordinals.of_archive(a)]
        ref = shown(
            arxiv_id=paper.arxiv_id,
            slug=None if paper.arxiv_id else paper.slug,
            title=shorten(paper.title, TITLE_CHARS),
            date=date or paper.date,
        )
        return ref, paper
    title, key = boards.strings["row.title"][g], boards.strings["row.ref"][g]
    if title is None and key is None:
        return None, None
    arxiv = parse_arxiv_id(key) if key else None
    return (
        shown(
            arxiv_id=arxiv.canonical if arxiv else None,
            slug=key if key and arxiv is None else None,
            title=shorten(title or key or "", TITLE_CHARS),
            date=date,
        ),
        None,
    )


def _code(own: list[str], paper: PaperRow | None) -> dict[str, Any] | None:
    """A row's code: its paper's official repository first, then its own links, then its paper's others; the rest counted."""
    links = paper.details().code_links if paper is not None else []
    ordered: dict[str, tuple[str, bool]] = {}
    for link in links:
        if link.is_official and link.repo:
            ordered.setdefault(link.repo, (link.repo_url, True))
    for url in own:
        ordered.setdefault(repo_key(url) or url.lower(), (url, False))
    for link in links:
        if link.repo:
            ordered.setdefault(link.repo, (link.repo_url, link.is_official))
    if not ordered:
        return None
    url, official = next(iter(ordered.values()))
    return shown(repo=url, official=official, more=len(ordered) - 1 or None)


def _benchmarks(corpus: Corpus, boards: Boards, task: int, limit: int, cursor: str | None) -> dict[str, Any]:
    """A task's benchmarks, the busiest first, each with its metrics, rows and current best; its subtasks by name."""
    page_query = {"tool": "benchmarks", "task": task, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    ordered = _by_rows(boards, boards.task_boards(task))
    page = ordered[offset : offset + limit]
    listed = []
    for b in page:
        view = boards.board(b)
        metrics = [boards.strings["metric.name"][m] or "" for m in view.metrics]
        listed.append(
            shown(
                dataset=view.dataset,
                metrics=metrics[:METRICS_SHOWN],
                rows=len(view.rows),
                best=_best(corpus, boards, view.rows.start, view.metrics),
            )
        )
    children = [_label(boards, "task", c) for c in boards.children(task)]
    end = offset + len(page)
    note = None
    if not ordered:
        note = "this task has no benchmarks of its own" + ("; its subtasks may: call get_leaderboard with one" if children else "")
    elif len(children) > SUBTASKS_SHOWN:
        note = f"{len(children) - SUBTASKS_SHOWN} more subtasks: describe(task, ...) lists them"
    return shown(
        task=boards.strings["task.name"][task],
        total=len(ordered),
        benchmarks=listed,
        subtasks=children[:SUBTASKS_SHOWN] or None,
        next_cursor=corpus.pager.encode(page_query, end) if end < len(ordered) else None,
        note=note,
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


def _by_rows(boards: Boards, ids: Sequence[int]) -> list[int]:
    offsets = boards.ints["board.rows"]
    return sorted(ids, key=lambda b: (offsets[b] - offsets[b + 1], b))


def _best(corpus: Corpus, boards: Boards, row_start: int, metrics: range) -> str | None:
    if not metrics:
        return None
    m = metrics.start
    order: Order = "asc" if boards.lower_is_better(m) else "desc"
    rows, ranks = boards.ordered(m, order, 0, 1)
    if not rows or not ranks[0]:
        return None
    g = row_start + rows[0]
    typed, _ = boards.value(m, rows[0])
    paper, _ = _paper_of_row(corpus, boards, g)
    key = None if paper is None else paper.get("arxiv_id") or paper.get("slug")
    model = boards.strings["row.model"][g]
    return f"{typed}" + (f", {model}" if model else "") + (f" ({key})" if key else "")


# -- describe --------------------------------------------------------------------------------


def describe_shown(corpus: Corpus, kind: str, name: str) -> dict[str, Any]:
    """A task, method or dataset of the archive (`models.Description`, as shown)."""
    boards = _boards(corpus)
    read = _kind(kind, name)
    if read == "task":
        return _describe_task(boards, resolve(boards, "task", name))
    if read == "method":
        return _describe_method(corpus, boards, resolve(boards, "method", name))
    return _describe_dataset(boards, resolve(boards, "dataset", name))


# Kinds describe does not answer, and the tool that does: (what to say, the call to make with the name).
_ANSWERED_ELSEWHERE: Final = {
    "paper": ("papers are found with search_papers", "call search_papers(query={name!r}), then get_paper with its id"),
    "metric": ("metrics are a benchmark's columns", "call get_leaderboard(task=...) with the task it measures"),
    "repository": ("repositories are looked up with find_papers_for_repo", "call find_papers_for_repo(repo={name!r})"),
}
_ELSEWHERE_WORDS: Final = {"papers": "paper", "article": "paper", "metrics": "metric", "repo": "repository", "repos": "repository"}


def _kind(kind: str, name: str) -> NameKind:
    """The kind `kind` means (`KIND_WORDS`, any case); invalid_argument naming the tool that answers another (a paper, a
    metric, a repository), or the nearest kind."""
    word = " ".join(str(kind).lower().split())
    read = KIND_WORDS.get(word)
    if read is not None:
        return read
    given = str(kind)[:20]
    elsewhere = _ANSWERED_ELSEWHERE.get(_ELSEWHERE_WORDS.get(word, word))
    if elsewhere is not None:
        what, call = elsewhere
        text = str(name)[:NAME_CHARS] if isinstance(name, str) else ""
        raise QueryError("invalid_argument", f"describe takes kind task, method or dataset, not {given!r}: {what}", call.format(name=text))
    near = difflib.get_close_matches(word, KIND_WORDS, n=1, cutoff=0.6)
    guess = f"kind={KIND_WORDS[near[0]]!r}" if near else "kind task, method or dataset"
    raise QueryError("invalid_argument", f"kind must be task, method or dataset, not {given!r}", f"call again with {guess}")


def _description(text: str | None) -> str | None:
    return None if text is None else shorten(text, DESCRIPTION_CHARS)


def _list(text: str | None) -> list[str] | None:
    return text.split(LIST_SEPARATOR) if text else None


def _count(value: int) -> int | None:
    return value if value >= 0 else None


def _describe_task(boards: Boards, t: int) -> dict[str, Any]:
    strings = boards.strings
    parent = boards.ints["task.parent"][t]
    children = [_label(boards, "task", c) for c in boards.children(t)]
    ids = _by_rows(boards, boards.task_boards(t))
    return shown(
        kind="task",
        name=strings["task.name"][t],
        description=_description(strings["task.description"][t]),
        area=strings["task.area"][t],
        parent=_label(boards, "task", parent) if parent >= 0 else None,
        subtasks=children[:SUBTASKS_SHOWN] or None,
        benchmarks=[_benchmark_ref(boards, b, with_task=False) for b in ids[:BENCHMARKS_SHOWN]] or None,
        more_benchmarks=len(ids) - BENCHMARKS_SHOWN if len(ids) > BENCHMARKS_SHOWN else None,
        papers=boards.ints["task.papers"][t],
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


def _benchmark_ref(boards: Boards, b: int, *, with_task: bool) -> dict[str, Any]:
    view = boards.board(b)
    return shown(task=_label(boards, "task", view.task) if with_task else None, dataset=view.dataset, rows=len(view.rows))


def _describe_method(corpus: Corpus, boards: Boards, i: int) -> dict[str, Any]:
    strings, ints = boards.strings, boards.ints
    a = ints["method.paper"][i]
    paper = None
    if a >= 0:
        index, ordinals = _layers(corpus)
        row = index.papers[ordinals.of_archive(a)]
        paper = shown(arxiv_id=row.arxiv_id, slug=None if row.arxiv_id else row.slug, title=shorten(row.title, TITLE_CHARS))
    elif title := strings["method.paper_title"][i]:
        paper = shown(title=shorten(title, TITLE_CHARS))
    year = ints["method.year"][i]
    return shown(
        kind="method",
        name=strings["method.name"][i],
        full_name=strings["method.full_name"][i],
        description=_description(strings["method.description"][i]),
        papers=_count(ints["method.papers"][i]),
        year=year if year >= 0 else None,
        paper=paper,
        collections=_list(strings["method.collections"][i]),
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


def _describe_dataset(boards: Boards, i: int) -> dict[str, Any]:
    strings = boards.strings
    ids = _by_rows(boards, boards.dataset_boards(i))
    return shown(
        kind="dataset",
        name=strings["dataset.name"][i],
        full_name=strings["dataset.full_name"][i],
        description=_description(strings["dataset.description"][i]),
        benchmarks=[_benchmark_ref(boards, b, with_task=True) for b in ids[:BENCHMARKS_SHOWN]] or None,
        more_benchmarks=len(ids) - BENCHMARKS_SHOWN if len(ids) > BENCHMARKS_SHOWN else None,
        papers=_count(boards.ints["dataset.papers"][i]),
        modalities=_list(strings["dataset.modalities"][i]),
        tasks=_list(strings["dataset.tasks"][i]),
        homepage=strings["dataset.homepage"][i],
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


# -- get_paper's results ---------------------------------------------------------------------


def paper_results(corpus: Corpus, paper: PaperRow) -> tuple[list[dict[str, Any]] | None, int | None]:
    """A paper's results on the archive's leaderboards (`models.PaperResult`, as shown; the first `RESULTS_SHOWN`),
    and how many more there are: None, None without leaderboards or results. A record's are those of the archive
    paper it replaces."""
    archive = corpus.archive
    if archive is None or archive.boards is None:
        return None, None
    boards = archive.boards
    _, ordinals = _layers(corpus)
    if paper.ordinal >= ordinals.records:
        archived = [ordinals.archive_paper(paper.ordinal)]
    else:
        found = {archive.by_arxiv.get(paper.arxiv_id) if paper.arxiv_id else None, archive.by_slug.get(paper.slug) if paper.slug else None}
        archived = sorted(a for a in found if a is not None and ordinals.replaced.get(a) == paper.ordinal)
    rows = [g for a in archived for g in boards.rows_of_paper(a)]
    if not rows:
        return None, None
    return [_result(boards, g) for g in rows[:RESULTS_SHOWN]], len(rows) - RESULTS_SHOWN if len(rows) > RESULTS_SHOWN else None


def _result(boards: Boards, g: int) -> dict[str, Any]:
    b = boards.ints["row.board"][g]
    view = boards.board(b)
    local = g - view.rows.start
    rank = None
    if view.metrics:
        m = view.metrics.start
        order: Order = "asc" if boards.lower_is_better(m) else "desc"
        rank = boards.rank_at(m, order, boards.place_of(m, order, local)) or None
    return shown(
        task=_label(boards, "task", view.task),
        dataset=view.dataset,
        model=boards.strings["row.model"][g],
        values=_values(boards, view.metrics[:RESULT_VALUES], local),
        rank=rank,
        of=len(view.rows),
    )
