"""The archive generator and the archive benchmark's harness on a tiny archive: the real shape, both forms holding the
same rows, and every step giving its numbers (or saying the build is not there). No timing thresholds."""

from __future__ import annotations

import datetime as dt
import gzip
import re
import sys
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq  # the test extra installs it: a missing pyarrow fails here, never skips
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import archive_data  # noqa: E402
from benchmarks.archive_bench import (  # noqa: E402
    format_archive,
    json_floor,
    measure_archive,
    ratios,
    records_parse_floor,
    resolve_build,
)
from benchmarks.archive_data import LINKS_DUMP, LINKS_PARQUET, PAPERS_DUMP, PAPERS_PARQUET, write_archive  # noqa: E402
from benchmarks.generate import write_corpus  # noqa: E402

# The columns of the real archive, as /work/shared/notes/archive.md lists them (written out here, not imported, so that
# the generator cannot drift from them unnoticed).
PAPER_COLUMNS = {
    "paper_url",
    "arxiv_id",
    "nips_id",
    "openreview_id",
    "title",
    "abstract",
    "short_abstract",
    "url_abs",
    "url_pdf",
    "proceeding",
    "authors",
    "tasks",
    "date",
    "conference_url_abs",
    "conference_url_pdf",
    "conference",
    "reproduces_paper",
    "methods",
}
METHOD_KEYS = {"name", "full_name", "description", "introduced_year", "source_url", "source_title", "code_snippet_url", "main_collection"}
COLLECTION_KEYS = {"name", "description", "parent", "area"}
LINK_COLUMNS = {
    "paper_url",
    "paper_title",
    "paper_arxiv_id",
    "paper_url_abs",
    "paper_url_pdf",
    "repo_url",
    "is_official",
    "mentioned_in_paper",
    "mentioned_in_github",
    "framework",
}
PAPERS, LINKS = 200, 100

# The archive benchmark's generator and harness, not papercode: with the other process-level tests, out of the default run.
pytestmark = pytest.mark.process


