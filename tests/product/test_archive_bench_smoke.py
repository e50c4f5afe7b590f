"""The archive generator and the archive benchmarks' harnesses on a tiny archive: the real shape, both forms holding the
same rows; `python -m benchmarks archive` giving every step's numbers (or saying the build is not there), and
`archive-serve` starting real servers on the archive it built, reloading them, and giving every number. No timing
thresholds: what is asserted is what the harness saw and reports."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq  # the test extra installs it: a missing pyarrow fails here, never skips
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import archive_data  # noqa: E402
from benchmarks.archive_bench import (  # noqa: E402
    format_archive,
    json_floor,
    measure_archive,
    progress_of,
    ratios,
    resolve_build,
    targets,
)
from benchmarks.archive_data import LINKS_DUMP, LINKS_PARQUET, PAPERS_DUMP, PAPERS_PARQUET, write_archive  # noqa: E402
from benchmarks.archive_serve_shards import records_parse_floor  # noqa: E402
from benchmarks.generate import write_corpus  # noqa: E402

# The columns of the real archive, as the Hugging Face mirror's tables have them (written out here, not imported, so that
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


FAKE_BUILD = """
import gzip
import json
from pathlib import Path

import orjson


def build_archive(sources, out, data_date=None):
    \"\"\"Stands in for a build of record shards (papercode before issue #22): one record per source file, a manifest.\"\"\"
    lines = b"".join(orjson.dumps({"source": Path(s).name, "snapshot": data_date}) + b"\\n" for s in sources)
    (Path(out) / "records").mkdir()
    (Path(out) / "records" / "bundle_000.jsonl.gz").write_bytes(gzip.compress(lines))
    manifest = {"format_version": 1, "counts": {"papers": len(sources)}, "shards": [{"name": "bundle_000.jsonl.gz"}]}
    (Path(out) / "archive.json").write_text(json.dumps(manifest))
    return len(sources)
"""


def test_harness_measures_the_floors_and_the_build_of_the_serving_form(archive: Path) -> None:
    result = measure_archive(archive, forms=["parquet"])
    entry = result["forms"]["parquet"]
    floor, build = entry["floor"], entry["build"]
    assert sum(floor["rows"].values()) == PAPERS + LINKS and set(floor["rows"]) == set(PAPERS_PARQUET) | {LINKS_PARQUET}
    assert floor["floor_s"] > 0 and floor["cpu_s"] > 0
    for step in (floor, build):  # memory polled over the step's processes, beside the kernel's own peak
        assert step["tree_rss"]["peak_bytes"] >= step["baseline_rss_bytes"] > 0 and step["tree_rss"]["samples"] > 0
    assert build["available"] and build["build_s"] > 0 and build["cpu_s"] > 0 and build["returned"] == "BuildSummary"
    facts = build["archive"]
    assert facts["format_version"] == 2 and facts["papers"] >= PAPERS and facts["search_segments"] >= 1
    assert len(facts["builds"]) == 1 and facts["build_id"] in facts["builds"]
    assert facts["disk"]["files"] > 0 and facts["disk"]["disk_bytes"] >= facts["disk"]["bytes"] > 0
    assert result["parquet_bytes"] == entry["input_bytes"]
    assert ratios(entry, result["parquet_bytes"])["disk_vs_parquet"] == facts["disk"]["disk_bytes"] / result["parquet_bytes"]
    # the build drew its progress on the terminal it was given, the index's stage included
    progress = build["progress"]
    assert progress["draws"] > 0 and any("index" in stage for stage in progress["stages"]), progress
    assert [name for name, _, _ in targets(result)] == [
        "build from parquet <= 5x the parquet floor (wall)",
        "build from parquet: peak RSS, every process summed <= 2 GiB",
        "build from parquet: archive directory <= 3x the parquet files (without the cache)",
    ]
    report = format_archive(result)
    assert "parquet floor" in report and "archive directory (temporary, removed)" in report and "progress on a terminal" in report
    assert str(archive) not in report and result["data"] == ".../" + "/".join(archive.parts[-2:])


def test_harness_measures_a_build_of_record_shards(archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A papercode from before issue #22 (its build writes record shards) is measured too: the "before" of the table."""
    (tmp_path / "fake_archive_build.py").write_text(FAKE_BUILD)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    result = measure_archive(
        archive, forms=["json.gz"], build="fake_archive_build:build_archive", data_date="2025-07-28", build_out=tmp_path / "out"
    )
    build = result["forms"]["json.gz"]["build"]
    assert build["available"] and build["returned"] == "int"
    assert build["archive"]["format_version"] == 1 and build["archive"]["papers"] == 2 and build["archive"]["builds"] == []
    assert (tmp_path / "out" / "json-gz" / "records" / "bundle_000.jsonl.gz").is_file()  # kept where --build-out says
    assert build["progress"] == {"draws": 0, "stages": {}, "longest_quiet_s": 0.0, "longest_quiet_after": None, "last": None}
    # a build from the dumps is held to the parquet files of the same archive too; without them, to nothing
    disk = build["archive"]["disk"]["disk_bytes"]
    assert ratios(result["forms"]["json.gz"], result["parquet_bytes"])["disk_vs_parquet"] == disk / result["parquet_bytes"]
    assert "disk_vs_parquet" not in ratios(result["forms"]["json.gz"], None)
    assert "json.gz floor" in format_archive(result) and "nothing drawn" in format_archive(result)


