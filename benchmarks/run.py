"""`python -m benchmarks run`: cold load vs the parse floor, peak RSS vs raw bytes, tool latency in-process and over stdio.

For each size, everything is measured in one run over the same bytes:

1. **parse floor** (subprocess): read every record file into memory, then time only `orjson.loads` over them (best of 3);
2. **cold build** (a fresh subprocess, so RSS is clean, with the GC policy `papercode`'s CLI sets at start): the stages
   of `corpus.build_stages(roots)`: **keyed ready** (the index serves keyed lookups) and **search ready** (the full
   text is built too; for a large corpus, a child process indexes part of the records, then builds the search index),
   split into phases by timing wrappers around the functions the build calls; `ru_maxrss` of the process and of its
   largest child (added together, as if their peaks coincided); then, in the same process, p50/p99
   of every tool called as `queries.*` directly and through the in-memory `mcp.Client(server)`;
3. **stdio**: `papercode serve` over stdio (once its corpus is complete) and, as the floor, a bare `MCPServer`
   (`benchmarks.echo_server`) whose `echo_<tool>` replays the answer papercode gave for the same arguments;
   interleaved, MCP ping, each tool, and its echo;
4. **time to first answer** (`--first-answer`): `papercode serve` started over stdio with an empty cache directory
   (cold) and again on the snapshot it wrote (warm): seconds from spawn to the `initialize` answer, to the first
   `get_paper` answer, and to the first `search_papers` answer (each retried until it is not an error).

The corpus for size n is the first n records of one generated corpus (`files`: the first n/1000 shards; `jsonl`: the
first n/10000 bundles), so the sizes share bytes and only the largest is generated. Other sizes get their own directory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from papercode import bench

from .echo_server import Recorded
from .generate import BUNDLE_LINES, FILES_PER_SHARD, LAYOUTS, write_corpus
from .harness import REPO_ROOT, Timer, format_machine, machine, pythonpath, shown_path
from .results import JSON_HELP, finish

DEFAULT_DATA = REPO_ROOT.parent / "bench-data"
TOOLS = (
    "get_harvested_code_for_paper",
    "list_samples_by_status",
    "search_papers",
    "get_paper",
    "find_papers_for_repo",
    "get_code",
    "corpus_stats",
)
FAST_TOOLS = ("get_harvested_code_for_paper", "list_samples_by_status", "get_paper", "get_code")
TARGET_KEYED_RATIO = 5.0  # keyed tools ready, over the parse floor
TARGET_SEARCH_READY_RATIO = 7.0  # everything (search too) ready, over the parse floor
TARGET_RSS_RATIO = 1.5
TARGET_FAST_P50_MS = 1.0
TARGET_SEARCH_P50_MS = 15.0
TARGET_ECHO_RATIO = 1.2
KEYED_TOOLS = ("get_harvested_code_for_paper", "list_samples_by_status", "get_paper")
TARGET_KEYED_ECHO_RATIO = 1.15  # issue 14: the keyed lookups over stdio, against the bare-SDK floor
TARGET_SIZE = 100_000
TARGET_WARM_S = 1.0
STATUSES = ("ran_honours", "ran", "ran_draft_wrong", "ran_violates", "unverified")


# -- corpora -------------------------------------------------------------------------------


def corpus_roots(data: Path, n: int, largest: int, seed: int, layout: str) -> list[Path]:
    """Directories or files holding exactly the first `n` records; generated when missing."""
    unit = FILES_PER_SHARD if layout == "files" else BUNDLE_LINES
    if n % unit == 0 and largest % unit == 0:
        base = _ensure(data / f"{layout}-{largest}-s{seed}", largest, seed, layout)
        units = sorted(p for p in base.iterdir() if p.name != ".complete")
        return units[: n // unit]
    return [_ensure(data / f"{layout}-{n}-s{seed}", n, seed, layout)]


def _ensure(directory: Path, n: int, seed: int, layout: str) -> Path:
    marker = directory / ".complete"
    if marker.exists():
        return directory
    print(f"# generating {n} records ({layout}) in {shown_path(directory)}", file=sys.stderr, flush=True)
    write_corpus(directory, n, seed, layout)
    marker.write_text(f"{n} {seed} {layout}\n")
    return directory


def record_files(roots: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        if root.is_file():
            files.append(root)
        else:
            files.extend(sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")))
    return files


# -- subprocess workers --------------------------------------------------------------------


def _worker(mode: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Run `python -m benchmarks.run --worker MODE` with a JSON payload on stdin; return its JSON answer."""
    env = dict(os.environ, PYTHONPATH=pythonpath())
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--worker", mode],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=REPO_ROOT,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"worker {mode} failed ({proc.returncode}):\n{proc.stderr.decode()[-4000:]}")
    return json.loads(proc.stdout)


