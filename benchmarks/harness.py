"""What every harness shares: the papercode it measures (this checkout's), the machine a run is measured on, paths
shown without the machine's, a process's CPU seconds and memory, and timing wrappers.

Each harness measures the papercode of its own checkout, through `papercode.bench`: an older commit is measured by
that commit's own harness, and the report compares the JSON files both wrote (docs/benchmarks.md).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


# -- the papercode measured ----------------------------------------------------------------------


def pythonpath() -> str:
    """The PYTHONPATH of every process a benchmark starts: this checkout's `server/` (not the one an editable install
    may point at) and the benchmarks package, then whatever PYTHONPATH already says."""
    return os.pathsep.join(filter(None, [str(REPO_ROOT / "server"), str(REPO_ROOT), os.environ.get("PYTHONPATH")]))


def papercode_source() -> dict[str, Any]:
    """The papercode the benchmark's subprocesses import (with `pythonpath()`): where (shown by `shown_path`), its
    commit (a `COMMIT` file beside an exported `server/`, else git) and whether its `server/` has uncommitted changes."""
    probe = subprocess.run(
        [sys.executable, "-c", "import pathlib; from papercode import bench; print(pathlib.Path(bench.__file__).resolve().parent.parent)"],
        cwd=REPO_ROOT,
        env=dict(os.environ, PYTHONPATH=pythonpath()),
        capture_output=True,
        text=True,
        check=False,
    )
    server = Path(probe.stdout.strip()) if probe.returncode == 0 else None
    out: dict[str, Any] = {"path": shown_path(server) if server else "not importable", "commit": None, "dirty": None}
    if server is None:
        return out
    out["commit"], out["dirty"] = tree_commit(server.parent, server)
    return out


def tree_commit(root: Path, scope: Path) -> tuple[str | None, bool | None]:
    """(the commit a checkout or an exported tree at `root` holds, whether `scope` in it differs from that commit):
    an export names its commit in `root/COMMIT` (its dirtiness unknown); (None, None) when neither says."""
    marker = root / "COMMIT"
    if marker.exists():
        return marker.read_text().strip(), None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=scope, capture_output=True, text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "."], cwd=scope, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None, None
    return commit, bool(status.strip())


def _git_state(source: dict[str, Any]) -> str:
    """Which papercode the workers import, at which commit, in words (`papercode_source`)."""
    if source["commit"] is None:
        return f"papercode imported from {source['path']} (commit unknown)"
    dirty = " + uncommitted server/ changes" if source["dirty"] else ""
    return f"git {source['commit'][:7]}{dirty}; papercode imported from {source['path']}"


# -- the machine ---------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
    source = papercode_source()
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(ram / 2**30, 1),
        "python": platform.python_version(),
        "mcp": version("mcp"),
        "pydantic": version("pydantic"),
        "orjson": version("orjson"),
        "tantivy": version("tantivy"),
        "numpy": version("numpy"),
        "platform": platform.platform(),
        "papercode": _git_state(source),
        "papercode_source": source,
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def format_machine(m: dict[str, Any]) -> str:
    return (
        f"# papercode benchmark, {m['date']}\n"
        f"# {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB RAM; {m['platform']}; load average at start {m['loadavg']}\n"
        f"# Python {m['python']}, mcp {m['mcp']}, pydantic {m['pydantic']}, orjson {m['orjson']}, tantivy {m['tantivy']}, numpy {m['numpy']}\n"
        f"# papercode: {m['papercode']}"
    )


def shown_path(path: Path | str) -> str:
    """A path as the benchmarks print and save it, naming nothing of this machine: relative to this checkout (`server`)
    or to the directory holding it (`../bench-data/archive-600k`), else the last two parts (`.../export/server`)."""
    resolved = Path(os.path.abspath(path))
    for base, prefix in ((REPO_ROOT, ""), (REPO_ROOT.parent, "../")):
        if resolved == base or resolved.is_relative_to(base):
            return prefix + (str(resolved.relative_to(base)) or ".")
    return ".../" + "/".join(resolved.parts[-2:])


# -- a process's CPU and memory ------------------------------------------------------------------


def cpu_s() -> float:
    """CPU seconds (user + system) of this process and of its children that ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_rss() -> tuple[int, int]:
    """The peak RSS of this process and of its largest child, in bytes (`ru_maxrss`)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def _vmrss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def start_usage() -> tuple[int, float]:
    """Where a step starts: this process's resident memory (the baseline: interpreter and imports) and CPU seconds."""
    return _vmrss(), cpu_s()


def usage(start: tuple[int, float]) -> dict[str, Any]:
    """Peak RSS of this process and of its largest child, the baseline, and the CPU seconds (user + system, this
    process and its children) the step took since `start` (`start_usage`): on a shared machine, less disturbed by
    other load than wall time."""
    peak, child_peak = peak_rss()
    return {"baseline_rss_bytes": start[0], "peak_rss_bytes": peak, "child_peak_rss_bytes": child_peak, "cpu_s": cpu_s() - start[1]}


# -- timing what papercode calls -----------------------------------------------------------------


class Timer:
    """Seconds spent in each wrapped function, by label, summed over its calls (about 1 µs a call)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        totals = self.totals

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                totals[name] = totals.get(name, 0.0) + time.perf_counter() - start

        return timed

    def wrap_all(self, phases: Iterable[tuple[object, str, str]]) -> None:
        """Wrap each `(owner, attribute, label)` in place (`papercode.bench` names the phases of what it measures)."""
        for owner, attribute, label in phases:
            setattr(owner, attribute, self.wrap(label, getattr(owner, attribute)))
