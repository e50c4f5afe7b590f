"""`python -m benchmarks run` saves its run as the other harnesses do, and the report shows it: on made-up numbers
(`run.measure` stood in for, no corpus built, no process started); and what its worker calls of papercode
(`papercode.bench`) answers every tool it times."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report, run
from papercode import bench
from papercode.corpus import Corpus
from tests.support.tool_answers import answer, code_answer

AFTER = "38406bdd9a98a769dddedc3520ad7d5010b85e71"
ISSUE_24 = next(change for change in report.CHANGES if "run" in change.benchmarks)


def measured(scale: float = 1.0, *, client_errors: int = 0, stdio: bool = True) -> dict[str, Any]:
    """What `run.measure` gives for one size (every key `run.format_size` prints), the build taking `scale` times 8 s
    (keyed) and 12 s (search) over a 2 s floor."""
    mib = 2**20
    result: dict[str, Any] = {
        "files": 2000,
        "floor_runs": 3,
        "raw_bytes": 26 * mib,
        "parsed_bytes": 26 * mib,
        "floor_s": 2.0,
        "keyed_s": 8.0 * scale,
        "load_s": 12.0 * scale,
        "baseline_rss_bytes": 86 * mib,
        "peak_rss_bytes": 30 * mib,
        "child_peak_rss_bytes": 9 * mib,
        "phases": {"decode + checks": 1.0},
        "papers": 2000,
        "samples": 30580,
        "papercode_path": "server/papercode",
        "problems": {},
        "snapshot_write_s": 0.03,
        "warm_key_s": 0.01,
        "warm_total_s": 0.05,
        "warm_papers": 2000,
        "warm_rss_bytes": 105 * mib,
        "warm_baseline_rss_bytes": 86 * mib,
        "direct": {
            tool: {"p50_ms": 0.05, "p99_ms": 0.2, "n": 30, "shaped_p50_ms": 0.06, "shaped_p99_ms": 0.3, "errors": 0} for tool in run.TOOLS
        },
        "client": {tool: {"p50_ms": 1.0, "p99_ms": 2.0, "n": 30, "errors": 0} for tool in run.TOOLS},
    }
    result["client"]["get_paper"]["errors"] = client_errors
    if stdio:
        ratios = {"p50_ms": 2.8, "echo_p50_ms": 2.5, "paired_vs_echo": 1.1, "n": 20, "errors": 0, "answer_bytes_median": 1000}
        ratios |= {"vs_echo": 1.12, "vs_ping": 1.9, "echo_vs_ping": 1.7}
        result["stdio"] = {"connect_s": 2.0, "ping_p50_ms": 1.5, "tools": {tool: dict(ratios) for tool in run.TOOLS}}
    result["keyed_vs_floor"], result["load_vs_floor"] = result["keyed_s"] / 2.0, result["load_s"] / 2.0
    result["rss_vs_raw"] = (result["peak_rss_bytes"] + result["child_peak_rss_bytes"]) / result["raw_bytes"]
    return result


def benchmark(
    results: Path,
    monkeypatch: pytest.MonkeyPatch,
    numbers: dict[str, Any],
    *,
    commit: str = AFTER,
    sizes: str = "2000",
    date: str = "02:00",
) -> Path:
    """`python -m benchmarks run --sizes SIZES --json RESULTS` measuring `commit`, `numbers` for every size; the file saved."""
    about = {
        "date": f"2026-12-02 {date} UTC",
        "cpu": "Some CPU",
        "cores": 2,
        "ram_gib": 23.5,
        "platform": "Linux",
        "loadavg": "0.10 0.20 0.30",
    }
    about |= {name: "1.0" for name in ("python", "mcp", "pydantic", "orjson", "tantivy", "numpy")}
    about |= {"papercode": f"git {commit[:7]}", "papercode_source": {"path": "server", "commit": commit, "dirty": False}}
    monkeypatch.setattr(run, "machine", lambda: about)
    monkeypatch.setattr(run, "corpus_roots", lambda data, n, *rest: [data / str(n)])
    monkeypatch.setattr(run, "measure", lambda roots, **options: numbers)
    monkeypatch.setattr(sys, "argv", ["benchmarks", "run", "--sizes", sizes, "--json", str(results)])
    parser = argparse.ArgumentParser()
    run.add_arguments(parser)
    before = set(results.glob("*.json"))
    assert run.main(parser.parse_args(sys.argv[2:])) == 0
    (saved,) = set(results.glob("*.json")) - before
    return saved


def test_a_run_is_saved_with_every_number_it_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    numbers = measured(stdio=False)
    saved = benchmark(tmp_path / "results", monkeypatch, numbers)
    printed = capsys.readouterr().out
    assert "## 2,000 records (2,000 files, 2,000 papers, 30,580 samples, problems none)" in printed
    assert "PASS  keyed ready <= 5x parse floor" in printed and f"# saved .../results/{saved.name}" in printed
    assert saved.name.endswith(f"-run-{AFTER[:7]}.json")
    document = json.loads(saved.read_text())
    assert document["command"] == "run" and document["argv"] == ["run", "--sizes", "2000", "--json", f".../{tmp_path.name}/results"]
    assert document["machine"]["papercode_source"]["commit"] == AFTER
    assert document["result"]["sizes"] == {"2000": numbers} and document["result"]["targets_at"] == 2000
    assert document["result"]["targets"] == [list(row) for row in run.targets(numbers)]
    (loaded,) = report.load_runs(tmp_path / "results")  # a run the report takes
    assert loaded.command == "run" and loaded.commit == AFTER


def test_the_targets_are_those_of_the_size_they_are_set_at_else_of_the_largest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    largest = json.loads(benchmark(tmp_path / "a", monkeypatch, measured(), sizes="2000,5000").read_text())["result"]
    assert sorted(largest["sizes"]) == ["2000", "5000"] and largest["targets_at"] == 5000
    at_target = json.loads(benchmark(tmp_path / "b", monkeypatch, measured(), sizes=f"{run.TARGET_SIZE},200000").read_text())["result"]
    assert at_target["targets_at"] == run.TARGET_SIZE


def test_the_report_shows_the_run_and_its_before_and_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = tmp_path / "results"
    benchmark(results, monkeypatch, measured(1.5), commit=ISSUE_24.before + "0" * 33, date="01:00")
    after = benchmark(results, monkeypatch, measured(client_errors=2), date="02:00")
    text = report.report(report.load_runs(results))
    section = " ".join(text[text.index("## Records: cold build") : text.index("## HTTP under load")].split())
    assert (
        f"`{after.name}`" in section and "Floor: `orjson.loads` over the same bytes (26 MiB, 2,000 records), 2.00 s (best of 3)." in section
    )
    assert "| figure or target | measured | |" not in section  # the after is the current run: one table
    assert f"### Before and after: {ISSUE_24.title} (`{ISSUE_24.before}` → `{AFTER[:7]}`)" in section
    for row in (
        "| at 2,000 records: keyed / search ready | 12.00 / 18.00 s (floor 2.00 s) | 8.00 / 12.00 s (floor 2.00 s) | |",
        "| keyed ready <= 5x parse floor | 6.00x | 4.00x | MISS → PASS |",
        "| search ready <= 7x parse floor | 9.00x | 6.00x | MISS → PASS |",
        "| peak RSS, process + child (the records' bytes) | 30 + 9 MiB (26 MiB) | 30 + 9 MiB (26 MiB) | |",
        "| peak RSS (process + child) <= 1.5x raw bytes | 1.50x | 1.50x | PASS |",
        "| warm start (Corpus.open on a snapshot) <= 1 s | 0.050 s | 0.050 s | PASS |",
        "| in-process p50 of the tools without a target | find_papers_for_repo 0.050, corpus_stats 0.050 ms"
        " | find_papers_for_repo 0.050, corpus_stats 0.050 ms | |",
        "| in-process p50 get_paper <= 1 ms | 0.050 ms | 0.050 ms | PASS |",
        "| stdio p50 get_paper <= 1.15x echo | 1.12x | 1.12x | PASS |",
        "| calls answered with an error: in-process / mcp.Client / stdio | 0 / 0 / 0 | 0 / 2 / 0 | |",
    ):
        assert row in section
    assert ISSUE_24.why["run"].split()[0] in section


def test_a_run_without_stdio_says_so_for_its_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    benchmark(tmp_path, monkeypatch, measured(stdio=False))
    text = report.report(report.load_runs(tmp_path))
    assert "| calls answered with an error: in-process / mcp.Client / stdio | 0 / 0 / — |  |" in text
    assert "stdio p50" not in text


def test_the_worker_asks_papercode_bench_for_every_tool_it_times(corpus: Corpus) -> None:
    """Each tool the worker times answers what the tool answers (get_code's: offline, nothing stored)."""
    answers = bench.tool_answers()
    assert set(answers) == set(run.TOOLS)
    calls = {
        "get_harvested_code_for_paper": {"arxiv_id": "2406.04823"},  # 26 samples: the default limit, 25, shows
        "list_samples_by_status": {"status": "ran"},
        "search_papers": {"query": "bert", "has_samples": True},
        "get_paper": {"paper": "1902.04094"},
        "find_papers_for_repo": {"repo": "nyu-dl/bert-gen"},
        "get_code": {"code_sha256": "2a890c3f8ff19f47"},
        "corpus_stats": {},
    }
    for tool, arguments in calls.items():
        got = answers[tool](corpus, arguments)
        shown = got if isinstance(got, dict) else got.model_dump(mode="json", exclude_none=True)
        expected = asyncio.run(code_answer(corpus, **arguments)) if tool == "get_code" else answer(corpus, tool, **arguments)
        assert shown == expected, tool