def test_harness_keeps_out_of_a_directory_that_is_not_an_archive(archive: Path, tmp_path: Path) -> None:
    (tmp_path / "parquet").mkdir()
    (tmp_path / "parquet" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not an archive directory"):
        measure_archive(archive, forms=["parquet"], build_out=tmp_path)
    assert (tmp_path / "parquet" / "notes.txt").read_text() == "mine"


def test_harness_says_when_the_build_is_missing(archive: Path) -> None:
    result = measure_archive(archive, forms=["json.gz"], build="papercode.no_such_package.build:build_archive")
    build = result["forms"]["json.gz"]["build"]
    assert build["available"] is False and "papercode.no_such_package" in build["reason"] and build["out"] == "(temporary, removed)"
    assert ratios(result["forms"]["json.gz"], None) == {} and targets(result) == []
    assert "not available" in format_archive(result) and "x the json.gz floor" not in format_archive(result)


def test_progress_is_read_from_what_the_terminal_showed() -> None:
    chunks = [
        (0.5, b"\rbuilding archive:  10% reading links.parquet, 0 papers, 10 links, ETA 5s   "),
        (
            1.0,
            b"\rbuilding archive:  50% train-00000.parquet, 20 papers, 10 links, ETA 2s   \rbuilding archive:  60% train-00000.parquet, 30",
        ),
        (4.0, b" papers, 10 links, ETA 1s   \r\n"),
        (4.5, b"\rbuilding archive: indexing: the last papers (4s so far)          "),
        (5.0, b"a warning on stderr\r\n"),
    ]
    progress = progress_of(chunks, ended=9.5)
    assert progress["draws"] == 4
    assert progress["stages"] == {
        "reading links.parquet": {"first_s": 0.5, "draws": 1},
        "train-00000.parquet": {"first_s": 1.0, "draws": 2},
        "indexing: the last papers": {"first_s": 4.5, "draws": 1},
    }
    assert progress["longest_quiet_s"] == 5.0 and progress["longest_quiet_after"] == "indexing: the last papers"


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


def test_the_process_tree_is_polled_children_included() -> None:
    """A grandchild's anonymous memory counts: the harness measures every process of a server or a build."""
    from benchmarks.proctree import TreeSampler, tree, tree_bytes

    grandchild = "import sys; b = bytearray(64 << 20); b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); sys.stdin.read()"
    code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {grandchild!r}])"
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        sampler = TreeSampler("RssAnon", proc.pid).start()
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        assert len(tree(proc.pid)) == 2
        anon, processes = tree_bytes(proc.pid, "RssAnon")
        assert anon >= 64 << 20 and processes == 2
        assert sampler.mark("ready") >= 64 << 20
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()
    summary = sampler.stop()
    assert summary["peak_bytes"] >= 64 << 20 and summary["processes"] == 2 and summary["marks"]["ready"] >= 64 << 20


@pytest.mark.parametrize("layout", ["files", "jsonl", "jsonl.gz"])
def test_records_floor_counts_every_record(tmp_path: Path, layout: str) -> None:
    corpus = write_corpus(tmp_path / layout, 30, seed=1, layout=layout)
    floor = records_parse_floor([corpus], repeat=1)
    assert floor["records"] == 30 and floor["parsed_bytes"] > 0 and floor["raw_bytes"] > 0
    assert (floor["gunzip_s"] > 0) is (layout == "jsonl.gz")


