"""`papercode archive fetch` downloads the leaderboards' three datasets with the archive's two (issue #23), against the
loopback stand-in for the Hugging Face Hub (tests/support/hub_stand_in.py): built in, served by get_leaderboard; a Hub or a
cache without them is said in one line each, and the rest is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from papercode.answers import leaderboards
from papercode.archive.fetch import CATALOGUES
from papercode.corpus.stages import Corpus
from papercode.index.mapped_archive import Manifest, current_build
from papercode.settings import bundled_records_dir
from tests.support.fetching import PAPERS, closed_port, downloaded_lines, fetch, hub_datasets
from tests.support.hub_stand_in import Dataset, HubStandIn

PARQUET = "data/train-00000-of-00001.parquet"

pytestmark = pytest.mark.process


def boards_counts(archive: Path) -> dict[str, int] | None:
    build = current_build(archive)
    assert build is not None
    counts: dict[str, int] | None = Manifest.read(build).raw["counts"].get("boards")
    return counts


def test_fetch_downloads_the_leaderboards_datasets_builds_them_and_they_serve(tmp_path: Path) -> None:
    datasets = hub_datasets(tmp_path)
    with HubStandIn(datasets) as hub:
        result = fetch(tmp_path / "archive", tmp_path / "hf", hub.url)
    assert (result.returncode, result.stderr) == (0, downloaded_lines(*datasets))
    assert (
        "leaderboards: 1 tasks, 1 benchmarks, 1 results (joined to papers: 1 by arxiv; 0 to none), 1 methods, 1 datasets" in result.stdout
    )
    for name, stand_in in datasets.items():
        assert ("GET", f"/datasets/{name}/resolve/{stand_in.sha}/{PARQUET}") in hub.requests
    corpus = Corpus.load([bundled_records_dir()], archive_dir=tmp_path / "archive")
    answer = leaderboards.leaderboard_shown(corpus, "language modeling", "penn treebank")
    assert answer["rows"][0]["paper"]["arxiv_id"] == "1902.04094" and answer["rows"][0]["harvest"]["samples"] > 0


def without_catalogues(tmp: Path) -> dict[str, Dataset]:
    return {name: dataset for name, dataset in hub_datasets(tmp).items() if name not in CATALOGUES}


def test_a_hub_without_the_leaderboards_datasets_says_so_in_a_line_each_and_builds_the_rest(tmp_path: Path) -> None:
    with HubStandIn(without_catalogues(tmp_path)) as hub:
        result = fetch(tmp_path / "archive", tmp_path / "hf", hub.url)
    assert result.returncode == 0
    skipped = [line for line in result.stderr.splitlines() if "building without it" in line]
    assert skipped == [
        f"papercode: {name} was not found on {hub.url} (RepositoryNotFoundError); building without it" for name in CATALOGUES
    ]
    assert boards_counts(tmp_path / "archive") is None


def test_offline_a_cache_without_them_builds_the_rest_and_says_so(tmp_path: Path) -> None:
    with HubStandIn(without_catalogues(tmp_path)) as hub:  # fills the cache with the archive's two datasets only
        assert fetch(tmp_path / "first", tmp_path / "hf", hub.url).returncode == 0
    result = fetch(tmp_path / "archive", tmp_path / "hf", closed_port())
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert [line for line in lines if "building without it" in line] == [
        f"papercode: {name} is not in the download cache {tmp_path / 'hf' / 'hub'}; building without it" for name in CATALOGUES
    ]
    assert any(line.startswith("papercode: cannot reach http://127.0.0.1:") and PAPERS in line for line in lines)
    assert boards_counts(tmp_path / "archive") is None
