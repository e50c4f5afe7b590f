"""The Papers-with-Code archive served beneath the records (`--archive`): a record always wins over the
archive's row for the same paper, the archive's keys then lead to the record, and papers only the
archive has are served from its build (`papercode archive build`'s serving form, opened read-only), with their
repositories and the archive's attribution."""

from __future__ import annotations

import gc
import os
import shutil
import signal
import tempfile
from pathlib import Path

import anyio
import orjson
import pytest

from papercode.answers import models, overview, prompts, queries, shaping, twins
from papercode.archive import build_archive
from papercode.archive.builds import NewBuild, new_build_id
from papercode.cli.main import main
from papercode.core.errors import QueryError
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.corpus.reload import LiveCorpus
from papercode.corpus.snapshot import records_part, served_key
from papercode.corpus.stages import Corpus, open_stages
from papercode.index.mapped_archive import BUILDS, CURRENT, current_build
from papercode.index.overlay import OVERLAY_PREFIX
from papercode.ingest import parallel
from papercode.ingest.files import find_record_files
from papercode.settings import bundled_records_dir
from tests.support.archive_overlay import DATA_DATE, archive_papers, build_small_archive, load_overlaid, overlay_records
from tests.support.archive_tables import NO_PROCESS, paper_row, write_json
from tests.support.records import make_record, write_records


