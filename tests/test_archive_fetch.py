"""`papercode archive fetch` against a loopback stand-in for the Hugging Face Hub (tests/hub_stand_in.py).

huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE once, at import, so every fetch runs in a fresh
`python -m papercode` process with those pointed at the stand-in and at temporary directories. Never the real
Hub: no request leaves 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from archive_tables import assert_bundled_papers_back, bundled_rows, current_manifest, served_papers, write_parquet
from conftest import SERVER_DIR
from hub_stand_in import Dataset, HubStandIn
from papercode.cli import main as cli

PAPERS, LINKS = "pwc-archive/papers-with-abstracts", "pwc-archive/links-between-paper-and-code"
INSTALL = "pip install 'papercode[archive]'"


def hub_datasets(tmp: Path) -> dict[str, Dataset]:
    """The two datasets as the mirror lays them out (`data/train-*.parquet`), plus a file the fetch must skip."""
    papers, links = bundled_rows()
    return {
        PAPERS: Dataset(
            {"data/train-00000-of-00001.parquet": write_parquet(tmp / "papers.parquet", papers).read_bytes(), "README.md": b"# papers"},
            last_modified="2025-07-28T09:10:11.000Z",
        ),
        LINKS: Dataset(
            {"data/train-00000-of-00001.parquet": write_parquet(tmp / "links.parquet", links).read_bytes()},
            last_modified="2025-07-27T20:00:00.000Z",
        ),
    }


def fetch(out: Path, hf_home: Path, endpoint: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """`papercode archive fetch --out OUT` in a fresh process, with a clean Hugging Face environment."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HF_", "HUGGINGFACE_")) and name.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environment.update(
        PYTHONPATH=str(SERVER_DIR),  # this checkout's code
        HF_ENDPOINT=endpoint,
        HF_HOME=str(hf_home),
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        NO_PROXY="127.0.0.1,localhost",
        **extra,
    )
    command = [sys.executable, "-m", "papercode", "archive", "fetch", "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300, check=False)


def closed_port() -> str:
    """An endpoint on 127.0.0.1 where nothing listens: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


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
    assert (fetched.result.returncode, fetched.result.stderr) == (0, "")
    manifest = current_manifest(fetched.archive)
    assert fetched.result.stdout.startswith(f"archive: {fetched.archive} (build {manifest['build_id']}, ")
    assert "snapshot: 2025-07-28 (the dataset commit's date)" in fetched.result.stdout
    assert_bundled_papers_back(served_papers(fetched.archive))
    assert manifest["snapshot"] == "2025-07-28" and manifest["licence"] == "CC BY-SA 4.0"
    assert {(source["dataset"], source["commit"], source["commit_date"]) for source in manifest["sources"]} == {
        (PAPERS, fetched.datasets[PAPERS].sha, "2025-07-28"),
        (LINKS, fetched.datasets[LINKS].sha, "2025-07-27"),
    }
    for source in manifest["sources"]:  # kept in huggingface_hub's cache, not copied
        assert source["path"].startswith(str(fetched.hf_home / "hub" / f"datasets--{source['dataset'].replace('/', '--')}" / "snapshots"))
    for name, dataset in fetched.datasets.items():
        parquet = f"/datasets/{name}/resolve/{dataset.sha}/data/train-00000-of-00001.parquet"
        assert ("GET", f"/api/datasets/{name}/revision/main") in fetched.requests
        assert ("GET", f"/api/datasets/{name}/tree/{dataset.sha}") in fetched.requests
        assert ("HEAD", parquet) in fetched.requests and ("GET", parquet) in fetched.requests
    assert not [path for _, path in fetched.requests if path.endswith("README.md")]  # only data/*.parquet


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


def test_without_huggingface_hub_fetch_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    code = cli.main(["archive", "fetch", "--out", str(tmp_path / "archive")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "huggingface_hub" in err and INSTALL in err
    assert not (tmp_path / "archive").exists()
