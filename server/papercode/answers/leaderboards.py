"""What `get_leaderboard`, `describe` and `get_paper`'s results answer: the archive's leaderboards joined with the harvest.

Each checks its arguments (`checks`), asks the index (`index.board_queries.BoardQueries`: what a name means as people
write it, a board's rows filtered, ordered and paged, a task's benchmarks, an entity, a paper's results, as named rows)
and shapes what it answers. A benchmark's rows come best first by one of its metrics, in the order the build sorted
them; a row's paper is the archive paper it joined, or the record that replaces that paper, so the rows of a paper with
harvested samples say how many there are and how the best of them ran. A name that means several things is answered
with a name for each that leads to it alone (`Parent > Task` for a subtask whose name others have too); one of another
kind than asked with what it is and the call to make; one that means nothing with the nearest names. Answers are built
as shown (`shaping.shown`), as the keyed tools' are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from papercode.core.errors import QueryError
from papercode.core.ids import parse_arxiv_id, repo_key
from papercode.core.metrics import direction_text
from papercode.core.names import NameKind, name_key, near_by_edits, shared_prefix
from papercode.core.safe_text import followable
from papercode.corpus.stages import Corpus
from papercode.index.board_columns import BoardView, Order
from papercode.index.board_queries import BestRow, BoardQueries, MethodFacts, RankedRow
from papercode.index.paper_index import PaperRow

from . import models
from .checks import MAX_ASKED_NAME_CHARS, check_limit, check_name, check_order, check_statuses
from .shaping import TITLE_CHARS, page_cursor, shorten, shown

DESCRIPTION_CHARS: Final = 1_500
MAX_ROWS: Final = 50  # a page of a leaderboard (or of a task's benchmarks) at most
VALUES_SHOWN: Final = 6  # of a row's metric values, the sorted one and the board's first ones
METRICS_SHOWN: Final = 3  # of a benchmark's metrics, in a task's list of benchmarks
SUBTASKS_SHOWN: Final = 20
BENCHMARKS_SHOWN: Final = 10  # in describe
RESULTS_SHOWN: Final = 5  # in get_paper
RESULT_VALUES: Final = 3  # of a result's metric values, in get_paper
NAMES_SHOWN: Final = 10  # in an `ambiguous` or `not_found` error
KINDS: Final[tuple[NameKind, ...]] = ("task", "method", "dataset")
# The words for a kind that describe reads as it: plurals, and what people call a method or a dataset.
KIND_WORDS: Final[dict[str, NameKind]] = {
    **{word: "task" for word in ("task", "tasks", "subtask", "subtasks")},
    **{word: "method" for word in ("method", "methods", "model", "models", "architecture", "architectures", "technique", "techniques")},
    **{word: "dataset" for word in ("dataset", "datasets", "benchmark", "benchmarks")},
}
Tool = Literal["describe", "get_leaderboard"]
UNRANKED: Final = "this benchmark reports no metric: its rows come in the archive's order, unranked"
ADD_BOARDS: Final = (
    "papercode archive fetch (it downloads pwc-archive/evaluation-tables, methods and datasets too), or papercode archive "
    "build with evaluation-tables.json.gz, methods.json.gz and datasets.json.gz beside the papers and links; then restart "
    "or reload the server"
)


def _boards(corpus: Corpus, what: str = "leaderboards") -> BoardQueries:
    """The archive's boards and catalogues, asked through the index; `what` names what was asked for, in the error when
    there are none."""
    boards = BoardQueries.over(corpus.index)
    if boards is not None:
        return boards
    if corpus.archive is None:
        raise QueryError(
            "not_found", f"{what} come with the Papers-with-Code archive, and none is served", f"serve it with --archive: {ADD_BOARDS}"
        )
    raise QueryError("not_found", f"the archive served has no {what} (its build read no evaluation tables)", ADD_BOARDS)


# -- names -----------------------------------------------------------------------------------


def _listed(names: Sequence[str | None], total: int | None = None) -> str:
    """The first `NAMES_SHOWN` of `names` quoted, and how many more there are (of `total`, when only those are given)."""
    total = len(names) if total is None else total
    quoted = [repr(name) for name in names[:NAMES_SHOWN] if name]
    return ", ".join(quoted) + (f" and {total - NAMES_SHOWN} more" if total > NAMES_SHOWN else "")


def resolve(boards: BoardQueries, kind: NameKind, asked: str, *, tool: Tool = "describe") -> int:
    """The task, method or dataset a name means (`BoardQueries.meant`): `ambiguous` when it names several, listing a
    name for each that leads to it alone (`BoardQueries.label`); `not_found` saying what it names instead, with the call
    `tool` is answered by (`_another_kind`), else with the nearest names."""
    text = check_name(asked, kind)
    meant = boards.meant(kind, text)
    if len(meant) == 1:
        return meant[0]
    if meant:
        raise QueryError(
            "ambiguous",
            f"{text!r} names {len(meant)} {kind}s: {_listed([boards.label(kind, i) for i in meant[:NAMES_SHOWN]], len(meant))}",
            f"call again with one of these {kind} names",
        )
    other = {k: found for k in KINDS if k != kind and (found := boards.meant(k, text))}
    if other:
        raise _another_kind(boards, kind, text, other, tool)
    near = list(dict.fromkeys(boards.label(kind, i) for i in boards.near(kind, text)))
    nearest = f"; nearest: {_listed(near)}" if near else ""
    raise QueryError(
        "not_found",
        f"no {kind} named {text!r} among the archive's {boards.count(kind):,} {kind}s{nearest}",
        f"call again with one of the nearest names, or search_papers({kind if kind != 'dataset' else 'query'}=...) for papers on it",
    )


def _another_kind(boards: BoardQueries, kind: NameKind, text: str, other: dict[NameKind, list[int]], tool: Tool) -> QueryError:
    """The error for a name of another kind than asked (`other`: what it names of each): which kind it is, and the call
    to make, `tool`'s own when it can answer (a dataset's benchmarks, for get_leaderboard)."""
    what = f"no {kind} named {text!r}; it is a " + " and a ".join(other)
    if "dataset" in other and tool == "get_leaderboard":
        benchmarked = boards.dataset_benchmarks(*other["dataset"])
        if benchmarked:
            return _benchmarked_in(boards, what, benchmarked)
        what += " with no benchmarks"
    first_kind, found = next(iter(other.items()))
    name = boards.label(first_kind, found[0])
    also = f", or search_papers(method={name!r}) for the papers using it" if first_kind == "method" else ""
    return QueryError("not_found", what, f"call describe(kind={first_kind!r}, name={name!r}){also}")


def _benchmarked_in(boards: BoardQueries, what: str, benchmarked: list[int]) -> QueryError:
    """The error for a dataset named where its tasks' leaderboards are meant: its tasks, and the call to its busiest board."""
    tasks = list(dict.fromkeys(boards.label("task", boards.benchmark(b).task) for b in benchmarked))
    first = boards.benchmark(benchmarked[0])
    others = f", or another of its {len(benchmarked)} benchmarks" if len(benchmarked) > 1 else ""
    return QueryError(
        "not_found",
        f"{what}, benchmarked in {'task' if len(tasks) == 1 else 'tasks'} {_listed(tasks)}",
        f"call get_leaderboard(task={tasks[0]!r}, dataset={first.dataset!r}){others}",
    )


