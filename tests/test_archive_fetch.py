"""`papercode archive fetch` against a loopback stand-in for the Hugging Face Hub (tests/hub_stand_in.py), each
fetch in a fresh process (tests/fetching.py). Never the real Hub: no request leaves 127.0.0.1.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from archive_tables import assert_bundled_papers_back, current_manifest, served_papers
from fetching import CATALOGUES, LINKS, PAPERS, closed_port, downloaded_lines, fetch, hub_datasets
from hub_stand_in import Dataset, HubStandIn
from papercode.cli import main as cli

INSTALL = "pip install 'papercode[archive]'"


@dataclass
class Fetched:
    hf_home: Path
    archive: Path
    datasets: dict[str, Dataset]
    result: subprocess.CompletedProcess[str]
    requests: list[tuple[str, str]]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fetched]:
    """One online fetch from the stand-in: the download cache it fills is what the offline tests build from."""
    tmp = tmp_path_factory.mktemp("fetch")
    datasets = hub_datasets(tmp)
    with HubStandIn(datasets) as hub:
        result = fetch(tmp / "archive", tmp / "hf", hub.url)
    yield Fetched(tmp / "hf", tmp / "archive", datasets, result, list(hub.requests))


@pytest.mark.process
def test_fetch_downloads_both_datasets_into_the_hub_cache_and_builds(fetched: Fetched) -> None:
    assert (fetched.result.returncode, fetched.result.stderr) == (0, downloaded_lines(*fetched.datasets))
    manifest = current_manifest(fetched.archive)
    assert fetched.result.stdout.startswith(f"archive: {fetched.archive}, build {manifest['build_id']} (")
    assert "snapshot: 2025-07-28 (the dataset commit's date)" in fetched.result.stdout
    assert_bundled_papers_back(served_papers(fetched.archive))
    assert manifest["snapshot"] == "2025-07-28" and manifest["licence"] == "CC BY-SA 4.0"
    assert {(source["dataset"], source["commit"], source["commit_date"]) for source in manifest["sources"]} == {
        (name, dataset.sha, dataset.last_modified[:10]) for name, dataset in fetched.datasets.items()
    }
    for source in manifest["sources"]:  # kept in huggingface_hub's cache, not copied
        assert source["path"].startswith(str(fetched.hf_home / "hub" / f"datasets--{source['dataset'].replace('/', '--')}" / "snapshots"))
    for name, dataset in fetched.datasets.items():
        parquet = f"/datasets/{name}/resolve/{dataset.sha}/data/train-00000-of-00001.parquet"
        assert ("GET", f"/api/datasets/{name}/revision/main") in fetched.requests
        assert ("GET", f"/api/datasets/{name}/tree/{dataset.sha}") in fetched.requests
        assert ("HEAD", parquet) in fetched.requests and ("GET", parquet) in fetched.requests
    assert not [path for _, path in fetched.requests if path.endswith("README.md")]  # only data/*.parquet
    for name, dataset in fetched.datasets.items():  # pinned to the commit: offline runs find it through refs/main
        repository = fetched.hf_home / "hub" / f"datasets--{name.replace('/', '--')}"
        assert (repository / "refs" / "main").read_text() == dataset.sha


@pytest.mark.process
def test_offline_it_builds_from_the_cache_says_so_in_one_line_and_asks_nothing(fetched: Fetched, tmp_path: Path) -> None:
    with HubStandIn(fetched.datasets) as hub:
        result = fetch(tmp_path / "archive", fetched.hf_home, hub.url, HF_HUB_OFFLINE="1")
    assert hub.requests == []
    assert result.returncode == 0
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(
        "papercode: HF_HUB_OFFLINE is set; building from the cached download"
    )
    # a new archive, and the Hub not asked: the commit dates are unknown, the files' date stands in
    assert "(the newest source file's modification date (UTC))" in result.stdout
    assert_bundled_papers_back(served_papers(tmp_path / "archive"), snapshot=current_manifest(tmp_path / "archive")["snapshot"])


@pytest.mark.process
def test_when_the_hub_is_unreachable_it_builds_from_the_cache_and_keeps_the_commit_date(fetched: Fetched, tmp_path: Path) -> None:
    out = tmp_path / "archive"
    shutil.copytree(fetched.archive, out, symlinks=True)  # the previous archive knows each cached commit's date: the new one keeps it
    result = fetch(out, fetched.hf_home, closed_port())
    assert result.returncode == 0
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("papercode: cannot reach http://127.0.0.1:")
    assert "building from the cached download in" in result.stderr and fetched.datasets[PAPERS].sha[:7] in result.stderr
    assert "snapshot: 2025-07-28 (the dataset commit's date)" in result.stdout
    assert_bundled_papers_back(served_papers(out))


@pytest.mark.process
def test_with_no_network_and_nothing_cached_it_fails_in_one_line_and_keeps_the_archive(fetched: Fetched, tmp_path: Path) -> None:
    before = {path: path.read_bytes() for path in fetched.archive.rglob("*") if path.is_file()}
    result = fetch(fetched.archive, tmp_path / "empty-hf-home", closed_port())
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("papercode: archive fetch: cannot reach http://127.0.0.1:")
    assert f"{PAPERS} is not in the download cache {tmp_path / 'empty-hf-home' / 'hub'}" in result.stderr
    assert {path: path.read_bytes() for path in fetched.archive.rglob("*") if path.is_file()} == before


@pytest.mark.process
def test_a_dataset_the_hub_does_not_have_is_one_line(tmp_path: Path) -> None:
    datasets = hub_datasets(tmp_path)
    del datasets[LINKS]
    with HubStandIn(datasets) as hub:
        result = fetch(tmp_path / "archive", tmp_path / "hf", hub.url)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.count("\n") == 1 and f"{LINKS} was not found on {hub.url}" in result.stderr
    assert not (tmp_path / "archive").exists()
    assert not [path for method, path in hub.requests if "/resolve/" in path]  # both asked before anything is downloaded


def test_without_huggingface_hub_fetch_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    code = cli.main(["archive", "fetch", "--out", str(tmp_path / "archive")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "huggingface_hub" in err and INSTALL in err
    assert not (tmp_path / "archive").exists()


# -- a hostile Hub (or a proxy in the way): nothing it names is written outside the download cache ------------------

TRAVERSAL = "../../../../evil2/target"  # from the repository's folder in the cache: beside HF_HOME


def everything_under(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


def outside_the_cache(root: Path, hf_home: Path) -> set[Path]:
    """What exists under `root` besides HF_HOME, the folders that lead to it, and the test's own parquet files."""
    inside = hf_home.relative_to(root)
    return {
        path
        for path in everything_under(root)
        if not (
            path == inside or inside in path.parents or path in inside.parents or (path.suffix == ".parquet" and path.parent == Path("."))
        )
    }


