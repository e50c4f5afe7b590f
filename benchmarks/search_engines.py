"""`python -m benchmarks search-engines`: papercode's search (tantivy) against the SQLite FTS5 engine it replaced.

Both engines index the same documents (`ingest.documents.search_document` of every admitted record) and answer the same
queries (the `search_papers` calls of `benchmarks.run.make_calls`: 1-3 words of a random title, a fifth of them with
`has_samples=true`), each as the server ran or runs it: counts, the title tier, the rest, ten snippets. Each engine
runs in a fresh subprocess, so its peak RSS is its own.

* fts5: `benchmarks.fts5_search`, papercode's search until tantivy replaced it (SQLite FTS5, BM25 over every match);
* tantivy: papercode's own (`papercode.bench.SearchEngine`), as the server runs it (BM25 with block-max WAND top-k pruning).

Reported: build seconds (documents in to a servable index), index bytes, peak RSS, p50/p99 per query.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from papercode import bench

from .harness import REPO_ROOT, format_machine, machine, pythonpath
from .results import JSON_HELP, finish
from .run import DEFAULT_DATA, corpus_roots, make_calls, record_files

ENGINES = ("fts5", "tantivy")


def documents(roots: list[Path]) -> Iterator[Any]:
    """The search documents of the records under `roots`, each made as a cold build makes it of an admitted record."""
    report = bench.LoadReport()
    admission = bench.Admission(report)
    for item in bench.iter_records(roots, report, bench.Limits()):
        admitted = admission.admit(item)
        if admitted is not None:
            yield bench.search_document(item, admitted)


def _p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1e3


def _timed(engine: Any, queries: list[dict[str, Any]], *texts: Any) -> list[float]:
    """Seconds per query, the second of two rounds (the first warms the page cache); tantivy's engine also takes
    the texts its snippets are cut from."""
    times = []
    for args in queries * 2:
        filters = bench.SearchFilters(has_samples=args.get("has_samples"))
        start = time.perf_counter()
        engine.search(args["query"], filters, 0, 10, *texts)
        times.append(time.perf_counter() - start)
    return times[len(queries) :]


def _result(build_s: float, index_bytes: int, times: list[float]) -> dict[str, Any]:
    return {"build_s": build_s, "index_bytes": index_bytes, "p50_ms": statistics.median(times) * 1e3, "p99_ms": _p(times, 0.99)}


def run_fts5(roots: list[Path], queries: list[dict[str, Any]], workdir: Path) -> dict[str, Any]:
    from .fts5_search import SearchBuilder as Fts5Builder  # in the fts5 engine's process only: its peak RSS is its own
    from .fts5_search import SearchEngine as Fts5Engine

    docs = list(documents(roots))
    start = time.perf_counter()
    builder = Fts5Builder()
    for doc in docs:
        builder.add(doc)
    path = workdir / "fts5.db"
    builder.write(path)
    engine = Fts5Engine(path)
    build_s = time.perf_counter() - start
    return _result(build_s, path.stat().st_size, _timed(engine, queries))


def run_tantivy(roots: list[Path], queries: list[dict[str, Any]], workdir: Path) -> dict[str, Any]:
    docs = list(documents(roots))
    by_paper = {doc.paper: doc for doc in docs}  # the winner of a duplicate comes last

    def texts(paper: int) -> dict[str, str]:
        doc = by_paper[paper]
        return bench.document_texts(doc.title, doc.authors, doc.tasks, doc.methods)

    start = time.perf_counter()
    builder = bench.SearchBuilder()
    for doc in docs:
        builder.add(doc)
    directory = workdir / "tantivy"
    builder.write(directory)
    engine = bench.SearchEngine(directory)
    build_s = time.perf_counter() - start
    size = sum(path.stat().st_size for path in directory.iterdir() if path.is_file())
    return _result(build_s, size, _timed(engine, queries, texts))


def worker(payload: dict[str, Any]) -> dict[str, Any]:
    roots = [Path(p) for p in payload["roots"]]
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory(prefix="papercode-engines-") as workdir:
        run = {"fts5": run_fts5, "tantivy": run_tantivy}[payload["engine"]]
        result = run(roots, payload["queries"], Path(workdir))
    result["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["baseline_rss_bytes"] = baseline * 1024
    return result


def compare(roots: list[Path], n_queries: int = 300, seed: int = 0) -> dict[str, Any]:
    queries = make_calls(roots, n_queries, seed)["search_papers"]
    out: dict[str, Any] = {"files": len(record_files(roots)), "queries": len(queries)}
    for engine in ENGINES:
        env = dict(os.environ, PYTHONPATH=pythonpath())
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.search_engines", "--worker"],
            input=json.dumps({"engine": engine, "roots": [str(r) for r in roots], "queries": queries}).encode(),
            capture_output=True,
            cwd=REPO_ROOT,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{engine} failed:\n{proc.stderr.decode()[-3000:]}")
        out[engine] = json.loads(proc.stdout)
    return out


def format_comparison(n: int, result: dict[str, Any]) -> str:
    lines = [f"## search engines at {n:,} records ({result['queries']} queries, each run twice; the second round timed)"]
    lines.append("engine     build s   index MiB   peak RSS MiB (before docs)   p50 ms   p99 ms")
    for engine in ENGINES:
        r = result[engine]
        lines.append(
            f"{engine:8s} {r['build_s']:8.2f} {r['index_bytes'] / 2**20:11.0f} {r['peak_rss_bytes'] / 2**20:14.0f} ({r['baseline_rss_bytes'] / 2**20:5.0f})"
            f" {r['p50_ms']:12.3f} {r['p99_ms']:8.3f}"
        )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated record counts (default 10000,100000)")
    parser.add_argument("--data", type=Path, help="where corpora are generated and kept (default: as for run)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", type=Path, help=JSON_HELP)


def main(args: argparse.Namespace) -> int:
    about = machine()
    print(format_machine(about), flush=True)
    sizes = [int(size) for size in args.sizes.split(",")]
    measured: dict[str, Any] = {}
    for n in sizes:
        roots = corpus_roots(args.data or DEFAULT_DATA, n, max(sizes), 0, "files")
        measured[str(n)] = compare(roots, args.queries)
        print(format_comparison(n, measured[str(n)]), flush=True)
    finish(args.json, "search-engines", {"sizes": measured}, about)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        sys.stdout.write(json.dumps(worker(json.loads(sys.stdin.buffer.read()))))
        sys.exit(0)
    sys.exit(2)