def _board(boards: BoardQueries, task: int, asked: str) -> int:
    """The task's benchmark a dataset name means: its own name, else its dataset's name, full name or a variant."""
    text = check_name(asked, "dataset")
    found = boards.benchmarks_named(task, text)
    if len(found) == 1:
        return found[0]
    task_name = boards.label("task", task)
    if found:
        raise QueryError(
            "ambiguous",
            f"{text!r} names {len(found)} benchmarks of {task_name!r}: {_listed(boards.benchmark_datasets(found))}",
            "call again with one of these datasets",
        )
    elsewhere = boards.dataset_benchmarks(*boards.meant("dataset", text))
    if elsewhere:  # a dataset benchmarked in other tasks
        raise _benchmarked_in(boards, f"{task_name!r} has no benchmark on {text!r}; it is a dataset", elsewhere)
    datasets = boards.benchmark_datasets(boards.task_benchmarks(task))
    wanted = name_key("dataset", text)
    nearest: list[str] = sorted(datasets, key=lambda name: -shared_prefix(name_key("dataset", name), wanted))
    listed = _listed(nearest) if datasets else ""
    raise QueryError(
        "not_found",
        f"{task_name!r} has no benchmark on {text!r}" + (f"; its benchmarks: {listed}" if listed else " (it has no benchmarks)"),
        f"call get_leaderboard(task={task_name!r}) for its benchmarks, or describe(kind='dataset', name={text!r}) for the tasks "
        "evaluated on it",
    )


