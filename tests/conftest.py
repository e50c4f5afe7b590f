"""Fixtures every test folder shares: the bundled corpus, in-memory MCP clients in both protocol eras (`client`, and
`connect` for a server of a test's own), records loaded as the server loads them, records laid over a small archive
(`overlaid`), and the rules every test runs under (no subprocess outside `-m process`, no download leaving 127.0.0.1,
scratch files in memory).

The helpers tests import (record builders, archive tables, the Hub and GitHub stand-ins, ...) live in `tests/support/`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from papercode.corpus.stages import Corpus
from papercode.edge.app import PapercodeServer, build_server
from papercode.settings import bundled_records_dir
from tests.support.archive_overlay import build_small_archive, overlay_records
from tests.support.checkout import SERVER_DIR
from tests.support.mcp import MODES, Connect, connected
from tests.support.records import synthetic_record_list, write_records


def _scratch_in_memory() -> None:
    """Temporary files on tmpfs, when the machine has room there and TMPDIR does not say otherwise.

    Every corpus a test loads commits a tantivy index, and tantivy fsyncs what it commits: on a disk that
    costs ~0.2 s a corpus, and seconds while other processes write. Tests need no durability, so their
    scratch space (tmp_path, and the indexes of corpora loaded without a cache) lives in memory.
    """
    if os.environ.get("TMPDIR"):
        return
    try:
        room = os.statvfs("/dev/shm")
    except OSError:
        return
    if os.access("/dev/shm", os.W_OK | os.X_OK) and room.f_bavail * room.f_frsize >= 2 << 30:
        os.environ["TMPDIR"] = "/dev/shm"  # child processes too
        tempfile.tempdir = None  # so tempfile (and pytest's tmp_path) read TMPDIR again


_scratch_in_memory()

# The code under test is this checkout's (pytest puts server/ first on sys.path: pyproject.toml's `pythonpath`), and
# so is every child process's: those that inherit the environment get it here, those given an environment of their
# own are given `tests.support.checkout.THIS_CHECKOUT`.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SERVER_DIR), os.environ.get("PYTHONPATH")]))


@pytest.fixture(autouse=True)
def subprocesses_only_where_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The default run starts no subprocess: a test that does is marked `process` (or `clients`), so the split between
    the fast run and `-m process` stays honest. Refused with an OSError (as a failed start would be) and failed here,
    whatever the code under test made of the error."""
    if request.node.get_closest_marker("process") or request.node.get_closest_marker("clients"):
        yield
        return
    started: list[object] = []

    def refused(args: object, *rest: object, **options: object) -> None:
        started.append(args)
        raise OSError(f"a test not marked `process` started a subprocess: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", refused)
    yield
    assert not started, f"started a subprocess without the `process` mark: {started}"


@pytest.fixture(autouse=True)
def downloads_stay_local(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch the internet: a download nobody pointed at a fixture server goes to a closed local port."""
    monkeypatch.setenv("PAPERCODE_CODE_BASE_URL", "http://127.0.0.1:9")


@pytest.fixture(autouse=True)
def no_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx2 honours proxy variables; requests to the fixture server must go to it directly."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """The bundled records (the two real papers)."""
    return Corpus.load([bundled_records_dir()])


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def server(corpus: Corpus) -> PapercodeServer:
    """One server over the bundled corpus; every in-memory client connects to it afresh."""
    return build_server(lambda: corpus)


@pytest.fixture
async def client(server: PapercodeServer, mode: str) -> AsyncIterator[Client]:
    async with Client(server, mode=mode) as connection:
        yield connection


@pytest.fixture
def connect() -> Connect:
    """A server of the test's own with a client on it: `async with connect(corpus, mode="legacy") as client:` (see
    `tests.support.mcp.connected` for the rest of what it takes)."""
    return connected


@pytest.fixture
def load_corpus(tmp_path: Path) -> Callable[[list[dict[str, Any]]], Corpus]:
    """Write records to a fresh directory and load them as the server does."""
    counter = iter(range(1_000))

    def load(records: list[dict[str, Any]]) -> Corpus:
        return Corpus.load([write_records(tmp_path / f"records{next(counter)}", records)])

    return load


@pytest.fixture(scope="session")
def synthetic_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    directory = tmp_path_factory.mktemp("synthetic")
    with (directory / "papers.jsonl").open("wb") as out:
        for record in synthetic_record_list():
            out.write(orjson.dumps(record) + b"\n")
    return Corpus.load([directory])


@pytest.fixture(scope="session")
def overlaid(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the records, the archive directory beneath them): built once, never written by a test that uses it."""
    root = tmp_path_factory.mktemp("overlaid")
    return overlay_records(root / "records"), build_small_archive(root / "sources", root / "archive")