@pytest.mark.process
def test_a_commit_that_is_not_a_commit_id_is_refused_before_anything_is_downloaded(tmp_path: Path) -> None:
    datasets = hub_datasets(tmp_path)
    for dataset in datasets.values():
        dataset.answered_sha = dataset.answered_commit = TRAVERSAL
    hf_home = tmp_path / "home" / "user" / "cache" / "hf"
    with HubStandIn(datasets) as hub:
        result = fetch(tmp_path / "archive", hf_home, hub.url)
    assert outside_the_cache(tmp_path, hf_home) == set()
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"papercode: archive fetch: {hub.url} answered the commit of {PAPERS} as {TRAVERSAL!r}, not a commit id "
        "(40 hex characters); nothing was downloaded. Next: check HF_ENDPOINT and any proxy in the way\n"
    )
    assert not [path for _, path in hub.requests if "/tree/" in path or "/resolve/" in path]
    assert not list(hf_home.rglob("refs/*"))  # no traversal kept for an offline run to follow


@pytest.mark.process
def test_an_answer_naming_another_commit_stops_the_download_before_it_writes_what_it_names(tmp_path: Path) -> None:
    datasets = hub_datasets(tmp_path)
    papers = datasets[PAPERS]
    papers.files["data/train-00001-of-00001.parquet"] = b"listed, never served"
    papers.hidden = frozenset({"data/train-00001-of-00001.parquet"})  # its 404 names the commit too
    papers.answered_commit = TRAVERSAL
    hf_home = tmp_path / "home" / "user" / "cache" / "hf"
    with HubStandIn(datasets) as hub:
        result = fetch(tmp_path / "archive", hf_home, hub.url)
    assert outside_the_cache(tmp_path, hf_home) == set()
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"papercode: archive fetch: downloading {PAPERS} from {hub.url}: the Hub answered /datasets/{PAPERS}/")
    assert f"with commit {TRAVERSAL!r}, not {papers.sha}; nothing it named was written. Next: check HF_ENDPOINT" in result.stderr
    assert not (tmp_path / "archive").exists()


