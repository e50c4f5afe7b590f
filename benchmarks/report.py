"""`python -m benchmarks report`: BENCHMARKS.md, written from the runs saved in `benchmarks/results/`.

BENCHMARKS.md holds where each benchmark stands now, never a log of runs: for each benchmark of `BENCHMARKS`, its
current figures (each figure and target as the newest run that measured it gives it, with PASS or MISS, and the commit
when that is not the commit measured last), the floor they are measured against, the date and the commit of each run
cited (the machine once, under the title, when most runs share it); and the before/after table of the latest change of
`CHANGES` with a saved run on both sides, which holds the current figures too when its "after" is the current runs (so
no figure is printed twice). A benchmark with no saved run says where its last published figures are (a commit of the
old, hand-written BENCHMARKS.md), and a command saved here that `BENCHMARKS` does not describe still gets its section.

A run is one JSON file (`benchmarks/results.py` writes it; the format is in `benchmarks/results/README.md`). The
report reads only what a run recorded: a run of uncommitted code, of an unknown commit, or naming a path of the
machine it ran on is refused, with the file and what to do. `tests/product/test_docs.py` checks that BENCHMARKS.md is what
this writes from the committed runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "results"
OUTPUT = REPO_ROOT / "BENCHMARKS.md"
# The last hand-written BENCHMARKS.md: every run before the saved ones, as it was printed (`git show <commit>:BENCHMARKS.md`).
LOG_COMMIT = "83764e7"
# An absolute path of the machine a run was made on (`run.shown_path` writes paths relative to the checkout).
_MACHINE_PATH = re.compile(r"(?:^|[\s'\"(=,\[])/(?:work|home|Users|root|tmp|var|mnt|opt|srv|dev|private|scratch|data)/")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")


class ReportError(Exception):
    """A saved run the report cannot use: the file and what to do, one line."""


# -- what each benchmark is --------------------------------------------------------------------------------------------


def _seconds(value: Any) -> str:
    return f"{value:.2f} s" if isinstance(value, int | float) else "not recorded"


def _archive_floor(result: dict[str, Any]) -> str:
    forms = result.get("forms") or {}
    parts = []
    for form, words in (("parquet", "`read_table` + `to_pylist` of the parquet files"), ("json.gz", "gunzip + parse of the dumps")):
        floor = (forms.get(form) or {}).get("floor")
        if floor:
            parts.append(f"{words}, {_seconds(floor.get('floor_s'))} (best of {len(floor.get('runs_s') or [0])})")
    return "; ".join(parts)


def _serve_floor(result: dict[str, Any]) -> str:
    summary = result.get("summary") or {}
    return f"an empty server's `corpus_stats` answered {_seconds(summary.get('empty_stats_s'))} after spawn (median of its starts)"


def _archive_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for form, entry in (result.get("forms") or {}).items():
        build = entry.get("build") or {}
        if build.get("available"):
            rows.append((f"build from {form}: wall (CPU) seconds", f"{build['build_s']:.1f} s ({build['cpu_s']:.1f} s CPU)"))
    return rows


def _serve_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    starts = (result.get("summary") or {}).get("starts") or []
    inprocess = result.get("inprocess") or {}
    rows = []
    for label, key in (("keyed tool", "keyed_s"), ("search", "search_s")):
        if starts:
            each = ", ".join(f"{start[key]:.2f}" for start in starts)
            rows.append((f"{label} answered, seconds from spawn (each start; the first after the build first)", f"{each} s"))
    if "open_first_s" in inprocess:
        rows.append(
            (
                "Corpus.open over the archive in-process, first / later start",
                f"{inprocess['open_first_s']:.3f} / {inprocess['open_later_s']:.3f} s",
            )
        )
    return rows


def _agreement_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    compared = f"{result.get('compared')} of {result.get('papers')}, over {result.get('archive_papers', 0):,} archive papers"
    spread = f"{result.get('p5', 0):.4f}-{result.get('p95', 0):.4f} ({result.get('min', 0):.4f}, {result.get('max', 0):.4f})"
    return [("papers compared", compared), ("score ratio, 5th-95th percentile (min, max)", spread)]


def _engines_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for size, engines in (result.get("sizes") or {}).items():
        tantivy, fts5 = engines.get("tantivy") or {}, engines.get("fts5") or {}
        rows.append(
            (
                f"at {int(size):,} records: tantivy p50 / p99 (FTS5's), build",
                f"{tantivy.get('p50_ms', 0):.2f} / {tantivy.get('p99_ms', 0):.2f} ms ({fts5.get('p50_ms', 0):.2f} /"
                f" {fts5.get('p99_ms', 0):.2f} ms), {tantivy.get('build_s', 0):.1f} s",
            )
        )
    return rows


def _suite_floor(result: dict[str, Any]) -> str:
    before = (result.get("commits") or {}).get("before", "")
    runs = len((result.get("runs") or {}).get("before") or [])
    return (
        f"the default suite at `{before[:7]}`, {_seconds((result.get('median_s') or {}).get('before'))} (median of {runs})"
        if before
        else ""
    )


def _suite_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    runs = result.get("runs") or {}
    walls = {side: ", ".join(f"{run['wall']:.1f}" for run in runs.get(side) or []) for side in ("before", "after")}
    tests = {
        side: "/".join(str(count) for count in sorted({run["passed"] for run in runs.get(side) or []})) for side in ("before", "after")
    }
    return [
        ("wall seconds before / after, each run (alternating)", f"{walls['before']} / {walls['after']} s"),
        ("tests passed before / after", f"{tests['before']} / {tests['after']}"),
    ]


def _boards_floor(result: dict[str, Any]) -> str:
    build = result.get("build") or {}
    runs = len((build.get("runs") or {}).get("without") or [])
    return f"the build without the leaderboards' tables, {_seconds(build.get('without_s'))} (median of {runs})" if build else ""


def _boards_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    build = result.get("build") or {}
    if build:
        each = {label: ", ".join(f"{run['wall']:.1f}" for run in runs) for label, runs in (build.get("runs") or {}).items()}
        rows.append(("build without / with the tables: wall seconds, each run", f"{each.get('without')} / {each.get('with')} s"))
        rows.append(
            (
                "the leaderboards' phase in the builds with them, overlapping the search index's commit (median)",
                f"{build['boards_s']:.1f} s",
            )
        )
    opened, sizes = result.get("open") or {}, result.get("sizes") or {}
    if opened:
        rows.append(
            ("open the build without / with the leaderboards (median of 20)", f"{opened['without_ms']:.2f} / {opened['with_ms']:.2f} ms")
        )
    if sizes:
        rows.append(
            ("boards/ on disk (the papers' columns beside it)", f"{sizes['boards'] / 2**20:.1f} MiB ({sizes['papers'] / 2**20:.0f} MiB)")
        )
    return rows


def _run_at_targets(result: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The records benchmark's size its targets were measured at, and that size's numbers."""
    size = result.get("targets_at") or 0
    return size, (result.get("sizes") or {}).get(str(size)) or {}


