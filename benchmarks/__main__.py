"""`python -m benchmarks generate …` writes a synthetic corpus; `python -m benchmarks run …` measures papercode on it;
`generate-archive` writes a synthetic Papers-with-Code archive and `archive` measures reading and building it;
`archive-serve` starts servers on what it built, and `index-cost` measures what a full-text index costs to build;
`generate-boards` writes the leaderboards' tables for an archive written without them, and `boards` measures them.
Each of these can save every number it prints to a JSON file (`--json`; `benchmarks/results/` keeps one per run), and
`report` writes BENCHMARKS.md from the runs saved there."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .archive_data import DATE_TYPES, DEFAULT_METHODS, format_stats, write_archive
from .generate import LAYOUTS, write_corpus


def _this_papercode() -> None:
    """Measured in this process too: the papercode PYTHONPATH names first (an older commit's `server/`, to measure it),
    else this checkout's, never the one an editable install of another checkout points at (as `run._pythonpath` does
    for the benchmarks' subprocesses)."""
    given = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path.insert(1 + len(given), str(Path(__file__).resolve().parent.parent / "server"))


def main(argv: list[str] | None = None) -> int:
    _this_papercode()
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write a synthetic corpus in the real record schema")
    gen.add_argument("--n", type=int, required=True, help="number of records")
    gen.add_argument("--out", type=Path, required=True, help="directory to write into (outside the git tree)")
    gen.add_argument("--layout", choices=LAYOUTS, default="files")
    gen.add_argument("--seed", type=int, default=0)
    run = sub.add_parser("run", help="generate corpora and measure load, memory and tool latency")
    from .run import add_arguments

    add_arguments(run)
    engines = sub.add_parser(
        "search-engines", help="papercode's search (tantivy) against the SQLite FTS5 engine it replaced, on the same documents and queries"
    )
    engines.add_argument("--sizes", default="10000,100000", help="comma-separated record counts (default 10000,100000)")
    engines.add_argument("--data", type=Path, help="where corpora are generated and kept (default: as for run)")
    engines.add_argument("--queries", type=int, default=300)
    gen_archive = sub.add_parser(
        "generate-archive", help="write a synthetic Papers-with-Code archive (parquet mirror and/or json.gz dumps)"
    )
    gen_archive.add_argument("--papers", type=int, required=True, help="rows of the papers table (the real one: 576,261)")
    gen_archive.add_argument("--links", type=int, required=True, help="rows of the links table (the real one: 300,161)")
    gen_archive.add_argument("--out", type=Path, required=True, help="directory to write into (outside the git tree)")
    gen_archive.add_argument("--forms", default="parquet,json.gz", help="comma-separated: parquet, json.gz (default both)")
    gen_archive.add_argument("--seed", type=int, default=0)
    gen_archive.add_argument("--methods", type=int, default=DEFAULT_METHODS, help=f"distinct methods (default {DEFAULT_METHODS:,})")
    gen_archive.add_argument("--date-type", choices=DATE_TYPES, default="string", help="type of `date` in parquet (default string)")
    gen_archive.add_argument(
        "--no-boards",
        action="store_true",
        help="without the leaderboards' tables (evaluation-tables, methods, datasets; by default the real sizes)",
    )
    archive = sub.add_parser(
        "archive", help="issues #15, #22: the floors of reading the archive (parquet, json.gz) and the archive build against them"
    )
    from .archive_bench import add_arguments as add_archive_arguments

    add_archive_arguments(archive)
    serve = sub.add_parser(
        "archive-serve",
        help="issue #22: every start of papercode serve --archive on a built archive against an empty server's, its memory, disk,"
        " latency and reloads (--records: issue #15's record shards, for commits before #22)",
    )
    from .archive_serve import add_arguments as add_serve_arguments

    add_serve_arguments(serve)
    gen_boards = sub.add_parser(
        "generate-boards", help="issue #23: the leaderboards' tables (real sizes) for an archive generate-archive wrote without them"
    )
    gen_boards.add_argument("--papers-from", type=Path, required=True, help="the generated archive (its papers parquet)")
    gen_boards.add_argument("--out", type=Path, required=True, help="directory to write into (outside the git tree)")
    gen_boards.add_argument("--forms", default="parquet,json.gz")
    gen_boards.add_argument("--seed", type=int, default=0)
    boards = sub.add_parser("boards", help="issue #23: the leaderboards' build cost, open time and tool latency")
    from .boards_bench import add_arguments as add_boards_arguments

    add_boards_arguments(boards)
    cost = sub.add_parser("index-cost", help="issue #15: what building the full-text index costs per paper (tantivy, its stemmer)")
    from .index_cost import add_arguments as add_cost_arguments

    add_cost_arguments(cost)
    report = sub.add_parser("report", help="write BENCHMARKS.md from the runs saved in benchmarks/results")
    from .report import add_arguments as add_report_arguments

    add_report_arguments(report)
    agreement = sub.add_parser(
        "score-agreement", help="issue #22: a paper's score with its text in the archive against the same text in a record above it"
    )
    from .score_agreement import add_arguments as add_agreement_arguments

    add_agreement_arguments(agreement)
    suite = sub.add_parser("suite-time", help="issue #24: the default test suite's wall time in two checkouts, run alternately")
    from .suite_time import add_arguments as add_suite_arguments

    add_suite_arguments(suite)
    plot = sub.add_parser("plot", help="plot load time and peak RSS against size from `run --json` output")
    plot.add_argument("--json", type=Path, required=True)
    plot.add_argument("--out", type=Path, default=Path(__file__).parent / "load_rss.png")
    args = parser.parse_args(argv)
    if args.command == "plot":
        from .plot import main as plot_main

        return plot_main(args.json, args.out)
    if args.command == "report":
        from .report import main as report_main

        return report_main(args)
    if args.command == "search-engines":
        from .run import DEFAULT_DATA, corpus_roots, format_machine, machine
        from .search_engines import compare, format_comparison

        print(format_machine(machine()), flush=True)

        sizes = [int(size) for size in args.sizes.split(",")]
        for n in sizes:
            roots = corpus_roots(args.data or DEFAULT_DATA, n, max(sizes), 0, "files")
            print(format_comparison(n, compare(roots, args.queries)), flush=True)
        return 0
    if args.command == "generate-archive":
        print(f"# writing {args.papers:,} papers and {args.links:,} links ({args.forms}) to {args.out}", file=sys.stderr, flush=True)
        from .archive_boards import REAL

        forms = [f.strip() for f in args.forms.split(",")]
        stats = write_archive(
            args.out, args.papers, args.links, args.seed, forms, args.methods, args.date_type, boards=None if args.no_boards else REAL
        )
        print(format_stats(stats))
        return 0
    if args.command == "archive-serve":
        from .archive_serve import main as serve_main

        return serve_main(args)
    if args.command == "generate-boards":
        from .archive_boards import REAL, format_board_stats, papers_of, write_boards
        from .archive_data import SEED_WORDS

        stats = write_boards(args.out, [f.strip() for f in args.forms.split(",")], args.seed, papers_of(args.papers_from), SEED_WORDS, REAL)
        print(format_board_stats(stats))
        return 0
    if args.command == "boards":
        from .boards_bench import main as boards_main

        return boards_main(args)
    if args.command == "suite-time":
        from .suite_time import main as suite_main

        return suite_main(args)
    if args.command == "score-agreement":
        from .score_agreement import main as agreement_main

        return agreement_main(args)
    if args.command == "index-cost":
        from .index_cost import main as cost_main

        return cost_main(args)
    if args.command == "archive":
        from .archive_bench import main as archive_main

        return archive_main(args)
    if args.command == "generate":
        out = write_corpus(args.out, args.n, seed=args.seed, layout=args.layout)
        print(f"wrote {args.n} records to {out} ({args.layout})", file=sys.stderr)
        return 0
    from .run import main as run_main

    return run_main(args)


if __name__ == "__main__":
    sys.exit(main())
