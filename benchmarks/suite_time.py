"""`python -m benchmarks suite-time`: the default test suite's wall time in two checkouts, run alternately.

A change that reshapes the code (issue #24) must leave the suite as fast as before: each checkout's suite runs in a
fresh process, `--runs` times, before and after taking turns so that a busy spell of a shared machine falls on both.
The floor is the earlier checkout's median; the target, the later one's within 10 % of it. Each run's test count is
kept too: a suite that got faster by running fewer tests is not faster.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .harness import machine, tree_commit
from .results import JSON_HELP, finish, header

TARGET = 1.10  # "within noise of before": a run-to-run spread of a few percent on a quiet machine, with room for it
_PASSED = re.compile(r"(\d+) passed")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the earlier commit (e.g. a git worktree)")
    parser.add_argument("--after", type=Path, required=True, help="a checkout of the later commit")
    parser.add_argument("--runs", type=int, default=3, help="suite runs in each checkout (default 3)")
    parser.add_argument("--json", type=Path, help=JSON_HELP)


def commit_of(checkout: Path) -> str:
    """The commit whose suite `checkout` runs; refused when its code or tests differ from it (the run would be of
    neither side)."""
    commit, dirty = tree_commit(checkout, checkout / "server")
    _, tests_dirty = tree_commit(checkout, checkout / "tests")
    if commit is None or dirty or tests_dirty:
        raise SystemExit(f"suite-time: {checkout.name or checkout}: not a checkout of one commit (uncommitted changes?)")
    return commit


def one_run(checkout: Path) -> dict[str, Any]:
    """The default suite once, in `checkout` (pytest runs that checkout's own code: `pythonpath = ["server"]`)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=checkout, capture_output=True, text=True)
    wall = time.perf_counter() - started
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    passed = _PASSED.search(tail)
    if done.returncode != 0 or passed is None:
        raise SystemExit(f"suite-time: the suite failed in {checkout.name or checkout}: {tail}")
    return {"wall": wall, "passed": int(passed.group(1))}


def main(args: argparse.Namespace) -> int:
    about = machine()
    print(header(about, "suite-time"), flush=True)
    sides = {"before": args.before, "after": args.after}
    commits = {side: commit_of(checkout) for side, checkout in sides.items()}
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for number in range(args.runs):
        for side, checkout in sides.items():
            run = one_run(checkout)
            runs[side].append(run)
            print(f"run {number + 1} {side} ({commits[side][:7]}): {run['wall']:.1f} s, {run['passed']} passed", flush=True)
    medians = {side: statistics.median(run["wall"] for run in runs[side]) for side in sides}
    ratio = medians["after"] / medians["before"]
    counts = {side: sorted({run["passed"] for run in runs[side]}) for side in sides}
    measured = f"{ratio:.3f}x ({medians['after']:.1f} s against {medians['before']:.1f} s; tests {counts['before']} -> {counts['after']})"
    passed = ratio <= TARGET
    print(f"  {'PASS' if passed else 'MISS'}  default suite after <= {TARGET}x before (median wall): {measured}")
    result = {
        "commits": commits,
        "runs": runs,
        "median_s": medians,
        "ratio": ratio,
        "targets": [[f"default suite after <= {TARGET}x before (median wall)", passed, measured]],
    }
    finish(args.json, "suite-time", result, about)
    return 0
