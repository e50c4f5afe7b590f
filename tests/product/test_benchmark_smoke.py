"""The benchmark's smoke mode on ~200 records: it runs and produces a number for every tool. No timing thresholds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.generate import generate_records, write_corpus  # noqa: E402
from benchmarks.run import TARGET_KEYED_RATIO, TARGET_SEARCH_READY_RATIO, TOOLS, format_size, measure, targets  # noqa: E402

# The benchmark's generator and harness, not papercode: with the process-level tests, out of the default run.
pytestmark = pytest.mark.process


def test_generator_is_deterministic_and_consistent() -> None:
    first = list(generate_records(60, seed=3))
    assert first == list(generate_records(60, seed=3))
    assert first != list(generate_records(60, seed=4))
    assert list(generate_records(30, seed=3)) == first[:30]
    hashes = [s["code_sha256_prefix"] for r in first for s in (r["syntology"] or {}).get("samples", [])]
    assert len(hashes) == len(set(hashes)) and all(len(h) == 16 for h in hashes)
    for record in first:
        harvest = record["syntology"]
        if harvest is None:
            continue
        samples = harvest["samples"]
        assert sum(harvest["summary"].values()) == len(samples)
        assert harvest["n_pointer_only_for_licence"] == sum(1 for s in samples if not s["inline_ok"])
        assert all(s["mcp_get_code"]["code_sha256"] == s["code_sha256_prefix"] for s in samples)


def test_smoke_measures_every_tool(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus", 200, seed=1)
    result = measure([corpus], calls=8, stdio_calls=3)
    assert result["papers"] == 200 and not result["problems"]
    assert result["raw_bytes"] > 0 and result["floor_s"] > 0 and 0 < result["keyed_s"] <= result["load_s"]
    assert result["load_vs_floor"] > 0 and result["keyed_vs_floor"] > 0 and result["rss_vs_raw"] > 0
    for tool in TOOLS:
        assert result["direct"][tool]["p50_ms"] > 0
        assert result["client"][tool]["p50_ms"] > 0 and result["client"][tool]["errors"] == 0
        row = result["stdio"]["tools"][tool]
        assert row["errors"] == 0 and row["vs_echo"] > 0 and row["vs_ping"] > 0
    assert result["stdio"]["ping_p50_ms"] > 0
    # Every target is printed with the verdict its own numbers give, and with those numbers.
    report = format_size(200, result).splitlines()
    rows = targets(result)
    assert len(rows) >= 2 + len(TOOLS)  # load, RSS, and at least one row per tool
    for name, passed, measured in rows:
        (line,) = [line for line in report if name in line]
        assert line.split()[0] == ("PASS" if passed else "MISS") and line.endswith(measured)
    assert next(passed for name, passed, _ in rows if name.startswith("keyed ready")) is (result["keyed_vs_floor"] <= TARGET_KEYED_RATIO)
    assert next(passed for name, passed, _ in rows if name.startswith("search ready")) is (
        result["load_vs_floor"] <= TARGET_SEARCH_READY_RATIO
    )


def test_index_cost_indexes_the_first_records_and_reports_per_document(tmp_path: Path) -> None:
    from benchmarks.index_cost import format_result, measure

    root = write_corpus(tmp_path / "corpus", 60, seed=3, layout="files")
    result = measure(root, 50)
    assert result["documents"] == 50 and result["tokens"] > 0
    assert result["write_cpu_s"] > 0 and result["analyze_stem_cpu_s"] > 0 and result["analyze_cpu_s"] > 0
    assert result["abstracts_bytes"] >= result["abstract_chars"] and result["index_bytes"] > result["abstracts_bytes"]
    text = format_result(root, result)
    assert "## 50 documents" in text and "µs a document" in text and "the stemmer" in text


def test_each_subcommand_runs_its_own_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m benchmarks <subcommand>` declares that subcommand's options and runs it: `generate` writes what
    `write_corpus` writes, `generate-archive` what `write_archive` writes, with the options given."""
    from benchmarks.__main__ import main
    from benchmarks.archive_data import PAPERS_DUMP, write_archive

    monkeypatch.setattr(sys, "path", list(sys.path))  # main puts this checkout's server/ on it
    assert main(["generate", "--n", "5", "--out", str(tmp_path / "cli"), "--layout", "jsonl", "--seed", "2"]) == 0
    direct = write_corpus(tmp_path / "direct", 5, seed=2, layout="jsonl")
    assert (tmp_path / "cli" / "bundle_000.jsonl").read_bytes() == (direct / "bundle_000.jsonl").read_bytes()
    assert "wrote 5 records" in capsys.readouterr().err

    argv = ["generate-archive", "--papers", "30", "--links", "9", "--out", str(tmp_path / "archive"), "--forms", "json.gz"]
    assert main([*argv, "--seed", "4", "--methods", "50", "--no-boards"]) == 0
    assert capsys.readouterr().out.startswith("papers 30: ")
    write_archive(tmp_path / "archive-direct", 30, 9, seed=4, forms=["json.gz"], methods=50)
    assert (tmp_path / "archive" / PAPERS_DUMP).read_bytes() == (tmp_path / "archive-direct" / PAPERS_DUMP).read_bytes()
    assert sorted(path.name for path in (tmp_path / "archive").iterdir()) == sorted(
        path.name for path in (tmp_path / "archive-direct").iterdir()
    )
