"""What the full-text index costs to build, per paper: `python -m benchmarks index-cost --records DIR [--docs N]`.

Issue #15's cold-start targets at 600k papers depend on it. The first `--docs` records of DIR are admitted as the
server admits them (`ingest.admission.Admission`) and made into search documents; then, each timed in CPU seconds of
the whole process (`getrusage`: tantivy's indexing threads included) against the documents' count:

- `write_index`: papercode's own write of the index (tantivy, two threads from 20,000 documents) and the abstracts
  file beside it;
- the analyzer alone over the abstracts (the text that costs most), papercode's own (`text_analysis.text_analyzer`), and
  the same without its English stemmer, to show the stemmer's share.

Run it in a fresh process on a quiet machine; the CPU seconds are the steadier figure on a shared one.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any

from papercode import bench

from .harness import format_machine, machine
from .search_engines import documents


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(records: Path, count: int) -> dict[str, Any]:
    latest = {doc.paper: doc for doc in islice(documents([records]), count)}  # a duplicate's winner replaces its paper's
    docs = [latest[paper] for paper in sorted(latest)]
    out: dict[str, Any] = {"documents": len(docs), "abstract_chars": sum(len(doc.abstract) for doc in docs)}
    with tempfile.TemporaryDirectory(prefix="papercode-index-cost-") as scratch:
        directory = Path(scratch) / "index"
        cpu, wall = _cpu(), time.perf_counter()
        bench.write_index(directory, docs, len(docs))
        out["write_cpu_s"], out["write_wall_s"] = _cpu() - cpu, time.perf_counter() - wall
        out["index_bytes"] = sum(path.stat().st_size for path in directory.iterdir() if path.is_file())
        out["abstracts_bytes"] = (directory / bench.ABSTRACTS).stat().st_size
        shutil.rmtree(directory)
    abstracts = [doc.abstract for doc in docs]
    for stems in (True, False):
        analyze = bench.text_analyzer(indexing=True, stems=stems).analyze
        cpu = _cpu()
        tokens = sum(len(analyze(text)) for text in abstracts)
        out["analyze_stem_cpu_s" if stems else "analyze_cpu_s"] = _cpu() - cpu
    out["tokens"] = tokens
    return out


def format_result(records: Path, result: dict[str, Any]) -> str:
    n = result["documents"]

    def per_doc(seconds: float) -> str:
        return f"{seconds / n * 1e6:.1f} µs a document" if n else "-"

    stem, plain = result["analyze_stem_cpu_s"], result["analyze_cpu_s"]
    kept = f"abstracts file {result['abstracts_bytes'] / 2**20:,.1f} MiB"
    return "\n".join(
        [
            f"## {n:,} documents from {records} ({result['abstract_chars'] / max(n, 1):,.0f} characters of abstract each)",
            f"write_index         CPU {result['write_cpu_s']:.2f} s = {per_doc(result['write_cpu_s'])}   wall {result['write_wall_s']:.2f} s"
            f"   on disk {result['index_bytes'] / 2**20:,.1f} MiB ({kept})",
            f"  at 600,000 papers, that rate: {result['write_cpu_s'] / max(n, 1) * 600_000:.0f} CPU seconds",
            f"analyzer, abstracts CPU {stem:.2f} s = {per_doc(stem)}; without the stemmer {plain:.2f} s = {per_doc(plain)}"
            f" (the stemmer {per_doc(stem - plain)}, {(stem - plain) / max(result['tokens'], 1) * 1e9:.0f} ns a token)",
        ]
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=Path, required=True, help="a records directory (e.g. a built archive's ARCHIVE/records)")
    parser.add_argument("--docs", type=int, default=60_000, help="how many of its records to index (default 60,000)")


def main(args: argparse.Namespace) -> int:
    print(format_machine(machine()).replace("papercode benchmark", "papercode index-cost benchmark", 1), flush=True)
    print(format_result(args.records, measure(args.records, args.docs)), flush=True)
    return 0
