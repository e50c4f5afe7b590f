"""`papercode archive build`: the Papers-with-Code archive's tables, in every form, become the archive's serving form.

Every archive here is written by the test (tests/support/archive_tables.py): JSON dumps (plain and gzipped), the Hub
mirror's parquet, and pandas-style parquet copies. The ground truth is the two bundled records: turned back into
archive rows and built, their archive parts must come back exactly as a server reads them (`MappedArchive`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from papercode.archive import build as build_module
from papercode.archive import build_archive, builds, default_archive_dir, serving
from papercode.archive.build_progress import ArchiveBuildProgress
from papercode.archive.rows import LICENCE, LICENCE_URL, Vocabulary, day, flag, name_slug, repo_url
from papercode.cli import main as cli
from papercode.index import mapped
from papercode.index.mapped_archive import BUILDS, CURRENT, FORMAT, FORMAT_VERSION, MANIFEST, current_build, open_archive
from papercode.settings import settings_for
from tests.support.archive_tables import (
    NO_PROCESS,
    Row,
    assert_bundled_papers_back,
    bundled_rows,
    current_manifest,
    link_row,
    method_row,
    paper_row,
    served_papers,
    write_json,
    write_parquet,
)
from tests.support.build_phases import PHASE, without_phases

DATA_DATE = "2025-07-28"
INSTALL = "pip install 'papercode[archive]'"
FORMS = ("json.gz", "json", "parquet", "parquet-date32", "pandas-timestamp", "pandas-float-ms", "mixed")

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Iterator[Run]:
    """`papercode ARGS` in-process: (exit code, stdout, stderr less a build's phase lines)."""

    def papercode(*args: str | Path) -> tuple[int, str, str]:
        code = cli.main([str(arg) for arg in args])
        out, err = capsys.readouterr()
        return code, out, without_phases(err)

    yield papercode


def write_sources(directory: Path, form: str, papers: list[Row], links: list[Row]) -> list[Path]:
    """The two tables in one form; the parquet forms in the Hub mirror's layout (`<dataset>/data/train-*.parquet`)."""
    if form in ("json.gz", "json"):
        suffix = ".json.gz" if form == "json.gz" else ".json"
        return [
            write_json(directory / f"papers-with-abstracts{suffix}", papers),
            write_json(directory / f"links-between-papers-and-code{suffix}", links),
        ]
    if form == "mixed":
        return [
            write_parquet(directory / "papers-with-abstracts/data/train-00000-of-00001.parquet", papers),
            write_json(directory / "links-between-papers-and-code.json.gz", links),
        ]
    pandas = form.startswith("pandas")
    date_form: Any = {"parquet": "string", "parquet-date32": "date", "pandas-timestamp": "timestamp", "pandas-float-ms": "float_ms"}[form]
    write_parquet(directory / "papers-with-abstracts/data/train-00000-of-00001.parquet", papers, pandas_style=pandas, date_form=date_form)
    write_parquet(directory / "links-between-paper-and-code/data/train-00000-of-00001.parquet", links, pandas_style=pandas)
    return [directory]


def files_of(directory: Path) -> dict[str, bytes]:
    """Every file and link under `directory` (relative path -> bytes, or where a link points): to show an archive was
    left exactly as it was."""
    return {
        str(path.relative_to(directory)): (b"-> " + os.readlink(path).encode()) if path.is_symlink() else path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_symlink() or path.is_file()
    }


# -- ground truth --------------------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_the_bundled_papers_come_back_exactly_from_their_archive_rows(tmp_path: Path, form: str) -> None:
    papers, links = bundled_rows()  # links shuffled: the build restores the records' order
    sources = write_sources(tmp_path / "src", form, papers, links)
    summary = build_archive(sources, tmp_path / "archive", data_date=DATA_DATE)
    assert_bundled_papers_back(served_papers(tmp_path / "archive"))
    assert (summary.papers, summary.papers_from_links, summary.code_links) == (2, 0, 14)
    assert summary.rejected.total() == 0 and summary.warnings.total() == 0


def test_a_row_s_missing_fields_are_served_missing_never_empty(tmp_path: Path) -> None:
    """What the compact records' test held (no null, no empty list, no empty string written) holds for the serving
    form: a value the row lacks or leaves empty is served as none."""
    papers, links = bundled_rows()
    papers.append(paper_row("no-extras", "Bare", authors=[], abstract=None, date=None, tasks=None, methods=None, url_abs=""))
    links.append(link_row("linked-only", "https://github.com/a/b", "Linked only", is_official=None, framework=None))
    build_archive(write_sources(tmp_path / "src", "parquet", papers, links), tmp_path / "archive", data_date=DATA_DATE)
    served = served_papers(tmp_path / "archive")
    assert served["no-extras"] == served_form_of("Bare")
    assert served["linked-only"] == {**served_form_of("Linked only"), "code_links": [("https://github.com/a/b", False, False, None)]}
    assert_bundled_papers_back(served)


def served_form_of(title: str) -> Row:
    """A paper the archive knows nothing of but its title, as it is served."""
    return {
        "arxiv_id": None,
        "title": title,
        "date": None,
        "year": None,
        "url_abs": None,
        "snapshot": DATA_DATE,
        "proceeding": None,
        "authors": [],
        "url_pdf": None,
        "tasks": [],
        "methods": [],
        "code_links": [],
        "abstract": None,
    }


def test_every_paper_of_a_build_is_served_by_its_keys_and_the_manifest_counts_them(tmp_path: Path) -> None:
    """The serving form opens as a server opens it, every paper found by its arXiv id and its slug, with nothing
    the build left to fix (what the shards loading without a problem through the records' loader proved)."""
    papers, links = bundled_rows()
    papers += [paper_row(f"paper-{i}", f"Paper {i}", arxiv_id=f"2101.{i:05d}", tasks=["Language Modelling"]) for i in range(300)]
    papers.append(paper_row("bad-id", "Kept, served by slug", arxiv_id="not-an-arxiv-id"))
    links += [link_row("linked-only", "https://gitlab.com/group/sub/project", "Named only by a link", paper_arxiv_id="2202.00001")]
    summary = build_archive(write_sources(tmp_path / "src", "json.gz", papers, links), tmp_path / "archive", data_date=DATA_DATE)
    assert summary.papers == 304 and (summary.papers_from_abstracts, summary.papers_from_links) == (303, 1)
    mapped = open_archive(tmp_path / "archive")
    try:
        assert len(mapped) == len(mapped.papers) == 304 and mapped.build_id == summary.build_id
        for a, row in enumerate(mapped.papers):
            assert mapped.by_slug.get(row.slug) == a
            assert row.arxiv_id is None or mapped.by_arxiv.get(row.arxiv_id) == a
        assert mapped.papers[mapped.by_slug.get("bad-id")].arxiv_id is None and mapped.by_arxiv.get("not-an-arxiv-id") is None
        assert mapped.papers[mapped.by_slug.get("linked-only")].arxiv_id == "2202.00001"
        assert list(mapped.papers_for_repo("gitlab.com/group/sub/project") or ()) == [mapped.by_slug.get("linked-only")]
        assert len(mapped.arxiv_ids_with_prefix("2101.", 1000)) == 300
    finally:
        mapped.close()
    manifest = current_manifest(tmp_path / "archive")
    assert manifest["counts"]["papers"] == 304 and manifest["counts"]["papers_from_links"] == 1


# -- what a row becomes --------------------------------------------------------------------


def crafted_rows() -> tuple[list[Row], list[Row]]:
    """One row for each way a row can be rejected or warned about, and the ones that must be kept."""
    papers = [
        paper_row(
            "good-one",
            "Good",
            arxiv_id="2001.00001",
            url_pdf="https://arxiv.org/pdf/2001.00001v1.pdf",
            tasks=["Image Classification", "Image Classification", "3D Object Detection"],
            methods=[method_row("ResNet"), method_row("1x1 Convolution"), method_row("ResNet")],
        ),
        paper_row("no-title", None),
        paper_row("blank-title", "   "),
        {**paper_row("x", "No paper url"), "paper_url": None},
        paper_row("good-one", "The same paper_url again"),
        paper_row("same-arxiv", "The same arXiv id under another paper_url", arxiv_id="2001.00001"),
        paper_row("bad-arxiv", "A malformed arXiv id", arxiv_id="not-an-id"),
        paper_row("bad-date", "A date that is not one", date="sometime"),
        paper_row("old-style", "Old-style arXiv id", arxiv_id="hep-th/9901001"),
    ]
    links = [
        link_row("good-one", "owner/name"),
        link_row("good-one", "https://gitlab.com/group/subgroup/project", is_official=True, framework="pytorch"),
        link_row("good-one", "https://huggingface.co/spaces/owner/demo"),
        link_row("good-one", "https://bitbucket.org/owner/repo"),
        link_row("good-one", None),
        link_row("good-one", "not a url"),
        link_row("good-one", "https://github.com/owner/name"),  # what "owner/name" means: listed again
        link_row(
            "only-linked",
            "https://github.com/x/y",
            "Only Linked",
            paper_arxiv_id="2002.00002",
            paper_url_abs="https://arxiv.org/abs/2002.00002v1",
        ),
        link_row("only-linked-untitled", "https://github.com/x/z", None),
        link_row("same-arxiv", "https://github.com/x/w"),
        link_row("blank-title", "https://github.com/x/v", "Titled by its link"),
        {**link_row("x", "https://github.com/a/b"), "paper_url": ""},
    ]
    return papers, links


EXPECTED_REJECTED = {
    "no_title": 3,
    "no_paper_url": 2,
    "duplicate": 2,
    "no_repo_url": 1,
    "bad_repo_url": 1,
    "duplicate_link": 1,
    "links_of_rejected_paper": 2,
}
EXPECTED_WARNINGS = {"bad_arxiv_id": 1, "bad_date": 1}


@pytest.mark.parametrize("form", ["json.gz", "pandas-float-ms"])
def test_each_rejection_is_counted_with_an_example_in_the_summary_and_manifest(run: Run, tmp_path: Path, form: str) -> None:
    sources = write_sources(tmp_path / "src", form, *crafted_rows())
    code, out, err = run("archive", "build", *sources, "--out", tmp_path / "archive", "--snapshot", DATA_DATE)
    assert (code, err) == (0, "")
    for reason, count in {**EXPECTED_REJECTED, **EXPECTED_WARNINGS}.items():
        assert f"  {reason} ({count}): e.g. " in out
    assert "papers: 6 written (4 from 9 papers rows, 2 named only by links)" in out
    manifest = current_manifest(tmp_path / "archive")
    assert {reason: entry["count"] for reason, entry in manifest["rejected"].items()} == EXPECTED_REJECTED
    assert {reason: entry["count"] for reason, entry in manifest["warnings"].items()} == EXPECTED_WARNINGS
    assert all(entry["example"] for entry in [*manifest["rejected"].values(), *manifest["warnings"].values()])
    assert "not a url" in manifest["rejected"]["bad_repo_url"]["example"]
    assert manifest["counts"]["papers"] == 6 and manifest["counts"]["rejected"] == sum(EXPECTED_REJECTED.values())


@pytest.mark.parametrize("form", ["json.gz", "pandas-timestamp"])
def test_kept_rows_are_served_as_the_real_records_are_written(tmp_path: Path, form: str) -> None:
    build_archive(write_sources(tmp_path / "src", form, *crafted_rows()), tmp_path / "archive", data_date=DATA_DATE)
    served = served_papers(tmp_path / "archive")
    # the papers rows' papers in their order, then those only links name (the blank-title row's paper is one)
    assert list(served) == ["good-one", "bad-arxiv", "bad-date", "old-style", "only-linked", "blank-title"]
    good = served["good-one"]
    assert good["title"] == "Good" and good["arxiv_id"] == "2001.00001"
    assert good["code_links"] == [  # official first, then by URL; GitLab, Bitbucket, the Hub kept; a repository once
        ("https://gitlab.com/group/subgroup/project", True, False, "pytorch"),
        ("https://bitbucket.org/owner/repo", False, False, "none"),
        ("https://github.com/owner/name", False, False, "none"),
        ("https://huggingface.co/spaces/owner/demo", False, False, "none"),
    ]
    assert good["tasks"] == [("3d-object-detection", "3D Object Detection"), ("image-classification", "Image Classification")]
    assert good["methods"] == ["1x1 Convolution", "ResNet"]
    assert good["url_pdf"] == "https://arxiv.org/pdf/2001.00001v1.pdf" and good["date"] == "2020-01-02" and good["year"] == 2020
    assert served["bad-arxiv"]["arxiv_id"] is None and (served["bad-date"]["date"], served["bad-date"]["year"]) == (None, None)
    assert served["old-style"]["arxiv_id"] == "hep-th/9901001"
    # a paper row without a title is dropped, but a link names it with one: it is written from the link
    assert served["blank-title"]["title"] == "Titled by its link"
    assert served["only-linked"] == {
        **served_form_of("Only Linked"),
        "arxiv_id": "2002.00002",
        "url_abs": "https://arxiv.org/abs/2002.00002v1",
        "code_links": [("https://github.com/x/y", False, False, "none")],
    }
    manifest = current_manifest(tmp_path / "archive")
    assert (manifest["licence"], manifest["licence_url"]) == (LICENCE, LICENCE_URL)


def test_row_values_in_every_form_the_copies_use() -> None:
    assert [name_slug(name) for name in ("Multi-Head Attention", "In-Context Learning", "GPT-3", "BPE", " (Weird) Name!! ")] == [
        "multi-head-attention",
        "in-context-learning",
        "gpt-3",
        "bpe",
        "weird-name",
    ]
    assert repo_url("owner/name") == ("https://github.com/owner/name", None)
    assert repo_url("https://gitlab.com/a/b/c") == ("https://gitlab.com/a/b/c", None)
    assert repo_url(" https://github.com/MS-P3/code7/tree/main/visual_bert ") == (
        "https://github.com/MS-P3/code7/tree/main/visual_bert",
        None,
    )
    assert repo_url("HTTPS://GitLab.com/Group/Project") == ("https://gitlab.com/Group/Project", None)  # scheme and host: lower case
    for bad in ("not a url", "ftp://host/x", "https://github.com/", "https://github.com//", "https:///path", "https://github.com/a b", 42):
        assert repo_url(bad) == (None, "bad_repo_url")
    assert repo_url(None) == repo_url("  ") == (None, "no_repo_url")
    moment = datetime(2019, 2, 11, tzinfo=UTC)
    for value in ("2019-02-11", "2019-02-11T00:00:00", "2019-02-11 00:00:00", date(2019, 2, 11), moment, moment.timestamp() * 1000):
        assert day(value) == "2019-02-11"
    for value in ("2019-02-30", "11/02/2019", "", float("nan"), None, True):
        assert day(value) is None
    flags = [flag(value) for value in (True, False, 1, 0, 1.0, 0.0, "true", None, float("nan"), [1], 2)]
    assert flags == [1, 0, 1, 0, 1, 0, 1, None, None, None, None]
    vocabulary = Vocabulary()  # a JSON dump's lists: sorted by name, each once, anything without a usable name dropped
    adam, bpe = {"method_slug": "adam", "method_name": "Adam"}, {"method_slug": "bpe", "method_name": "BPE"}
    assert vocabulary.methods_of([method_row("BPE"), method_row("Adam"), method_row("BPE")]) == [adam, bpe]
    assert vocabulary.methods_of([{"name": None}, method_row("Adam"), "BPE", 3, {"full_name": "x"}, {"name": " "}]) == [adam, bpe]
    assert vocabulary.methods_of([{"name": None}]) == vocabulary.methods_of(None) == vocabulary.tasks_of("Adam") == []
    assert vocabulary.tasks_of(["b", "a", None, "", "!!"]) == [{"task_slug": "a", "task_name": "a"}, {"task_slug": "b", "task_name": "b"}]
    assert vocabulary.methods_of([method_row("Adam")])[0] is vocabulary.methods_of(["Adam"])[0]  # one shared entry per name


# -- sources -------------------------------------------------------------------------------


def test_a_pandas_copy_with_every_method_missing_and_a_dump_with_one_author_as_text(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = {
        "paper_url": ["https://paperswithcode.com/paper/p"],
        "title": ["P"],
        "authors": ["Solo Author"],
        "methods": [None],
        "tasks": [None],
    }
    pq.write_table(pa.table(rows | {"__index_level_0__": [0]}), tmp_path / "copy.parquet")  # methods, tasks: type null
    write_json(tmp_path / "dump.json", [paper_row("q", "Q", authors="Solo Author", tasks=None, methods=None)])
    build_archive([tmp_path / "copy.parquet", tmp_path / "dump.json"], tmp_path / "archive", data_date=DATA_DATE)
    served = served_papers(tmp_path / "archive")
    assert served["p"]["authors"] == served["q"]["authors"] == ["Solo Author"]
    assert served["p"]["methods"] == served["p"]["tasks"] == []


def test_a_hub_cache_folder_reads_the_snapshot_refs_main_names_and_knows_its_commit(tmp_path: Path) -> None:
    papers, links = bundled_rows()
    new, old = "a" * 40, "b" * 40
    repo = tmp_path / "hub" / "datasets--pwc-archive--papers-with-abstracts"
    write_parquet(repo / "snapshots" / new / "data" / "train-00000-of-00001.parquet", papers)
    write_parquet(repo / "snapshots" / old / "data" / "train-00000-of-00001.parquet", [paper_row("stale", "From an old commit")])
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(new)
    links_file = write_json(tmp_path / "links.json", links)
    earlier = datetime(2025, 7, 1, tzinfo=UTC).timestamp()
    os.utime(links_file, (earlier, earlier))
    summary = build_archive([repo, links_file], tmp_path / "archive", commit_dates={new: "2025-07-30"})
    assert summary.data_date == "2025-07-30"  # the newest of the commit's date and the undated file's
    served = served_papers(tmp_path / "archive")
    assert_bundled_papers_back(served, snapshot="2025-07-30")
    assert len(served) == 2
    manifest = current_manifest(tmp_path / "archive")
    assert manifest["snapshot"] == summary.data_date and manifest["licence"] == LICENCE
    source = next(entry for entry in manifest["sources"] if entry["table"] == "papers")
    assert (source["dataset"], source["commit"], source["commit_date"]) == ("pwc-archive/papers-with-abstracts", new, "2025-07-30")


def test_the_snapshot_is_the_newest_source_files_date_unless_given(run: Run, tmp_path: Path) -> None:
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    older, newer = datetime(2024, 3, 1, 12, tzinfo=UTC).timestamp(), datetime(2024, 3, 5, 23, 30, tzinfo=UTC).timestamp()
    os.utime(sources[0], (older, older))
    os.utime(sources[1], (newer, newer))
    summary = build_archive(sources, tmp_path / "archive")
    assert (summary.data_date, summary.data_date_basis) == ("2024-03-05", build_module.BASIS_MTIME)
    assert {paper["snapshot"] for paper in served_papers(tmp_path / "archive").values()} == {"2024-03-05"}
    assert current_manifest(tmp_path / "archive")["snapshot"] == "2024-03-05"
    for bad in ("2025-13-01", "28/07/2025", "yesterday"):
        code, out, err = run("archive", "build", *sources, "--out", tmp_path / "archive", "--snapshot", bad)
        assert (code, out) == (2, "") and err.startswith("papercode: --snapshot ") and err.count("\n") == 1


def test_a_file_named_twice_is_read_once_and_the_table_is_told_by_columns_not_names(tmp_path: Path) -> None:
    papers, links = bundled_rows()
    source = tmp_path / "src"
    write_json(source / "a.json.gz", links)  # names say nothing: the columns do
    write_parquet(source / "b" / "whatever.parquet", papers, pandas_style=True)
    summary = build_archive([source, source / "a.json.gz", source / "b"], tmp_path / "archive", data_date=DATA_DATE)
    assert summary.rejected.total() == 0
    assert [(file.path.name, file.table) for file in summary.sources] == [("a.json.gz", "links"), ("whatever.parquet", "papers")]
    assert_bundled_papers_back(served_papers(tmp_path / "archive"))


def test_every_file_of_a_build_is_in_its_manifest_with_its_size_and_sha256(tmp_path: Path) -> None:
    """What replaced the shards (balanced by bytes, each listed with its size): the build's files, each listed in the
    manifest with its size and sha256, every byte checked (`mapped.verify`); the search index has the segments the
    manifest says, few (two indexing threads), so that an overlay never merges them."""
    papers = [paper_row(f"paper-{i}", f"Paper {i}", abstract="words " * (i % 97)) for i in range(600)]
    summary = build_archive(write_sources(tmp_path / "src", "json", papers, [link_row("paper-1", "a/b")]), tmp_path / "archive")
    build = current_build(tmp_path / "archive")
    assert build is not None and build.name == summary.build_id
    manifest = current_manifest(tmp_path / "archive")
    on_disk = {str(path.relative_to(build)) for path in build.rglob("*") if path.is_file()}
    listed = set(manifest["files"])
    # every file but the manifest itself and tantivy's lock file, which holds nothing
    assert on_disk - listed == {MANIFEST, "search/.tantivy-meta.lock"} and listed <= on_disk
    assert summary.bytes_written == sum(entry["bytes"] for entry in manifest["files"].values())
    files = {name: mapped.FileFacts(entry["bytes"], entry["sha256"]) for name, entry in manifest["files"].items()}
    assert mapped.verify(build, files) == []
    assert 1 <= manifest["search"]["segments"] == serving.segment_count(build / "search") <= serving.INDEX_THREADS
    assert len(served_papers(tmp_path / "archive")) == 600
    (build / "papers" / "title.data").write_bytes(b"X" + (build / "papers" / "title.data").read_bytes()[1:])  # one byte changed
    assert mapped.verify(build, files) == ["papers/title.data: its bytes are not those the build wrote (sha256 differs)"]


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_every_file_of_a_build_has_the_mode_the_umask_gives_tantivy_s_own_too(tmp_path: Path, umask: int) -> None:
    """The archive directory may be another user's: a server run by another user must read every file of a build.
    tantivy writes `meta.json` and `.managed.json` through temporary files, made 0600, and such a server answered
    `load_failed` to every search. Root reads a 0600 file anyway, so the modes are what is asserted."""
    papers = [paper_row(f"paper-{i}", f"Paper {i}", abstract="words " * i) for i in range(30)]
    previous = os.umask(umask)
    try:
        build_archive(write_sources(tmp_path / "src", "json", papers, [link_row("paper-1", "a/b")]), tmp_path / "archive")
    finally:
        os.umask(previous)
    build = current_build(tmp_path / "archive")
    assert build is not None
    modes = {str(path.relative_to(build)): path.stat().st_mode & 0o777 for path in build.rglob("*") if path.is_file()}
    assert {"search/meta.json", "search/.managed.json", "papers/title.data", MANIFEST} <= set(modes)
    assert {name for name, mode in modes.items() if mode != 0o666 & ~umask} == set()
    folders = [build.parent, build, *(path for path in build.rglob("*") if path.is_dir())]
    assert {str(folder) for folder in folders if folder.stat().st_mode & 0o777 != 0o777 & ~umask} == set()


# -- the output directory ------------------------------------------------------------------


def builds_of(archive: Path) -> list[str]:
    """What `builds/` holds (builds, and what builds being written or removed left)."""
    return sorted(os.listdir(archive / BUILDS))


def test_an_interrupted_build_leaves_the_previous_archive_and_no_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    out = tmp_path / "data" / "archive"
    first = build_archive(sources, out, data_date=DATA_DATE)
    before = files_of(out)
    added: list[str] = []

    def add_then_fail(self: Any, **paper: Any) -> None:
        added.append(paper["slug"])
        if len(added) == 2:
            raise RuntimeError("the disk caught fire")
        original(self, **paper)

    original = serving.ServingWriter.add
    monkeypatch.setattr(serving.ServingWriter, "add", add_then_fail)
    with pytest.raises(RuntimeError, match="caught fire"):
        build_archive(sources, out, data_date="2025-08-01")
    assert len(added) == 2  # the first paper was written before the failure
    assert files_of(out) == before and builds_of(out) == [first.build_id]
    assert [path.name for path in out.parent.iterdir()] == ["archive"]
    assert_bundled_papers_back(served_papers(out))


def test_ctrl_c_during_a_build_says_the_previous_archive_is_unchanged(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    out = tmp_path / "archive"
    first = build_archive(sources, out, data_date=DATA_DATE)
    before = files_of(out)

    def interrupt(self: Any, source: Any, batch: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(build_module._Builder, "_papers", interrupt)
    code, out_text, err = run("archive", "build", *sources, "--out", out)
    assert (code, out_text) == (130, "")
    assert err == "papercode: archive build: interrupted. The previous archive is unchanged\n"
    assert files_of(out) == before and builds_of(out) == [first.build_id]
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


def test_a_switch_that_fails_leaves_the_previous_build_current_and_nothing_of_the_new_one(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    out = tmp_path / "archive"
    first = build_archive(sources, out, data_date=DATA_DATE)
    before = files_of(out)
    rename, calls = os.rename, []

    def rename_failing_second(source: Any, target: Any) -> None:
        calls.append(source)
        if len(calls) == 2:  # the new build is complete in builds/, the link naming it cannot replace `current`
            raise OSError(28, "No space left on device")
        rename(source, target)

    monkeypatch.setattr(os, "rename", rename_failing_second)
    code, out_text, err = run("archive", "build", *sources, "--out", out, "--snapshot", "2025-08-01")
    assert (code, out_text) == (1, "")
    assert err == "papercode: archive build: cannot write the archive: No space left on device. The previous archive is unchanged\n"
    assert Path(calls[1]).name == f".current-{os.getpid()}"
    assert files_of(out) == before and builds_of(out) == [first.build_id]
    assert sorted(os.listdir(out)) == [".lock", BUILDS, CURRENT]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["archive", "src"]


def test_what_a_killed_build_left_is_removed_by_the_next_and_a_running_build_s_is_not(tmp_path: Path) -> None:
    """A build killed outright leaves its `.building-<id>-<pid>` directory (and, killed between its rename into
    `builds/` and the switch, a complete build no `current` names, or the link it was about to rename); the next
    build removes them, never what a running build is writing. (What replaced the old form's `.archive.building-`
    beside the archive and the archive renamed aside, which came back.)"""
    sources = write_sources(tmp_path / "src", "json", *bundled_rows())
    out = tmp_path / "archive"
    first = build_archive(sources, out, data_date=DATA_DATE)
    dead = NO_PROCESS
    stale = out / BUILDS / f".building-{builds.new_build_id()}-{dead}"
    (stale / "papers").mkdir(parents=True)
    (stale / "papers" / "title.data").write_bytes(b"half writ")
    running = out / BUILDS / f".building-{builds.new_build_id()}-{os.getpid()}"  # this process is running
    running.mkdir()
    unswitched = out / BUILDS / builds.new_build_id()
    shutil.copytree(out / BUILDS / first.build_id, unswitched)
    os.symlink(f"{BUILDS}/{unswitched.name}", out / f".current-{dead}")
    second = build_archive(sources, out, data_date=DATA_DATE)
    assert builds_of(out) == sorted([second.build_id, running.name])  # the first: no server holds it
    assert sorted(os.listdir(out)) == [".lock", BUILDS, CURRENT]
    assert_bundled_papers_back(served_papers(out))


def test_two_builds_of_one_archive_exclude_each_other_and_builds_of_two_do_not(run: Run, tmp_path: Path) -> None:
    with builds.NewBuild(tmp_path / "archive"), pytest.raises(builds.ArchiveBusy), builds.NewBuild(tmp_path / "archive"):
        pass
    with builds.NewBuild(tmp_path / "archive") as one, builds.NewBuild(tmp_path / "another") as two:  # one parent, two archives
        assert one.is_dir() and two.is_dir()
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    with builds.NewBuild(tmp_path / "archive"):
        code, out, err = run("archive", "build", *sources, "--out", tmp_path / "archive")
    assert (code, out) == (1, "")
    assert (
        err == f"papercode: archive build: another papercode archive build is writing {tmp_path / 'archive'}. Next: wait for it to finish\n"
    )
    assert not (tmp_path / "archive").exists()  # a first build that did not complete leaves nothing


def test_a_build_is_current_by_one_link_and_its_manifest_says_what_it_holds(tmp_path: Path) -> None:
    """The layout (`DIR/current` -> `builds/<id>`, the manifest of format 2); a new build becomes current and the
    one before it, which no server holds, is removed. (What replaced the plain `.jsonl` shards, one record a line.)"""
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    out = tmp_path / "archive"
    first = build_archive(sources, out, data_date=DATA_DATE)
    assert sorted(os.listdir(out)) == [".lock", BUILDS, CURRENT]
    assert os.readlink(out / CURRENT) == f"{BUILDS}/{first.build_id}" and builds_of(out) == [first.build_id]
    assert builds.new_build_id() != first.build_id and len(first.build_id) == len(builds.new_build_id())
    manifest = current_manifest(out)
    assert manifest == first.manifest()
    assert (FORMAT, FORMAT_VERSION) == ("papercode-archive", 2)
    assert (manifest["format"], manifest["format_version"], manifest["build_id"]) == (FORMAT, FORMAT_VERSION, first.build_id)
    assert (manifest["snapshot"], manifest["counts"]["papers"], manifest["counts"]["code_links"]) == (DATA_DATE, 2, 14)
    assert {name.split("/")[0] for name in manifest["files"]} == {"papers", "search"}
    second = build_archive(sources, out, data_date="2025-08-01")
    assert os.readlink(out / CURRENT) == f"{BUILDS}/{second.build_id}" and builds_of(out) == [second.build_id]
    assert current_manifest(out)["snapshot"] == "2025-08-01"


def test_out_must_be_an_archive_or_new(run: Run, tmp_path: Path) -> None:
    sources = write_sources(tmp_path / "src", "json.gz", *bundled_rows())
    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "thesis.tex").write_text("precious")
    code, out, err = run("archive", "build", *sources, "--out", documents)
    assert (code, out) == (2, "") and "not an archive papercode wrote" in err and err.count("\n") == 1
    assert files_of(documents) == {"thesis.tex": b"precious"}
    code, _, err = run("archive", "build", tmp_path / "src", "--out", tmp_path)  # the sources would go with the old archive
    assert code == 2 and err.count("\n") == 1


def test_an_archive_inside_a_source_directory_is_not_read_as_a_source(tmp_path: Path) -> None:
    source = tmp_path / "pwc"
    write_sources(source, "json.gz", *bundled_rows())
    for _ in range(2):  # the second build finds the first one's archive.json under pwc/: not a source
        summary = build_archive([source], source / "archive", data_date=DATA_DATE)
        assert [file.path.name for file in summary.sources] == ["links-between-papers-and-code.json.gz", "papers-with-abstracts.json.gz"]
    assert_bundled_papers_back(served_papers(source / "archive"))


def test_the_default_archive_directory_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_archive_dir() == tmp_path / "xdg" / "papercode" / "archive"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert default_archive_dir() == tmp_path / "home" / ".local" / "share" / "papercode" / "archive"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_archive_dir() == tmp_path / "home" / ".local" / "share" / "papercode" / "archive"


def test_without_out_the_build_goes_to_the_default_directory(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    code, out, err = run("archive", "build", *write_sources(tmp_path / "src", "json.gz", *bundled_rows()), "--snapshot", DATA_DATE)
    assert (code, err) == (0, "")
    archive = tmp_path / "xdg" / "papercode" / "archive"
    assert out.startswith(f"archive: {archive}, build {current_manifest(archive)['build_id']} (")
    assert out.endswith("Serve it beneath the records: papercode serve --archive\n")
    assert_bundled_papers_back(served_papers(archive))


def test_papercode_archive_dir_is_where_the_build_goes_and_serve_looks(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERCODE_ARCHIVE_DIR", str(tmp_path / "chosen"))
    code, out, err = run("archive", "build", *write_sources(tmp_path / "src", "json.gz", *bundled_rows()), "--snapshot", DATA_DATE)
    assert (code, err) == (0, "")
    assert out.startswith(f"archive: {tmp_path / 'chosen'}, build ")
    assert settings_for("serve", {"--archive": True}).served_archive == tmp_path / "chosen"
    assert_bundled_papers_back(served_papers(tmp_path / "chosen"))


# -- bad input: one line naming the file, exit 2, the previous archive untouched -------------


def _cut(path: Path, keep: float) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def _bad_source(kind: str, directory: Path) -> tuple[Path, str]:
    """(the bad file, what the one line must say about it)."""
    if kind == "missing":
        return directory / "nowhere.json.gz", "no such file or directory"
    if kind == "gzip_cut_short":  # cut inside the first row: found while telling the table
        return _cut(write_json(directory / "papers.json.gz", bundled_rows()[0]), 0.5), "cut short"
    if kind == "gzip_cut_short_late":  # the first rows are whole: found while the build reads the file
        papers = [paper_row(f"p-{i}", f"Paper {i}", abstract=f"text {i} " * 200, methods=[method_row(f"M{i}")]) for i in range(300)]
        return _cut(write_json(directory / "papers.json.gz", papers), 0.9), "cut short"
    if kind == "parquet_truncated":
        return _cut(write_parquet(directory / "papers.parquet", bundled_rows()[0]), 0.6), "not a readable parquet file"
    if kind == "parquet_corrupt":  # the footer is whole, a data page is not: found while the build reads the file
        path = write_parquet(directory / "papers.parquet", [paper_row(f"p{i}", abstract=f"abstract {i} " * 50) for i in range(2000)])
        data = bytearray(path.read_bytes())
        data[len(data) // 4 : len(data) // 2] = b"\xff" * (len(data) // 2 - len(data) // 4)
        path.write_bytes(bytes(data))
        return path, "cannot read the parquet data"
    if kind == "missing_column":
        rows = [{key: value for key, value in row.items() if key != "paper_url"} for row in bundled_rows()[0]]
        return write_json(directory / "papers.json.gz", rows), "has no 'paper_url' column"
    if kind == "neither_table":
        return write_json(directory / "notes.json", [{"note": "hello", "author": "me"}]), "not one of the archive's tables"
    if kind == "not_json":
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / "notes.json"
        path.write_text("hello")
        return path, "not a parquet file, a JSON array or a gzipped JSON array"
    raise AssertionError(kind)


BAD_INPUTS = [
    "missing",
    "gzip_cut_short",
    "gzip_cut_short_late",
    "parquet_truncated",
    "parquet_corrupt",
    "missing_column",
    "neither_table",
    "not_json",
]


@pytest.mark.parametrize("kind", BAD_INPUTS)
def test_bad_input_is_one_line_naming_the_file_and_exit_2_with_the_previous_archive_untouched(run: Run, tmp_path: Path, kind: str) -> None:
    good = write_sources(tmp_path / "good", "json.gz", *bundled_rows())
    out = tmp_path / "archive"
    build_archive(good, out, data_date=DATA_DATE)
    before = files_of(out)
    bad, problem = _bad_source(kind, tmp_path / "bad")
    code, out_text, err = run("archive", "build", *good, bad, "--out", out)
    assert (code, out_text) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"papercode: archive build: {bad}: ")
    assert problem in err and "The previous archive is unchanged" in err
    assert files_of(out) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["archive", "good", *(["bad"] if kind != "missing" else [])])


def test_a_dump_of_something_else_than_rows_is_bad_input(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "numbers.json"
    path.write_text("[1, 2, 3]")
    code, _, err = run("archive", "build", path, "--out", tmp_path / "archive")
    assert code == 2 and err == f"papercode: archive build: {path}: not a JSON array of row objects. The previous archive is unchanged\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("archive", "build", empty, "--out", tmp_path / "archive")
    assert code == 2 and f"{empty}: no .parquet, .json, .json.gz files" in err
    assert not (tmp_path / "archive").exists()


# -- optional dependencies -----------------------------------------------------------------


def test_without_pyarrow_parquet_says_how_to_install_it_and_dumps_still_build(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parquet = write_sources(tmp_path / "parquet", "parquet", *bundled_rows())
    dumps = write_sources(tmp_path / "dumps", "json.gz", *bundled_rows())
    for name in [name for name in sys.modules if name == "pyarrow" or name.startswith("pyarrow.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    code, out, err = run("archive", "build", *parquet, "--out", tmp_path / "archive")
    assert (code, out) == (2, "") and err.count("\n") == 1 and INSTALL in err and "pyarrow" in err
    assert not (tmp_path / "archive").exists()
    code, out, err = run("archive", "build", *dumps, "--out", tmp_path / "archive", "--snapshot", DATA_DATE)
    assert (code, err) == (0, "")
    assert_bundled_papers_back(served_papers(tmp_path / "archive"))


@pytest.mark.process
def test_serve_needs_neither_pyarrow_nor_huggingface_hub() -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None; sys.modules['huggingface_hub'] = None\n"
        "from papercode.edge import app\n"
        "from papercode.cli import main as cli\n"
        "cli.build_parser().parse_args(['serve'])\n"
        "print(sorted(name for name in sys.modules if name.startswith(('pyarrow', 'huggingface_hub')) and sys.modules[name]))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[2])}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "[]\n", "")


# -- progress ------------------------------------------------------------------------------


class _Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_off_a_terminal_is_one_line_a_phase() -> None:
    piped = StringIO()
    progress = ArchiveBuildProgress(1_000, piped, interval=0)
    progress.update(0, "reading links.json.gz", 0, 0)  # as the build starts a file, then as its rows come
    progress.update(300, "links.json.gz", 0, 5)
    progress.update(500, "reading papers.json.gz", 0, 5)
    progress.update(700, "papers.json.gz", 1_234, 5)
    progress.stage("writing the keys")
    progress.stage("writing the keys")
    progress.finish()
    assert piped.getvalue() == (
        "building archive: reading links.json.gz, 0 papers, 0 links, 0s so far\n"
        "building archive: reading papers.json.gz, 0 papers, 5 links, 0s so far\n"
        "building archive: writing the keys, 0s so far\n"
    )


def test_papercode_archive_build_off_a_terminal_says_each_phase_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sources = write_sources(tmp_path / "src", "json.gz", *crafted_rows())
    assert cli.main(["archive", "build", *map(str, sources), "--out", str(tmp_path / "archive"), "--snapshot", DATA_DATE]) == 0
    phases = [line.removeprefix(PHASE).split(", ")[0] for line in capsys.readouterr().err.splitlines()]
    assert phases == [
        "reading links-between-papers-and-code.json.gz (links table)",  # the links first: each paper is written with its links
        "reading papers-with-abstracts.json.gz (papers table)",
        "writing the keys and the repositories' papers",
        "indexing the last papers and committing the search index",
        "checksumming and syncing the files",
    ]


def test_progress_is_redrawn_on_a_terminal() -> None:
    terminal = _Terminal()
    progress = ArchiveBuildProgress(1_000, terminal, interval=0)
    progress.update(500, "papers.json.gz", 1_234, 5)
    assert terminal.getvalue().startswith("\rbuilding archive:  50% papers.json.gz, 1,234 papers, 5 links, ETA ")
    progress.finish()
    assert terminal.getvalue().endswith("\r")
