"""Verified code end to end: the store, on-demand downloads, `get_code`, `code://`, and `papercode materialize`.

The source files are written here; each sample's `code_sha256` is the hash of a harvested module written out
by hand below (not computed by the recipe under test), so a wrong rebuild fails. Downloads go to a recording
HTTP server on 127.0.0.1 standing in for raw.githubusercontent.com; nothing touches the internet.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextResourceContents

from conftest import make_record, make_sample, write_records
from fixture_server import FixtureServer, reply, serve
from papercode.cli import main as cli
from papercode.corpus.stages import Corpus
from papercode.edge.app import build_server
from papercode.verified.harvest import interpreter
from papercode.verified.materialize import Materializer, VerifiedCode
from papercode.verified.sources import SourceFetcher
from papercode.verified.store import MAX_CODE_BYTES, CodeStore

pytestmark = pytest.mark.anyio

MODEL_PY = b'''"""A model file with two harvested functions."""
import math
import numpy as np
from os import path

SCALE = 2


def helper(x):
    return np.sqrt(math.fabs(x)) * SCALE


def entry(x):
    return helper(x) + 1


def other():
    return path.sep
'''
# The harvested modules of `entry` and `other`, as the recipe must rebuild them.
ENTRY_CODE = (
    "import math\nimport numpy as np\n\nSCALE = 2\n\ndef helper(x):\n    return np.sqrt(math.fabs(x)) * SCALE\n\n"
    "def entry(x):\n    return helper(x) + 1\n"
)
OTHER_CODE = "from os import path\n\ndef other():\n    return path.sep\n"


def prefix(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()[:16]


ENTRY_SHA, OTHER_SHA = prefix(ENTRY_CODE), prefix(OTHER_CODE)
CHANGED_SHA = prefix(ENTRY_CODE.replace("+ 1", "+ 2"))  # harvested before the file changed
REPO, PATH = "lab/model", "src/model.py"
RAW_MODEL = f"/{REPO}/HEAD/{PATH}"

SAMPLES = {
    "entry": make_sample(ENTRY_SHA, repo=REPO, path=PATH, entry="entry", licence="MIT"),
    "other": make_sample(OTHER_SHA, repo=REPO, path=PATH, entry="other", licence="MIT", status="ran_honours"),
    "changed": make_sample(CHANGED_SHA, repo="lab/changed", path=PATH, entry="entry"),
    "gone": make_sample(prefix("gone"), repo=REPO, path="src/gone.py", entry="entry"),
    "no_entry": make_sample(prefix("no entry"), repo=REPO, path=PATH, entry="vanished"),
    "closed": make_sample(prefix("closed"), repo="lab/closed", path=PATH, entry="entry", licence="NONE", inline_ok=False),
    "traversal": make_sample(prefix("traversal"), repo=REPO, path="../../etc/passwd", entry="entry"),
    "foreign": make_sample(prefix("foreign"), repo="evil.example:8080/x", path=PATH, entry="entry"),
    "javascript": make_sample(prefix("js"), repo=REPO, path="src/model.js", entry="entry", language="javascript"),
}


@pytest.fixture
def records(tmp_path: Path) -> Path:
    papers = [
        make_record("2001.00001", "verified-paper", [SAMPLES["entry"], SAMPLES["other"]], title="Verified"),
        make_record("2001.00002", "other-paper", [sample for name, sample in SAMPLES.items() if name not in ("entry", "other")]),
    ]
    return write_records(tmp_path / "records", papers)


@pytest.fixture
def corpus(records: Path) -> Corpus:
    return Corpus.load([records])


@pytest.fixture
def github() -> Iterator[FixtureServer]:
    """The raw-file server: src/model.py for lab/model, a changed copy for lab/changed, 404 for anything else."""
    for server in serve():
        server.route(RAW_MODEL, reply(200, MODEL_PY))
        server.route(f"/lab/changed/HEAD/{PATH}", reply(200, MODEL_PY))
        yield server


@pytest.fixture
def store(tmp_path: Path) -> CodeStore:
    return CodeStore(tmp_path / "code")


Connect = Callable[..., Any]


@pytest.fixture
def connect(corpus: Corpus, store: CodeStore, mode: str) -> Connect:
    """A client of a server over `corpus` and `store`; downloading from `base_url` when one is given."""

    @asynccontextmanager
    async def open_client(base_url: str | None = None, timeout: float = 2.0) -> AsyncIterator[Client]:
        fetcher = SourceFetcher(base_url, timeout=timeout) if base_url else None
        code = VerifiedCode(store, Materializer(store, fetcher=fetcher) if fetcher else None)
        try:
            async with Client(build_server(lambda: corpus, code), mode=mode) as client:
                yield client
        finally:
            await code.aclose()

    return open_client


async def get_code(client: Client, sha: str) -> dict[str, Any]:
    result = await client.call_tool("get_code", {"code_sha256": sha})
    assert result.is_error is False, result.content
    assert result.structured_content is not None
    return result.structured_content


# -- the store ------------------------------------------------------------------------------------


def test_store_serves_a_file_only_when_its_content_hashes_to_its_name(store: CodeStore) -> None:
    path = store.write(ENTRY_CODE)
    assert path.name == f"{ENTRY_SHA}.py" and path.read_text() == ENTRY_CODE
    stored = store.read(ENTRY_SHA)
    assert stored is not None and stored.code == ENTRY_CODE
    path.write_text(ENTRY_CODE + "# tampered\n")
    assert store.read(ENTRY_SHA) is None
    (problem,) = store.problems
    assert problem.code == "code_mismatch" and problem.path == str(path) and "never served" in problem.reason


def test_store_writes_leave_no_temporary_files(store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    store.write(ENTRY_CODE)  # rewriting the same code replaces it in place
    store.write(OTHER_CODE)
    assert sorted(path.name for path in store.write_dir.iterdir()) == sorted([f"{ENTRY_SHA}.py", f"{OTHER_SHA}.py"])  # type: ignore[union-attr]


def test_store_verify_all_counts_good_and_bad_files(store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    assert store.write_dir is not None
    (store.write_dir / f"{OTHER_SHA}.py").write_text("not the code\n")
    (store.write_dir / "not-a-hash.py").write_text("x = 1\n")
    assert store.verify_all() == (1, 2)
    assert sorted(Path(problem.path).name for problem in store.problems) == sorted([f"{OTHER_SHA}.py", "not-a-hash.py"])


def test_store_does_not_open_a_fifo(store: CodeStore) -> None:
    import os

    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    os.mkfifo(store.write_dir / f"{ENTRY_SHA}.py")
    assert store.read(ENTRY_SHA) is None  # would block forever if it opened the FIFO for reading
    assert [problem.code for problem in store.problems] == ["code_mismatch"]


def test_a_records_directory_can_ship_a_code_folder(records: Path, tmp_path: Path) -> None:
    CodeStore(records / "code").write(ENTRY_CODE)
    store = CodeStore.for_records(tmp_path / "user-code", [records])
    stored = store.read(ENTRY_SHA)
    assert stored is not None and stored.path == records / "code" / f"{ENTRY_SHA}.py"


# -- get_code from the store ---------------------------------------------------------------------


async def test_get_code_serves_stored_code_proven_by_its_hash(connect: Connect, store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    async with connect() as client:
        answer = await get_code(client, ENTRY_SHA[:10])
    assert answer["code"] == ENTRY_CODE and prefix(answer["code"]) == ENTRY_SHA
    assert answer["verified"] is True and answer["source"] == "store"
    assert answer["requires"] == ["numpy"]
    assert (answer["repo"], answer["path"], answer["licence"]) == (REPO, PATH, "MIT")
    assert [match["entry"] for match in answer["matches"]] == ["entry"]
    assert "withheld" not in answer and "note" not in answer


async def test_code_resource_adds_the_code_as_python(connect: Connect, store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    async with connect() as client:
        contents = (await client.read_resource(f"code://{ENTRY_SHA}")).contents
    answer, code = contents
    assert isinstance(answer, TextResourceContents) and answer.mime_type == "application/json"
    assert json.loads(answer.text)["code"] == ENTRY_CODE
    assert isinstance(code, TextResourceContents) and code.mime_type == "text/x-python" and code.text == ENTRY_CODE


async def test_code_resource_without_code_is_the_answer_alone(connect: Connect) -> None:
    async with connect() as client:
        (answer,) = (await client.read_resource(f"code://{ENTRY_SHA}")).contents
    assert isinstance(answer, TextResourceContents) and json.loads(answer.text)["withheld"] == "not_materialized"


async def test_harvested_code_marks_the_samples_whose_code_is_stored(connect: Connect, store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    async with connect() as client:
        result = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"})
    assert result.structured_content is not None
    assert {sample["entry"]: sample.get("stored") for sample in result.structured_content["samples"]} == {"entry": True, "other": None}


async def test_a_tampered_store_file_is_never_served_and_is_reported(connect: Connect, store: CodeStore) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    (store.write_dir / f"{ENTRY_SHA}.py").write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3"))
    async with connect() as client:
        answer = await get_code(client, ENTRY_SHA)
        stats = (await client.call_tool("corpus_stats", {})).structured_content
        report = json.loads((await client.read_resource("corpus://load-report")).contents[0].text)  # type: ignore[union-attr]
    assert "code" not in answer and answer["withheld"] == "not_materialized"
    assert stats is not None and stats["load"]["by_reason"] == {"code_mismatch": 1} and stats["load"]["rejected"] == 1
    assert [problem["code"] for problem in report["problems"]] == ["code_mismatch"]


def _stored(result: Any) -> dict[str, Any]:
    assert result.structured_content is not None
    return {sample["entry"]: sample.get("stored") for sample in result.structured_content["samples"]}


@pytest.mark.parametrize(
    "plant",
    [
        pytest.param(lambda path: path.write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3")), id="wrong-content"),
        pytest.param(lambda path: path.symlink_to("/etc/passwd"), id="symlink-to-etc-passwd"),
        pytest.param(lambda path: path.write_bytes(ENTRY_CODE.encode() + b"#" * MAX_CODE_BYTES), id="oversized"),
    ],
)
async def test_stored_is_true_only_for_code_get_code_serves(connect: Connect, store: CodeStore, plant: Callable[[Path], object]) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    plant(store.write_dir / f"{ENTRY_SHA}.py")
    async with connect() as client:
        listed = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"})
        answer = await get_code(client, ENTRY_SHA)
        again = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"})
    assert answer["withheld"] == "not_materialized" and "code" not in answer
    assert _stored(listed) == _stored(again) == {"entry": None, "other": None}
    (problem,) = store.problems
    assert problem.code == "code_mismatch" and "never" in problem.reason


def _replace(path: Path, data: bytes) -> None:
    """A new file in place of the old (another inode), as a writer renaming into place does."""
    staged = path.with_suffix(".staged")
    staged.write_bytes(data)
    staged.replace(path)


def test_stored_lookups_cost_a_stat_and_see_a_file_change(store: CodeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    path = store.write(ENTRY_CODE)
    reads: list[Path] = []
    verified = CodeStore._verified

    def counting(self: CodeStore, where: Path, sha: str) -> str | None:
        reads.append(where)
        return verified(self, where, sha)

    monkeypatch.setattr(CodeStore, "_verified", counting)
    started = time.perf_counter()
    assert all(store.contains(ENTRY_SHA) for _ in range(1_000))
    assert (time.perf_counter() - started) / 1_000 < 0.001  # under a millisecond each
    assert reads == []  # verified when written: never read again while unchanged
    _replace(path, ENTRY_CODE.replace("SCALE = 2", "SCALE = 3").encode())
    assert store.contains(ENTRY_SHA) is False and store.contains(ENTRY_SHA) is False
    assert reads == [path]  # the changed file is read once, then its verdict is remembered
    _replace(path, ENTRY_CODE.encode())
    assert store.contains(ENTRY_SHA) is True and reads == [path, path]


@pytest.mark.parametrize("repair", ["fixed", "deleted"])
async def test_a_bad_store_file_fixed_or_deleted_is_no_longer_counted(connect: Connect, store: CodeStore, repair: str) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    path = store.write_dir / f"{ENTRY_SHA}.py"
    path.write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3"))
    async with connect() as client:
        assert (await get_code(client, ENTRY_SHA))["withheld"] == "not_materialized"
        before = (await client.call_tool("corpus_stats", {})).structured_content
        if repair == "fixed":
            path.write_text(ENTRY_CODE)
            answer = await get_code(client, ENTRY_SHA)
            assert answer["verified"] is True and answer["code"] == ENTRY_CODE
        else:
            path.unlink()
        after = (await client.call_tool("corpus_stats", {})).structured_content
        report = json.loads((await client.read_resource("corpus://load-report")).contents[0].text)  # type: ignore[union-attr]
    assert before is not None and before["load"]["by_reason"] == {"code_mismatch": 1} and before["load"]["rejected"] == 1
    assert after is not None and after["load"]["by_reason"] == {} and after["load"]["rejected"] == 0
    assert report["problems"] == [] and store.problems == []


# -- get_code on demand ---------------------------------------------------------------------------


async def test_get_code_downloads_verifies_and_stores_then_serves_from_the_store(
    connect: Connect, github: FixtureServer, store: CodeStore
) -> None:
    async with connect(github.base_url) as client:
        first = await get_code(client, ENTRY_SHA)
        second = await get_code(client, ENTRY_SHA)
    assert first["code"] == ENTRY_CODE and first["source"] == "fetched" and first["verified"] is True
    assert second["code"] == ENTRY_CODE and second["source"] == "store"
    assert github.requests == [RAW_MODEL]
    assert (store.write_dir / f"{ENTRY_SHA}.py").read_text() == ENTRY_CODE  # type: ignore[operator]


async def test_a_changed_file_is_a_hash_mismatch_that_is_remembered(connect: Connect, github: FixtureServer) -> None:
    async with connect(github.base_url) as client:
        first = await get_code(client, CHANGED_SHA)
        second = await get_code(client, CHANGED_SHA)
    assert "code" not in first and first["withheld"] == "hash_mismatch"
    assert interpreter() in first["note"] and first["note"].startswith("hash_mismatch:") and "Next:" in first["note"]
    assert second == first
    assert github.requests == [f"/lab/changed/HEAD/{PATH}"]  # asked once


@pytest.mark.parametrize(("sample", "withheld"), [("gone", "file_missing"), ("no_entry", "entry_missing")])
async def test_get_code_says_why_a_file_gives_no_verified_code(
    connect: Connect, github: FixtureServer, sample: str, withheld: str
) -> None:
    async with connect(github.base_url) as client:
        answer = await get_code(client, SAMPLES[sample]["code_sha256_prefix"])
    assert "code" not in answer and answer["withheld"] == withheld and answer["note"].startswith(f"{withheld}:")


@pytest.mark.parametrize(
    ("sample", "withheld"),
    [
        ("closed", "licence_restricted"),
        ("traversal", "invalid_location"),
        ("foreign", "invalid_location"),
        ("javascript", "unsupported_language"),
    ],
)
async def test_get_code_makes_no_request_for_what_must_not_or_cannot_be_fetched(
    connect: Connect, github: FixtureServer, sample: str, withheld: str
) -> None:
    async with connect(github.base_url) as client:
        answer = await get_code(client, SAMPLES[sample]["code_sha256_prefix"])
    assert "code" not in answer and answer["withheld"] == withheld
    assert github.requests == []


async def test_offline_get_code_never_downloads(connect: Connect, github: FixtureServer) -> None:
    async with connect() as client:
        answer = await get_code(client, ENTRY_SHA)
    assert answer["withheld"] == "not_materialized" and "papercode materialize" in answer["note"]
    assert github.requests == []


@pytest.fixture
def silent() -> Iterator[FixtureServer]:
    """A server that accepts the request for src/model.py and never answers (until teardown)."""
    for server in serve():

        def never_answer(request: object, release: threading.Event = server.release) -> None:
            release.wait(5)

        server.route(RAW_MODEL, never_answer)
        yield server


async def test_a_slow_server_answers_fetch_failed_instead_of_hanging(connect: Connect, silent: FixtureServer) -> None:
    async with connect(silent.base_url, timeout=0.3) as client:
        first = await get_code(client, ENTRY_SHA)
        again = await get_code(client, OTHER_SHA)  # same base, circuit open: answered without a request
    assert first["withheld"] == "fetch_failed" and "timed out" in first["note"]
    assert again["withheld"] == "fetch_failed"
    assert silent.requests == [RAW_MODEL]


async def test_open_world_hint_is_true_only_while_fetching(connect: Connect, github: FixtureServer) -> None:
    for base_url, expected in ((github.base_url, True), (None, False)):
        async with connect(base_url) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["get_code"].annotations is not None and tools["get_code"].annotations.open_world_hint is expected
        assert all(tool.annotations and tool.annotations.open_world_hint is False for name, tool in tools.items() if name != "get_code")


# -- papercode materialize and check --------------------------------------------------------------


def materialize(records: Path, tmp_path: Path, *flags: str) -> int:
    return cli.main(["materialize", "--records", str(records), "--code-dir", str(tmp_path / "code"), "--no-cache", *flags])


@pytest.fixture
def clones(tmp_path: Path) -> Path:
    root = tmp_path / "clones"
    for repo in (REPO, "lab/changed"):
        (root / repo / "src").mkdir(parents=True)
        (root / repo / PATH).write_bytes(MODEL_PY)
    return root


def test_materialize_from_local_clones(records: Path, tmp_path: Path, clones: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert materialize(records, tmp_path, "--repos", str(clones)) == 0
    out = capsys.readouterr().out
    assert f"materialized 9 samples with {interpreter()}" in out
    for outcome, count in [
        ("verified", 2),
        ("hash_mismatch", 1),
        ("file_missing", 1),
        ("entry_missing", 1),
        ("licence_restricted", 1),
        ("invalid_location", 2),
        ("unsupported_language", 1),
    ]:
        assert any(line.split()[:2] == [outcome, str(count)] for line in out.splitlines()), (outcome, out)
    assert sorted(path.name for path in (tmp_path / "code").iterdir()) == sorted([f"{ENTRY_SHA}.py", f"{OTHER_SHA}.py"])
    assert f"{CHANGED_SHA} lab/changed/{PATH}:entry" in out  # failures are listed with where and why


def test_materialize_again_skips_what_is_stored(records: Path, tmp_path: Path, clones: Path, capsys: pytest.CaptureFixture[str]) -> None:
    materialize(records, tmp_path, "--repos", str(clones))
    capsys.readouterr()
    assert materialize(records, tmp_path, "--repos", str(clones), "--paper", "2001.00001") == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.split()[:2] == ["already_stored", "2"] for line in lines)
    assert not any(line.split()[:1] == ["verified"] for line in lines)


def test_materialize_fetch_asks_once_per_file(
    records: Path, tmp_path: Path, github: FixtureServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert materialize(records, tmp_path, "--fetch", "--code-base-url", github.base_url) == 0
    assert sorted(github.requests) == sorted([RAW_MODEL, f"/lab/changed/HEAD/{PATH}", f"/{REPO}/HEAD/src/gone.py"])
    assert (tmp_path / "code" / f"{ENTRY_SHA}.py").read_text() == ENTRY_CODE


def test_materialize_filters_by_status_and_repo(records: Path, tmp_path: Path, clones: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert materialize(records, tmp_path, "--repos", str(clones), "--status", "ran_honours", "--repo", f"https://github.com/{REPO}") == 0
    assert "materialized 1 samples" in capsys.readouterr().out
    assert [path.name for path in (tmp_path / "code").iterdir()] == [f"{OTHER_SHA}.py"]


def test_materialize_exits_1_when_nothing_could_be_verified(
    records: Path, tmp_path: Path, clones: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert materialize(records, tmp_path, "--repos", str(clones), "--paper", "2001.00002") == 1
    assert "nothing could be verified" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ((), "materialize needs a source"),
        (("--repos", "/nonexistent/clones"), "is not a directory"),
        (("--fetch", "--paper", "9999.99999"), "not_found: no paper with arXiv id 9999.99999"),
        (("--fetch", "--status", "finished"), "invalid_argument: unknown status"),
        (("--fetch", "--code-base-url", "ftp://example.org"), "--code-base-url must be an http(s) URL"),
    ],
)
def test_materialize_refuses_bad_arguments_in_one_line(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], message: str
) -> None:
    assert materialize(records, tmp_path, *flags) == 2
    error = capsys.readouterr().err
    assert error.startswith("papercode: ") and message in error and error.count("\n") == 1


def test_check_reports_a_bad_store_file(records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = CodeStore(tmp_path / "code")
    code.write(ENTRY_CODE)
    (tmp_path / "code" / f"{OTHER_SHA}.py").write_text("tampered\n")
    assert cli.main(["check", "--records", str(records), "--code-dir", str(tmp_path / "code")]) == 1
    out = capsys.readouterr().out
    assert "code store: 1 verified, 1 bad" in out and "code_mismatch" in out and f"{OTHER_SHA}.py" in out