def _metric(boards: BoardQueries, metrics: range, asked: str | None) -> int | None:
    """The board-metric of `metrics` (a benchmark's) a metric name means; its first without one (None: it has none)."""
    if asked is None:
        return metrics.start if metrics else None
    text = check_name(asked, "metric")
    found = boards.metrics_named(metrics, text)
    if len(found) == 1:
        return found[0]
    names = [name or "" for name in boards.metric_names(metrics)]
    if found:
        raise QueryError(
            "ambiguous",
            f"{text!r} names {len(found)} metrics: {_listed([names[m - metrics.start] for m in found])}",
            "call again with one of them",
        )
    if not names:
        raise QueryError("not_found", f"this benchmark reports no metric; {text!r} is none of them", "call again without metric")
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
    check_limit(limit, MAX_ROWS)
    task_id = resolve(boards, "task", task, tool="get_leaderboard")
    asked_order = check_order(order)
    statuses = check_statuses(corpus, status) if status else None
    if dataset is None:
        if metric is not None or asked_order is not None or has_code is not None or statuses:
            raise QueryError(
                "invalid_argument",
                "metric, order, has_code and status rank one benchmark's rows",
                "call again with a dataset (this call without them lists them)",
            )
        return _benchmarks(corpus, boards, task_id, limit, cursor)
    view = boards.benchmark(_board(boards, task_id, dataset))
    ranked_by = _metric(boards, view.metrics, metric)
    names = boards.metric_names(view.metrics)
    chosen, ranking = _ranking(boards, ranked_by, names[ranked_by - view.metrics.start] if ranked_by is not None else None, asked_order)
    page_query = {
        "tool": "leaderboard",
        "board": view.board,
        "metric": ranked_by,
        "order": chosen,
        "has_code": has_code,
        "status": statuses,
        "limit": limit,
    }
    offset = corpus.pager.decode(page_query, cursor)
    shown_metrics = _shown_metrics(view.metrics, ranked_by)
    total, rows = boards.rows(
        view, ranked_by, chosen, values=shown_metrics, has_code=has_code, statuses=statuses, offset=offset, limit=limit
    )
    return shown(
        task=boards.name("task", task_id),
        dataset=view.dataset,
        **ranking,
        metrics=[names[m - view.metrics.start] for m in shown_metrics],
        other_metrics=[name for m, name in zip(view.metrics, names, strict=True) if m not in shown_metrics] or None,
        total=total,
        rows=[_row(row) for row in rows],
        next_cursor=page_cursor(corpus, page_query, offset, len(rows), total),
        note=_note(total, len(view.rows), has_code, statuses) or (UNRANKED if ranked_by is None and total else None),
        attribution=models.BOTH_ATTRIBUTION if any(row.best_status for row in rows) else models.ARCHIVE_ATTRIBUTION,
    )


def _ranking(boards: BoardQueries, metric: int | None, name: str | None, asked: Order | None) -> tuple[Order, dict[str, Any]]:
    """The order a benchmark's rows are read in, and what the answer says of it: the metric, its direction, the order
    (nothing, for a benchmark that reports no metric: its rows come in the archive's order)."""
    if metric is None:
        return asked or "desc", {}
    lower = boards.lower_is_better(metric)
    default: Order = "asc" if lower else "desc"
    chosen: Order = asked or default
    direction = direction_text(lower) + ("" if chosen == default else f"; shown {chosen} as asked")
    return chosen, {"metric": name, "direction": direction, "order": chosen}


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


def _shown_metrics(metrics: range, metric: int | None) -> list[int]:
    first = [m for m in metrics[:VALUES_SHOWN] if m != metric]
    return first if metric is None else [metric, *first][:VALUES_SHOWN]


