"""Hostile records: every bad file, line, record or sample is reported, and every good record is served.

The hostile set (`tests.support.hostile_records`) is written into a temporary directory (no third-party data). Each
regression test is named after the attack; `HOSTILE` says what each file must produce in the
load report.
"""

from __future__ import annotations

import builtins
import contextlib
import gzip
import shutil
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from papercode.answers import overview
from papercode.cli import main as cli
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport, Problem
from papercode.corpus.stages import Corpus
from papercode.ingest import decode as loading
from tests.support.hostile_records import GOOD, HOSTILE, HOSTILE_LIMITS, plain_record, plain_sample, write_hostile_set
from tests.support.records import load_papers
from tests.support.tool_answers import answer, code_answer, shown

REAL_RECORDS = Path(__file__).resolve().parents[2] / "records"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- a record's bytes, a file made unreadable ----------------------------------------------


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value)


@contextlib.contextmanager
def unreadable(path: Path) -> Iterator[None]:
    """Keep `path` (chmod 000) unreadable. As root, chmod does not stop a read: then the OS's
    refusal is simulated at the loader's `open`, so the test exercises the same error path."""
    try:
        path.open("rb").close()
    except OSError:
        yield  # chmod works here (or there is no such file)
        return
    real_open = builtins.open

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, Path)) and Path(file) == path:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    mp = pytest.MonkeyPatch()
    mp.setattr(loading, "open", refusing_open, raising=False)
    try:
        yield
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One hostile set per module: nothing below writes to it, loading only reads."""
    return write_hostile_set(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def corpus(hostile: Path) -> Corpus:
    return _load(hostile)


def _load(records: Path, limits: Limits = HOSTILE_LIMITS) -> Corpus:
    with unreadable(records / "unreadable.json"):
        return Corpus.load([records], limits)


def _problems(report: LoadReport, records: Path, name: str) -> list[Problem]:
    return [p for p in report.problems if p.path == str(records / name)]


# -- the load report -----------------------------------------------------------------------


def test_every_good_record_is_indexed_and_nothing_else(hostile: Path, corpus: Corpus) -> None:
    assert sorted(paper.key for paper in corpus.index.papers) == sorted(GOOD)


@pytest.mark.parametrize(("name", "line", "severity", "code"), HOSTILE, ids=[f"{h[0]}:{h[1]}:{h[3]}" for h in HOSTILE])
def test_each_hostile_file_is_reported_with_path_line_and_reason(
    hostile: Path, corpus: Corpus, *, name: str, line: int | None, severity: str, code: str
) -> None:
    report = corpus.index.report
    found = [p for p in _problems(report, hostile, name) if p.code == code and p.line == line]
    assert len(found) == 1, [p for p in report.problems if name in p.path]
    assert found[0].severity == severity
    assert len(found[0].reason) > 10


def test_nothing_is_reported_that_was_not_expected(hostile: Path, corpus: Corpus) -> None:
    report = corpus.index.report
    expected = {(str(hostile / name), line, severity, code) for name, line, severity, code in HOSTILE}
    assert {(p.path, p.line, p.severity, p.code) for p in report.problems} == expected
    assert len(report.problems) == len(HOSTILE)


def test_good_files_produce_no_problem(hostile: Path, corpus: Corpus) -> None:
    report = corpus.index.report
    for name in ("good.json", "bom.json", "dir.json", "dir.json/inner.json", "good.jsonl.gz", "sub/nested.txt", "link_to_good.json"):
        assert _problems(report, hostile, name) == []


def test_report_counts_files_and_records(hostile: Path, corpus: Corpus) -> None:
    report = corpus.index.report
    assert report.records_indexed == len(GOOD)
    assert report.rejected == sum(1 for h in HOSTILE if h[2] == "error")
    assert report.warnings == sum(1 for h in HOSTILE if h[2] == "warning")


# -- one regression test per attack --------------------------------------------------------


def test_utf8_bom_loads(hostile: Path, corpus: Corpus) -> None:
    assert corpus.index.paper_by_arxiv("2101.00002") is not None


def test_invalid_utf8_says_so(hostile: Path, corpus: Corpus) -> None:
    (problem,) = _problems(corpus.index.report, hostile, "invalid_utf8.json")
    assert "UTF-8" in problem.reason


def test_jsonl_keeps_good_lines_around_bad_ones(hostile: Path, corpus: Corpus) -> None:
    index = corpus.index
    assert index.paper_by_arxiv("2101.00003") is not None and index.paper_by_arxiv("2101.00004") is not None
    assert index.paper_by_arxiv("2101.00096") is None  # the over-long line


def test_duplicate_keeps_later_read_at(hostile: Path, corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv("2101.00005")
    assert paper is not None and paper.title == "Newer harvest"
    (problem,) = _problems(corpus.index.report, hostile, "dup_old.json")
    assert str(hostile / "dup_new.json") in problem.reason


def test_duplicate_with_equal_read_at_keeps_first_by_path(hostile: Path, corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv("2101.00006")
    assert paper is not None and paper.title == "First by path"


def test_duplicate_read_at_compares_instants_not_strings(tmp_path: Path) -> None:
    # 10:00+02:00 is 08:00Z: earlier than 09:00Z although it sorts later as text.
    (tmp_path / "a.json").write_bytes(_dumps(plain_record("2101.00005", title="09:00Z", read_at="2025-06-01T09:00:00Z")))
    (tmp_path / "b.json").write_bytes(_dumps(plain_record("2101.00005", title="08:00Z", read_at="2025-06-01T10:00:00+02:00")))
    _, papers, _ = load_papers([tmp_path])
    assert [paper.title for paper in papers] == ["09:00Z"]


def test_duplicate_with_unparseable_read_at_loses_to_a_real_one(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(_dumps(plain_record("2101.00005", title="garbage", read_at="zzzz")))
    (tmp_path / "b.json").write_bytes(_dumps(plain_record("2101.00005", title="real", read_at="2020-01-01T00:00:00Z")))
    _, papers, report = load_papers([tmp_path])
    assert [paper.title for paper in papers] == ["real"]
    assert [(p.code, Path(p.path).name) for p in report.problems] == [("duplicate", "a.json")]


def test_path_traversal_sha_drops_only_that_sample(hostile: Path, corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv("2101.00009")
    assert paper is not None
    assert [row.code_sha256 for row in corpus.index.samples_of(paper)] == ["2" * 16]
    (problem,) = _problems(corpus.index.report, hostile, "bad_sha.json")
    assert "sample 0" in problem.reason and "code_sha256_prefix" in problem.reason


def test_inline_ok_yes_is_not_permission(hostile: Path, corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv("2101.00008")
    assert paper is not None
    assert [(row.code_sha256, row.inline_ok) for row in corpus.index.samples_of(paper)] == [("1" * 16, True)]


def test_dropped_samples_do_not_raise_aggregate_warnings(tmp_path: Path) -> None:
    record = plain_record("2101.00007", samples=[plain_sample("d" * 16, status=3), plain_sample("e" * 16)])
    record["syntology"].update(summary={"ran": 2}, by_repo_kind={"official": {"samples": 2}}, n_pointer_only_for_licence=0)
    (tmp_path / "r.json").write_bytes(_dumps(record))
    _, _, report = load_papers([tmp_path])
    assert [p.code for p in report.problems] == ["invalid_sample"]


def test_five_megabyte_abstract_is_cut_to_the_cap(hostile: Path, corpus: Corpus) -> None:
    assert corpus.index.paper_by_arxiv("2101.00010") is not None
    loaded, (paper,), _ = load_papers([hostile / "huge_abstract.json"], HOSTILE_LIMITS)
    assert loaded.search is not None and loaded.search.abstract(paper.ordinal) == ("word " * 1_000_000)[: HOSTILE_LIMITS.max_string_chars]
    (problem,) = _problems(corpus.index.report, hostile, "huge_abstract.json")
    assert "abstract" in problem.reason and "5,000,000" in problem.reason


def test_long_author_names_are_cut_too(tmp_path: Path) -> None:
    (tmp_path / "r.json").write_bytes(_dumps(plain_record("2101.00001", authors=["Ann", "B" * 500])))
    _, papers, report = load_papers([tmp_path], Limits(max_string_chars=100))
    assert papers[0].details().authors == ["Ann", "B" * 100]
    assert [(p.code, p.severity) for p in report.problems] == [("string_truncated", "warning")]


def test_deep_nesting_is_rejected_quickly(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    (tmp_path / "deep_obj.json").write_bytes(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    started = time.monotonic()
    _, papers, report = load_papers([tmp_path])
    assert time.monotonic() - started < 5
    assert papers == [] and {p.code for p in report.problems} == {"bad_json"}


def test_symlinks_outside_are_not_followed(hostile: Path, corpus: Corpus) -> None:
    assert corpus.index.paper_by_arxiv("2101.00999") is None


def test_symlink_inside_the_directory_is_followed_once(hostile: Path, corpus: Corpus) -> None:
    assert corpus.index.paper_by_arxiv("2101.00016") is not None
    assert _problems(corpus.index.report, hostile, "link_to_good.json") == []
    assert _problems(corpus.index.report, hostile, "good.json") == []


def test_directory_named_like_a_record_file_is_walked(hostile: Path, corpus: Corpus) -> None:
    assert corpus.index.paper_by_arxiv("2101.00011") is not None


def test_a_records_root_that_is_a_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_bytes(_dumps(plain_record("2101.00001")))
    _, papers, report = load_papers([path])
    assert len(papers) == 1 and report.problems == []


def test_missing_records_directory_is_reported(tmp_path: Path) -> None:
    _, papers, report = load_papers([tmp_path / "nope"])
    assert papers == [] and [p.code for p in report.problems] == ["missing_directory"]


def test_unreadable_file_is_reported_not_raised(hostile: Path, corpus: Corpus) -> None:
    (problem,) = _problems(corpus.index.report, hostile, "unreadable.json")
    assert "Permission denied" in problem.reason


def test_fifo_is_not_opened(hostile: Path, corpus: Corpus) -> None:
    # Opening a FIFO for reading blocks until a writer comes: the loader must not try.
    (problem,) = _problems(corpus.index.report, hostile, "fifo.json")
    assert "not a regular file" in problem.reason


def test_unknown_status_is_kept_and_indexed(hostile: Path, corpus: Corpus) -> None:
    assert corpus.index.status_counts["ran_on_gpu"] == 1
    assert "ran_on_gpu" in corpus.index.statuses()


def test_aggregates_that_disagree_lose_to_the_samples(hostile: Path, corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv("2101.00014")
    assert paper is not None
    assert sorted(row.status for row in corpus.index.samples_of(paper)) == ["ran", "unverified"]


def test_aggregates_with_zero_counts_agree(tmp_path: Path) -> None:
    record = plain_record("2101.00014")
    record["syntology"].update(
        summary={"ran": 1, "unverified": 1, "ran_honours": 0},
        by_repo_kind={"official": {"samples": 2, "ran": 1, "repositories": 1}, "listed": {"samples": 0}},
        n_pointer_only_for_licence=1,
    )
    (tmp_path / "r.json").write_bytes(_dumps(record))
    _, _, report = load_papers([tmp_path])
    assert report.problems == []


def test_default_caps_bound_a_huge_jsonl_line_without_reading_it_whole(tmp_path: Path) -> None:
    # A line over the cap is skipped in chunks; the next line still loads.
    limits = Limits(max_line_bytes=1024)
    (tmp_path / "r.jsonl").write_bytes(b'"' + b"x" * 5_000_000 + b'"\n' + _dumps(plain_record("2101.00001")) + b"\n")
    _, papers, report = load_papers([tmp_path], limits)
    assert len(papers) == 1
    assert [(p.code, p.line) for p in report.problems] == [("too_large", 1)]


def test_memory_stays_bounded_by_the_caps(tmp_path: Path) -> None:
    # 20 MB on disk and 100 MB behind a gzip: with 1 MiB caps the load never holds more than a cap's worth (and,
    # its over-long line running past the file cap, stops reading the .jsonl there).
    mib = 1024 * 1024
    chunk = b" " * mib
    with (tmp_path / "long_line.jsonl").open("wb") as out:
        for _ in range(20):
            out.write(chunk)
        out.write(b"\n" + _dumps(plain_record("2101.00002")) + b"\n")
    (tmp_path / "good.jsonl").write_bytes(_dumps(plain_record("2101.00001")) + b"\n")
    with (tmp_path / "big.json").open("wb") as out:
        for _ in range(20):
            out.write(chunk)
    with gzip.open(tmp_path / "bomb.json.gz", "wb") as packed:
        for _ in range(100):
            packed.write(chunk)
    tracemalloc.start()
    try:
        _, papers, report = load_papers([tmp_path], Limits(max_file_bytes=mib, max_line_bytes=mib))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [paper.arxiv_id for paper in papers] == ["2101.00001"]
    assert sorted((Path(p.path).name, p.code) for p in report.problems) == [
        ("big.json", "too_large"),
        ("bomb.json.gz", "too_large"),
        ("long_line.jsonl", "too_large"),
    ]
    assert peak < 6 * mib, f"peak {peak:,} bytes"


def test_caps_have_sensible_defaults() -> None:
    assert Limits() == Limits(max_file_bytes=32 * 1024 * 1024, max_line_bytes=8 * 1024 * 1024, max_string_chars=100_000)


# -- check, corpus_stats and corpus://load-report agree -------------------------------------


def _check(records: Path, *flags: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with unreadable(records / "unreadable.json"):
        code = cli.main(["check", "--records", str(records), *flags])
    return code, capsys.readouterr().out


def _limit_flags(limits: Limits = HOSTILE_LIMITS) -> list[str]:
    return [
        f"--max-file-bytes={limits.max_file_bytes}",
        f"--max-line-bytes={limits.max_line_bytes}",
        f"--max-string-chars={limits.max_string_chars}",
    ]


def test_check_groups_by_reason_and_exits_1_on_rejections(hostile: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(hostile, *_limit_flags(), capsys=capsys)
    assert code == 1
    rejected = sum(1 for h in HOSTILE if h[2] == "error")
    warnings = sum(1 for h in HOSTILE if h[2] == "warning")
    assert f"problems: {rejected} rejected, {warnings} warnings" in out
    assert f"records: {len(GOOD)} indexed" in out or f", {len(GOOD)} indexed" in out
    for severity, code_name in {(h[2], h[3]) for h in HOSTILE}:
        count = sum(1 for h in HOSTILE if (h[2], h[3]) == (severity, code_name))
        assert f"\n{severity} {code_name} ({count}):\n" in out
    assert f"{hostile / 'lines.jsonl'}:2: " in out


def test_check_exits_0_with_warnings_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_bytes(_dumps(plain_record("2101.00013", samples=[plain_sample("3" * 16, status="ran_on_gpu")])))
    code, out = _check(tmp_path, capsys=capsys)
    assert code == 0 and "0 rejected, 1 warnings" in out and "warning unknown_status (1)" in out


def test_check_exits_0_on_the_real_records(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(REAL_RECORDS, capsys=capsys)
    assert code == 0 and "0 rejected, 0 warnings" in out


def test_max_file_bytes_flag_reaches_the_loader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.json").write_bytes(_dumps(plain_record("2101.00001")))
    size = (tmp_path / "r.json").stat().st_size
    under, _ = _check(tmp_path, f"--max-file-bytes={size}", capsys=capsys)
    over, out = _check(tmp_path, f"--max-file-bytes={size - 1}", capsys=capsys)
    assert (under, over) == (0, 1)
    assert "error too_large (1)" in out and f"{size - 1:,}-byte cap" in out


@pytest.mark.parametrize(
    ("flag", "env", "content", "code"),
    [
        ("--max-line-bytes=100", "PAPERCODE_MAX_LINE_BYTES", "jsonl", "too_large"),
        ("--max-string-chars=5", "PAPERCODE_MAX_STRING_CHARS", "json", "string_truncated"),
        ("--max-file-bytes=100", "PAPERCODE_MAX_FILE_BYTES", "json", "too_large"),
    ],
)
def test_each_cap_works_from_flag_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *, flag: str, env: str, content: str, code: str
) -> None:
    (tmp_path / f"r.{content}").write_bytes(_dumps(plain_record("2101.00001")) + b"\n")
    assert f" {code} (" in _check(tmp_path, flag, capsys=capsys)[1]
    monkeypatch.setenv(env, flag.split("=")[1])
    assert f" {code} (" in _check(tmp_path, capsys=capsys)[1]


def test_check_stats_and_load_report_show_the_same_counts(hostile: Path, corpus: Corpus, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check(hostile, *_limit_flags(), capsys=capsys)
    assert code == 1
    report = corpus.index.report
    stats = shown(overview.corpus_stats(corpus))  # what corpus_stats answers (test_mcp_roundtrip.py: the wire is this)
    load = overview.load_report(corpus)  # what corpus://load-report holds
    summary = load["summary"]
    for key in ("files_seen", "files_read", "records_read", "records_indexed", "rejected", "warnings", "by_reason"):
        assert stats["load"][key] == summary[key], key
    assert summary["rejected"] == report.rejected and summary["warnings"] == report.warnings
    assert f"problems: {summary['rejected']} rejected, {summary['warnings']} warnings" in out
    assert f"{summary['records_read']} read, {summary['records_indexed']} indexed" in out
    for reason, count in summary["by_reason"].items():
        assert sum(1 for line in out.splitlines() if line.endswith(f" {reason} ({count}):")) == 1
    assert len(load["problems"]) == len(report.problems) and load["more_problems"] == 0
    jsonl = [p for p in load["problems"] if p["path"].endswith("lines.jsonl")]
    assert sorted(p["line"] for p in jsonl) == [2, 4, 6, 7, 8, 9]
    assert all(set(p) >= {"severity", "code", "path", "reason"} for p in load["problems"])


# -- the real records answer the same with or without the hostile set ----------------------

REAL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_harvested_code_for_paper", {"arxiv_id": "1902.04094"}),
    ("get_harvested_code_for_paper", {"arxiv_id": "2406.04823", "limit": 100}),
    ("get_harvested_code_for_paper", {"arxiv_id": "2406.04823", "limit": 5}),
    ("get_paper", {"paper": "1902.04094"}),
    ("get_paper", {"paper": "2406.04823"}),
    ("list_samples_by_status", {"status": "ran_honours,ran,ran_draft_wrong,ran_violates", "language": "python"}),
    ("list_samples_by_status", {"status": "unverified", "language": "python", "limit": 100}),
    ("list_samples_by_status", {"status": "ran", "language": "python", "limit": 3}),
    ("find_papers_for_repo", {"repo": "ltgoslo/bert-in-context"}),
    ("get_code", {"code_sha256": "2a890c3f"}),
]


def _without_cursors(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_cursors(item) for key, item in value.items() if key != "next_cursor"}
    if isinstance(value, list):
        return [_without_cursors(item) for item in value]
    return value


async def _answers(corpus: Corpus) -> list[Any]:
    results = []
    for tool, arguments in REAL_CALLS:
        got = await code_answer(corpus, **arguments) if tool == "get_code" else answer(corpus, tool, **arguments)
        results.append(_without_cursors(got))
    return results


@pytest.mark.anyio
async def test_real_records_answer_the_same_beside_the_hostile_set(tmp_path: Path) -> None:
    hostile = write_hostile_set(tmp_path)
    for real in REAL_RECORDS.glob("*.txt"):
        shutil.copy(real, hostile / real.name)
    alone = await _answers(Corpus.load([REAL_RECORDS], HOSTILE_LIMITS))
    together_corpus = _load(hostile)
    assert together_corpus.index.paper_by_arxiv("1902.04094") is not None
    together = await _answers(together_corpus)
    assert together == alone