def worker_floor(payload: dict[str, Any]) -> dict[str, Any]:
    import orjson

    files = record_files([Path(p) for p in payload["roots"]])
    blobs = [f.read_bytes() for f in files]
    lines = 0
    chunks: list[bytes] = []
    for name, blob in zip(files, blobs, strict=True):
        if name.name.endswith(".gz"):
            import gzip

            blob = gzip.decompress(blob)
        if ".jsonl" in name.name:
            parts = [line for line in blob.split(b"\n") if line.strip()]
            chunks.extend(parts)
            lines += len(parts)
        else:
            chunks.append(blob)
    best, repeat = float("inf"), payload.get("repeat", 3)
    for _ in range(repeat):
        loads = orjson.loads
        start = time.perf_counter()
        for chunk in chunks:
            loads(chunk)
        best = min(best, time.perf_counter() - start)
    return {
        "files": len(files),
        "floor_runs": repeat,
        "raw_bytes": sum(len(b) for b in blobs),
        "parsed_bytes": sum(len(c) for c in chunks),
        "floor_s": best,
    }


def worker_load(payload: dict[str, Any]) -> dict[str, Any]:
    """Cold build in this fresh process (keyed ready, then search ready), then in-process tool latency over it."""
    roots = [Path(p) for p in payload["roots"]]
    bench.load_sdk()  # before the load, so that the baseline RSS includes the SDK
    bench.gc_policy()
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timer = Timer()
    if payload.get("phases", True):
        timer.wrap_all(bench.cold_build_phases())
    start = time.perf_counter()
    stages: dict[str, float] = {}
    corpus = None
    for corpus in bench.build_stages(roots, bench.Limits()):
        stages["search_ready_s" if corpus.search is not None else "keyed_s"] = time.perf_counter() - start
    assert corpus is not None
    load_s = stages["search_ready_s"]
    keyed_s = stages.get("keyed_s", load_s)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    phases = dict(timer.totals)
    if phases:
        phases["walk + read + the rest of keyed"] = keyed_s - sum(phases.values())
        phases["search index, after keyed ready (built beside)"] = load_s - keyed_s
    report = corpus.index.report
    stats = bench.tool_answers()["corpus_stats"](corpus, {})
    result: dict[str, Any] = {
        "load_s": load_s,
        "keyed_s": keyed_s,
        "baseline_rss_bytes": baseline_kb * 1024,
        "peak_rss_bytes": peak_kb * 1024,
        "child_peak_rss_bytes": child_kb * 1024,
        "phases": phases,
        "papers": stats.papers,
        "samples": stats.samples,
        "papercode_path": str(Path(bench.__file__).parent),
        "problems": dict(Counter(problem.code for problem in report.problems)),
    }
    if payload.get("cache_dir"):
        start = time.perf_counter()
        bench.save_snapshot(corpus, roots, Path(payload["cache_dir"]))
        result["snapshot_write_s"] = time.perf_counter() - start
    calls = make_calls(roots, payload["calls"], payload.get("seed", 0), payload.get("filtered_search", 0.2))
    result["calls"] = calls
    if payload["calls"]:
        result["direct"] = time_direct(corpus, calls)
        result["client"] = asyncio.run(time_client(corpus, calls))
    return result