def _row(row: RankedRow) -> dict[str, Any]:
    """A leaderboard's row as shown: its values aligned with the metrics named once, above ("" where it reports none)."""
    return shown(
        rank=row.rank or None,
        model=row.model,
        values=[value or "" for value in row.values],
        paper=_paper_of_row(row),
        extra_data=row.extra_data,
        code=_code(row.links, row.paper),
        harvest=shown(samples=row.samples, best_status=row.best_status) if row.best_status else None,
    )


def _paper_of_row(row: RankedRow) -> dict[str, Any] | None:
    """A row's paper as shown: the paper it joined, else its own title and paper id."""
    paper = row.paper
    if paper is not None:
        return shown(
            arxiv_id=paper.arxiv_id,
            slug=None if paper.arxiv_id else paper.slug,
            title=shorten(paper.title, TITLE_CHARS),
            date=row.date or paper.date,
        )
    title, key = row.title, row.ref
    if title is None and key is None:
        return None
    arxiv_id, slug = _ref_ids(key)
    return shown(arxiv_id=arxiv_id, slug=slug, title=shorten(title or key or "", TITLE_CHARS), date=row.date)


def _ref_ids(ref: str | None) -> tuple[str | None, str | None]:
    """A row's own paper id as its paper is shown, (arXiv id, slug): its arXiv id in canonical form, else it as a slug."""
    arxiv = parse_arxiv_id(ref) if ref else None
    return (arxiv.canonical, None) if arxiv else (None, ref or None)


def _code(own: Sequence[str], paper: PaperRow | None) -> dict[str, Any] | None:
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