@pytest.fixture(scope="module")
def built(archive: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from papercode.archive.build import build_archive

    out = tmp_path_factory.mktemp("built") / "archive"
    build_archive([archive / name for name in (*PAPERS_PARQUET, LINKS_PARQUET)], out)
    return out


def test_archive_serve_starts_reloads_and_measures_real_servers(built: Path, archive: Path) -> None:
    """`python -m benchmarks archive-serve --archive-dir` on the tiny archive: every step gives its numbers."""
    from benchmarks.archive_serve import format_result, measure
    from benchmarks.archive_serve import targets as serve_targets

    result = measure(built, calls=5, stdio_repeat=1, searches=5, watch_interval=0.1)
    inprocess, summary = result["inprocess"], result["summary"]
    assert inprocess["archive_papers"] >= PAPERS and inprocess["record_papers"] == 2
    assert inprocess["papers"] == inprocess["archive_papers"] + inprocess["record_papers"]
    assert set(inprocess["direct"]) == {
        "search_papers",
        "get_paper",
        "get_harvested_code_for_paper",
        "find_papers_for_repo",
        "corpus_stats",
    }
    assert all(row["n"] == 5 for row in inprocess["direct"].values())
    probe = result["probe"]
    assert probe["arxiv_id"] and probe["title"] and probe["query"]
    assert len(result["empty"]) == len(result["starts"]) == 2
    for row in result["starts"]:  # asked in order: a keyed tool, get_paper, then search, each answered
        assert 0 < row["initialize_s"] <= row["keyed_s"] <= row["paper_s"] <= row["search_s"] <= row["snapshot_s"]
        assert 0 < row["keyed_cpu_s"] <= row["search_cpu_s"]  # the server's own CPU, read from /proc as it answered
        assert row["stdio_searches"]["n"] == 5 and row["stdio_searches"]["errors"] == 0
        assert row["anon_peak_bytes"] >= row["anon_start_peak_bytes"] > 0 and row["anon"]["processes"] >= 1
    assert all(0 < row["initialize_s"] <= row["stats_s"] and row["stats_cpu_s"] > 0 for row in result["empty"])
    assert [start["start"] for start in summary["starts"]] == ["first", "later"]
    # the first start wrote the records' snapshot into the cache directory; the archive directory is left as it was
    assert any(name.endswith(".snapshot") for name in result["cache_entries"]) and summary["archive_unchanged"]
    assert summary["disk_bytes"] == result["archive"]["disk"]["disk_bytes"] + result["cache"]["disk_bytes"]
    assert result["parquet_bytes"] == sum((archive / name).stat().st_size for name in (*PAPERS_PARQUET, LINKS_PARQUET))
    assert summary["tmp_left_files"] == 0
    pair = result["two_servers"]  # two servers at once, each measured while both were up
    assert len(pair["servers"]) == 2 and all(row["RssAnon"] > 0 and row["Pss_File"] > 0 for row in pair["servers"])
    assert pair["sum_RssAnon"] == sum(row["RssAnon"] for row in pair["servers"])
    for how in ("watch", "sighup"):  # a record came and went; each change was served, and the archive's row came back
        reload = result["reload"][how]
        assert reload["added_s"] is not None and reload["removed_s"] is not None and reload["archive_row_back"] is True
    assert len(serve_targets(result)) == len(result["targets"]) == 16
    report = format_result(result)
    assert (
        "first start after the build (empty cache)" in report
        and "two servers on the archive at once" in report
        and "reload (SIGHUP)" in report
        and str(built) not in report
    )


def test_archive_serve_still_measures_record_shards(tmp_path: Path) -> None:
    """`archive-serve --records DIR` (issue #15's measure of a records directory): served as plain records."""
    from benchmarks.archive_serve_shards import format_result, measure

    records = write_corpus(tmp_path / "records", 40, seed=1, layout="jsonl")
    result = measure(records, calls=5, repeat=1, stdio_repeat=1, phases=True, log=lambda line: None)
    assert result["cold"][0]["papers"] == 40 and result["warm"][0]["warm_papers"] == 40
    assert result["stdio"]["warm_search_s"] > 0 and set(result["summary"]["direct"]) >= {"search_papers", "get_paper"}
    assert "keyed ready" in format_result(result)


def test_the_benchmarks_measure_this_checkouts_papercode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not the papercode an editable install of the virtualenv may point at (another checkout): every process the
    benchmarks start imports this checkout's `server/`, and says which commit that is."""
    from benchmarks import load
    from benchmarks.harness import papercode_source

    monkeypatch.delenv("PYTHONPATH", raising=False)
    source = papercode_source()
    assert source["path"] == "server" and source["commit"] and len(source["commit"]) == 40
    records = write_corpus(tmp_path / "records", 5, seed=1, layout="jsonl")
    server, _ = load.start_server(records, tmp_path / "cache")
    try:
        environ = Path(f"/proc/{server.pid}/environ").read_bytes().split(b"\0")
        paths = next(entry for entry in environ if entry.startswith(b"PYTHONPATH=")).removeprefix(b"PYTHONPATH=").decode().split(os.pathsep)
        assert paths[0] == str(ROOT / "server")
    finally:
        server.terminate()
        server.wait(timeout=60)
        assert server.stderr is not None
        server.stderr.close()
