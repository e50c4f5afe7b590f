"""The records laid over a small archive (`--archive`), for the tests of the overlay and of the answers over both: the
archive's four papers (`archive_papers`, two of which the records have) written as dumps (`small_archive_sources`)
and built into their serving form (`build_small_archive`), the two records above them (`overlay_records`), and the
corpus of both (`load_overlaid`). `tests/conftest.py`'s `overlaid` fixture builds them once a session. And an archive of the
bundled papers with the leaderboards' tables (`build_bundled_archive`), under the bundled records: every tool has
something to answer.
"""

from __future__ import annotations

from pathlib import Path

from papercode.archive import build_archive
from papercode.corpus.stages import Corpus
from tests.support import leaderboard_tables
from tests.support.archive_tables import bundled_rows, link_row, paper_row, write_json, write_parquet
from tests.support.records import make_record, make_sample, sha_for, write_records

DATA_DATE = "2025-07-28"  # the small archive's data date, as its build records it


def archive_papers() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The archive's tables: four papers, two of which the records have."""
    papers = [
        # The same arXiv id as a record, under another slug and title: the record wins.
        paper_row("the-archive-slug", "The archive's title", arxiv_id="2001.00001", authors=["A. Archivist"]),
        # The same slug as a record (which has no arXiv id): the record wins, and the arXiv id leads to it.
        paper_row("slug-only-paper", "The archive's slug-only title", arxiv_id="2002.00002", authors=["A. Archivist"]),
        paper_row("only-in-the-archive", "A paper only the archive has", arxiv_id="2003.00003", authors=["A. Archivist"]),
        paper_row("no-arxiv-archive-paper", "Conference paper without an arXiv id", authors=["A. Archivist"]),
    ]
    for paper in papers:
        paper["abstract"] = f"{paper['title']}: an abstract from the archive."
    links = [
        link_row("the-archive-slug", "https://github.com/a/b", is_official=True, mentioned_in_paper=True),
        *(link_row("only-in-the-archive", f"https://github.com/other/r{i}", mentioned_in_github=True) for i in range(12)),
        link_row("only-in-the-archive", "https://gitlab.com/group/sub/official", is_official=True, mentioned_in_paper=True),
    ]
    return papers, links


def small_archive_sources(directory: Path) -> list[Path]:
    """`archive_papers` written as dumps into `directory`: what `papercode archive build` reads."""
    papers, links = archive_papers()
    return [write_json(directory / "papers-with-abstracts.json.gz", papers), write_json(directory / "links.json.gz", links)]


def build_small_archive(directory: Path, out: Path) -> Path:
    """`archive_papers` written as dumps into `directory` and built into `out` (its serving form)."""
    build_archive(small_archive_sources(directory), out, data_date=DATA_DATE)
    return out


def overlay_records(directory: Path) -> Path:
    """The two records laid over the archive: one shares an arXiv id with an archive paper, the other a slug."""
    return write_records(
        directory,
        [
            make_record("2001.00001", "the-record-slug", [make_sample(sha_for(1))], title="The harvested record"),
            make_record(None, "slug-only-paper", [make_sample(sha_for(2))], title="A record known by slug"),
        ],
    )


def load_overlaid(overlaid: tuple[Path, Path]) -> Corpus:
    """The corpus of (the records, the archive directory beneath them), as `serve --archive` loads it."""
    records, archive = overlaid
    return Corpus.load([records], archive_dir=archive)


def build_bundled_archive(directory: Path) -> Path:
    """The bundled papers and the leaderboards' tables (`leaderboard_tables.sample_catalogues`: 1902.04094's result on
    Penn Treebank) written as parquet into `directory / "tables"` and built into `directory / "archive"`, returned."""
    sources = directory / "tables"
    papers, links = bundled_rows()
    write_parquet(sources / "papers.parquet", papers)
    write_parquet(sources / "links.parquet", links)
    for name, rows in zip(("evaluations", "methods", "datasets"), leaderboard_tables.sample_catalogues(), strict=True):
        leaderboard_tables.write_parquet(sources / f"{name}.parquet", rows)
    build_archive([sources], directory / "archive", data_date=DATA_DATE)
    return directory / "archive"