def _benchmarks(corpus: Corpus, boards: BoardQueries, task: int, limit: int, cursor: str | None) -> dict[str, Any]:
    """A task's benchmarks, the busiest first, each with its metrics, rows and current best; its subtasks by name."""
    page_query = {"tool": "benchmarks", "task": task, "limit": limit}
    offset = corpus.pager.decode(page_query, cursor)
    ordered = boards.busiest(boards.task_benchmarks(task))
    page = ordered[offset : offset + limit]
    listed = []
    for view in boards.benchmarks(page):
        metrics = [name or "" for name in boards.metric_names(view.metrics)]
        listed.append(shown(dataset=view.dataset, metrics=metrics[:METRICS_SHOWN], rows=len(view.rows), best=_best(boards.best(view))))
    children = [boards.label("task", c) for c in boards.subtasks(task)]
    note = None
    if not ordered:
        note = "this task has no benchmarks of its own" + ("; its subtasks may: call get_leaderboard with one" if children else "")
    elif len(children) > SUBTASKS_SHOWN:
        note = f"{len(children) - SUBTASKS_SHOWN} more subtasks: describe(task, ...) lists them"
    return shown(
        task=boards.name("task", task),
        total=len(ordered),
        benchmarks=listed,
        subtasks=children[:SUBTASKS_SHOWN] or None,
        next_cursor=page_cursor(corpus, page_query, offset, len(page), len(ordered)),
        note=note,
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


def _best(best: BestRow | None) -> str | None:
    """A benchmark's best row, in brief: its value, its model and its paper's id."""
    if best is None:
        return None
    arxiv_id, slug = _ref_ids(best.ref)
    key = best.paper or arxiv_id or slug
    return f"{best.value}" + (f", {best.model}" if best.model else "") + (f" ({key})" if key else "")


# -- describe --------------------------------------------------------------------------------


def describe_shown(corpus: Corpus, kind: str, name: str) -> dict[str, Any]:
    """A task, method or dataset of the archive (`models.Description`, as shown)."""
    boards = _boards(corpus, "tasks, methods and datasets")
    read = _kind(kind, name)
    if read == "task":
        return _describe_task(boards, resolve(boards, "task", name))
    if read == "method":
        return _describe_method(boards.method(resolve(boards, "method", name)))
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
    read = KIND_WORDS.get(kind) if isinstance(kind, str) else None  # a kind as the schema names it: most calls
    if read is not None:
        return read
    word = " ".join(str(kind).lower().split())
    read = KIND_WORDS.get(word)
    if read is not None:
        return read
    given = str(kind)[:20]
    elsewhere = _ANSWERED_ELSEWHERE.get(_ELSEWHERE_WORDS.get(word, word))
    if elsewhere is not None:
        what, call = elsewhere
        text = str(name)[:MAX_ASKED_NAME_CHARS] if isinstance(name, str) else ""
        raise QueryError("invalid_argument", f"describe takes kind task, method or dataset, not {given!r}: {what}", call.format(name=text))
    near = near_by_edits(word, list(KIND_WORDS))
    guess = f"kind={KIND_WORDS[near[0]]!r}" if near else "kind task, method or dataset"
    raise QueryError("invalid_argument", f"kind must be task, method or dataset, not {given!r}", f"call again with {guess}")


def _description(text: str | None) -> str | None:
    return None if text is None else shorten(text, DESCRIPTION_CHARS)


def _describe_task(boards: BoardQueries, task: int) -> dict[str, Any]:
    facts = boards.task(task)
    children = [boards.label("task", c) for c in boards.subtasks(task)]
    ids = boards.busiest(boards.task_benchmarks(task))
    return shown(
        kind="task",
        name=facts.name,
        description=_description(facts.description),
        area=facts.area,
        parent=boards.label("task", facts.parent) if facts.parent is not None else None,
        subtasks=children[:SUBTASKS_SHOWN] or None,
        benchmarks=[_benchmark_ref(boards, view, with_task=False) for view in boards.benchmarks(ids[:BENCHMARKS_SHOWN])] or None,
        more_benchmarks=len(ids) - BENCHMARKS_SHOWN if len(ids) > BENCHMARKS_SHOWN else None,
        papers=facts.papers,
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


def _benchmark_ref(boards: BoardQueries, view: BoardView, *, with_task: bool) -> dict[str, Any]:
    return shown(task=boards.label("task", view.task) if with_task else None, dataset=view.dataset, rows=len(view.rows))


def _describe_method(facts: MethodFacts) -> dict[str, Any]:
    row, paper = facts.paper, None
    if row is not None:
        paper = shown(arxiv_id=row.arxiv_id, slug=None if row.arxiv_id else row.slug, title=shorten(row.title, TITLE_CHARS))
    elif facts.paper_title:
        paper = shown(title=shorten(facts.paper_title, TITLE_CHARS))
    return shown(
        kind="method",
        name=facts.name,
        full_name=facts.full_name,
        description=_description(facts.description),
        papers=facts.papers,
        year=facts.year,
        paper=paper,
        collections=facts.collections,
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


def _describe_dataset(boards: BoardQueries, dataset: int) -> dict[str, Any]:
    facts = boards.dataset(dataset)
    ids = boards.dataset_benchmarks(dataset)
    return shown(
        kind="dataset",
        name=facts.name,
        full_name=facts.full_name,
        description=_description(facts.description),
        benchmarks=[_benchmark_ref(boards, view, with_task=True) for view in boards.benchmarks(ids[:BENCHMARKS_SHOWN])] or None,
        more_benchmarks=len(ids) - BENCHMARKS_SHOWN if len(ids) > BENCHMARKS_SHOWN else None,
        papers=facts.papers,
        modalities=facts.modalities,
        tasks=facts.tasks,
        homepage=followable(facts.homepage),  # held to the rule again: a build made before it kept any string
        attribution=models.ARCHIVE_ATTRIBUTION,
    )


# -- get_paper's results ---------------------------------------------------------------------


def paper_results(corpus: Corpus, paper: PaperRow) -> tuple[list[dict[str, Any]] | None, int | None]:
    """A paper's results on the archive's leaderboards (`models.PaperResult`, as shown; the first `RESULTS_SHOWN`),
    and how many more there are: None, None without leaderboards or results. A record's are those of the archive
    paper it replaces."""
    boards = BoardQueries.over(corpus.index)
    if boards is None:
        return None, None
    count, results = boards.results(paper, most=RESULTS_SHOWN, metrics=RESULT_VALUES)
    if not count:
        return None, None
    listed = [
        shown(
            task=boards.label("task", result.benchmark.task),
            dataset=result.benchmark.dataset,
            model=result.model,
            values=result.values,
            rank=result.rank or None,
            of=len(result.benchmark.rows),
        )
        for result in results
    ]
    return listed, count - RESULTS_SHOWN if count > RESULTS_SHOWN else None
