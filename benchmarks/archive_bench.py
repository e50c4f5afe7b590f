"""`python -m benchmarks archive`: issue #15's floors for reading the Papers-with-Code archive, and the build against them.

On one archive directory (as `python -m benchmarks generate-archive` writes it, or the real files in the same layout),
each step in a fresh subprocess, so that each peak RSS is that step's alone:

1. **parquet floor**: for each parquet file (four papers files, one links file), `pyarrow.parquet.read_table(f)` and
   `.to_pylist()`, one file at a time (each list dropped before the next file); wall times summed;
2. **json.gz floor**: for each dump, read it, `gzip.decompress` it whole and `orjson.loads` it whole;
3. **build** (per form present): `papercode.archive.build.build_archive(sources, out)` (or `--build module:function`),
   timed around the call, with the GC policy `papercode`'s CLI sets at start; its ratio is to the floor of the same
   form. Until that function exists, the step says so and gives no number;
4. **records floor** of what the build wrote (`records_parse_floor`): read every record file, gunzip the compressed
   ones, then time `orjson.loads` of each record (a whole `.json` / `.txt`, or each line of a `.jsonl`), best of 3:
   the floor a cold start of `papercode serve` on the built records is measured against.

Peak RSS is `ru_maxrss` of the step's process (which includes the interpreter and its imports: the baseline, measured
right before the step, is printed beside it) and of its largest child, as `benchmarks.run` reports them. Every input
file is read once before the steps, so all of them run with the page cache warm.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .archive_data import LINKS_DUMP, LINKS_PARQUET, PAPERS_DUMP, PAPERS_PARQUET

DEFAULT_BUILD = "papercode.archive.build:build_archive"
FORM_FILES = {"parquet": (*PAPERS_PARQUET, LINKS_PARQUET), "json.gz": (PAPERS_DUMP, LINKS_DUMP)}


# -- the steps (each runs in its own subprocess) -------------------------------------------


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _start() -> tuple[int, float]:
    """Where a step starts: this process's peak RSS so far (the baseline: interpreter and imports) and CPU seconds."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, _cpu_s()


def _usage(start: tuple[int, float]) -> dict[str, Any]:
    """Peak RSS of this process and of its largest child, the baseline, and the CPU seconds (user + system, this
    process and its children) the step took: on a shared machine, less disturbed by other load than wall time."""
    return {
        "baseline_rss_bytes": start[0] * 1024,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "child_peak_rss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
        "cpu_s": _cpu_s() - start[1],
    }


def parquet_floor(files: Sequence[Path]) -> dict[str, Any]:
    """`read_table(f).to_pylist()` for each file, one at a time: seconds for each half, summed, and rows per file."""
    import pyarrow.parquet as pq

    start_usage = _start()
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
    return {"read_s": read_s, "pylist_s": pylist_s, "floor_s": read_s + pylist_s, "rows": rows, **_usage(start_usage)}


def json_floor(files: Sequence[Path]) -> dict[str, Any]:
    """Each dump read, gunzipped whole (one `gzip.decompress`) and parsed whole (one `orjson.loads`).

    `orjson.loads` reserves its parse buffer in one allocation of 12 bytes per input byte (`len / 2 * 24` in orjson's
    `buffer_capacity_to_allocate`): beyond a twelfth of the machine's memory (about 1.9 GiB of JSON on 23.5 GiB, with
    the kernel's default overcommit) it fails at once with "Not enough memory to allocate buffer for parsing". Such a dump is
    parsed whole with `msgspec.json.decode` instead (no such buffer), and the answer says so for that file."""
    import orjson

    start_usage = _start()
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
        **_usage(start_usage),
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


def build_step(spec: str, sources: Sequence[Path], out: Path, snapshot: str | None) -> dict[str, Any]:
    """`build_archive(sources, out[, snapshot=...])` timed in this process, with the CLI's GC policy."""
    build = resolve_build(spec)
    if isinstance(build, str):
        return {"available": False, "reason": build}
    from papercode.cli.main import gc_policy as cli_gc_policy

    cli_gc_policy()
    start_usage = _start()
    kwargs = {"snapshot": snapshot} if snapshot is not None else {}
    start = time.perf_counter()
    answer = build(list(sources), out, **kwargs)
    build_s = time.perf_counter() - start
    written = [p for p in out.rglob("*") if p.is_file()]
    return {
        "available": True,
        "build_s": build_s,
        "answer": repr(answer)[:300],
        "out_files": len(written),
        "out_bytes": sum(p.stat().st_size for p in written),
        **_usage(start_usage),
    }


