"""`python -m benchmarks archive`: the floors of reading the Papers-with-Code archive, and the archive build against them.

On one archive directory (as `python -m benchmarks generate-archive` writes it, or the real files in the same layout),
each step in a fresh subprocess:

1. **parquet floor**: for each parquet file (four papers files, one links file), `pyarrow.parquet.read_table(f)` and
   `.to_pylist()`, one file at a time (each list dropped before the next file); wall times summed;
2. **json.gz floor**: for each dump, read it, `gzip.decompress` it whole and parse it whole (`orjson.loads`; a dump
   too big for orjson's parse buffer with `msgspec.json.decode`, and the answer says so);
3. **build** (per form present): `papercode.bench.build_archive(sources, out)` (or `--build module:function`)
   into a fresh archive directory, timed around the call, with the GC policy `papercode`'s CLI sets at start; its ratio
   is to the floor of the same form. Until that function exists, the step says so and gives no number.

For every step: wall seconds; CPU seconds (user + system of the process, every thread, and of the children it waited
for); and memory, polled: the VmRSS of the step's process and of every process below it, summed, every 10 ms from
this process (`benchmarks.proctree`: `ru_maxrss` is each process's own peak, so it cannot say what a build of several
processes holds at once), beside `ru_maxrss` of the process and of its largest child. The baseline (the interpreter
and its imports, right before the step) is given apart. The build's stderr is a terminal (a pty), so its progress is
drawn as a user sees it: the stages it showed, and the longest time it showed nothing new. Then the archive directory
it wrote: its bytes on disk against the parquet files' (the issue's disk target also counts what a server's start adds
to its cache directory: `archive-serve` measures that). Every input file is read once before the steps, so all of
them run with the page cache warm.

Targets (issue #22, at 600k papers): build from parquet <= 5x the parquet floor, from the .json.gz dumps <= 6x their
floor (wall; CPU seconds beside), peak RSS of the build's processes summed <= 2 GiB, the archive directory <= 3x the
parquet files' bytes (with the cache a start adds: `archive-serve`).
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from papercode import bench

from .archive_data import LINKS_DUMP, LINKS_PARQUET, PAPERS_DUMP, PAPERS_PARQUET
from .harness import REPO_ROOT, machine, pythonpath, shown_path, start_usage, usage
from .proctree import TreeSampler
from .results import JSON_HELP, at_most, finish, header

DEFAULT_BUILD = "papercode.bench:build_archive"
FORM_FILES = {"parquet": (*PAPERS_PARQUET, LINKS_PARQUET), "json.gz": (PAPERS_DUMP, LINKS_DUMP)}
TARGET_BUILD_VS_FLOOR = {"parquet": 5.0, "json.gz": 6.0}
TARGET_BUILD_RSS_BYTES = 2 * 2**30
TARGET_DISK_VS_PARQUET = 3.0
PROGRESS_LABEL = "building archive: "


# -- the steps (each runs in its own subprocess) -------------------------------------------


def parquet_floor(files: Sequence[Path]) -> dict[str, Any]:
    """`read_table(f).to_pylist()` for each file, one at a time: seconds for each half, summed, and rows per file."""
    import pyarrow.parquet as pq

    started = start_usage()
    read_s = pylist_s = 0.0
    rows: dict[str, int] = {}
    for path in files:
        start = time.perf_counter()
        table = pq.read_table(path)
        middle = time.perf_counter()
        pylist = table.to_pylist()
        end = time.perf_counter()
        read_s += middle - start
        pylist_s += end - middle
        rows[str(path)] = len(pylist)
        del table, pylist
    return {"read_s": read_s, "pylist_s": pylist_s, "floor_s": read_s + pylist_s, "rows": rows, **usage(started)}


def json_floor(files: Sequence[Path]) -> dict[str, Any]:
    """Each dump read, gunzipped whole (one `gzip.decompress`) and parsed whole (one `orjson.loads`).

    `orjson.loads` reserves its parse buffer in one allocation of 12 bytes per input byte (`len / 2 * 24` in orjson's
    `buffer_capacity_to_allocate`): beyond a twelfth of the machine's memory (about 1.9 GiB of JSON on 23.5 GiB, with
    the kernel's default overcommit) it fails at once with "Not enough memory to allocate buffer for parsing". Such a dump is
    parsed whole with `msgspec.json.decode` instead (no such buffer), and the answer says so for that file."""
    import orjson

    started = start_usage()
    gunzip_s = loads_s = 0.0
    rows: dict[str, int] = {}
    parsers: dict[str, str] = {}
    raw_bytes = 0
    for path in files:
        start = time.perf_counter()
        raw = gzip.decompress(path.read_bytes())
        middle = time.perf_counter()
        try:
            parsed = orjson.loads(raw)
            parsers[str(path)] = "orjson.loads"
        except orjson.JSONDecodeError as exc:
            if "Not enough memory" not in str(exc):
                raise
            import msgspec

            middle = time.perf_counter()  # the failed attempt is not part of the floor
            parsed = msgspec.json.decode(raw)
            parsers[str(path)] = f"msgspec.json.decode (orjson.loads failed: {exc})"
        end = time.perf_counter()
        gunzip_s += middle - start
        loads_s += end - middle
        raw_bytes += len(raw)
        rows[str(path)] = len(parsed)
        del raw, parsed
    return {
        "gunzip_s": gunzip_s,
        "loads_s": loads_s,
        "floor_s": gunzip_s + loads_s,
        "json_bytes": raw_bytes,
        "rows": rows,
        "parsers": parsers,
        **usage(started),
    }


def resolve_build(spec: str) -> Callable[..., Any] | str:
    """The build function named `module:function`, or why it is not available (its module, or a package above it,
    does not exist yet). Any other import error is a bug in the build and is raised."""
    module_name, _, function_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        parts = module_name.split(".")
        if exc.name in {".".join(parts[:i]) for i in range(1, len(parts) + 1)}:
            return f"{module_name} is not importable ({exc})"
        raise
    function = getattr(module, function_name or "build_archive", None)
    if not callable(function):
        return f"{module_name} has no function {function_name!r}"
    return function  # type: ignore[no-any-return]


def build_step(spec: str, sources: Sequence[Path], out: Path, data_date: str | None) -> dict[str, Any]:
    """`build_archive(sources, out[, data_date=...])` timed in this process, with the CLI's GC policy."""
    build = resolve_build(spec)
    if isinstance(build, str):
        return {"available": False, "reason": build}
    bench.gc_policy()
    started = start_usage()
    kwargs = {"data_date": data_date} if data_date is not None else {}
    start = time.perf_counter()
    answer = build(list(sources), out, **kwargs)
    build_s = time.perf_counter() - start
    return {"available": True, "build_s": build_s, "returned": type(answer).__name__, **usage(started)}


