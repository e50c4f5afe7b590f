"""`python -m benchmarks score-agreement --archive-dir DIR`: does a paper score the same whether the archive or a record
holds its text (issue #22: within 1 %)?

`--papers` archive papers (titles of three words or more, drawn by `--seed`) are written as Code-with-Papers records
with the same text (title, abstract, authors, tasks, methods, date, code links), which replace their archive rows when
served above the archive. For each, a query of its title's first words is ranked twice: over the archive alone (no
record above it) and over the records above the archive (the overlay: the rows deleted, the records' documents added).
The paper's BM25 score in the second over its score in the first is its ratio. tantivy still counts a deleted
document in a term's document frequency until its segment is merged, so a word of a replaced paper counts one paper
more in the second: a rare word weighs a little less. The ratios' spread says how much that is at the archive's size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path
from typing import Any

import orjson

from papercode import bench

from .harness import format_machine, machine
from .results import JSON_HELP, save

TARGET = 0.01  # issue #22: the same score within 1 %
WORDS = 6  # of a title, as a query


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--archive-dir", type=Path, required=True, help="an archive directory papercode archive build wrote")
    parser.add_argument("--papers", type=int, default=200, help="archive papers written as records with the same text (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help=JSON_HELP)


def record_of(corpus: Any, ordinal: int) -> dict[str, Any]:
    """A Code-with-Papers record holding exactly what the archive serves of a paper."""
    paper = corpus.index.papers[ordinal]
    details = paper.details()
    record: dict[str, Any] = {"url": f"/paper/{paper.slug}", "title": paper.title, "authors": details.authors}
    if paper.arxiv_id:
        record["arxiv_id"] = paper.arxiv_id
    for name, value in (("date", paper.date), ("url_abs", paper.url_abs), ("url_pdf", details.url_pdf), ("proceeding", details.proceeding)):
        if value:
            record[name] = value
    abstract = corpus.search.abstract(ordinal)
    if abstract:
        record["abstract"] = abstract
    record["tasks"] = [{"task_slug": slug, "task_name": name} for slug, name in details.tasks]
    record["methods"] = [{"method_name": name} for name in details.methods]
    record["code_links"] = [
        {"repo_url": link.repo_url, "is_official": int(link.is_official), "framework": link.framework} for link in details.code_links
    ]
    return record


def measure(archive_dir: Path, papers: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="score-agreement-") as scratch:
        empty, records = Path(scratch) / "none", Path(scratch) / "records"
        empty.mkdir()
        records.mkdir()
        alone = bench.Corpus.load([empty], archive_dir=archive_dir)
        rng = random.Random(seed)
        chosen: list[int] = []
        while len(chosen) < papers:
            ordinal = rng.randrange(len(alone.index.papers))
            if ordinal not in chosen and len(alone.index.papers[ordinal].title.split()) >= 3:
                chosen.append(ordinal)
        keys = {ordinal: alone.index.papers[ordinal].key for ordinal in chosen}
        for number, ordinal in enumerate(chosen):
            (records / f"{number:05d}.json").write_bytes(orjson.dumps(record_of(alone, ordinal)))
        overlaid = bench.Corpus.load([records], archive_dir=archive_dir)
        ratios, missing = [], 0
        for ordinal in chosen:
            query = " ".join(alone.index.papers[ordinal].title.split()[:WORDS])
            before = dict(alone.search.scored(query, 100))
            after = {overlaid.index.papers[paper].key: score for paper, score in overlaid.search.scored(query, 100)}
            if ordinal not in before or keys[ordinal] not in after:
                missing += 1
                continue
            ratios.append(after[keys[ordinal]] / before[ordinal])
    ratios.sort()
    quantile = statistics.quantiles(ratios, n=20) if len(ratios) >= 20 else [min(ratios), max(ratios)]
    within = sum(abs(ratio - 1) <= TARGET for ratio in ratios)
    return {
        "papers": papers,
        "compared": len(ratios),
        "not_in_top_100": missing,
        "median": statistics.median(ratios),
        "p5": quantile[0],
        "p95": quantile[-1],
        "min": ratios[0],
        "max": ratios[-1],
        "within_target": within,
        "archive_papers": len(alone.index.papers),
    }


def main(args: argparse.Namespace) -> int:
    about = machine()
    print(format_machine(about), flush=True)
    result = measure(args.archive_dir, args.papers, args.seed)
    print(
        f"## score agreement: {result['compared']} of {result['papers']} papers written as records with the same text, "
        f"over an archive of {result['archive_papers']:,} papers"
    )
    print(
        f"score with the record / score in the archive alone: median {result['median']:.4f}, "
        f"5th-95th percentile {result['p5']:.4f}-{result['p95']:.4f}, min {result['min']:.4f}, max {result['max']:.4f}"
    )
    share = result["within_target"] / max(result["compared"], 1)
    print(f"within {TARGET:.0%}: {result['within_target']} of {result['compared']} ({share:.0%})")
    passed = abs(result["median"] - 1) <= TARGET and abs(result["p5"] - 1) <= TARGET
    print(f"  {'PASS' if passed else 'MISS'}  median and 5th percentile within {TARGET:.0%}")
    measured = f"median {result['median']:.4f}, 5th percentile {result['p5']:.4f}"
    result["targets"] = [[f"score with the record / in the archive alone: median and 5th percentile within {TARGET:.0%}", passed, measured]]
    save(args.json, "score-agreement", result, about)
    return 0
