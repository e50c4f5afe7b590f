"""`python -m benchmarks generate …` writes a synthetic corpus; `python -m benchmarks run …` measures papercode on it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .generate import LAYOUTS, write_corpus


def main(argv: list[str] | None = None) -> int:
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
    plot = sub.add_parser("plot", help="plot load time and peak RSS against size from `run --json` output")
    plot.add_argument("--json", type=Path, required=True)
    plot.add_argument("--out", type=Path, default=Path(__file__).parent / "load_rss.png")
    args = parser.parse_args(argv)
    if args.command == "plot":
        from .plot import main as plot_main

        return plot_main(args.json, args.out)
    if args.command == "generate":
        out = write_corpus(args.out, args.n, seed=args.seed, layout=args.layout)
        print(f"wrote {args.n} records to {out} ({args.layout})", file=sys.stderr)
        return 0
    from .run import main as run_main

    return run_main(args)


if __name__ == "__main__":
    sys.exit(main())