@pytest.mark.process
def test_a_blob_name_that_is_a_path_stops_the_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = hub_datasets(tmp_path)
    hf_home = tmp_path / "home" / "user" / "cache" / "hf"
    monkeypatch.setattr(Dataset, "etag", staticmethod(lambda content: TRAVERSAL))
    with HubStandIn(datasets) as hub:
        result = fetch(tmp_path / "archive", hf_home, hub.url)
    assert outside_the_cache(tmp_path, hf_home) == set()
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.count("\n") == 1 and f"with ETag '\"{TRAVERSAL}\"', not a file name" in result.stderr


@pytest.mark.process
def test_offline_a_refs_main_that_is_not_a_commit_id_is_not_followed(fetched: Fetched, tmp_path: Path) -> None:
    hf_home = tmp_path / "home" / "hf"
    shutil.copytree(fetched.hf_home, hf_home, symlinks=True)
    repository = hf_home / "hub" / f"datasets--{PAPERS.replace('/', '--')}"
    (repository / "refs" / "main").write_text(TRAVERSAL)
    planted = tmp_path / "home" / "evil2" / "target" / "data"  # where the traversal leads: a snapshot of someone else's
    planted.mkdir(parents=True)
    shutil.copy(repository / "snapshots" / fetched.datasets[PAPERS].sha / "data" / "train-00000-of-00001.parquet", planted)
    result = fetch(tmp_path / "archive", hf_home, closed_port(), HF_HUB_OFFLINE="1")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"papercode: archive fetch: {repository / 'refs' / 'main'} holds {TRAVERSAL!r}, not a commit id; it was not followed. "
        f"Next: delete {repository} and fetch again with the network\n"
    )
    assert not (tmp_path / "archive").exists()


# -- a Hub that trickles: a stall deadline, and what was downloaded is kept ----------------------------------------


@pytest.mark.process
def test_a_download_that_trickles_stops_at_the_stall_deadline_and_the_next_run_goes_on(tmp_path: Path) -> None:
    datasets = hub_datasets(tmp_path)
    datasets[LINKS].trickle = frozenset({"data/train-00000-of-00001.parquet"})  # a byte every 0.2 s, inside any read timeout
    hf_home = tmp_path / "hf"
    with HubStandIn(datasets) as hub:
        result = fetch(tmp_path / "archive", hf_home, hub.url, PAPERCODE_FETCH_STALL_TIMEOUT="1", timeout=120)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == downloaded_lines(PAPERS) + (
        f"papercode: archive fetch: downloading {LINKS} from {hub.url}: stalled: under 64 KiB arrived in 1 s. "
        "Next: run it again (the files already downloaded are kept), or allow longer with --stall-timeout SECONDS\n"
    )
    assert not (tmp_path / "archive").exists()
    datasets[LINKS].trickle = frozenset()
    with HubStandIn(datasets) as hub:
        again = fetch(tmp_path / "archive", hf_home, hub.url)
    assert (again.returncode, again.stderr) == (0, downloaded_lines(LINKS, *CATALOGUES))  # the papers' file was kept
    assert [method for method, path in hub.requests if path.endswith(".parquet")] == ["HEAD", "GET"] * 4
    assert_bundled_papers_back(served_papers(tmp_path / "archive"))


@pytest.mark.process
def test_the_stall_deadline_is_a_setting_checked_like_the_others(tmp_path: Path) -> None:
    result = fetch(tmp_path / "archive", tmp_path / "hf", closed_port(), PAPERCODE_FETCH_STALL_TIMEOUT="soon")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "papercode: PAPERCODE_FETCH_STALL_TIMEOUT must be a number of seconds, got 'soon'. Next: see papercode archive fetch --help\n"
    )