def record_files(roots: Sequence[Path]) -> list[Path]:
    """The files papercode's loader would read under `roots`: record suffixes, plain or gzipped, no dot-names."""
    try:
        from papercode.build.files import RECORD_SUFFIXES
    except ImportError:  # a papercode from before `build.files` (run with its own PYTHONPATH)
        RECORD_SUFFIXES = (".json", ".txt", ".jsonl")

    suffixes = RECORD_SUFFIXES + tuple(s + ".gz" for s in RECORD_SUFFIXES)
    files: list[Path] = []
    for root in roots:
        if root.is_file():
            files.append(root)
            continue
        files.extend(sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(suffixes) and not p.name.startswith(".")))
    return files


def records_parse_floor(roots: Sequence[Path], repeat: int = 3) -> dict[str, Any]:
    """The parse floor of built records, for cold-start ratios: every record file read and gunzipped if compressed
    (timed once, apart), then `orjson.loads` of each record timed alone (best of `repeat`): a whole `.json` / `.txt`
    file, or each non-blank line of a `.jsonl`. `floor_s` is the loads alone, as `benchmarks.run`'s parse floor."""
    import orjson

    start_usage = _start()
    files = record_files(roots)
    start = time.perf_counter()
    blobs = [path.read_bytes() for path in files]
    read_s = time.perf_counter() - start
    raw_bytes = sum(map(len, blobs))
    records: list[bytes] = []
    gunzip_s = 0.0
    for path, blob in zip(files, blobs, strict=True):
        name = path.name
        if name.endswith(".gz"):
            start = time.perf_counter()
            blob = gzip.decompress(blob)
            gunzip_s += time.perf_counter() - start
            name = name[:-3]
        if name.endswith(".jsonl"):
            records.extend(line for line in blob.split(b"\n") if line.strip())
        else:
            records.append(blob)
    del blobs
    loads = orjson.loads
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for record in records:
            loads(record)
        best = min(best, time.perf_counter() - start)
    return {
        "files": len(files),
        "records": len(records),
        "raw_bytes": raw_bytes,
        "parsed_bytes": sum(map(len, records)),
        "read_s": read_s,
        "gunzip_s": gunzip_s,
        "loads_s": best if records else 0.0,
        "floor_s": best if records else 0.0,
        **_usage(start_usage),
    }


def _worker_main(mode: str, payload_path: str) -> int:
    payload = json.loads(Path(payload_path).read_text())
    if mode == "parquet":
        answer = parquet_floor([Path(p) for p in payload["files"]])
    elif mode == "json":
        answer = json_floor([Path(p) for p in payload["files"]])
    elif mode == "build":
        answer = build_step(payload["build"], [Path(p) for p in payload["files"]], Path(payload["out"]), payload.get("snapshot"))
    elif mode == "records":
        answer = records_parse_floor([Path(p) for p in payload["roots"]], payload.get("repeat", 3))
    else:
        raise SystemExit(f"unknown worker mode {mode!r}")
    # the answer goes to a file, so that whatever the measured code prints cannot corrupt it
    Path(payload["answer"]).write_text(json.dumps(answer))
    return 0


def run_step(mode: str, payload: dict[str, Any], module: str = "benchmarks.archive_bench") -> dict[str, Any]:
    """Run one step in a fresh `python -m MODULE --worker MODE PAYLOAD_FILE` (the worker writes its answer to the
    payload's `answer` path); its answer, or an error naming it."""
    from .run import REPO_ROOT, _pythonpath

    with tempfile.TemporaryDirectory(prefix="papercode-archive-step-") as tmp:
        payload = dict(payload, answer=str(Path(tmp) / "answer.json"))
        (Path(tmp) / "payload.json").write_text(json.dumps(payload))
        env = dict(os.environ, PYTHONPATH=_pythonpath())
        with open(Path(tmp) / "stderr", "w+b") as stderr:
            proc = subprocess.run(
                [sys.executable, "-m", module, "--worker", mode, str(Path(tmp) / "payload.json")],
                cwd=REPO_ROOT,
                env=env,
                stdout=stderr,
                stderr=stderr,
                check=False,
            )
            if proc.returncode != 0:
                stderr.seek(0)
                tail = stderr.read().decode(errors="replace")[-4000:]
                raise RuntimeError(f"step {mode} failed (exit {proc.returncode}):\n{tail}")
        answer: dict[str, Any] = json.loads((Path(tmp) / "answer.json").read_text())
        return answer


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