def _dump(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = orjson.loads(gzip.decompress(path.read_bytes()))
    return rows


def _parquet(directory: Path, names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [row for name in names for row in pq.read_table(directory / name).to_pylist()]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("archive")
    write_archive(out, PAPERS, LINKS, seed=1)
    return out


def test_both_forms_hold_the_same_rows_in_the_real_layout(archive: Path) -> None:
    assert [pq.read_metadata(archive / name).num_rows for name in PAPERS_PARQUET] == [50, 50, 50, 50]
    papers, links = _dump(archive / PAPERS_DUMP), _dump(archive / LINKS_DUMP)
    assert len(papers) == PAPERS and len(links) == LINKS
    assert _parquet(archive, PAPERS_PARQUET) == papers
    assert _parquet(archive, (LINKS_PARQUET,)) == links
    assert set(pq.read_schema(archive / PAPERS_PARQUET[0]).names) == PAPER_COLUMNS
    assert set(pq.read_schema(archive / LINKS_PARQUET).names) == LINK_COLUMNS


def test_rows_have_the_archive_shape_and_proportions(archive: Path) -> None:
    papers, links = _dump(archive / PAPERS_DUMP), _dump(archive / LINKS_DUMP)
    assert all(set(row) == PAPER_COLUMNS for row in papers)
    assert all(set(row) == LINK_COLUMNS for row in links)
    methods = [m for row in papers for m in row["methods"]]
    assert methods and all(set(m) == METHOD_KEYS for m in methods)
    assert all(set(m["main_collection"]) == COLLECTION_KEYS for m in methods if m["main_collection"] is not None)
    assert len({m["name"] for m in methods}) < len(methods)  # descriptions are repeated from paper to paper

    urls = [row["paper_url"] for row in papers]
    assert len(set(urls)) == PAPERS and all(u.startswith("https://paperswithcode.com/paper/") for u in urls)
    no_arxiv = sum(row["arxiv_id"] is None for row in papers) / PAPERS
    assert 0.06 <= no_arxiv <= 0.2  # about one in eight
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", row["date"]) for row in papers if row["date"] is not None)
    assert all(isinstance(a, str) for row in papers for a in row["authors"]) and max(len(row["authors"]) for row in papers) > 1
    assert all(isinstance(t, str) for row in papers for t in row["tasks"])

    by_url = {row["paper_url"]: row for row in papers}
    linked = [link for link in links if link["paper_url"] in by_url]
    orphans = len(links) - len(linked)
    assert 1 <= orphans <= 0.1 * LINKS  # a small share of links name papers the table lacks
    with_code = {link["paper_url"] for link in linked}
    assert 0.2 <= len(with_code) / PAPERS <= 0.45  # about a third of the papers have code
    assert max(sum(link["paper_url"] == url for link in linked) for url in with_code) > 1
    for link in linked:
        paper = by_url[link["paper_url"]]
        assert (link["paper_title"], link["paper_arxiv_id"], link["paper_url_abs"], link["paper_url_pdf"]) == (
            paper["title"],
            paper["arxiv_id"],
            paper["url_abs"],
            paper["url_pdf"],
        )
    assert all(isinstance(link[flag], bool) for link in links for flag in ("is_official", "mentioned_in_paper", "mentioned_in_github"))
    assert all(
        re.match(r"https://(github\.com|gitlab\.com|bitbucket\.org|huggingface\.co)/[^/]+/[^/]+$", link["repo_url"]) for link in links
    )


def test_generation_is_deterministic(archive: Path, tmp_path: Path) -> None:
    archive_data._text_pools.cache_clear()  # the text pools too are built again, not taken from the fixture's run
    write_archive(tmp_path / "same", PAPERS, LINKS, seed=1, forms=["json.gz"])
    write_archive(tmp_path / "other", PAPERS, LINKS, seed=2, forms=["json.gz"])
    for name in (PAPERS_DUMP, LINKS_DUMP):
        assert (tmp_path / "same" / name).read_bytes() == (archive / name).read_bytes()
        assert _dump(tmp_path / "other" / name) != _dump(archive / name)
    assert not (tmp_path / "same" / PAPERS_PARQUET[0]).exists()  # only the forms asked for


@pytest.mark.parametrize(("date_type", "arrow_type"), [("date", "date32[day]"), ("timestamp", "timestamp[ms]"), ("float-ms", "double")])
def test_parquet_dates_in_the_other_forms_copies_have(archive: Path, tmp_path: Path, date_type: str, arrow_type: str) -> None:
    write_archive(tmp_path, 40, 10, seed=1, forms=["parquet"], date_type=date_type)
    table = pq.read_table(tmp_path / PAPERS_PARQUET[0])
    assert str(table.schema.field("date").type) == arrow_type
    if date_type == "float-ms":
        dates = [None if ms is None else dt.datetime.fromtimestamp(ms / 1000, dt.UTC) for ms in table.column("date").to_pylist()]
    else:
        dates = table.column("date").to_pylist()
    expected = [row["date"] for row in _dump(archive / PAPERS_DUMP)[:10]]  # the same seed: the same first rows
    assert [None if d is None else d.strftime("%Y-%m-%d") for d in dates] == expected


FAKE_BUILD = '''
import gzip
from pathlib import Path

import orjson


def build_archive(sources, out, snapshot=None):
    """Stands in for papercode.archive.build: one record per source file, in a gzipped bundle."""
    lines = b"".join(orjson.dumps({"source": Path(s).name, "snapshot": snapshot}) + b"\\n" for s in sources)
    (Path(out) / "bundle_000.jsonl.gz").write_bytes(gzip.compress(lines))
    return len(sources)
'''


def test_harness_measures_floors_and_a_build(archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fake_archive_build.py").write_text(FAKE_BUILD)
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{ROOT / 'server'}")
    result = measure_archive(archive, build="fake_archive_build:build_archive", snapshot="2025-07-28")
    assert set(result["forms"]) == {"parquet", "json.gz"}
    for form, entry in result["forms"].items():
        floor = entry["floor"]
        assert sum(floor["rows"].values()) == PAPERS + LINKS
        assert floor["floor_s"] > 0 and floor["cpu_s"] > 0 and floor["peak_rss_bytes"] >= floor["baseline_rss_bytes"] > 0
        build = entry["build"]
        assert build["available"] and build["answer"] == str(len(entry["files"]))
        assert build["records"]["records"] == len(entry["files"]), form
        assert all(value > 0 for value in ratios(entry).values()) and len(ratios(entry)) == 3
    report = format_archive(result)
    assert "parquet floor" in report and "json.gz floor" in report and report.count("records floor:") == 2


def test_harness_says_when_the_build_is_missing(archive: Path) -> None:
    result = measure_archive(archive, forms=["json.gz"], build="papercode.no_such_package.build:build_archive")
    build = result["forms"]["json.gz"]["build"]
    assert build == {"available": False, "reason": build["reason"], "out": "(temporary, removed)"}
    assert "papercode.no_such_package" in build["reason"]
    assert ratios(result["forms"]["json.gz"]) == {}
    assert "not available" in format_archive(result) and "x the json.gz floor" not in format_archive(result)


def test_resolve_build_raises_a_broken_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_archive_build.py").write_text("import no_such_dependency_of_the_build\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError):  # a build that exists but cannot import is a bug, not "not available"
        resolve_build("broken_archive_build:build_archive")
    assert isinstance(resolve_build("papercode.archive_not_written_yet:build_archive"), str)


def test_json_floor_parses_a_dump_too_big_for_orjson_with_msgspec(archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_buffer(data: bytes) -> Any:
        if len(data) > 100_000:  # the papers dump, not the links
            raise orjson.JSONDecodeError("Not enough memory to allocate buffer for parsing", "", 0)
        return real_loads(data)

    real_loads = orjson.loads
    monkeypatch.setattr(orjson, "loads", no_buffer)
    floor = json_floor([archive / PAPERS_DUMP, archive / LINKS_DUMP])
    assert list(floor["rows"].values()) == [PAPERS, LINKS]
    assert floor["parsers"][str(archive / LINKS_DUMP)] == "orjson.loads"
    assert floor["parsers"][str(archive / PAPERS_DUMP)].startswith("msgspec.json.decode (orjson.loads failed: Not enough memory")


@pytest.mark.parametrize("layout", ["files", "jsonl", "jsonl.gz"])
def test_records_floor_counts_every_record(tmp_path: Path, layout: str) -> None:
    corpus = write_corpus(tmp_path / layout, 30, seed=1, layout=layout)
    floor = records_parse_floor([corpus], repeat=1)
    assert floor["records"] == 30 and floor["parsed_bytes"] > 0 and floor["raw_bytes"] > 0
    assert (floor["gunzip_s"] > 0) is (layout == "jsonl.gz")


def test_archive_serve_measures_a_cold_and_a_warm_start(archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m benchmarks archive-serve` on the tiny archive's papers as records: every step gives its numbers.

    The benchmark serves them as plain records: its `--archive` mode measured the archive as record shards built into
    the index at every start, and a papercode that opens the archive's serving form instead has no such mode (the
    benchmark tells it by `build_stages`, which no longer takes the archive)."""
    from benchmarks.archive_serve import format_result, measure, targets

    from archive_tables import build_recording

    monkeypatch.setenv("PYTHONPATH", str(ROOT / "server"))
    _, written = build_recording([archive / name for name in (*PAPERS_PARQUET, LINKS_PARQUET)], tmp_path / "archive", "2025-07-28")
    records = tmp_path / "records"
    records.mkdir()
    (records / "papers.jsonl").write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in written))
    result = measure(records, plain=False, calls=5, repeat=1, stdio_repeat=1, phases=True, log=lambda line: None)
    summary = result["summary"]
    assert result["plain"] and not result["archive_supported"] and result["cold"][0]["papers"] >= PAPERS
    assert 0 < summary["keyed_s"] <= summary["search_s"] <= summary["snapshot_s"] and summary["floor_s"] > 0
    assert result["warm"][0]["warm_papers"] == result["cold"][0]["papers"]
    assert result["stdio"]["warm_search_s"] > 0 and result["stdio"]["empty_s"] > 0
    assert set(summary["direct"]) >= {"search_papers", "get_paper"} and len(targets(result)) >= 8
    assert "keyed ready" in format_result(result)
