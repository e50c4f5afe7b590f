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
    try:
        from .run import add_arguments
    except ImportError:  # pragma: no cover - run.py not written yet
        add_arguments = None
    if add_arguments is not None:
        add_arguments(run)
    args = parser.parse_args(argv)
    if args.command == "generate":
        out = write_corpus(args.out, args.n, seed=args.seed, layout=args.layout)
        print(f"wrote {args.n} records to {out} ({args.layout})", file=sys.stderr)
        return 0
    from .run import main as run_main

    return run_main(args)


if __name__ == "__main__":
    sys.exit(main())