def _run_floor(result: dict[str, Any]) -> str:
    size, at = _run_at_targets(result)
    if not at:
        return ""
    return (
        f"`orjson.loads` over the same bytes ({at['raw_bytes'] / 2**20:,.0f} MiB, {size:,} records),"
        f" {_seconds(at.get('floor_s'))} (best of {at.get('floor_runs')})"
    )


def _run_figures(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = []
    for size, at in sorted((result.get("sizes") or {}).items(), key=lambda item: int(item[0])):
        ready = f"{at['keyed_s']:.2f} / {at['load_s']:.2f} s (floor {at['floor_s']:.2f} s)"
        rows.append((f"at {int(size):,} records: keyed / search ready", ready))
    _, at = _run_at_targets(result)
    if not at:
        return rows
    mib = [f"{at[key] / 2**20:,.0f}" for key in ("peak_rss_bytes", "child_peak_rss_bytes", "raw_bytes")]
    rows.append(("peak RSS, process + child (the records' bytes)", f"{mib[0]} + {mib[1]} MiB ({mib[2]} MiB)"))
    targeted = {str(target[0]) for target in result.get("targets") or []}
    direct, stdio, first = at.get("direct") or {}, at.get("stdio"), at.get("first_answer")
    untargeted = [
        f"{tool} {row['p50_ms']:.3f}" for tool, row in direct.items() if not any(f"in-process p50 {tool} " in name for name in targeted)
    ]
    if untargeted:
        rows.append(("in-process p50 of the tools without a target", ", ".join(untargeted) + " ms"))
    if first:
        rows.append(
            (
                "first search_papers answer over stdio, cold / warm start",
                f"{first['cold']['search_s']:.2f} / {first['warm']['search_s']:.2f} s",
            )
        )
    errors = [
        str(sum(row["errors"] for row in calls.values())) if calls else "—"
        for calls in (direct, at.get("client"), (stdio or {}).get("tools"))
    ]
    rows.append(("calls answered with an error: in-process / mcp.Client / stdio", " / ".join(errors)))
    return rows


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One benchmark as BENCHMARKS.md describes it; its figures come from the saved runs of `command`."""

    command: str  # the `command` its runs are saved under
    title: str
    about: str  # what is measured, against what
    run: str  # the command line that measures it (with --json benchmarks/results when its harness saves runs)
    floor: Callable[[dict[str, Any]], str] | None = None  # the floor, in words, from a run's `result`
    figures: Callable[[dict[str, Any]], list[tuple[str, str]]] | None = None  # (what, value) beside the targets
    saves: bool = True  # its harness saves runs into benchmarks/results (`benchmarks.results.save`)
    published: str = ""  # with no saved run: what its last published figures said, when and at which commit
    log_section: str = ""  # and how the heading they are under in the old BENCHMARKS.md (`LOG_COMMIT`) starts


BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "archive",
        "The archive build",
        "`papercode archive build` of a synthetic archive into its serving form, from each form (parquet, json.gz), each"
        " step in a fresh process, against the floor of reading the same files into Python rows.",
        "python -m benchmarks archive --data ../bench-data/archive-600k",
        _archive_floor,
        _archive_figures,
    ),
    Benchmark(
        "archive-serve",
        "Serving the archive",
        "Real `papercode serve --archive` processes over stdio on that build: each start's first answers against an empty"
        " server's, their memory beyond it, the disk, in-process latency and reloads.",
        "python -m benchmarks archive-serve --archive-dir ../bench-data/built-600k/parquet",
        _serve_floor,
        _serve_figures,
    ),
    Benchmark(
        "score-agreement",
        "Search over records and archive",
        "A paper's BM25 score when a record above the archive holds its text, against its score in the archive alone"
        " (a replaced row's deleted document still counts in a word's document frequency).",
        "python -m benchmarks score-agreement --archive-dir ../bench-data/built-600k/parquet",
        figures=_agreement_figures,
    ),
    Benchmark(
        "boards",
        "Leaderboards",
        "The archive build with and without the leaderboards' tables, alternating, each in a fresh process; their open"
        " time and bytes; `get_leaderboard` and `describe` latency in-process.",
        "python -m benchmarks boards --archive ../bench-data/archive-600k --boards ../bench-data/boards-600k"
        " --out ../bench-data/built-boards-600k --runs 3",
        _boards_floor,
        _boards_figures,
    ),
    Benchmark(
        "run",
        "Records: cold build, warm start, latency",
        "Generated records: the cold build against the JSON parse floor, memory, the warm start, each tool's latency"
        " in-process and over stdio (against a bare SDK server replaying the same answers); targets at 100k.",
        "python -m benchmarks run --sizes 20000,100000",
        _run_floor,
        _run_figures,
        published="issues #10 and #14 at `0d5b99d`: at 100k records keyed ready 3.64x the parse floor (target 5x), search"
        " ready 5.01x (7x), peak memory 1.25x the records' bytes (1.5x)",
        log_section="Issue #10: the cold build and search",
    ),
    Benchmark(
        "load",
        "HTTP under load",
        "50 clients on stateless streamable HTTP making 20,000 calls, quiet and beside 10 attackers.",
        "python -m benchmarks.load --papers 10000 --calls 20000 --clients 50 --hostile 10",
        saves=False,
        published="issue #11 at `07f7d93`: 849 calls/s, p99 90 ms quiet and under attack, no errors",
        log_section="Issue #11: HTTP under load",
    ),
    Benchmark(
        "search-engines",
        "tantivy against SQLite FTS5",
        "Both engines on the same documents and 300 queries ([the decision](docs/decisions/tantivy-over-fts5.md)).",
        "python -m benchmarks search-engines --sizes 10000,100000",
        figures=_engines_figures,
    ),
    Benchmark(
        "index-cost",
        "The full-text index's cost",
        "papercode's own `write_index` over an archive's documents: CPU a document, with and without the stemmer.",
        "python -m benchmarks index-cost --records DIR",
        saves=False,
        published="issue #15 at `5f678b6`: 116 µs of CPU a document at 600k",
        log_section="Why the three cold-start misses are blocked",
    ),
    Benchmark(
        "suite-time",
        "The default test suite's time",
        "The default suite before and after a change, alternately, with the test counts (fewer tests is not faster).",
        "python -m benchmarks suite-time --before ../before --after . --runs 3",
        _suite_floor,
        _suite_figures,
    ),
    Benchmark(
        "answer-sizes",
        "Answer sizes",
        "The bytes of every default answer on the bundled records: deterministic, and held by `tests/product/test_budgets.py`.",
        "python -m benchmarks.answer_sizes",
        saves=False,
        published="issue #25 at `60f552f`: a page of 25 samples 2,916 bytes (target 3,000)",
        log_section="Answer sizes (issue #25)",
    ),
)

# -- the changes measured before and after -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """A change measured on both sides: runs of `before` and of `after` (None: the benchmark's current commit), and
    what a reader needs to read the table (`why`, per benchmark: what moved, and what it was traded for)."""

    title: str
    before: str
    benchmarks: tuple[str, ...]
    after: str | None = None
    why: dict[str, str] = field(default_factory=dict)


CHANGES: tuple[Change, ...] = (
    Change(
        "issue #22, the archive built once into its serving form",
        "944b038",
        ("archive", "archive-serve"),
        why={
            "archive": "The search index moved from every start into the build: the build now writes it (tantivy, on"
            " both cores), so it takes about 50 s more, once; no start builds anything any more (the first start's 87 s"
            " and 2.4 GB, and each reload's three minutes, in the table below).",
            "archive-serve": "Before, each start built the search index and loaded the columns as Python objects;"
            " after, it maps the build's files.",
        },
    ),
    Change(
        "issue #24, the house re-cut",
        "96fd14f",
        ("archive", "archive-serve", "search-engines", "run"),
        why={
            "archive-serve": "Quiet machine, minutes apart, the same build served. Issue #22's before/after:"
            " `git show 4c1f641:BENCHMARKS.md`.",
            "search-engines": "Quiet machine, minutes apart; the engine's code only moved.",
            "archive": "Quiet machine, minutes apart; the serving writer's per-paper steps trimmed.",
            "run": "The records' cold build and the answers were re-cut into modules (`build/` became `ingest/`; admission,"
            " search documents and the answers' resolving and overview of their own); the same harness on both sides.",
        },
    ),
    Change(
        "issue #23, the leaderboards read beside the papers",
        "9800c29",
        ("boards",),
        why={
            "boards": "Before, the tables were read after the papers; after, a child process reads them while the papers"
            " are read, and only the join waits. The machine ran slower at the after run (the build without them 62 s,"
            " not 48 s): compare the ratios.",
        },
    ),
    Change(
        "issues #30-#33",
        "67b82e9",
        ("run", "boards"),
        after="443b72d",
        why={
            "run": "Two runs a side, alternating; the second shown (after's machine slower: ping 1.39 ms, not 1.14)."
            " Each stdio ratio to its echo rose 0.01-0.08 in each pair, within a side's round spread (0.10) but always"
            " up: tens of µs a call, unlocated. `search_papers` misses as its bound's in-process p50 fell (2.28 to 1.82"
            " ms).",
            "boards": "Served after the builds, `has_code` and `status` p50s rose 0.06-0.16 ms (2 pairs); served alone"
            " (`--skip-build --calls 3000`, six runs a side), each median within 0.01 ms or lower.",
        },
    ),
)


# -- the saved runs ----------------------------------------------------------------------------------------------------

Row = tuple[str, bool | None, str]  # (target, passed, measured) as each harness's `targets` gives it; None: a figure


@dataclass(frozen=True, slots=True)
class Run:
    file: str
    command: str
    argv: tuple[str, ...]
    date: str  # "2026-12-02 01:44 UTC"
    commit: str
    machine: str
    load: str
    result: dict[str, Any] = field(repr=False)

    def rows(self, benchmark: Benchmark) -> list[Row]:
        """Its figures (what `benchmark` picks out of the result), then every target it recorded."""
        figures: list[Row] = [(name, None, value) for name, value in (benchmark.figures(self.result) if benchmark.figures else [])]
        targets = [(str(name), bool(passed), str(measured)) for name, passed, measured in self.result.get("targets") or []]
        return figures + targets

    def is_of(self, commit: str) -> bool:
        return self.commit.startswith(commit)


def load_runs(directory: Path) -> list[Run]:
    """Every run saved in `directory`, oldest first; ReportError for one the report cannot use."""
    runs = [_run(path) for path in sorted(directory.glob("*.json"))]
    return sorted(runs, key=lambda run: (run.date, run.file))


def _run(path: Path) -> Run:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        machine, source = document["machine"], document["machine"]["papercode_source"]
        command, argv, result, date = document["command"], document["argv"], document["result"], machine["date"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReportError(f"{path.name}: not a saved run ({exc!r}). Next: save runs with --json benchmarks/results") from None
    found = next(_machine_paths(document), None)
    if found is not None:
        raise ReportError(f"{path.name}: names a path of the machine it ran on ({found!r}). Next: make it relative, as run.shown_path does")
    commit = source.get("commit") if isinstance(source, dict) else None
    if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
        raise ReportError(
            f"{path.name}: the commit measured is unknown. Next: measure a commit (a checkout, or an export with a COMMIT file)"
        )
    if source.get("dirty"):
        raise ReportError(f"{path.name}: measured uncommitted changes. Next: commit them and measure again")
    if not isinstance(result, dict) or not isinstance(argv, list) or not isinstance(command, str):
        raise ReportError(f"{path.name}: command, argv or result of the wrong type. Next: save runs with --json benchmarks/results")
    cores = machine.get("cores")
    described = f"{machine.get('cpu', 'an unknown CPU')}, {cores} cores, {machine.get('ram_gib')} GiB, Python {machine.get('python')}"
    load = str(machine.get("loadavg", "")).split(" ")[0] or "unknown"
    return Run(path.name, command, tuple(str(arg) for arg in argv), str(date), commit, described, load, result)


def _machine_paths(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if _MACHINE_PATH.search(value):
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _machine_paths(key)
            yield from _machine_paths(item)
    elif isinstance(value, list):
        for item in value:
            yield from _machine_paths(item)


# -- current, before and after -----------------------------------------------------------------------------------------


def current_runs(runs: Sequence[Run], command: str) -> list[Run]:
    """The runs of `command` that measure the code as it came to be, oldest first: all but the runs of a change's
    "before" commit (made after the change, with the same harness)."""
    befores = [change.before for change in CHANGES if command in change.benchmarks]
    mine = [run for run in runs if run.command == command]
    return [run for run in mine if not any(run.is_of(before) for before in befores)] or mine


def merged(runs: Sequence[Run], benchmark: Benchmark) -> list[tuple[Row, Run]]:
    """Each row of `runs` (oldest first) as the newest run that has it gives it, with that run: a run may measure some
    forms only, and a later commit may be measured on some of them."""
    found: dict[str, tuple[Row, Run]] = {}
    for run in runs:
        for row in run.rows(benchmark):
            found[row[0]] = (row, run)  # in the place the row first came, from the newest run that has it
    return list(found.values())


def cited(rows: Sequence[tuple[Row, Run]]) -> list[Run]:
    """The runs these rows come from, oldest first."""
    return sorted({run.file: run for _, run in rows}.values(), key=lambda run: (run.date, run.file))


def latest_change(runs: Sequence[Run], command: str) -> tuple[Change, list[Run], list[Run]] | None:
    """The latest change of `CHANGES` for `command` with saved runs of both sides: (change, before runs, after runs)."""
    mine = [run for run in runs if run.command == command]
    current = current_runs(runs, command)
    for change in reversed(CHANGES):
        if command not in change.benchmarks:
            continue
        before = [run for run in mine if run.is_of(change.before)]
        after = [run for run in mine if run.is_of(change.after)] if change.after else current
        if before and after and after[-1].commit != before[-1].commit:
            return change, before, after
    return None


# -- writing -----------------------------------------------------------------------------------------------------------


def _wrap(text: str, indent: str = "") -> str:
    """Prose at the width of the repository's other Markdown (tables are left as they are)."""
    return textwrap.fill(text, 120, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _verdict(passed: bool | None) -> str:
    return "" if passed is None else "PASS" if passed else "MISS"


def _measured(row: Row, run: Run, head: str) -> str:
    """A row's value, with the commit it was measured at when that is not the commit measured last."""
    return _cell(row[2]) + (f" (at `{run.commit[:7]}`)" if run.commit != head else "")


def _value(found: tuple[Row, Run] | None, head: str) -> str:
    return "—" if found is None else _measured(*found, head)


def _verdicts(old: tuple[Row, Run] | None, new: tuple[Row, Run] | None) -> str:
    """A row's verdict now, or how it moved (`MISS → PASS`; `PASS → —` when now does not measure it)."""
    was, now = (_verdict(found[0][1]) if found else "" for found in (old, new))
    if was and new is None:
        return f"{was} → —"
    return f"{was} → {now}" if was and now and was != now else now


def _provenance(runs: Sequence[Run], benchmark: Benchmark, usual: str) -> list[str]:
    """A line a run: file, date, commit, the machine unless it is the `usual` one the header names, load, command, floor."""
    lines = []
    for run in runs:
        floor = benchmark.floor(run.result) if benchmark.floor else ""
        machine = f" {run.machine}," if run.machine != usual else ""
        text = (
            f"- `{run.file}`: {run.date}, commit `{run.commit[:7]}`,{machine} load average {run.load} at the start;"
            f" `python -m benchmarks {' '.join(_measuring(run.argv))}`" + (f". Floor: {floor}." if floor else ".")
        )
        lines.append(_wrap(text, "  "))
    return lines


def _measuring(argv: Sequence[str]) -> list[str]:
    """The command line without where its run was saved (`--json DIR`): the run's file is named above it."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--json":
            skip = True
        elif not arg.startswith("--json="):
            shown.append(arg)
    return shown


def _sources(runs: Sequence[Run], benchmark: Benchmark) -> list[Run]:
    """The runs the rows of `runs` come from (all of them when they record none), oldest first."""
    return cited(merged(runs, benchmark)) or list(runs)


def _files(runs: Sequence[Run]) -> list[str]:
    return [run.file for run in runs]


def section(runs: Sequence[Run], benchmark: Benchmark, usual: str = "") -> str:
    """A benchmark's section: its current runs, then their table and the latest change's; or, when that change's
    "after" is exactly the current runs, the change's table alone, holding every current figure beside its "before"."""
    lines = [f"## {benchmark.title} (`{benchmark.command}`)", "", _wrap(benchmark.about), ""]
    current = current_runs(runs, benchmark.command)
    if not current:
        how = (
            f"`{benchmark.run} --json benchmarks/results` saves one"
            if benchmark.saves
            else f"its harness (`{benchmark.run}`) does not save runs yet"
        )
        text = f"No run saved yet: {how}."
        if benchmark.published:
            text += f' Last published: {benchmark.published} (`git show {LOG_COMMIT}:BENCHMARKS.md`, "{benchmark.log_section} …").'
        lines.append(_wrap(text))
        return "\n".join(lines) + "\n"
    rows, shown = merged(current, benchmark), _sources(current, benchmark)
    lines += _provenance(shown, benchmark, usual)
    change = latest_change(runs, benchmark.command)
    now = change is not None and _files(_sources(change[2], benchmark)) == _files(shown)
    if not now:
        lines.append("")
        if rows:
            head = shown[-1].commit
            lines += ["| figure or target | measured | |", "|---|---:|---|"]
            lines += [f"| {_cell(row[0])} | {_measured(row, run, head)} | {_verdict(row[1])} |" for row, run in rows]
        else:
            lines.append("These runs record no targets: their figures are in the files above.")
    if change is not None:
        lines += before_and_after(change, benchmark, usual, now=now, listed=_files(shown))
    return "\n".join(lines) + "\n"


def before_and_after(
    change: tuple[Change, list[Run], list[Run]], benchmark: Benchmark, usual: str, *, now: bool, listed: list[str]
) -> list[str]:
    """The change's table: each figure and target before and after it (`now` when "after" is the current runs), and
    its verdict, or how it moved. The runs of either side not `listed` above are listed first."""
    what, before, after = change
    old, new = merged(before, benchmark), merged(after, benchmark)
    olds, news = {row[0]: (row, run) for row, run in old}, {row[0]: (row, run) for row, run in new}
    before, after = _sources(before, benchmark), _sources(after, benchmark)
    was_at, now_at = before[-1].commit, after[-1].commit
    lines = ["", f"### Before and after: {what.title} (`{was_at[:7]}` → `{now_at[:7]}`)", ""]
    lines += _provenance([run for run in [*before, *after] if run.file not in listed], benchmark, usual)
    lines += ["", f"| figure or target | before | {'now' if now else 'after'} | verdict |", "|---|---:|---:|---|"]
    for name in [*news, *(name for name in olds if name not in news)]:
        was, is_now = olds.get(name), news.get(name)
        lines.append(f"| {_cell(name)} | {_value(was, was_at)} | {_value(is_now, now_at)} | {_verdicts(was, is_now)} |")
    if benchmark.command in what.why:
        lines += ["", _wrap(what.why[benchmark.command])]
    return lines


def header(usual: str) -> str:
    """The page's title and how to read it; `usual`: the machine most runs were made on, named once here."""
    text = (
        "Each benchmark's newest figures and targets, with floor, machine, date and commit, and the before/after table of"
        " the latest change that moved it: written by `python -m benchmarks report` from the runs in [`benchmarks/results/`](benchmarks/results/README.md); never edit this file."
        f" How each measures: [docs/benchmarks.md](docs/benchmarks.md). Older runs: `git show {LOG_COMMIT}:BENCHMARKS.md`."
    )
    if usual:
        text += f" Every run was made on {usual}, unless its line names another machine."
    return f"# Benchmarks\n\n{_wrap(text)}\n"


def report(runs: Sequence[Run]) -> str:
    """BENCHMARKS.md for these runs."""
    described = {benchmark.command for benchmark in BENCHMARKS}
    others = sorted({run.command for run in runs} - described)
    benchmarks = [*BENCHMARKS, *(Benchmark(command, command, "Not described in benchmarks/report.py yet.", "") for command in others)]
    usual = Counter(run.machine for run in runs).most_common(1)[0][0] if runs else ""
    sections = (section(runs, benchmark, usual) for benchmark in benchmarks)
    return "\n".join([header(usual), *sections]).rstrip("\n") + "\n"


# -- the command -------------------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=RESULTS, help="the saved runs (default benchmarks/results)")
    parser.add_argument("--out", type=Path, default=OUTPUT, help="the file to write (default BENCHMARKS.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file differs from what the runs give")


def main(args: argparse.Namespace) -> int:
    try:
        text = report(load_runs(args.results))
    except ReportError as exc:
        print(f"benchmarks report: {exc}", file=sys.stderr)
        return 2
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        if not same:
            print(f"benchmarks report: {args.out.name} is not what the saved runs give. Next: python -m benchmarks report", file=sys.stderr)
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out.name} ({len(text.encode()):,} bytes) from {args.results.name}/", file=sys.stderr)
    return 0
