"""`python -m benchmarks generate …` writes a synthetic corpus; `python -m benchmarks run …` measures papercode on it;
`generate-archive` writes a synthetic Papers-with-Code archive and `archive` measures reading and building it;
`archive-serve` starts servers on what it built, and `index-cost` measures what a full-text index costs to build;
`generate-boards` writes the leaderboards' tables for an archive written without them, and `boards` measures them.
Each of these can save every number it prints to a JSON file (`--json`; `benchmarks/results/` keeps one per run), and
`report` writes BENCHMARKS.md from the runs saved there."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def _this_papercode() -> None:
    """Measured in this process too: this checkout's papercode, never the one an editable install of another checkout
    points at (as `harness.pythonpath` gives the benchmarks' subprocesses)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))


_AddArguments = Callable[[argparse.ArgumentParser], None]
_Run = Callable[[argparse.Namespace], int]


def _subcommands() -> dict[str, tuple[str, _AddArguments, _Run]]:
    """Every subcommand, in the order `--help` lists them: its help, what declares its options, what runs it. The
    modules are imported here, once `_this_papercode` has chosen the papercode they import."""
    from . import (
        archive_bench,
        archive_data,
        archive_serve,
        boards_bench,
        generate,
        index_cost,
        plot,
        report,
        run,
        score_agreement,
        search_engines,
        suite_time,
    )

    return {
        "generate": ("write a synthetic corpus in the real record schema", generate.add_arguments, generate.main),
        "run": ("generate corpora and measure load, memory and tool latency", run.add_arguments, run.main),
        "search-engines": (
            "papercode's search (tantivy) against the SQLite FTS5 engine it replaced, on the same documents and queries",
            search_engines.add_arguments,
            search_engines.main,
        ),
        "generate-archive": (
            "write a synthetic Papers-with-Code archive (parquet mirror and/or json.gz dumps)",
            archive_data.add_arguments,
            archive_data.main,
        ),
        "archive": (
            "issues #15, #22: the floors of reading the archive (parquet, json.gz) and the archive build against them",
            archive_bench.add_arguments,
            archive_bench.main,
        ),
        "archive-serve": (
            "issue #22: every start of papercode serve --archive on a built archive against an empty server's, its memory, disk,"
            " latency and reloads (--records: issue #15's record shards, for commits before #22)",
            archive_serve.add_arguments,
            archive_serve.main,
        ),
        "generate-boards": (
            "issue #23: the leaderboards' tables (real sizes) for an archive generate-archive wrote without them",
            archive_data.add_board_arguments,
            archive_data.generate_boards,
        ),
        "boards": ("issue #23: the leaderboards' build cost, open time and tool latency", boards_bench.add_arguments, boards_bench.main),
        "index-cost": (
            "issue #15: what building the full-text index costs per paper (tantivy, its stemmer)",
            index_cost.add_arguments,
            index_cost.main,
        ),
        "report": ("write BENCHMARKS.md from the runs saved in benchmarks/results", report.add_arguments, report.main),
        "score-agreement": (
            "issue #22: a paper's score with its text in the archive against the same text in a record above it",
            score_agreement.add_arguments,
            score_agreement.main,
        ),
        "suite-time": (
            "issue #24: the default test suite's wall time in two checkouts, run alternately",
            suite_time.add_arguments,
            suite_time.main,
        ),
        "plot": ("plot load time and peak RSS against size from `run --json` output", plot.add_arguments, plot.main),
    }


def main(argv: list[str] | None = None) -> int:
    _this_papercode()
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    subcommands = _subcommands()
    for name, (help_text, add_arguments, _) in subcommands.items():
        add_arguments(sub.add_parser(name, help=help_text))
    args = parser.parse_args(argv)
    _, _, run_command = subcommands[args.command]
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
