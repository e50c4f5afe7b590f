"""`papercode archive fetch` in a fresh process against the loopback Hub stand-in (tests/support/hub_stand_in.py), for the
fetch tests: the archive's two datasets as the mirror lays them out, the fetch itself, what it says per file.

huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE once, at import, so every fetch runs in a fresh
`python -m papercode` process with those pointed at the stand-in and at temporary directories. Never the real Hub:
no request leaves 127.0.0.1.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from papercode.archive.fetch import CATALOGUES
from tests.support import leaderboard_tables
from tests.support.archive_tables import bundled_rows, write_parquet
from tests.support.build_phases import phases_left_out
from tests.support.checkout import THIS_CHECKOUT
from tests.support.hub_stand_in import Dataset

PAPERS, LINKS = "pwc-archive/papers-with-abstracts", "pwc-archive/links-between-paper-and-code"


def hub_datasets(tmp: Path) -> dict[str, Dataset]:
    """The archive's datasets as the mirror lays them out (`data/train-*.parquet`), plus a file the fetch must skip: the
    papers and links of the bundled papers, and the leaderboards' three (`catalogue_datasets`)."""
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
        **catalogue_datasets(tmp),
    }


def catalogue_datasets(tmp: Path) -> dict[str, Dataset]:
    """The leaderboards' three datasets (`leaderboard_tables.sample_catalogues`)."""
    tables = dict(zip(CATALOGUES, leaderboard_tables.sample_catalogues(), strict=True))
    return {
        name: Dataset(
            {
                "data/train-00000-of-00001.parquet": leaderboard_tables.write_parquet(
                    tmp / f"{name.rsplit('/', 1)[1]}.parquet", rows
                ).read_bytes()
            }
        )
        for name, rows in tables.items()
    }


def fetch(out: Path, hf_home: Path, endpoint: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
    """`papercode archive fetch --out OUT` in a fresh process, with a clean Hugging Face environment."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HF_", "HUGGINGFACE_")) and name.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    environment.update(
        **THIS_CHECKOUT,  # this checkout's code, not the virtualenv's install
        HF_ENDPOINT=endpoint,
        HF_HOME=str(hf_home),
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        NO_PROXY="127.0.0.1,localhost",
        **extra,
    )
    command = [sys.executable, "-m", "papercode", "archive", "fetch", "--out", str(out)]
    return phases_left_out(subprocess.run(command, capture_output=True, text=True, env=environment, timeout=timeout, check=False))


def closed_port() -> str:
    """An endpoint on 127.0.0.1 where nothing listens: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def downloaded_lines(*datasets: str) -> str:
    """What `fetch` says on stderr off a terminal: one line per file downloaded (each dataset here has one)."""
    return "".join(f"papercode: downloaded {name} data/train-00000-of-00001.parquet (0.0 MB)\n" for name in datasets)
