"""`python -m benchmarks archive-serve --records DIR`: issue #15's cold and warm start of `papercode serve` on a records
directory, such as the record shards a papercode before issue #22 built its archive into (a commit that old is
measured by its own harness; this one serves `DIR` as plain `--records DIR`). Each step runs in a fresh subprocess:

1. **parse floor** of the records (`records_parse_floor`: read, gunzip where compressed, `orjson.loads` per record,
   best of 3);
2. **empty**: the same process setup with no records (an empty directory): the time to its complete corpus and its
   peak RSS, the "empty server's own";
3. **cold**: `open_stages(roots, ..., cache_dir)` in a fresh process with the CLI's GC policy, to the end (the snapshot
   written): seconds (wall and CPU, both processes) to keyed ready, to search ready and to the snapshot on disk;
   `ru_maxrss` of the process and of its largest child (the build child), as if their peaks coincided; then in the
   same process p50/p99 of `search_papers` and of the keyed lookups, as `answers` answers them;
4. **warm, in-process**: a start on the snapshot step 3 wrote (`bench.warm_start`: a cold build raises);
5. **warm, stdio**: `papercode serve` spawned over stdio on that snapshot, seconds from spawn to the first search
   answered (not an error), against the same for a server with no records (an empty records directory) to its first
   `corpus_stats`, each `--stdio-repeat` times, alternating; medians.

Ratios are to the floor measured in the same run. The targets (issue #15): keyed ready <= 4x and search ready <= 6x the
floor beyond the empty server's start; peak RSS (both processes, beyond the empty server's own) <= 1.5x the records'
uncompressed bytes; warm: a search within 1 s of the empty server's corpus_stats; search p50 <= 5 ms, p99 <= 20 ms;
lookups p50 < 1 ms (issue #22 kept the last three: `benchmarks.archive_serve` takes them from here).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from papercode import bench

from .archive_bench import peak_line, run_step
from .harness import REPO_ROOT, Timer, cpu_s, peak_rss, pythonpath, shown_path, start_usage, usage

TARGET_KEYED = 4.0
TARGET_SEARCH = 6.0
TARGET_RSS = 1.5
TARGET_WARM_S = 1.0
TARGET_SEARCH_P50_MS = 5.0
TARGET_SEARCH_P99_MS = 20.0
TARGET_LOOKUP_P50_MS = 1.0
LOOKUPS = ("get_harvested_code_for_paper", "get_paper", "find_papers_for_repo", "corpus_stats")


def _roots(payload: dict[str, Any]) -> list[Path]:
    """The roots served: the records directory, or the empty one."""
    return [Path(payload["records"]) if payload.get("records") else Path(payload["empty"])]


# -- the steps (each in its own subprocess) ---------------------------------------------------------------


def worker_cold(payload: dict[str, Any]) -> dict[str, Any]:
    """`open_stages` to the end (snapshot written), then in-process latency over the complete corpus."""
    bench.load_sdk()  # before the build, so that the baseline RSS includes the SDK
    roots = _roots(payload)
    bench.gc_policy()
    timer = Timer()
    if payload.get("phases"):
        timer.wrap_all(bench.cold_build_phases())
    baseline = peak_rss()[0]
    cache = Path(payload["cache_dir"])
    start, cpu0 = time.perf_counter(), cpu_s()
    marks: dict[str, tuple[float, float]] = {}
    corpus = None
    for stage in bench.open_stages(roots, bench.Limits(), cache):
        marks[stage.kind] = (time.perf_counter() - start, cpu_s() - cpu0)
        if stage.kind == "complete":
            corpus = stage.corpus
    marks["snapshot"] = (time.perf_counter() - start, cpu_s() - cpu0)
    peak, child_peak = peak_rss()
    assert corpus is not None
    result: dict[str, Any] = {
        "roots": [str(root) for root in roots],
        "keyed_s": marks.get("keyed", marks["complete"])[0],
        "keyed_cpu_s": marks.get("keyed", marks["complete"])[1],
        "search_s": marks["complete"][0],
        "search_cpu_s": marks["complete"][1],
        "snapshot_s": marks["snapshot"][0],
        "snapshot_cpu_s": marks["snapshot"][1],
        "baseline_rss_bytes": baseline,
        "peak_rss_bytes": peak,
        "child_peak_rss_bytes": child_peak,
        "papers": len(corpus.index.papers),
        "samples": len(corpus.index.samples),
        "phases": dict(timer.totals),
        "snapshot_files": sorted(path.name for path in cache.iterdir()),
    }
    if payload.get("records") and payload["calls"]:  # (only in the last cold start of a run)
        calls = _calls(Path(payload["records"]), payload["calls"])
        result["direct"] = _time_direct(corpus, calls)
        result["calls"] = {tool: args[:3] for tool, args in calls.items()}
    return result


def worker_empty(payload: dict[str, Any]) -> dict[str, Any]:
    """The same start with no records (an empty directory): its time and its peak RSS."""
    bench.load_sdk()
    roots = _roots(dict(payload, records=None))
    bench.gc_policy()
    start, cpu0 = time.perf_counter(), cpu_s()
    for _ in bench.open_stages(roots, bench.Limits(), Path(payload["cache_dir"])):
        pass
    took, cpu = time.perf_counter() - start, cpu_s() - cpu0
    peak, child_peak = peak_rss()
    return {
        "roots": [str(root) for root in roots],
        "empty_s": took,
        "empty_cpu_s": cpu,
        "peak_rss_bytes": peak,
        "child_peak_rss_bytes": child_peak,
    }


def worker_warm(payload: dict[str, Any]) -> dict[str, Any]:
    """A start on the snapshot the cold step wrote (`bench.warm_start`: a cold build raises)."""
    bench.load_sdk()
    roots = _roots(payload)
    bench.gc_policy()
    baseline = peak_rss()[0]
    start, cpu0 = time.perf_counter(), cpu_s()
    corpus = bench.warm_start(roots, Path(payload["cache_dir"]))
    took, cpu = time.perf_counter() - start, cpu_s() - cpu0
    return {
        "warm_s": took,
        "warm_cpu_s": cpu,
        "warm_papers": len(corpus.index.papers),
        "warm_rss_bytes": peak_rss()[0],
        "warm_baseline_rss_bytes": baseline,
    }


# -- the records' parse floor ---------------------------------------------------------------------------


def record_files(roots: Sequence[Path]) -> list[Path]:
    """The files papercode's loader would read under `roots`: record suffixes, plain or gzipped, no dot-names."""
    suffixes = bench.RECORD_SUFFIXES + tuple(s + ".gz" for s in bench.RECORD_SUFFIXES)
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

    started = start_usage()
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
        **usage(started),
    }


