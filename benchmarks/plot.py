"""`python -m benchmarks plot --json RUN [--before RUN] --out benchmarks/load_rss.png`: load time and peak RSS against
size, from runs `python -m benchmarks run --json` saved (`benchmarks/results.py`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def plot(saved: dict[str, Any], out: Path, before: dict[str, Any] | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = saved["result"]
    sizes = sorted(results["sizes"], key=int)
    n = [int(s) for s in sizes]
    rows = [results["sizes"][s] for s in sizes]
    load = [r["load_s"] for r in rows]
    floor = [r["floor_s"] for r in rows]
    rss = [(r["peak_rss_bytes"] + r.get("child_peak_rss_bytes", 0)) / 2**30 for r in rows]
    raw = [r["raw_bytes"] / 2**30 for r in rows]

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    if all("keyed_s" in r for r in rows):
        left.plot(n, [r["keyed_s"] for r in rows], "D-", label="cold build: keyed tools ready")
        left.plot(n, load, "o-", label="cold build: search ready too")
        left.plot(n, [5 * f for f in floor], ":", color="grey", label="targets: 5x / 7x parse floor")
        left.plot(n, [7 * f for f in floor], ":", color="grey")
    else:
        left.plot(n, load, "o-", label="cold load (Corpus.load)")
    left.plot(n, floor, "s--", label="parse floor (orjson.loads)")
    if before:
        sizes_before = sorted(before["result"]["sizes"], key=int)
        left.plot(
            [int(x) for x in sizes_before],
            [before["result"]["sizes"][x]["load_s"] for x in sizes_before],
            "x--",
            color="black",
            label=f"cold load before ({before['machine']['papercode'].split(';')[0]})",
        )
    if all("warm_total_s" in r for r in rows):
        left.plot(n, [r["warm_total_s"] for r in rows], "^-", label="warm start (snapshot key + restore)")
    left.set_xlabel("records")
    left.set_ylabel("seconds")
    left.set_title("Cold build time")
    right.plot(n, rss, "o-", label="peak RSS of the building process (+ its child)")
    right.plot(n, raw, "s--", label="raw bytes of the corpus")
    right.plot(n, [1.5 * r for r in raw], ":", color="grey", label="target: 1.5x raw bytes")
    right.set_xlabel("records")
    right.set_ylabel("GiB")
    right.set_title("Peak memory")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(n)
        ax.set_xticklabels([f"{x // 1000}k" for x in n])
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right" if ax is left else "upper left")
    m = saved["machine"]
    fig.suptitle(
        f"papercode, {results['layout']} layout; {m['cpu']}, {m['cores']} cores, Python {m['python']}, mcp {m['mcp']}; {m['date']}",
        fontsize=9,
    )
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, required=True, help="a run saved by python -m benchmarks run --json")
    parser.add_argument("--before", type=Path, help="a run of an older commit, drawn beside it")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "load_rss.png")


def main(args: argparse.Namespace) -> int:
    before = json.loads(args.before.read_text()) if args.before else None
    plot(json.loads(args.json.read_text()), args.out, before)
    print(f"wrote {args.out}")
    return 0