def _worker_main(mode: str, payload_path: str) -> int:
    payload = json.loads(Path(payload_path).read_text())
    if mode == "parquet":
        answer = parquet_floor([Path(p) for p in payload["files"]])
    elif mode == "json":
        answer = json_floor([Path(p) for p in payload["files"]])
    elif mode == "build":
        answer = build_step(payload["build"], [Path(p) for p in payload["files"]], Path(payload["out"]), payload.get("data_date"))
    else:
        raise SystemExit(f"unknown worker mode {mode!r}")
    # the answer goes to a file, so that whatever the measured code prints cannot corrupt it
    Path(payload["answer"]).write_text(json.dumps(answer))
    return 0


# -- running a step --------------------------------------------------------------------------


class _Terminal:
    """A pty for a step's stdout and stderr: what is written to it, with when (seconds from `started`)."""

    def __init__(self) -> None:
        import pty

        self.master, self.slave = pty.openpty()
        self.started = time.perf_counter()
        self.chunks: list[tuple[float, bytes]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        os.close(self.slave)  # the child holds its own copy: the master reads EOF (EIO) once the child ends
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                break
            if not chunk:
                break
            self.chunks.append((time.perf_counter() - self.started, chunk))

    def close(self) -> str:
        self._reader.join(timeout=10)
        os.close(self.master)
        return b"".join(chunk for _, chunk in self.chunks).decode(errors="replace")


def run_step(mode: str, payload: dict[str, Any], module: str = "benchmarks.archive_bench", *, terminal: bool = False) -> dict[str, Any]:
    """Run one step in a fresh `python -m MODULE --worker MODE PAYLOAD_FILE` (the worker writes its answer to the
    payload's `answer` path), its process tree's VmRSS polled meanwhile (`tree_rss`); its answer, or an error naming
    it. With `terminal`, its stdout and stderr are a pty and the answer has what was drawn on it (`progress`)."""
    with tempfile.TemporaryDirectory(prefix="papercode-archive-step-") as tmp:
        payload = dict(payload, answer=str(Path(tmp) / "answer.json"))
        (Path(tmp) / "payload.json").write_text(json.dumps(payload))
        env = dict(os.environ, PYTHONPATH=pythonpath())
        command = [sys.executable, "-m", module, "--worker", mode, str(Path(tmp) / "payload.json")]
        pty = _Terminal() if terminal else None
        with open(Path(tmp) / "output", "w+b") as output:
            sink: Any = pty.slave if pty else output
            started = time.perf_counter()
            proc = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
            sampler = TreeSampler("VmRSS", proc.pid).start()
            if pty:
                pty.start()
            returncode = proc.wait()
            ended = time.perf_counter() - started
            tree = sampler.stop()
            if pty:
                text = pty.close()
            else:
                output.seek(0)
                text = output.read().decode(errors="replace")
        if returncode != 0:
            raise RuntimeError(f"step {mode} failed (exit {returncode}):\n{text[-4000:]}")
        answer: dict[str, Any] = json.loads((Path(tmp) / "answer.json").read_text())
        answer["tree_rss"] = tree
        answer["process_s"] = ended
        if pty:
            answer["progress"] = progress_of(pty.chunks, ended)
        return answer


def progress_of(chunks: Sequence[tuple[float, bytes]], ended: float) -> dict[str, Any]:
    """What a build drew on its terminal: how many times, each stage it named (in order, with when it first did and how
    many draws it had), and the longest time nothing new was drawn between the first draw and the end of the process."""
    draws: list[tuple[float, str]] = []
    for at, chunk in chunks:
        for piece in chunk.decode(errors="replace").replace("\n", "\r").split("\r"):
            text = piece.strip()
            if text.startswith(PROGRESS_LABEL.strip()):
                draws.append((at, text))
    stages: dict[str, dict[str, Any]] = {}
    for at, text in draws:
        stage = stage_of(text)
        entry = stages.setdefault(stage, {"first_s": round(at, 3), "draws": 0})
        entry["draws"] += 1
    times = [at for at, _ in draws] + [ended]
    gaps = [(later - earlier, draws[i][1]) for i, (earlier, later) in enumerate(itertools.pairwise(times))]
    longest = max(gaps, default=(0.0, ""))
    return {
        "draws": len(draws),
        "stages": stages,
        "longest_quiet_s": longest[0],
        "longest_quiet_after": stage_of(longest[1]) if longest[1] else None,
        "last": draws[-1][1] if draws else None,
    }


def stage_of(text: str) -> str:
    """The stage a progress line names: `building archive: 42% reading x.parquet, 10 papers, ...` -> `reading x.parquet`."""
    detail = text.removeprefix(PROGRESS_LABEL.strip()).strip()
    first, _, rest = detail.partition(" ")
    if first.endswith("%") and first[:-1].strip().isdigit():
        detail = rest
    return detail.split(",")[0].split(" (")[0].strip()


# -- one archive ---------------------------------------------------------------------------


def archive_forms(data: Path) -> dict[str, list[Path]]:
    """The forms present under `data` (every file of the form there), each with its files: papers first, then links."""
    forms = {}
    for form, names in FORM_FILES.items():
        if all((data / name).is_file() for name in names):
            forms[form] = [data / name for name in names]
    return forms


def _warm(files: Sequence[Path]) -> None:
    for path in files:
        with open(path, "rb", buffering=0) as f:
            while f.read(16 * 2**20):
                pass


def disk_usage(root: Path) -> dict[str, int]:
    """Files under `root` (symlinks not followed; each inode once): how many, their bytes, and the bytes they take on
    disk (allocated blocks)."""
    seen: set[tuple[int, int]] = set()
    files = size = blocks = 0
    for directory, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            stat = os.lstat(os.path.join(directory, name))
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            blocks += stat.st_blocks * 512
            if name in filenames and not os.path.islink(os.path.join(directory, name)):
                files += 1
                size += stat.st_size
    return {"files": files, "bytes": size, "disk_bytes": blocks}


def manifest_of(archive_dir: Path) -> dict[str, Any] | None:
    """The manifest of the archive in `archive_dir`: the serving form's `current/archive.json`, or the record shards'
    `archive.json` of a papercode from before issue #22; None when there is neither."""
    for manifest in (archive_dir / "current" / "archive.json", archive_dir / "archive.json"):
        if manifest.is_file():
            raw: dict[str, Any] = json.loads(manifest.read_text())
            return raw
    return None


def archive_facts(archive_dir: Path) -> dict[str, Any]:
    """What a build wrote to `archive_dir`: the disk it takes, and what its manifest says."""
    facts: dict[str, Any] = {"disk": disk_usage(archive_dir)}
    raw = manifest_of(archive_dir)
    if raw is not None:
        counts = raw.get("counts") or {}
        facts.update(
            format_version=raw.get("format_version"),
            build_id=raw.get("build_id"),
            papers=counts.get("papers"),
            search_segments=(raw.get("search") or {}).get("segments"),
            manifest_files=len(raw.get("files") or raw.get("shards") or ()),
        )
    builds = archive_dir / "builds"
    facts["builds"] = sorted(entry.name for entry in builds.iterdir()) if builds.is_dir() else []
    return facts


def measure_archive(
    data: Path,
    *,
    forms: Sequence[str] | None = None,
    build: str | None = DEFAULT_BUILD,
    build_out: Path | None = None,
    data_date: str | None = None,
    repeat: int = 1,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every number for one archive directory: each form's floor (best of `repeat`, each run a fresh process), and the
    build from each form, its ratio to that floor and the archive directory it wrote."""
    present = archive_forms(data)
    chosen = [f for f in (forms or present) if f in present]
    missing = [f for f in (forms or ()) if f not in present]
    if missing:
        raise FileNotFoundError(f"{data} has no complete {' or '.join(missing)} form (expected {', '.join(FORM_FILES[missing[0]])})")
    if not chosen:
        raise FileNotFoundError(
            f"{data} holds neither form of the archive (expected {', '.join(FORM_FILES['parquet'])} or the .json.gz dumps)"
        )
    for form in chosen if build and build_out else ():  # before the floors, not after
        _check_out(build_out / form.replace(".", "-"))
    result: dict[str, Any] = {"data": shown_path(data), "forms": {}}
    if "parquet" in present:
        result["parquet_bytes"] = sum(path.stat().st_size for path in present["parquet"])
    _warm([p for form in chosen for p in present[form]])
    for form in chosen:
        files = present[form]
        entry: dict[str, Any] = {"files": {str(p.relative_to(data)): p.stat().st_size for p in files}}
        entry["input_bytes"] = sum(entry["files"].values())
        mode = "parquet" if form == "parquet" else "json"
        runs = []
        for _ in range(max(1, repeat)):
            if log:
                log(f"# {form} floor")
            floor = run_step(mode, {"files": [str(p) for p in files]})
            floor["rows"] = {str(Path(path).relative_to(data)): rows for path, rows in floor["rows"].items()}
            floor["parsers"] = {str(Path(path).relative_to(data)): used for path, used in floor.get("parsers", {}).items()}
            runs.append(floor)
        entry["floor"] = min(runs, key=lambda r: r["floor_s"])
        entry["floor"]["runs_s"] = [r["floor_s"] for r in runs]
        if build:
            entry["build"] = _measure_build(build, form, files, build_out=build_out, data_date=data_date, log=log)
        result["forms"][form] = entry
    result["targets"] = [list(row) for row in targets(result)]
    return result


def _measure_build(
    build: str, form: str, files: Sequence[Path], *, build_out: Path | None, data_date: str | None, log: Callable[[str], None] | None
) -> dict[str, Any]:
    if log:
        log(f"# build from {form}")
    with tempfile.TemporaryDirectory(prefix="papercode-archive-build-") as tmp:
        out = (build_out / form.replace(".", "-")) if build_out else Path(tmp) / "archive"
        _fresh(out)
        payload = {"build": build, "files": [str(p) for p in files], "out": str(out), "data_date": data_date}
        answer = run_step("build", payload, terminal=True)
        if answer["available"]:
            answer["archive"] = archive_facts(out)
        answer["out"] = shown_path(out) if build_out else "(temporary, removed)"
        return answer


def _check_out(out: Path) -> None:
    """A build may write `out` (removing it first) only if it is missing, empty, or an archive directory (a build's own
    output); never anything else."""
    ours = (out / "current").is_symlink() or (out / "builds").is_dir() or (out / "archive.json").is_file()
    if out.exists() and any(out.iterdir()) and not ours:
        raise FileExistsError(f"{out} exists and is not an archive directory: not removing it. Next: pass another --build-out")


def _fresh(out: Path) -> None:
    """`out` made an empty directory for a build (see `_check_out`)."""
    _check_out(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)


def build_peak_bytes(build: dict[str, Any]) -> int:
    """The build's peak memory, every process summed: the polled peak of the tree's VmRSS, or, if higher, what the
    kernel's own peaks say at least (`ru_maxrss` of the process; a polled peak can miss a spike shorter than 10 ms)."""
    return max(build["tree_rss"]["peak_bytes"], build["peak_rss_bytes"])


def ratios(entry: dict[str, Any], parquet_bytes: int | None) -> dict[str, float]:
    """The build against its floor: wall time, CPU time, peak memory (every process summed) of each; and the archive
    directory's bytes on disk against the parquet files'."""
    build, floor = entry.get("build") or {}, entry["floor"]
    if not build.get("available"):
        return {}
    out = {
        "build_vs_floor": build["build_s"] / floor["floor_s"],
        "cpu_vs_floor_cpu": build["cpu_s"] / floor["cpu_s"] if floor["cpu_s"] else float("inf"),
        "cores_used": build["cpu_s"] / build["build_s"] if build["build_s"] else 0.0,
        "rss_vs_floor": build_peak_bytes(build) / build_peak_bytes(floor),
        "rss_vs_input": build_peak_bytes(build) / entry["input_bytes"],
    }
    if parquet_bytes and "archive" in build:
        out["disk_vs_parquet"] = build["archive"]["disk"]["disk_bytes"] / parquet_bytes
    return out


def targets(result: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(target, passed, measured) for issue #22's build targets, per form built."""
    rows = []
    for form, entry in result["forms"].items():
        r = ratios(entry, result.get("parquet_bytes"))
        if not r:
            continue
        limit, peak = TARGET_BUILD_VS_FLOOR[form], build_peak_bytes(entry["build"])
        rows.append(
            at_most(f"build from {form} <= {limit:g}x the {form} floor (wall)", r["build_vs_floor"], limit, f"{r['build_vs_floor']:.2f}x")
        )
        rows.append(
            at_most(f"build from {form}: peak RSS, every process summed <= 2 GiB", peak, TARGET_BUILD_RSS_BYTES, f"{peak / 2**30:.2f} GiB")
        )
        if "disk_vs_parquet" in r:
            name = f"build from {form}: archive directory <= {TARGET_DISK_VS_PARQUET:g}x the parquet files (without the cache)"
            rows.append(at_most(name, r["disk_vs_parquet"], TARGET_DISK_VS_PARQUET, f"{r['disk_vs_parquet']:.2f}x"))
    return rows


# -- printing ------------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _memory(r: dict[str, Any]) -> str:
    tree = r["tree_rss"]
    processes = f", {tree['processes']} processes" if tree["processes"] > 1 else ""
    child = f", largest child's {_mb(r['child_peak_rss_bytes'])}" if r["child_peak_rss_bytes"] else ""
    return (
        f"peak RSS {_mb(build_peak_bytes(r))} (polled, every process summed{processes};"
        f" ru_maxrss {_mb(r['peak_rss_bytes'])}{child}; baseline {_mb(r['baseline_rss_bytes'])})"
    )


def peak_line(r: dict[str, Any]) -> str:
    """A step's CPU seconds and memory (`harness.usage`, with its polled tree), in one line."""
    return f"CPU {r['cpu_s']:.2f} s   {_memory(r)}"


def manifest_line(archive: dict[str, Any]) -> str:
    said = [f"format {archive.get('format_version')}"]
    if archive.get("build_id"):
        said.append(f"build {archive['build_id']}")
    said.append(f"{archive.get('papers') or 0:,} papers")
    if archive.get("search_segments") is not None:
        said.append(f"{archive['search_segments']} search segments")
    return ", ".join(said)


def format_progress(p: dict[str, Any]) -> str:
    if not p["draws"]:
        return "progress on a terminal: nothing drawn"
    stages = "; ".join(f"{stage} ({entry['draws']} at {entry['first_s']:.1f} s)" for stage, entry in p["stages"].items())
    return (
        f"progress on a terminal: {p['draws']} draws; stages (draws, first at): {stages};"
        f" longest without a new draw {p['longest_quiet_s']:.1f} s (after {p['longest_quiet_after']!r})"
    )


def format_archive(result: dict[str, Any]) -> str:
    lines = [f"## archive in {result['data']}"]
    for form, entry in result["forms"].items():
        floor = entry["floor"]
        rows = floor["rows"]
        total_rows = sum(rows.values())
        lines.append(f"{form}: {len(entry['files'])} files, {_mb(entry['input_bytes'])}, {total_rows:,} rows")
        for name, size in entry["files"].items():
            lines.append(f"  {size / 2**20:9,.1f} MiB {rows.get(name, 0):10,} rows  {name}")
        runs = ", ".join(f"{s:.2f}" for s in floor["runs_s"])
        if form == "parquet":
            lines.append(
                f"parquet floor     read_table {floor['read_s']:.2f} s + to_pylist {floor['pylist_s']:.2f} s = {floor['floor_s']:.2f} s"
                f"   {peak_line(floor)}   (runs: {runs} s)"
            )
        else:
            parsers = set(floor["parsers"].values())
            parser = "orjson.loads" if parsers == {"orjson.loads"} else "parse"
            lines.append(
                f"json.gz floor     read + gunzip {floor['gunzip_s']:.2f} s + {parser} {floor['loads_s']:.2f} s = {floor['floor_s']:.2f} s"
                f"   ({_mb(floor['json_bytes'])} of JSON)   {peak_line(floor)}   (runs: {runs} s)"
            )
            for name, used in floor["parsers"].items():
                if used != "orjson.loads":
                    lines.append(f"  {Path(name).name}: {used}")
        build = entry.get("build")
        if build is None:
            lines.append(f"build ({form})     not measured (--no-build)")
        elif not build["available"]:
            lines.append(f"build ({form})     not available: {build['reason']}; no number")
        else:
            r = ratios(entry, result.get("parquet_bytes"))
            lines.append(
                f"build ({form})     {build['build_s']:.2f} s = {r['build_vs_floor']:.2f}x the {form} floor"
                f"   CPU {build['cpu_s']:.2f} s = {r['cpu_vs_floor_cpu']:.2f}x the floor's ({r['cores_used']:.2f} cores busy)"
            )
            lines.append(f"  {_memory(build)} = {r['rss_vs_floor']:.2f}x the floor's, {r['rss_vs_input']:.2f}x the input bytes")
            archive = build["archive"]
            disk = archive["disk"]
            vs = f" = {r['disk_vs_parquet']:.2f}x the parquet files" if "disk_vs_parquet" in r else ""
            lines.append(
                f"  archive directory {build['out']}: {disk['files']:,} files, {_mb(disk['disk_bytes'])} on disk{vs} ({manifest_line(archive)})"
            )
            lines.append("  " + format_progress(build["progress"]))
    rows = targets(result)
    if rows:
        lines.append("targets (issue #22, defined at 600k papers)")
        for name, passed, measured in rows:
            lines.append(f"  {'PASS' if passed else 'MISS'}  {name:78s} {measured}")
    return "\n".join(lines)


# -- entry points --------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, required=True, help="an archive directory, as generate-archive writes it")
    parser.add_argument("--forms", help="comma-separated: parquet, json.gz (default: every form present)")
    parser.add_argument("--build", default=DEFAULT_BUILD, help=f"the build as module:function (default {DEFAULT_BUILD})")
    parser.add_argument("--no-build", action="store_true", help="measure the floors only")
    parser.add_argument(
        "--build-out",
        type=Path,
        help="keep each build's archive directory here (BUILD_OUT/parquet, BUILD_OUT/json-gz: serve it with archive-serve"
        " --archive-dir); default a temporary directory",
    )
    parser.add_argument("--snapshot", help="passed to the build as data_date=")
    parser.add_argument("--repeat", type=int, default=1, help="run each floor this many times (each in a fresh process), keep the best")
    parser.add_argument("--json", type=Path, help=JSON_HELP)


def main(args: argparse.Namespace) -> int:
    from importlib.metadata import version

    about = machine()
    print(f"{header(about, 'archive')}; pyarrow {version('pyarrow')}", flush=True)
    forms = [f.strip() for f in args.forms.split(",")] if args.forms else None
    result = measure_archive(
        args.data,
        forms=forms,
        build=None if args.no_build else args.build,
        build_out=args.build_out,
        data_date=args.snapshot,
        repeat=args.repeat,
        log=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(format_archive(result), flush=True)
    finish(args.json, "archive", result, about)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[2], sys.argv[3]))
    raise SystemExit("run as python -m benchmarks archive")