def records_step(roots: Sequence[Path]) -> dict[str, Any]:
    """`records_parse_floor(roots)` in a fresh process."""
    return {
        "roots": [str(r) for r in roots],
        **run_step("records", {"roots": [str(r) for r in roots]}, module="benchmarks.archive_serve_shards"),
    }


def format_records(r: dict[str, Any]) -> str:
    return (
        f"{r['records']:,} records in {r['files']:,} files ({_mb(r['raw_bytes'])} on disk, {_mb(r['parsed_bytes'])} of JSON):"
        f" orjson.loads per record {r['loads_s']:.2f} s (best of 3; gunzip {r['gunzip_s']:.2f} s, read {r['read_s']:.2f} s, apart); {peak_line(r)}"
    )


# -- in-process latency ---------------------------------------------------------------------------------


def _calls(records: Path, per_tool: int) -> dict[str, list[dict[str, Any]]]:
    """Arguments from the records themselves: ids and slugs, 1-3 title words, repositories of code links."""
    import orjson

    rng = random.Random(0)
    files = sorted(p for p in records.iterdir() if p.name.endswith((".jsonl", ".json")))
    picked: list[dict[str, Any]] = []
    for path in rng.sample(files, min(3, len(files))):
        lines = path.read_bytes().split(b"\n")
        picked += [orjson.loads(line) for line in rng.sample(lines, min(len(lines), per_tool)) if line.strip()]
    rng.shuffle(picked)
    papers = [(r.get("arxiv_id") or r["url"], r["title"]) for r in picked]
    repos = [link["repo_url"] for r in picked for link in r.get("code_links") or []] or ["nobody/nothing"]
    calls: dict[str, list[dict[str, Any]]] = {tool: [] for tool in ("search_papers", *LOOKUPS)}
    for i in range(per_tool):
        calls["get_harvested_code_for_paper"].append({"arxiv_id": papers[i % len(papers)][0]})
        calls["get_paper"].append({"paper": papers[rng.randrange(len(papers))][0]})
        title = papers[rng.randrange(len(papers))][1]
        words = [w for w in "".join(c if c.isalnum() else " " for c in title).split() if len(w) > 2]
        search: dict[str, Any] = {"query": " ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))) if words else "learning"}
        if rng.random() < 0.2:
            search["has_samples"] = True
        calls["search_papers"].append(search)
        calls["find_papers_for_repo"].append({"repo": repos[rng.randrange(len(repos))]})
        calls["corpus_stats"].append({})
    return calls


def _time_direct(corpus: Any, calls: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    answers = bench.tool_answers()

    def call(tool: str, args: dict[str, Any]) -> Any:
        return answers[tool](corpus, args)

    out: dict[str, dict[str, float]] = {}
    for tool, arglist in calls.items():
        for args in arglist[:20]:
            with contextlib.suppress(Exception):  # a QueryError (a paper with no samples): counted below
                call(tool, args)
        times, errors = [], 0
        for args in arglist:
            start = time.perf_counter()
            try:
                call(tool, args)
            except Exception:
                errors += 1
            times.append(time.perf_counter() - start)
        times.sort()
        out[tool] = {
            "p50_ms": statistics.median(times) * 1e3,
            "p99_ms": times[min(len(times) - 1, round(0.99 * (len(times) - 1)))] * 1e3,
            "n": len(times),
            "errors": errors,
        }
    return out


# -- stdio: spawn to first answer -------------------------------------------------------------------------


async def _first_answer(args: list[str], tool: str, arguments: dict[str, Any]) -> dict[str, float]:
    from mcp import Client, StdioServerParameters

    env = {"PYTHONPATH": pythonpath(), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "papercode", "serve", *args], env=env, cwd=str(REPO_ROOT))
    started = time.perf_counter()
    out: dict[str, float] = {}
    async with Client(params) as client:
        out["initialize_s"] = time.perf_counter() - started
        deadline = started + 900
        while True:
            result = await client.call_tool(tool, arguments)
            if not result.is_error or time.perf_counter() > deadline:
                break
            await asyncio.sleep(0.01)
        out["answer_s"] = time.perf_counter() - started
        out["errors"] = float(bool(result.is_error))
    return out


def stdio_warm(payload: dict[str, Any], query: str, repeat: int) -> dict[str, Any]:
    served = ["--records", payload["records"], "--cache-dir", payload["cache_dir"]]
    with tempfile.TemporaryDirectory(prefix="papercode-empty-cache-") as empty_cache:
        empty = ["--records", payload["empty"], "--cache-dir", empty_cache]
        runs: dict[str, list[dict[str, float]]] = {"empty": [], "warm": []}
        for _ in range(repeat):
            runs["empty"].append(asyncio.run(_first_answer(empty, "corpus_stats", {})))
            runs["warm"].append(asyncio.run(_first_answer(served, "search_papers", {"query": query})))
    empty_s = statistics.median(run["answer_s"] for run in runs["empty"])
    warm_s = statistics.median(run["answer_s"] for run in runs["warm"])
    return {"runs": runs, "empty_s": empty_s, "warm_search_s": warm_s, "later_s": warm_s - empty_s, "served": served}


# -- the run ---------------------------------------------------------------------------------------------


def _worker(mode: str, payload: dict[str, Any]) -> dict[str, Any]:
    return run_step(mode, payload, module="benchmarks.archive_serve_shards")


def measure(records: Path, *, calls: int, repeat: int, stdio_repeat: int, phases: bool, log: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"records_dir": shown_path(records)}
    log("# parse floor of the records")
    result["floor"] = records_step([records])
    with tempfile.TemporaryDirectory(prefix="papercode-empty-records-") as empty_dir:
        base = {"records": str(records), "empty": empty_dir, "calls": calls, "phases": phases}
        empties = []
        for _ in range(repeat):
            log("# empty server start")
            with tempfile.TemporaryDirectory(prefix="papercode-serve-cache-") as cache:
                empties.append(_worker("empty", dict(base, cache_dir=cache)))
        result["empty"] = empties
        colds, warms = [], []
        for run in range(repeat):
            with tempfile.TemporaryDirectory(prefix="papercode-serve-cache-") as cache:
                log(f"# cold start {run + 1} of {repeat}")
                colds.append(_worker("cold", dict(base, cache_dir=cache, calls=calls if run == repeat - 1 else 0, records=str(records))))
                log("# warm start, in-process")
                warms.append(_worker("warm", dict(base, cache_dir=cache)))
                if run == repeat - 1 and stdio_repeat:
                    log("# warm start over stdio, against an empty server")
                    query = colds[-1].get("calls", {}).get("search_papers", [{"query": "learning"}])[0]["query"]
                    result["stdio"] = stdio_warm(dict(base, cache_dir=cache), query, stdio_repeat)
        result["cold"], result["warm"] = colds, warms
    return summarise(result)


def _median(rows: Sequence[dict[str, Any]], key: str) -> float:
    return float(statistics.median(row[key] for row in rows))


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    floor = result["floor"]["floor_s"]
    colds, empties = result["cold"], result["empty"]
    empty_s = _median(empties, "empty_s")
    empty_rss = _median(empties, "peak_rss_bytes")
    s: dict[str, Any] = {"floor_s": floor, "empty_s": empty_s, "empty_rss_bytes": empty_rss}
    for key in (
        "keyed_s",
        "keyed_cpu_s",
        "search_s",
        "search_cpu_s",
        "snapshot_s",
        "snapshot_cpu_s",
        "peak_rss_bytes",
        "child_peak_rss_bytes",
    ):
        s[key] = _median(colds, key)
    s["keyed_vs_floor"] = (s["keyed_s"] - empty_s) / floor
    s["search_vs_floor"] = (s["search_s"] - empty_s) / floor
    s["rss_total_bytes"] = _median(colds, "peak_rss_bytes") + _median(colds, "child_peak_rss_bytes")
    s["rss_vs_bytes"] = (s["rss_total_bytes"] - empty_rss) / result["floor"]["parsed_bytes"]
    s["warm_s"] = _median(result["warm"], "warm_s")
    direct = colds[-1].get("direct", {})
    s["direct"] = direct
    result["summary"] = s
    return result


def targets(result: dict[str, Any]) -> list[tuple[str, bool, str]]:
    s = result["summary"]
    rows = [
        (f"keyed ready - empty start <= {TARGET_KEYED:g}x parse floor", s["keyed_vs_floor"] <= TARGET_KEYED, f"{s['keyed_vs_floor']:.2f}x"),
        (
            f"search ready - empty start <= {TARGET_SEARCH:g}x parse floor",
            s["search_vs_floor"] <= TARGET_SEARCH,
            f"{s['search_vs_floor']:.2f}x",
        ),
        (f"peak RSS (both, beyond empty) <= {TARGET_RSS:g}x record bytes", s["rss_vs_bytes"] <= TARGET_RSS, f"{s['rss_vs_bytes']:.2f}x"),
    ]
    stdio = result.get("stdio")
    if stdio:
        rows.append(
            (
                f"warm: search answered <= {TARGET_WARM_S:g} s after an empty server's corpus_stats",
                stdio["later_s"] <= TARGET_WARM_S,
                f"{stdio['later_s']:+.2f} s",
            )
        )
    direct = s["direct"]
    if "search_papers" in direct:
        d = direct["search_papers"]
        rows.append((f"search_papers p50 <= {TARGET_SEARCH_P50_MS:g} ms", d["p50_ms"] <= TARGET_SEARCH_P50_MS, f"{d['p50_ms']:.2f} ms"))
        rows.append((f"search_papers p99 <= {TARGET_SEARCH_P99_MS:g} ms", d["p99_ms"] <= TARGET_SEARCH_P99_MS, f"{d['p99_ms']:.2f} ms"))
    for tool in LOOKUPS:
        if tool in direct:
            p50 = direct[tool]["p50_ms"]
            rows.append((f"{tool} p50 < {TARGET_LOOKUP_P50_MS:g} ms", p50 < TARGET_LOOKUP_P50_MS, f"{p50:.3f} ms"))
    return rows


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def format_result(result: dict[str, Any]) -> str:
    s, floor = result["summary"], result["floor"]
    lines = [f"## {result['records_dir']} served as plain --records"]
    lines.append(
        f"parse floor        {s['floor_s']:7.2f} s   {floor['records']:,} records, {_mb(floor['parsed_bytes'])} of JSON in {floor['files']} files"
        f" (orjson.loads per record, best of 3; read {floor['read_s']:.2f} s apart)"
    )
    runs = len(result["cold"])
    lines.append(f"empty server       {s['empty_s']:7.2f} s   peak RSS {_mb(s['empty_rss_bytes'])}   (median of {runs})")
    for label, key in (("keyed ready", "keyed"), ("search ready", "search")):
        each = ", ".join(f"{cold[key + '_s']:.1f}" for cold in result["cold"])
        lines.append(
            f"{label:18s} {s[key + '_s']:7.2f} s   CPU {s[key + '_cpu_s']:7.2f} s   (- empty) / floor = {s[key + '_vs_floor']:.2f}x"
            f"   runs {each} s"
        )
    lines.append(
        f"snapshot written   {s['snapshot_s']:7.2f} s   CPU {s['snapshot_cpu_s']:7.2f} s   ({s['snapshot_s'] - s['search_s']:.2f} s after search ready)"
    )
    for phase, seconds in result["cold"][-1].get("phases", {}).items():
        lines.append(f"  {phase:58s} {seconds:7.2f} s")
    lines.append(
        f"peak RSS           {_mb(s['peak_rss_bytes'])} + child {_mb(s['child_peak_rss_bytes'])} - empty {_mb(s['empty_rss_bytes'])}"
        f" = {_mb(s['rss_total_bytes'] - s['empty_rss_bytes'])}   / {_mb(floor['parsed_bytes'])} = {s['rss_vs_bytes']:.2f}x"
    )
    warm = result["warm"][-1]
    lines.append(
        f"warm start         {s['warm_s']:7.3f} s   CPU {warm['warm_cpu_s']:.2f} s   RSS after {_mb(warm['warm_rss_bytes'])} (baseline {_mb(warm['warm_baseline_rss_bytes'])})"
    )
    stdio = result.get("stdio")
    if stdio:
        empties = ", ".join(f"{r['answer_s']:.2f}" for r in stdio["runs"]["empty"])
        warms = ", ".join(f"{r['answer_s']:.2f}" for r in stdio["runs"]["warm"])
        lines.append(
            f"warm over stdio    search answered {stdio['warm_search_s']:.2f} s after spawn (runs {warms});"
            f" empty server's corpus_stats {stdio['empty_s']:.2f} s (runs {empties}); later by {stdio['later_s']:+.2f} s"
        )
    if s["direct"]:
        lines.append("in-process (ms)              p50      p99   errors")
        for tool, d in s["direct"].items():
            lines.append(f"  {tool:28s} {d['p50_ms']:7.3f} {d['p99_ms']:8.3f}   {d['errors']}")
    lines.append("targets (issue #15)")
    for name, passed, measured in targets(result):
        lines.append(f"  {'PASS' if passed else 'MISS'}  {name:66s} {measured}")
    return "\n".join(lines)


def _worker_main(mode: str, payload_path: str) -> int:
    payload = json.loads(Path(payload_path).read_text())
    if mode == "records":
        answer = records_parse_floor([Path(p) for p in payload["roots"]], payload.get("repeat", 3))
    else:
        answer = {"cold": worker_cold, "empty": worker_empty, "warm": worker_warm}[mode](payload)
    Path(payload["answer"]).write_text(json.dumps(answer))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[2], sys.argv[3]))
    raise SystemExit("run as python -m benchmarks archive-serve")