def worker_warm(payload: dict[str, Any]) -> dict[str, Any]:
    """Warm start in this fresh process, as `papercode serve` does it, on the snapshot the load worker wrote (it proves
    the records unchanged, a `stat` of every file, while it restores); a cold build would raise
    (`bench.warm_start`)."""
    roots = [Path(p) for p in payload["roots"]]
    bench.load_sdk()  # the SDK import is not part of the warm start
    bench.gc_policy()
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    corpus = bench.warm_start(roots, Path(payload["cache_dir"]))
    total_s = time.perf_counter() - start
    rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    bench.records_key(roots)
    key_s = time.perf_counter() - start
    return {
        "warm_key_s": key_s,
        "warm_total_s": total_s,
        "warm_papers": len(corpus.index.papers),
        "warm_rss_bytes": rss_bytes,
        "warm_baseline_rss_bytes": baseline_kb * 1024,
    }


# -- the calls -----------------------------------------------------------------------------


def make_calls(roots: Sequence[Path], per_tool: int, seed: int, filtered_search: float = 0.2) -> dict[str, list[dict[str, Any]]]:
    """Realistic arguments, taken from the record files themselves (so they exist, whatever the index looks like):
    arXiv ids (new and old style) and slugs, 1-3 title words, sample hashes, code-link repositories."""
    import gzip

    import orjson

    rng = random.Random(seed)
    files = record_files(roots)
    picked: list[dict[str, Any]] = []
    for path in rng.sample(files, min(len(files), max(1, per_tool * 2))):
        blob = path.read_bytes()
        if path.name.endswith(".gz"):
            blob = gzip.decompress(blob)
        if ".jsonl" in path.name:
            lines = [line for line in blob.split(b"\n") if line.strip()]
            picked.extend(orjson.loads(line) for line in rng.sample(lines, min(len(lines), max(1, 2 * per_tool // len(files) + 1))))
        else:
            picked.append(orjson.loads(blob))
    rng.shuffle(picked)
    papers = [(r.get("arxiv_id") or r["url"], r["title"]) for r in picked]
    shas = [s["code_sha256_prefix"] for r in picked for s in (r.get("syntology") or {}).get("samples", [])]
    repos = [link["repo_url"] for r in picked for link in r.get("code_links", [])] or ["nobody/nothing"]
    calls: dict[str, list[dict[str, Any]]] = {tool: [] for tool in TOOLS}
    for i in range(per_tool):
        calls["get_harvested_code_for_paper"].append({"arxiv_id": papers[i % len(papers)][0]})
        calls["get_paper"].append({"paper": papers[rng.randrange(len(papers))][0]})
        status: str | list[str] = rng.choice(STATUSES) if rng.random() < 0.7 else rng.sample(STATUSES, 2)
        listing: dict[str, Any] = {"status": status}
        if rng.random() < 0.3:
            listing["inline_only"] = True
        if rng.random() < 0.2:
            listing["repo_kind"] = "official"
        calls["list_samples_by_status"].append(listing)
        title = papers[rng.randrange(len(papers))][1]
        words = [w for w in "".join(c if c.isalnum() else " " for c in title).split() if len(w) > 2]
        query = " ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))) if words else "learning"
        search: dict[str, Any] = {"query": query}
        if rng.random() < filtered_search:
            search["has_samples"] = True
        calls["search_papers"].append(search)
        calls["find_papers_for_repo"].append({"repo": repos[rng.randrange(len(repos))]})
        if shas:
            calls["get_code"].append({"code_sha256": shas[rng.randrange(len(shas))]})
        calls["corpus_stats"].append({})
    return {tool: args for tool, args in calls.items() if args}


def _stats(samples_s: list[float]) -> dict[str, float]:
    ordered = sorted(samples_s)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50_ms": statistics.median(ordered) * 1e3, "p99_ms": p99 * 1e3, "n": len(ordered)}


def time_direct(corpus: Any, calls: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """queries.* called directly; also with the JSON shaping the tool adds (`model_dump`, unless the answer is shown
    already, + `orjson.dumps`)."""
    import orjson

    out: dict[str, dict[str, float]] = {}
    answers = bench.tool_answers()  # found once, before any call is timed
    for tool, arglist in calls.items():
        call = answers[tool]
        for args in arglist[: min(20, len(arglist))]:  # warm-up
            call(corpus, args)
        bare, shaped, errors = [], [], 0
        for args in arglist:
            start = time.perf_counter()
            try:
                answer = call(corpus, args)
            except Exception:  # a QueryError: counted, and its time still recorded
                errors += 1
                bare.append(time.perf_counter() - start)
                shaped.append(time.perf_counter() - start)
                continue
            mid = time.perf_counter()
            orjson.dumps(answer if isinstance(answer, dict) else answer.model_dump(mode="json", exclude_none=True))
            end = time.perf_counter()
            bare.append(mid - start)
            shaped.append(end - start)
        out[tool] = _stats(bare) | {f"shaped_{k}": v for k, v in _stats(shaped).items() if k != "n"} | {"errors": errors}
    return out


async def time_client(corpus: Any, calls: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """Through the in-memory `mcp.Client(server)` (the SDK's default DirectDispatcher: no JSON-RPC bytes)."""
    from mcp import Client

    server = bench.build_server(lambda: corpus)
    out: dict[str, dict[str, float]] = {}
    async with Client(server) as client:
        for tool, arglist in calls.items():
            for args in arglist[: min(20, len(arglist))]:
                await client.call_tool(tool, args)
            times, errors = [], 0
            for args in arglist:
                start = time.perf_counter()
                result = await client.call_tool(tool, args)
                times.append(time.perf_counter() - start)
                errors += bool(result.is_error)
            out[tool] = _stats(times) | {"errors": errors}
    return out


def _stdio_params(args: list[str], cwd: Path) -> Any:
    from mcp import StdioServerParameters

    env = {"PYTHONPATH": pythonpath(), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(cwd))


async def _until_complete(client: Any, cache_dir: Path, deadline_s: float = 600) -> None:
    """Until `papercode serve` answers from the complete corpus and has written its snapshot (so no build runs beside the timing)."""
    deadline = time.perf_counter() + deadline_s
    while time.perf_counter() < deadline:
        stats = await client.call_tool("corpus_stats", {})
        if not stats.is_error and "ready" not in (stats.structured_content or {}) and any(cache_dir.glob("index-*.snapshot")):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"papercode serve was not complete within {deadline_s:g} s")


async def time_stdio(roots: Sequence[Path], calls: dict[str, list[dict[str, Any]]], per_tool: int) -> dict[str, Any]:
    """Each tool on `papercode serve` over stdio, against its floor: `echo_<tool>` on a bare `MCPServer`
    (`benchmarks.echo_server`) replaying papercode's tools/list and the answer it gave for the same arguments; and MCP ping.
    Both connections stay open; for each argument set, ping (both), then tool and echo one after the other, taking
    turns at going first."""
    import warnings

    from mcp import Client

    warnings.filterwarnings("ignore", message="ping is removed as of 2026-07-28")
    out: dict[str, Any] = {"tools": {}}
    with tempfile.TemporaryDirectory(prefix="papercode-bench-stdio-") as scratch:
        work = Path(scratch)
        serve = ["-m", "papercode", "serve", "--offline", "--cache-dir", str(work / "cache"), "--code-dir", str(work / "code")]
        for root in roots:
            serve += ["--records", str(root)]
        started = time.perf_counter()
        # MCP ping is not a method of protocol 2026-07-28 (the server answers "Method not found"), so both connections
        # use the 2025-11-25 handshake, which is also what today's desktop hosts speak.
        async with Client(_stdio_params(serve, REPO_ROOT), mode="legacy") as client:
            await _until_complete(client, work / "cache")
            out["connect_s"] = time.perf_counter() - started
            (await _record(client, calls, per_tool)).write(work / "answers.json")
            echo_server = ["-m", "benchmarks.echo_server", "--answers", str(work / "answers.json")]
            async with Client(_stdio_params(echo_server, REPO_ROOT), mode="legacy") as echo_client:
                pings: list[float] = []
                for tool, arglist in calls.items():
                    for call_args in arglist[:per_tool]:  # the echo's warm-up
                        await echo_client.call_tool(f"echo_{tool}", call_args)
                for tool, arglist in calls.items():
                    out["tools"][tool] = await _time_tool(client, echo_client, tool, arglist[:per_tool], pings)
                out["ping_p50_ms"] = statistics.median(pings) * 1e3
    for row in out["tools"].values():
        row["vs_echo"] = row["p50_ms"] / row["echo_p50_ms"]
        row["vs_ping"] = row["p50_ms"] / out["ping_p50_ms"]
        row["echo_vs_ping"] = row["echo_p50_ms"] / out["ping_p50_ms"]
    return out


async def _record(client: Any, calls: dict[str, list[dict[str, Any]]], per_tool: int) -> Any:
    """papercode's tools/list and its answer to every argument set (this is also the warm-up): what the echo replays."""
    listed = (await client.list_tools()).tools
    recorded = Recorded([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed])
    for tool, arglist in calls.items():
        recorded.answers[tool] = []
        for call_args in arglist[:per_tool]:
            result = await client.call_tool(tool, call_args)
            recorded.answers[tool].append((call_args, result.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return recorded


async def _time_tool(client: Any, echo_client: Any, tool: str, arglist: list[dict[str, Any]], pings: list[float]) -> dict[str, Any]:
    real, echo, errors, sizes = [], [], 0, []
    for i, call_args in enumerate(arglist):
        start = time.perf_counter()
        await client.send_ping()
        pings.append(time.perf_counter() - start)
        await echo_client.send_ping()
        # Whichever server answers second is slower (the first one's process still runs as it answers, on the same
        # cores), so the two take turns going first.
        for side in ("echo", "real") if i % 2 else ("real", "echo"):
            start = time.perf_counter()
            if side == "real":
                result = await client.call_tool(tool, call_args)
                real.append(time.perf_counter() - start)
            else:
                echoed = await echo_client.call_tool(f"echo_{tool}", call_args)
                echo.append(time.perf_counter() - start)
        errors += bool(result.is_error) + bool(echoed.is_error or echoed.structured_content != result.structured_content)
        sizes.append(len(result.content[0].text) if result.content else 0)
    return {
        "p50_ms": statistics.median(real) * 1e3,
        "echo_p50_ms": statistics.median(echo) * 1e3,
        # Each call against the echo of the same arguments, timed next to it: the median of these ratios is what
        # the load of a shared machine moves least (it drifts between calls, not within a pair).
        "paired_vs_echo": statistics.median(r / e for r, e in zip(real, echo, strict=True)),
        "n": len(real),
        "errors": errors,
        "answer_bytes_median": statistics.median(sizes),
    }


def median_round(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Several stdio rounds (each with fresh server processes) as one: the median of each number, and each round's ratio."""
    if len(rounds) == 1:
        return rounds[0]
    out: dict[str, Any] = {key: statistics.median(r[key] for r in rounds) for key in ("connect_s", "ping_p50_ms")}
    out["rounds"] = len(rounds)
    out["tools"] = {}
    for tool, first in rounds[0]["tools"].items():
        rows = [r["tools"][tool] for r in rounds]
        row = {key: statistics.median(row[key] for row in rows) for key in first if key != "errors"}
        out["tools"][tool] = row | {"errors": sum(row["errors"] for row in rows), "vs_echo_rounds": [row["vs_echo"] for row in rows]}
    return out


async def time_first_answer(roots: Sequence[Path], cache_dir: Path, paper: str, query: str) -> dict[str, float]:
    """`papercode serve` over stdio: seconds from spawn to the `initialize` answer, and to the first answer (not an
    error) of a keyed lookup (`get_harvested_code_for_paper`), of `get_paper` and of `search_papers`, each retried every
    50 ms for at most 10 minutes. The server is closed only once its snapshot is on disk (it writes it after serving
    the complete corpus), so a following start is warm."""
    from mcp import Client

    args = ["-m", "papercode", "serve", "--cache-dir", str(cache_dir)]
    for root in roots:
        args += ["--records", str(root)]
    params = _stdio_params(args, REPO_ROOT)
    started = time.perf_counter()
    out: dict[str, float] = {}
    async with Client(params) as client:
        out["initialize_s"] = time.perf_counter() - started
        asked = (
            ("keyed_s", "get_harvested_code_for_paper", {"arxiv_id": paper}),
            ("get_paper_s", "get_paper", {"paper": paper}),
            ("search_s", "search_papers", {"query": query}),
        )
        for label, tool, arguments in asked:
            deadline = time.perf_counter() + 600
            while True:
                result = await client.call_tool(tool, arguments)
                if not result.is_error or time.perf_counter() > deadline:
                    break
                await asyncio.sleep(0.05)
            out[label] = time.perf_counter() - started
        deadline = time.perf_counter() + 600
        while not any(cache_dir.glob("index-*.snapshot")) and time.perf_counter() < deadline:
            await asyncio.sleep(0.1)
    return out


def first_answers(roots: Sequence[Path], calls: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """Time to first answer, cold (empty cache) then warm (the snapshot the cold start wrote)."""
    paper, query = calls["get_paper"][0]["paper"], calls["search_papers"][0]["query"]
    with tempfile.TemporaryDirectory(prefix="papercode-bench-first-") as cache_dir:
        cold = asyncio.run(time_first_answer(roots, Path(cache_dir), paper, query))
        warm = asyncio.run(time_first_answer(roots, Path(cache_dir), paper, query))
    return {"cold": cold, "warm": warm}


# -- one size ------------------------------------------------------------------------------


def measure(
    roots: Sequence[Path],
    *,
    calls: int,
    stdio_calls: int,
    seed: int = 0,
    phases: bool = True,
    filtered_search: float = 0.2,
    first_answer: bool = False,
    stdio_rounds: int = 1,
) -> dict[str, Any]:
    """Every number for one corpus: floor, cold load, RSS, in-process and stdio latency."""
    with tempfile.TemporaryDirectory(prefix="papercode-bench-cache-") as cache_dir:
        payload = {
            "roots": [str(r) for r in roots],
            "calls": calls,
            "seed": seed,
            "phases": phases,
            "filtered_search": filtered_search,
            "cache_dir": cache_dir,
        }
        floor = _worker("floor", payload)
        load = _worker("load", payload)
        warm = _worker("warm", payload) if "snapshot_write_s" in load else {}
    result: dict[str, Any] = {**floor, **load, **warm}
    result["load_vs_floor"] = load["load_s"] / floor["floor_s"]
    result["keyed_vs_floor"] = load["keyed_s"] / floor["floor_s"]
    # The search child runs beside the build: count both peaks, as if they coincided.
    result["rss_vs_raw"] = (load["peak_rss_bytes"] + load["child_peak_rss_bytes"]) / floor["raw_bytes"]
    if stdio_calls:
        result["stdio"] = median_round([asyncio.run(time_stdio(roots, load["calls"], stdio_calls)) for _ in range(stdio_rounds)])
    if first_answer:
        result["first_answer"] = first_answers(roots, load["calls"])
    result.pop("calls", None)
    return result


def targets(result: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(target, passed, measured) for the issue's targets (defined at 100k records)."""
    rows = [
        (
            f"keyed ready <= {TARGET_KEYED_RATIO:g}x parse floor",
            result["keyed_vs_floor"] <= TARGET_KEYED_RATIO,
            f"{result['keyed_vs_floor']:.2f}x",
        ),
        (
            f"search ready <= {TARGET_SEARCH_READY_RATIO:g}x parse floor",
            result["load_vs_floor"] <= TARGET_SEARCH_READY_RATIO,
            f"{result['load_vs_floor']:.2f}x",
        ),
        (
            f"peak RSS (process + child) <= {TARGET_RSS_RATIO}x raw bytes",
            result["rss_vs_raw"] <= TARGET_RSS_RATIO,
            f"{result['rss_vs_raw']:.2f}x",
        ),
    ]
    if "warm_total_s" in result:
        rows.append(
            (
                f"warm start (Corpus.open on a snapshot) <= {TARGET_WARM_S:g} s",
                result["warm_total_s"] <= TARGET_WARM_S,
                f"{result['warm_total_s']:.3f} s",
            )
        )
    direct = result.get("direct", {})
    for tool in FAST_TOOLS:
        if tool in direct:
            p50 = direct[tool]["p50_ms"]
            rows.append((f"in-process p50 {tool} <= {TARGET_FAST_P50_MS:g} ms", p50 <= TARGET_FAST_P50_MS, f"{p50:.3f} ms"))
    if "search_papers" in direct:
        p50 = direct["search_papers"]["p50_ms"]
        rows.append((f"in-process p50 search_papers <= {TARGET_SEARCH_P50_MS:g} ms", p50 <= TARGET_SEARCH_P50_MS, f"{p50:.3f} ms"))
    stdio = result.get("stdio")
    if stdio:
        for tool, row in stdio["tools"].items():
            if tool == "search_papers":
                limit = row["echo_p50_ms"] + direct.get(tool, {}).get("p50_ms", 0.0) + 1.0
                rows.append(
                    (
                        "stdio p50 search_papers <= echo + in-process p50 + 1 ms",
                        row["p50_ms"] <= limit,
                        f"{row['p50_ms']:.2f} ms vs {limit:.2f} ms",
                    )
                )
            else:
                target = TARGET_KEYED_ECHO_RATIO if tool in KEYED_TOOLS else TARGET_ECHO_RATIO
                rows.append((f"stdio p50 {tool} <= {target}x echo", row["vs_echo"] <= target, f"{row['vs_echo']:.2f}x"))
    return rows


# -- printing ------------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def format_size(n: int, r: dict[str, Any]) -> str:
    lines = [
        f"## {n:,} records ({r['files']:,} files, {r['papers']:,} papers, {r['samples']:,} samples, problems {r['problems'] or 'none'})"
    ]
    lines.append(f"keyed ready       {r['keyed_s']:8.2f} s   parse floor {r['floor_s']:.2f} s   ratio {r['keyed_vs_floor']:.2f}x")
    lines.append(f"search ready      {r['load_s']:8.2f} s   parse floor {r['floor_s']:.2f} s   ratio {r['load_vs_floor']:.2f}x")
    for phase, seconds in r.get("phases", {}).items():
        lines.append(f"  {phase:60s} {seconds:8.2f} s  ({seconds / r['load_s']:5.1%})")
    if "warm_total_s" in r:
        lines.append(
            f"warm start        {r['warm_total_s']:8.3f} s   (of which, overlapped: a stat of every record file {r['warm_key_s']:.3f} s; snapshot written in"
            f" {r['snapshot_write_s']:.2f} s; RSS after {_mb(r['warm_rss_bytes'])})"
        )
    lines.append(
        f"peak RSS          {_mb(r['peak_rss_bytes']):>10} + child {_mb(r['child_peak_rss_bytes'])}   raw bytes {_mb(r['raw_bytes'])}"
        f"   ratio {r['rss_vs_raw']:.2f}x   (baseline before load {_mb(r['baseline_rss_bytes'])})"
    )
    if "direct" in r:
        lines.append("in-process (ms)                 queries.* p50    p99 | +JSON p50 | mcp.Client p50    p99")
        for tool, d in r["direct"].items():
            c = r["client"][tool]
            lines.append(
                f"  {tool:30s} {d['p50_ms']:9.3f} {d['p99_ms']:7.3f} | {d['shaped_p50_ms']:9.3f} | {c['p50_ms']:14.3f} {c['p99_ms']:7.3f}"
                + (f"  ({c['errors']} errors)" if c["errors"] else "")
            )
    stdio = r.get("stdio")
    if stdio:
        rounds = f", median of {stdio['rounds']} rounds" if "rounds" in stdio else ""
        lines.append(
            f"stdio (ms{rounds})  ping p50 {stdio['ping_p50_ms']:.3f}   (server start + load + connect {stdio['connect_s']:.1f} s)"
        )
        lines.append("  tool                             p50   echo p50  tool/echo  paired  tool/ping  echo/ping  answer bytes")
        for tool, s in stdio["tools"].items():
            lines.append(
                f"  {tool:30s} {s['p50_ms']:6.3f} {s['echo_p50_ms']:9.3f} {s['vs_echo']:9.2f}x {s['paired_vs_echo']:6.2f}x"
                f" {s['vs_ping']:9.2f}x {s['echo_vs_ping']:9.2f}x"
                f" {s['answer_bytes_median']:10,.0f}"
                + (f"  ({s['errors']} errors)" if s["errors"] else "")
                + (f"  rounds {' '.join(f'{ratio:.2f}' for ratio in s['vs_echo_rounds'])}" if "vs_echo_rounds" in s else "")
            )
    first = r.get("first_answer")
    if first:
        for kind, row in first.items():
            lines.append(
                f"time to first answer ({kind:4s})   initialize {row['initialize_s']:.2f} s   keyed lookup {row['keyed_s']:.2f} s"
                f"   get_paper {row['get_paper_s']:.2f} s"
                f"   search_papers {row['search_s']:.2f} s   (from spawn of papercode serve over stdio)"
            )
    label = "targets" if n >= TARGET_SIZE else f"targets (defined at {TARGET_SIZE:,}; shown for reference)"
    lines.append(label)
    for name, passed, measured in targets(r):
        lines.append(f"  {'PASS' if passed else 'MISS'}  {name:60s} {measured}")
    return "\n".join(lines)


# -- entry points --------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated record counts (default 10000,100000)")
    parser.add_argument("--layout", choices=LAYOUTS, default="files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"where corpora are generated and kept (default {DEFAULT_DATA})")
    parser.add_argument("--calls", type=int, default=300, help="in-process calls per tool (default 300)")
    parser.add_argument("--stdio-calls", type=int, default=200, help="stdio calls per tool, 0 to skip (default 200)")
    parser.add_argument("--stdio-rounds", type=int, default=1, help="stdio rounds, each on fresh servers; medians are reported (default 1)")
    parser.add_argument("--no-phases", action="store_true", help="time the build without the phase wrappers")
    parser.add_argument("--json", type=Path, help=JSON_HELP)
    parser.add_argument(
        "--filtered-search",
        type=float,
        default=0.2,
        help="share of search_papers calls with has_samples=true (default 0.2)",
    )
    parser.add_argument("--first-answer", action="store_true", help="also time papercode serve's first answers over stdio, cold and warm")
    parser.add_argument("--smoke", action="store_true", help="500 records, few calls: a CI smoke check (< 60 s)")


def main(args: argparse.Namespace) -> int:
    if args.smoke:
        args.sizes, args.calls, args.stdio_calls = "500", 20, 10
    sizes = [int(s.replace("_", "").replace("k", "000")) for s in args.sizes.split(",") if s.strip()]
    m = machine()
    print(format_machine(m), flush=True)
    results: dict[str, Any] = {"layout": args.layout, "filtered_search": args.filtered_search, "sizes": {}}
    largest = max(sizes)
    for n in sizes:
        roots = corpus_roots(args.data, n, largest, args.seed, args.layout)
        r = measure(
            roots,
            calls=args.calls,
            stdio_calls=args.stdio_calls,
            seed=args.seed,
            phases=not args.no_phases,
            filtered_search=args.filtered_search,
            first_answer=args.first_answer,
            stdio_rounds=args.stdio_rounds,
        )
        results["sizes"][str(n)] = r
        print(format_size(n, r), flush=True)
    # The targets are defined at TARGET_SIZE: a run's verdicts are those of that size, else of its largest.
    results["targets_at"] = TARGET_SIZE if TARGET_SIZE in sizes else largest
    results["targets"] = [list(row) for row in targets(results["sizes"][str(results["targets_at"])])]
    finish(args.json, "run", results, m)
    return 0


def _worker_main(mode: str) -> int:
    payload = json.loads(sys.stdin.buffer.read())
    answer = {"floor": worker_floor, "load": worker_load, "warm": worker_warm}[mode](payload)
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        sys.exit(_worker_main(sys.argv[2]))
    sys.exit(main(argparse.ArgumentParser().parse_args()))