def measure_archive(
    data: Path,
    forms: Sequence[str] | None = None,
    build: str | None = DEFAULT_BUILD,
    build_out: Path | None = None,
    snapshot: str | None = None,
    records: Sequence[Path] = (),
    repeat: int = 1,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every number for one archive directory: each form's floor (best of `repeat`, each run a fresh process), the
    build from each form and its ratio to that floor, and the records floor of what it wrote (and of `records`)."""
    present = archive_forms(data)
    chosen = [f for f in (forms or present) if f in present]
    missing = [f for f in (forms or ()) if f not in present]
    if missing:
        raise FileNotFoundError(f"{data} has no complete {' or '.join(missing)} form (expected {', '.join(FORM_FILES[missing[0]])})")
    if not chosen:
        raise FileNotFoundError(
            f"{data} holds neither form of the archive (expected {', '.join(FORM_FILES['parquet'])} or the .json.gz dumps)"
        )
    result: dict[str, Any] = {"data": str(data), "forms": {}}
    _warm([p for form in chosen for p in present[form]])
    for form in chosen:
        files = present[form]
        entry: dict[str, Any] = {"files": {str(p): p.stat().st_size for p in files}}
        entry["input_bytes"] = sum(entry["files"].values())
        mode = "parquet" if form == "parquet" else "json"
        runs = []
        for _ in range(max(1, repeat)):
            if log:
                log(f"# {form} floor")
            runs.append(run_step(mode, {"files": [str(p) for p in files]}))
        entry["floor"] = min(runs, key=lambda r: r["floor_s"])
        entry["floor"]["runs_s"] = [r["floor_s"] for r in runs]
        if build:
            entry["build"] = _measure_build(build, form, files, build_out, snapshot, log)
        result["forms"][form] = entry
    result["records"] = [records_step(records)] if records else []
    return result


def records_step(roots: Sequence[Path]) -> dict[str, Any]:
    """`records_parse_floor(roots)` in a fresh process."""
    return {"roots": [str(r) for r in roots], **run_step("records", {"roots": [str(r) for r in roots]})}


def _measure_build(
    build: str, form: str, files: Sequence[Path], build_out: Path | None, snapshot: str | None, log: Callable[[str], None] | None
) -> dict[str, Any]:
    if log:
        log(f"# build from {form}")
    with tempfile.TemporaryDirectory(prefix="papercode-archive-build-") as tmp:
        out = (build_out / form.replace(".", "-")) if build_out else Path(tmp) / "records"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        answer = run_step("build", {"build": build, "files": [str(p) for p in files], "out": str(out), "snapshot": snapshot})
        if answer["available"]:
            if log:
                log(f"# records floor of the build from {form}")
            answer["records"] = records_step([out])
        answer["out"] = str(out) if build_out else "(temporary, removed)"
        return answer


def ratios(entry: dict[str, Any]) -> dict[str, float]:
    """The build against its floor: time, and peak RSS (process + largest child) of each."""
    build, floor = entry.get("build") or {}, entry["floor"]
    if not build.get("available"):
        return {}
    floor_peak = floor["peak_rss_bytes"] + floor["child_peak_rss_bytes"]
    build_peak = build["peak_rss_bytes"] + build["child_peak_rss_bytes"]
    return {
        "build_vs_floor": build["build_s"] / floor["floor_s"],
        "rss_vs_floor": build_peak / floor_peak,
        "rss_vs_input": build_peak / entry["input_bytes"],
    }


# -- printing ------------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def _peak(r: dict[str, Any]) -> str:
    child = f" + child {_mb(r['child_peak_rss_bytes'])}" if r["child_peak_rss_bytes"] else ""
    return f"CPU {r['cpu_s']:.2f} s   peak RSS {_mb(r['peak_rss_bytes'])}{child} (baseline {_mb(r['baseline_rss_bytes'])})"


def format_records(r: dict[str, Any]) -> str:
    return (
        f"{r['records']:,} records in {r['files']:,} files ({_mb(r['raw_bytes'])} on disk, {_mb(r['parsed_bytes'])} of JSON):"
        f" orjson.loads per record {r['loads_s']:.2f} s (best of 3; gunzip {r['gunzip_s']:.2f} s, read {r['read_s']:.2f} s, apart); {_peak(r)}"
    )


def format_archive(result: dict[str, Any]) -> str:
    lines = [f"## archive in {result['data']}"]
    for form, entry in result["forms"].items():
        floor = entry["floor"]
        rows = floor["rows"]
        total_rows = sum(rows.values())
        lines.append(f"{form}: {len(entry['files'])} files, {_mb(entry['input_bytes'])}, {total_rows:,} rows")
        for path, size in entry["files"].items():
            lines.append(f"  {size / 2**20:9,.1f} MiB {rows.get(path, 0):10,} rows  {Path(path).relative_to(result['data'])}")
        runs = ", ".join(f"{s:.2f}" for s in floor["runs_s"])
        if form == "parquet":
            lines.append(
                f"parquet floor     read_table {floor['read_s']:.2f} s + to_pylist {floor['pylist_s']:.2f} s = {floor['floor_s']:.2f} s"
                f"   {_peak(floor)}   (runs: {runs} s)"
            )
        else:
            parsers = set(floor["parsers"].values())
            parser = "orjson.loads" if parsers == {"orjson.loads"} else "parse"
            lines.append(
                f"json.gz floor     read + gunzip {floor['gunzip_s']:.2f} s + {parser} {floor['loads_s']:.2f} s = {floor['floor_s']:.2f} s"
                f"   ({_mb(floor['json_bytes'])} of JSON)   {_peak(floor)}   (runs: {runs} s)"
            )
            for path, used in floor["parsers"].items():
                if used != "orjson.loads":
                    lines.append(f"  {Path(path).name}: {used}")
        build = entry.get("build")
        if build is None:
            lines.append(f"build ({form})     not measured (--no-build)")
        elif not build["available"]:
            lines.append(f"build ({form})     not available: {build['reason']}; no number")
        else:
            r = ratios(entry)
            lines.append(
                f"build ({form})     {build['build_s']:.2f} s = {r['build_vs_floor']:.2f}x the {form} floor   {_peak(build)}"
                f" = {r['rss_vs_floor']:.2f}x the floor's, {r['rss_vs_input']:.2f}x the input bytes"
            )
            lines.append(f"  wrote {build['out_files']:,} files, {_mb(build['out_bytes'])} to {build['out']}; returned {build['answer']}")
            lines.append("  records floor: " + format_records(build["records"]))
    for records in result.get("records", []):
        lines.append(f"records floor of {', '.join(records['roots'])}: " + format_records(records))
    return "\n".join(lines)


def format_header() -> str:
    from importlib.metadata import version

    from .run import format_machine, machine

    return (
        format_machine(machine()).replace("# papercode benchmark", "# papercode archive benchmark", 1) + f"; pyarrow {version('pyarrow')}"
    )


# -- entry points --------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", type=Path, help="an archive directory, as generate-archive writes it")
    parser.add_argument("--forms", help="comma-separated: parquet, json.gz (default: every form present)")
    parser.add_argument("--build", default=DEFAULT_BUILD, help=f"the build as module:function (default {DEFAULT_BUILD})")
    parser.add_argument("--no-build", action="store_true", help="measure the floors only")
    parser.add_argument(
        "--build-out", type=Path, help="keep the build's records here (one directory per form); default a temporary directory"
    )
    parser.add_argument("--snapshot", help="passed to the build as snapshot=")
    parser.add_argument(
        "--records", type=Path, action="append", default=[], help="also measure the records floor of these records (repeatable)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="run each floor this many times (each in a fresh process), keep the best")
    parser.add_argument("--json", type=Path, help="also write every number to this JSON file")


def main(args: argparse.Namespace) -> int:
    if args.data is None and not args.records:
        raise SystemExit("give --data (an archive directory) and/or --records")
    print(format_header(), flush=True)
    result: dict[str, Any]
    if args.data is not None:
        forms = [f.strip() for f in args.forms.split(",")] if args.forms else None
        result = measure_archive(
            args.data,
            forms,
            None if args.no_build else args.build,
            args.build_out,
            args.snapshot,
            args.records,
            args.repeat,
            log=lambda line: print(line, file=sys.stderr, flush=True),
        )
        print(format_archive(result), flush=True)
    else:
        result = {"records": [records_step(args.records)]}
        for records in result["records"]:
            print(f"records floor of {', '.join(records['roots'])}: " + format_records(records), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[2], sys.argv[3]))
    raise SystemExit("run as python -m benchmarks archive")
