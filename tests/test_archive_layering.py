"""The Papers-with-Code archive served beneath the records (`--archive`): a record always wins over the
archive's row for the same paper, the archive's keys then lead to the record, and papers only the
archive has are served from its rows, with their repositories and the archive's attribution."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from archive_tables import paper_row, write_json
from conftest import make_record, make_sample, sha_for, write_records
from papercode.answers import models, queries
from papercode.archive import build_archive, records_dir
from papercode.archive.store import Staging
from papercode.build import parallel
from papercode.build.files import find_record_files
from papercode.cli.main import main
from papercode.core.archive_layout import MANIFEST
from papercode.core.errors import QueryError
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.corpus.reload import LiveCorpus
from papercode.corpus.snapshot import records_key
from papercode.corpus.stages import Corpus, build_stages, open_stages
from papercode.settings import bundled_records_dir

ARCHIVE_SOURCE = {"archive": "pwc-archive (Hugging Face), CC BY-SA 4.0", "snapshot": "2025-07-28", "row_kind": "abstracts"}


def archive_row(arxiv_id: str | None, slug: str, title: str, links: list[tuple[str, int]] | None = None, **fields: Any) -> dict[str, Any]:
    """A paper as `papercode archive build` writes it: compact, no harvest."""
    row: dict[str, Any] = {
        "url": f"/paper/{slug}",
        "title": title,
        "source": ARCHIVE_SOURCE,
        "authors": ["A. Archivist"],
        "abstract": f"{title}: an abstract from the archive.",
        "code_links": [
            {"paper_slug": slug, "repo_url": url, "is_official": official, "mentioned_in_paper": official, "mentioned_in_github": 1}
            for url, official in links or []
        ],
    }
    if arxiv_id is not None:
        row["arxiv_id"] = arxiv_id
    row.update(fields)
    return row


def write_archive(directory: Path, rows: list[dict[str, Any]], shards: int = 2) -> Path:
    """Shards in `directory` (an archive's `records/`), and the manifest beside it listing them."""
    directory.mkdir(parents=True, exist_ok=True)
    listed = []
    for shard in range(shards):
        part = rows[shard::shards]
        data = b"".join(orjson.dumps(row) + b"\n" for row in part)
        (directory / f"papers-{shard:05d}.jsonl").write_bytes(data)
        listed.append({"name": f"papers-{shard:05d}.jsonl", "bytes": len(data), "records": len(part)})
    (directory.parent / MANIFEST).write_bytes(orjson.dumps({"format": "papercode-archive", "format_version": 1, "shards": listed}))
    return directory


@pytest.fixture
def layered(tmp_path: Path) -> tuple[Path, Path]:
    records = write_records(
        tmp_path / "records",
        [
            make_record("2001.00001", "the-record-slug", [make_sample(sha_for(1))], title="The harvested record"),
            make_record(None, "slug-only-paper", [make_sample(sha_for(2))], title="A record known by slug"),
        ],
    )
    archive = write_archive(
        tmp_path / "archive" / "records",
        [
            # The same arXiv id as a record, under another slug and title: the record wins.
            archive_row("2001.00001", "the-archive-slug", "The archive's title", [("https://github.com/a/b", 1)]),
            # The same slug as a record (which has no arXiv id): the record wins, and the arXiv id leads to it.
            archive_row("2002.00002", "slug-only-paper", "The archive's slug-only title"),
            archive_row(
                "2003.00003",
                "only-in-the-archive",
                "A paper only the archive has",
                [(f"https://github.com/other/r{i}", 0) for i in range(12)] + [("https://gitlab.com/group/sub/official", 1)],
            ),
            archive_row(None, "no-arxiv-archive-paper", "Conference paper without an arXiv id"),
        ],
    )
    return records, archive


def load(layered: tuple[Path, Path]) -> Corpus:
    records, archive = layered
    return Corpus.load([records, archive], archive=archive)


def test_a_record_wins_over_the_archive_row_for_the_same_arxiv_id(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    assert queries.paper_detail(corpus, "2001.00001").title == "The harvested record"
    by_archive_slug = queries.paper_detail(corpus, "the-archive-slug")
    assert (by_archive_slug.title, by_archive_slug.query.resolved) == ("The harvested record", "2001.00001")
    assert by_archive_slug.attribution == models.ATTRIBUTION


def test_a_record_wins_over_the_archive_row_for_the_same_slug_and_the_archive_arxiv_id_leads_to_it(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    assert queries.paper_detail(corpus, "slug-only-paper").title == "A record known by slug"
    assert queries.paper_detail(corpus, "2002.00002").title == "A record known by slug"


def test_layering_is_counted_not_reported_as_a_load_problem(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    stats = queries.corpus_stats(corpus)
    assert stats.papers == 4
    assert stats.by_source == {"records": 2, "archive": 2, "archive_rows_replaced": 2}
    assert corpus.index.report.problems == []
    assert stats.attribution == models.BOTH_ATTRIBUTION


def test_without_the_archive_corpus_stats_reads_as_before(layered: tuple[Path, Path]) -> None:
    records, _ = layered
    stats = queries.corpus_stats(Corpus.load([records]))
    assert stats.by_source is None and stats.attribution == models.ATTRIBUTION


def test_the_same_rows_given_as_plain_records_are_duplicates_not_layering(layered: tuple[Path, Path]) -> None:
    """Layering is for the archive root only: two record roots still follow the duplicate rules."""
    records, archive = layered
    corpus = Corpus.load([records, archive])
    assert "duplicate" in {problem.code for problem in corpus.index.report.problems}


def test_a_paper_without_samples_gets_its_repositories_official_first_in_one_call(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    answer = queries.harvested_code(corpus, "2003.00003")
    assert answer.samples == [] and answer.counts.total == 0
    assert answer.repos is not None and len(answer.repos) == queries.CODE_LINKS_SHOWN
    assert answer.repos[0] == "https://gitlab.com/group/sub/official"
    assert answer.note is not None
    assert "10 of its 13 repositories, the first 1 official (3 more not listed)" in answer.note
    assert answer.note.split("Next: ")[1]
    assert answer.attribution == models.ARCHIVE_ATTRIBUTION


def test_a_list_of_papers_names_the_sources_of_the_papers_it_answers(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    assert queries.paper_list(corpus, ["2001.00001", "slug-only-paper"]).attribution == models.ATTRIBUTION
    assert queries.paper_list(corpus, ["2003.00003", "9999.99999"]).attribution == models.ARCHIVE_ATTRIBUTION
    both = queries.paper_list(corpus, ["2003.00003", "2001.00001"])
    assert both.attribution == models.BOTH_ATTRIBUTION
    assert [(paper.arxiv_id, paper.samples is None) for paper in both.papers or []] == [("2003.00003", True), ("2001.00001", False)]


def test_a_paper_without_samples_or_repositories_says_what_to_do(layered: tuple[Path, Path]) -> None:
    answer = queries.harvested_code(load(layered), "no-arxiv-archive-paper")
    assert answer.repos is None
    assert answer.note == "no harvested code samples and no known repositories for this paper. Next: search_papers for related work"


def test_an_archive_paper_answers_carry_the_archive_attribution(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    assert queries.paper_detail(corpus, "only-in-the-archive").attribution == models.ARCHIVE_ATTRIBUTION
    assert models.ARCHIVE_ATTRIBUTION in queries.implement_prompt(corpus, "2003.00003")


def test_find_papers_for_repo_accepts_gitlab_urls(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    for asked in (
        "https://gitlab.com/group/sub/official",
        "gitlab.com/Group/Sub/official.git",
        "https://gitlab.com/group/sub/official/-/tree/main",
    ):
        found = queries.papers_for_repo(corpus, asked)
        assert [paper.arxiv_id for paper in found.papers] == ["2003.00003"], asked
    with pytest.raises(QueryError, match="GitLab"):
        queries.papers_for_repo(corpus, "https://gitlab.com/lonely")


def test_search_finds_archive_papers_and_not_the_replaced_rows(layered: tuple[Path, Path]) -> None:
    corpus = load(layered)
    titles = [hit.title for hit in queries.search_papers(corpus, "archive").hits]
    assert "A paper only the archive has" in titles
    assert "The archive's title" not in titles


@pytest.mark.process
def test_the_two_processes_layer_as_one_process_does(layered: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    records, archive = layered
    *_, here = build_stages([records, archive], Limits(), child=False, archive=archive)
    monkeypatch.setattr(parallel, "CHILD_PROCESS_BYTES", 0)
    files = [*find_record_files(records, LoadReport()), *find_record_files(archive, LoadReport())]
    for share in (0.2, 0.8):
        monkeypatch.setattr(parallel, "HERE_SHARE", share)
        assert 0 < parallel.split_point(files) < len(files)
        *_, split = build_stages([records, archive], Limits(), archive=archive)
        assert split.search is not None
        assert queries.corpus_stats(split).model_dump() == queries.corpus_stats(here).model_dump()
        assert [queries.paper_detail(split, key).title for key in ("the-archive-slug", "2002.00002", "2003.00003")] == [
            queries.paper_detail(here, key).title for key in ("the-archive-slug", "2002.00002", "2003.00003")
        ]
        assert split.index.fingerprint == here.index.fingerprint


def test_serving_a_missing_archive_is_one_line_saying_how_to_get_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--archive", "--archive-dir", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "papercode archive fetch" in err and "papercode archive build" in err


def test_check_with_the_archive_reads_both(layered: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    records, archive = layered
    code = main(
        ["check", "--records", str(records), "--archive-dir", str(archive.parent), "--archive", "--code-dir", str(tmp_path / "code")]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "records: 6 read, 4 indexed" in out


def test_the_environment_turns_the_archive_on(
    layered: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    records, archive = layered
    monkeypatch.setenv("PAPERCODE_ARCHIVE", "1")
    monkeypatch.setenv("PAPERCODE_ARCHIVE_DIR", str(archive.parent))
    assert main(["check", "--records", str(records), "--code-dir", str(tmp_path / "code")]) == 0
    assert "4 indexed" in capsys.readouterr().out


def test_config_writes_the_archive_into_the_host_configuration(layered: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, archive = layered
    assert main(["config", "claude-desktop", "--archive", "--archive-dir", str(archive.parent)]) == 0
    args = orjson.loads(capsys.readouterr().out)["mcpServers"]["papercode"]["args"]
    assert args[-3:] == ["--archive", "--archive-dir", str(archive.parent.resolve())]


# -- a rebuilt archive is seen as changed records are: --watch and SIGHUP --------------------------


def _build(source: Path, out: Path, titles: list[str]) -> None:
    papers = [paper_row(f"built-{i}", title, arxiv_id=f"2105.{i:05d}") for i, title in enumerate(titles)]
    build_archive([write_json(source / "papers-with-abstracts.json.gz", papers)], out, snapshot="2025-07-28")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("how", ["watch", "sighup"])
async def test_a_rebuilt_archive_is_reloaded(tmp_path: Path, how: str) -> None:
    archive = tmp_path / "archive"
    _build(tmp_path / "v1", archive, ["First build"])
    roots, served = [bundled_records_dir(), records_dir(archive)], records_dir(archive)
    live = LiveCorpus(
        lambda key: open_stages(roots, Limits(), None, None, key, archive=served), fingerprint=lambda: records_key(roots, Limits())
    )
    await live.load()
    assert queries.paper_detail(live(), "2105.00000").title == "First build"
    swapped = anyio.Event()

    async def mark(corpus: Corpus) -> None:
        swapped.set()

    live.on_swap(mark)
    async with anyio.create_task_group() as tasks:
        if how == "watch":
            tasks.start_soon(live.watch, 0.05)
        else:
            await tasks.start(live.reload_on_sighup)
        _build(tmp_path / "v2", archive, ["Second build", "A paper the first build lacked"])
        if how == "sighup":
            os.kill(os.getpid(), signal.SIGHUP)
        with anyio.fail_after(20):
            await swapped.wait()
        tasks.cancel_scope.cancel()
    assert queries.paper_detail(live(), "2105.00000").title == "Second build"
    assert queries.corpus_stats(live()).by_source == {"records": 2, "archive": 2, "archive_rows_replaced": 0}


def test_any_start_removes_what_a_killed_archive_build_left(layered: tuple[Path, Path], tmp_path: Path) -> None:
    """A build killed outright leaves its half-written archive beside the old one; the next papercode start of any
    command removes it (the next build would too), and leaves the archive that serves."""
    records, served = layered
    archive = served.parent
    left = archive.parent / f".{archive.name}.papercode-building-4194304-0bad"  # above every process id: its owner is dead
    (left / "records").mkdir(parents=True)
    (left / "records" / "papers-00.jsonl").write_text("{}\n")
    code = main(["check", "--records", str(records), "--archive", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")])
    assert code == 0 and not left.exists()
    assert (served / "papers-00000.jsonl").exists()


def test_a_build_running_beside_the_archive_is_left_alone(layered: tuple[Path, Path], tmp_path: Path) -> None:
    records, served = layered
    archive = served.parent
    with Staging(archive) as building:
        (building / "records").mkdir()
        assert main(["check", "--records", str(records), "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")]) == 0
        assert building.exists()


@pytest.mark.process
@pytest.mark.parametrize("when", ["part", "result"])
def test_when_the_build_child_fails_the_build_here_keeps_the_archive(
    layered: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    records, archive = layered
    *_, here = build_stages([records, archive], Limits(), child=False, archive=archive)

    def fail(self: parallel.ChildSearchBuild, *_: object) -> None:
        raise self._failure()

    monkeypatch.setattr(parallel, "CHILD_PROCESS_BYTES", 0)
    monkeypatch.setattr(parallel.ChildSearchBuild, when, fail)
    *_, rebuilt = build_stages([records, archive], Limits(), archive=archive)
    assert rebuilt.search is not None
    assert queries.corpus_stats(rebuilt).model_dump() == queries.corpus_stats(here).model_dump()
    assert queries.paper_detail(rebuilt, "the-archive-slug").title == "The harvested record"  # still layered