def test_a_record_wins_over_the_archive_row_for_the_same_arxiv_id(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    assert twins.paper_detail(corpus, "2001.00001").title == "The harvested record"
    by_archive_slug = twins.paper_detail(corpus, "the-archive-slug")
    assert (by_archive_slug.title, by_archive_slug.query.resolved) == ("The harvested record", "2001.00001")
    assert by_archive_slug.attribution == models.ATTRIBUTION


def test_a_record_wins_over_the_archive_row_for_the_same_slug_and_the_archive_arxiv_id_leads_to_it(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    assert twins.paper_detail(corpus, "slug-only-paper").title == "A record known by slug"
    assert twins.paper_detail(corpus, "2002.00002").title == "A record known by slug"


def test_the_overlay_is_counted_not_reported_as_a_load_problem(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    stats = overview.corpus_stats(corpus)
    assert stats.papers == 4
    assert stats.by_source == {"records": 2, "archive": 2, "archive_rows_replaced": 2}
    assert corpus.index.report.problems == []
    assert stats.attribution == models.BOTH_ATTRIBUTION
    assert stats.snapshots == [DATA_DATE]


def test_without_the_archive_corpus_stats_reads_as_before(overlaid: tuple[Path, Path]) -> None:
    records, _ = overlaid
    stats = overview.corpus_stats(Corpus.load([records]))
    assert stats.by_source is None and stats.attribution == models.ATTRIBUTION


def test_the_same_papers_given_as_a_second_records_directory_are_duplicates_not_layering(
    overlaid: tuple[Path, Path], tmp_path: Path
) -> None:
    """The overlay is for the archive only: two record roots still follow the duplicate rules."""
    records, _ = overlaid
    rows, _ = archive_papers()
    again = write_records(
        tmp_path / "again",
        [make_record(str(row["arxiv_id"]) if row["arxiv_id"] else None, str(row["paper_url"]).rsplit("/", 1)[1]) for row in rows],
    )
    corpus = Corpus.load([records, again])
    assert "duplicate" in {problem.code for problem in corpus.index.report.problems}
    assert overview.corpus_stats(corpus).by_source is None


def test_a_paper_without_samples_gets_its_repositories_official_first_in_one_call(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    answer = twins.harvested_code(corpus, "2003.00003")
    assert answer.samples == [] and answer.counts.total == 0
    assert answer.repos is not None and len(answer.repos) == shaping.CODE_LINKS_SHOWN
    assert answer.repos[0] == "https://gitlab.com/group/sub/official"
    assert answer.note is not None
    assert "10 of its 13 repositories, the first 1 official (3 more not listed)" in answer.note
    assert answer.note.split("Next: ")[1]
    assert answer.attribution == models.ARCHIVE_ATTRIBUTION


def test_a_list_of_papers_names_the_sources_of_the_papers_it_answers(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    assert twins.paper_list(corpus, ["2001.00001", "slug-only-paper"]).attribution == models.ATTRIBUTION
    assert twins.paper_list(corpus, ["2003.00003", "9999.99999"]).attribution == models.ARCHIVE_ATTRIBUTION
    both = twins.paper_list(corpus, ["2003.00003", "2001.00001"])
    assert both.attribution == models.BOTH_ATTRIBUTION
    assert [(paper.arxiv_id, paper.samples is None) for paper in both.papers or []] == [("2003.00003", True), ("2001.00001", False)]


def test_a_paper_without_samples_or_repositories_says_what_to_do(overlaid: tuple[Path, Path]) -> None:
    answer = twins.harvested_code(load_overlaid(overlaid), "no-arxiv-archive-paper")
    assert answer.repos is None
    assert answer.note == "no harvested code samples and no known repositories for this paper. Next: search_papers for related work"


def test_an_archive_paper_answers_carry_the_archive_attribution(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    assert twins.paper_detail(corpus, "only-in-the-archive").attribution == models.ARCHIVE_ATTRIBUTION
    assert models.ARCHIVE_ATTRIBUTION in prompts.implement_prompt(corpus, "2003.00003")
    detail = twins.paper_detail(corpus, "2003.00003")
    assert (detail.snapshot, detail.abstract) == (DATA_DATE, "A paper only the archive has: an abstract from the archive.")


def test_find_papers_for_repo_accepts_gitlab_urls(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    for asked in (
        "https://gitlab.com/group/sub/official",
        "gitlab.com/Group/Sub/official.git",
        "https://gitlab.com/group/sub/official/-/tree/main",
    ):
        found = queries.papers_for_repo(corpus, asked)
        assert [paper.arxiv_id for paper in found.papers] == ["2003.00003"], asked
    with pytest.raises(QueryError, match="GitLab"):
        queries.papers_for_repo(corpus, "https://gitlab.com/lonely")


def test_search_finds_archive_papers_and_not_the_replaced_rows(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    titles = [hit.title for hit in queries.search_papers(corpus, "archive").hits]
    assert "A paper only the archive has" in titles
    assert "The archive's title" not in titles


@pytest.mark.process
def test_the_two_processes_overlay_as_one_process_does(overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    records, archive = overlaid
    monkeypatch.setattr(parallel, "CHILD_PROCESS_BYTES", 1 << 60)
    *_, here = open_stages([records], Limits(), None, archive_dir=archive)
    monkeypatch.setattr(parallel, "CHILD_PROCESS_BYTES", 0)
    files = find_record_files(records, LoadReport())
    for share in (0.2, 0.8):
        monkeypatch.setattr(parallel, "HERE_SHARE", share)
        assert 0 < parallel.split_point(files) < len(files)
        *_, split = open_stages([records], Limits(), None, archive_dir=archive)
        assert split.corpus.search is not None
        assert overview.corpus_stats(split.corpus).model_dump() == overview.corpus_stats(here.corpus).model_dump()
        assert [twins.paper_detail(split.corpus, key).title for key in ("the-archive-slug", "2002.00002", "2003.00003")] == [
            twins.paper_detail(here.corpus, key).title for key in ("the-archive-slug", "2002.00002", "2003.00003")
        ]
        assert split.corpus.index.fingerprint == here.corpus.index.fingerprint


# -- an archive that cannot be served, the command line ----------------------------------------


def test_check_with_a_missing_archive_serves_the_records_and_says_how_to_get_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--archive", "--archive-dir", str(tmp_path / "none"), "--code-dir", str(tmp_path / "code")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "records: 2 read, 2 indexed" in out  # the bundled records, served alone
    line = next(line for line in out.splitlines() if line.startswith("archive: "))
    assert "there is no archive in none" in line and "papercode archive fetch" in line and "papercode archive build" in line
    assert str(tmp_path) not in line


def test_check_with_the_archive_reads_both(overlaid: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    records, archive = overlaid
    code = main(["check", "--records", str(records), "--archive-dir", str(archive), "--archive", "--code-dir", str(tmp_path / "code")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "records: 2 read, 2 indexed" in out
    build = current_build(archive)
    assert build is not None
    assert f"archive: build {build.name} (4 papers, data of {DATA_DATE}), {archive}\n" in out


def test_the_environment_turns_the_archive_on(
    overlaid: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    records, archive = overlaid
    monkeypatch.setenv("PAPERCODE_ARCHIVE", "1")
    monkeypatch.setenv("PAPERCODE_ARCHIVE_DIR", str(archive))
    assert main(["check", "--records", str(records), "--code-dir", str(tmp_path / "code")]) == 0
    assert "archive: build " in capsys.readouterr().out


def test_config_writes_the_archive_into_the_host_configuration(overlaid: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, archive = overlaid
    assert main(["config", "claude-desktop", "--archive", "--archive-dir", str(archive)]) == 0
    args = orjson.loads(capsys.readouterr().out)["mcpServers"]["papercode"]["args"]
    assert args[-3:] == ["--archive", "--archive-dir", str(archive.resolve())]


# -- a rebuilt archive is seen as changed records are: --watch and SIGHUP --------------------------


def _build(source: Path, out: Path, titles: list[str]) -> None:
    papers = [paper_row(f"built-{i}", title, arxiv_id=f"2105.{i:05d}") for i, title in enumerate(titles)]
    build_archive([write_json(source / "papers-with-abstracts.json.gz", papers)], out, data_date=DATA_DATE)


def live_over(records: Path, archive: Path) -> LiveCorpus:
    """A live corpus of `records` over the archive in `archive`, as `papercode serve --archive` makes it."""
    roots = [records]
    return LiveCorpus(
        lambda key: open_stages(roots, Limits(), None, None, key and records_part(key), archive_dir=archive),
        fingerprint=lambda: served_key(roots, Limits(), archive),
    )


async def reloaded(live: LiveCorpus, how: str, change: object) -> None:
    """Run `change()` while `live` watches (or is sent SIGHUP after it), and wait for the swap it brings."""
    swapped = anyio.Event()

    async def mark(corpus: Corpus) -> None:
        swapped.set()

    live.on_swap(mark)
    async with anyio.create_task_group() as tasks:
        if how == "watch":
            tasks.start_soon(live.watch, 0.05)
        else:
            await tasks.start(live.reload_on_sighup)
        assert callable(change)
        change()
        if how == "sighup":
            os.kill(os.getpid(), signal.SIGHUP)
        with anyio.fail_after(20):
            await swapped.wait()
        tasks.cancel_scope.cancel()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("how", ["watch", "sighup"])
async def test_a_rebuilt_archive_is_reloaded(tmp_path: Path, how: str) -> None:
    archive = tmp_path / "archive"
    _build(tmp_path / "v1", archive, ["First build"])
    first = current_build(archive)
    live = live_over(bundled_records_dir(), archive)
    await live.load()
    assert twins.paper_detail(live(), "2105.00000").title == "First build"
    await reloaded(live, how, lambda: _build(tmp_path / "v2", archive, ["Second build", "A paper the first build lacked"]))
    assert twins.paper_detail(live(), "2105.00000").title == "Second build"
    assert overview.corpus_stats(live()).by_source == {"records": 2, "archive": 2, "archive_rows_replaced": 0}
    assert [hit.title for hit in queries.search_papers(live(), "lacked").hits] == ["A paper the first build lacked"]
    # The first build was held by the corpus that served it while the second was made current: it is still there,
    # until a build finds no server holding it.
    assert first is not None and first.exists()
    del live
    gc.collect()
    _build(tmp_path / "v3", archive, ["Third build"])
    assert sorted(os.listdir(archive / BUILDS)) == [os.readlink(archive / CURRENT).split("/")[1]]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("how", ["watch", "sighup"])
async def test_a_removed_record_brings_the_archive_row_back(tmp_path: Path, how: str) -> None:
    records = overlay_records(tmp_path / "records")
    archive = build_small_archive(tmp_path / "sources", tmp_path / "archive")
    live = live_over(records, archive)
    await live.load()
    assert twins.paper_detail(live(), "2001.00001").title == "The harvested record"
    (removed,) = [path for path in records.iterdir() if b"2001.00001" in path.read_bytes()]
    await reloaded(live, how, removed.unlink)
    detail = twins.paper_detail(live(), "2001.00001")
    assert (detail.title, detail.attribution) == ("The archive's title", models.ARCHIVE_ATTRIBUTION)
    assert twins.paper_detail(live(), "the-archive-slug").title == "The archive's title"
    assert overview.corpus_stats(live()).by_source == {"records": 1, "archive": 3, "archive_rows_replaced": 1}
    assert "The archive's title" in [hit.title for hit in queries.search_papers(live(), "archive title").hits]
    assert [paper.arxiv_id for paper in queries.papers_for_repo(live(), "a/b").papers] == ["2001.00001"]


# -- what a killed build leaves ---------------------------------------------------------------------


def test_any_start_removes_what_a_killed_archive_build_or_start_left(
    overlaid: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build killed outright leaves its half-written build in `builds/.building-<id>-<pid>`, a start killed while it
    laid the records over the archive its overlay in the temporary directory; the next papercode start of any command
    removes them (the next build would remove the first too), and leaves the build that serves."""
    records, served = overlaid
    archive = tmp_path / "archive"
    shutil.copytree(served, archive, symlinks=True)
    dead = NO_PROCESS
    left = archive / BUILDS / f".building-{new_build_id()}-{dead}"
    (left / "papers").mkdir(parents=True)
    (left / "papers" / "title.data").write_text("half")
    before = sorted(os.listdir(archive / BUILDS))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    overlay = tmp_path / "tmp" / f"{OVERLAY_PREFIX}{dead}-x1y2z3"
    overlay.mkdir(parents=True)
    (overlay / "meta.json").write_text("{}")
    code = main(["check", "--records", str(records), "--archive", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")])
    assert code == 0 and not left.exists() and not overlay.exists()
    assert sorted(os.listdir(archive / BUILDS)) == [name for name in before if name != left.name]
    assert current_build(archive) is not None


def test_a_build_running_in_the_archive_directory_is_left_alone(overlaid: tuple[Path, Path], tmp_path: Path) -> None:
    records, served = overlaid
    archive = tmp_path / "archive"
    shutil.copytree(served, archive, symlinks=True)
    with NewBuild(archive) as building:
        (building / "papers").mkdir()
        code = main(["check", "--records", str(records), "--archive", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")])
        assert code == 0  # the current build serves meanwhile
        assert building.exists()


@pytest.mark.process
@pytest.mark.parametrize("when", ["part", "result"])
def test_when_the_build_child_fails_the_build_here_keeps_the_archive(
    overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    records, archive = overlaid
    monkeypatch.setattr(parallel, "CHILD_PROCESS_BYTES", 1 << 60)
    *_, here = open_stages([records], Limits(), None, archive_dir=archive)

    def fail(self: parallel.ChildSearchBuild, *_: object) -> None:
        raise self._failure()

    monkeypatch.setattr(parallel, "CHILD_PROCESS_BYTES", 0)
    monkeypatch.setattr(parallel.ChildSearchBuild, when, fail)
    *_, rebuilt = open_stages([records], Limits(), None, archive_dir=archive)
    assert rebuilt.corpus.search is not None
    assert overview.corpus_stats(rebuilt.corpus).model_dump() == overview.corpus_stats(here.corpus).model_dump()
    assert twins.paper_detail(rebuilt.corpus, "the-archive-slug").title == "The harvested record"  # still overlaid
    assert twins.paper_detail(rebuilt.corpus, "2003.00003").attribution == models.ARCHIVE_ATTRIBUTION
