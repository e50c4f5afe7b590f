"""Verified code end to end: the store, on-demand downloads, `get_code` (at the queries layer), what the edge adds
(`code://` with the code as text/x-python, the store's marks and problems in answers), and `papercode materialize`.

The source files are written here; each sample's `code_sha256` is the hash of a harvested module written out
by hand below (not computed by the recipe under test), so a wrong rebuild fails. Downloads go to a recording
HTTP server on 127.0.0.1 standing in for raw.githubusercontent.com; nothing touches the internet.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import TextResourceContents

from papercode.answers import overview, twins
from papercode.cli import main as cli
from papercode.corpus.stages import Corpus
from papercode.edge.app import build_server
from papercode.edge.tools import PapercodeTools
from papercode.verified.harvest import interpreter
from papercode.verified.materialize import Materializer, VerifiedCode
from papercode.verified.sources import SourceFetcher
from papercode.verified.store import MAX_CODE_BYTES, CodeStore
from tests.support.fixture_server import FixtureServer, reply, serve
from tests.support.mcp import Connect
from tests.support.records import make_record, make_sample, write_records
from tests.support.tool_answers import code_answer, flat_samples, shown

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


PAPERS = [
    make_record("2001.00001", "verified-paper", [SAMPLES["entry"], SAMPLES["other"]], title="Verified"),
    make_record("2001.00002", "other-paper", [sample for name, sample in SAMPLES.items() if name not in ("entry", "other")]),
]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The records, read by every test here and written by none (code stores live beside them, in tmp_path)."""
    return write_records(tmp_path_factory.mktemp("verified") / "records", PAPERS)


@pytest.fixture(scope="module")
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


Verified = Callable[..., VerifiedCode]


@pytest.fixture
async def verified(store: CodeStore) -> AsyncIterator[Verified]:
    """get_code's code over `store`, downloading from `base_url` when one is given (as `papercode serve` builds it)."""
    made: list[VerifiedCode] = []

    def make(base_url: str | None = None, timeout: float = 2.0, materialize_flags: tuple[str, ...] = ()) -> VerifiedCode:
        fetcher = SourceFetcher(base_url, timeout=timeout) if base_url else None
        made.append(VerifiedCode(store, Materializer(store, fetcher=fetcher) if fetcher else None, materialize_flags=materialize_flags))
        return made[-1]

    yield make
    for code in made:
        await code.aclose()


@pytest.fixture
async def client(corpus: Corpus, verified: Verified, mode: str, connect: Connect) -> AsyncIterator[Client]:
    """A client of the server over `corpus` and the store, not downloading."""
    async with connect(corpus, verified(), mode=mode) as connected:
        yield connected


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
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    os.mkfifo(store.write_dir / f"{ENTRY_SHA}.py")
    assert store.read(ENTRY_SHA) is None  # would block forever if it opened the FIFO for reading
    assert [problem.code for problem in store.problems] == ["code_mismatch"]


def test_a_records_directory_can_ship_a_code_folder(tmp_path: Path) -> None:
    records = write_records(tmp_path / "records", PAPERS)
    CodeStore(records / "code").write(ENTRY_CODE)
    store = CodeStore.for_records(tmp_path / "user-code", [records])
    stored = store.read(ENTRY_SHA)
    assert stored is not None and stored.path == records / "code" / f"{ENTRY_SHA}.py"


# -- get_code from the store, at the queries layer ------------------------------------------------


async def test_get_code_serves_stored_code_proven_by_its_hash(corpus: Corpus, store: CodeStore, verified: Verified) -> None:
    store.write(ENTRY_CODE)
    got = await code_answer(corpus, ENTRY_SHA[:10], verified())
    assert got["code"] == ENTRY_CODE and prefix(got["code"]) == ENTRY_SHA
    assert got["verified"] is True and got["source"] == "store"
    assert got["requires"] == ["numpy"]
    assert (got["repo"], got["path"], got["licence"]) == (REPO, PATH, "MIT")
    assert [match["entry"] for match in got["matches"]] == ["entry"]
    assert "withheld" not in got and "note" not in got


async def test_get_code_lists_answer_each_hash_on_its_own_in_order(
    corpus: Corpus, store: CodeStore, verified: Verified, github: FixtureServer
) -> None:
    # One call for four hashes: stored code, code downloaded and verified, pointer-only code (never fetched), an
    # unknown hash; each is what get_code answers for it alone, in the order asked.
    store.write(ENTRY_CODE)
    code = verified(github.base_url)
    asked = [ENTRY_SHA, OTHER_SHA[:8], SAMPLES["closed"]["code_sha256_prefix"], "deadbeefdeadbeef"]
    got = await code_answer(corpus, asked, code)
    entries = got["codes"]
    assert [(entry.get("source"), entry.get("withheld"), entry.get("error")) for entry in entries] == [
        ("store", None, None),
        ("fetched", None, None),
        (None, "licence_restricted", None),
        (None, None, "not_found"),
    ]
    assert entries[0]["code"] == ENTRY_CODE and entries[1]["code"] == OTHER_CODE and "code" not in entries[2]
    assert entries[3] == {"asked": "deadbeefdeadbeef", "error": "not_found"}
    assert got["note"].startswith("not_found: ") and "left_out" not in got
    for one, entry in zip(asked[:3], entries, strict=False):  # each as for one (which finds the downloaded code stored now)
        assert entry == {**await code_answer(corpus, one, code), **({"source": "fetched"} if one == OTHER_SHA[:8] else {})}
    assert github.requests == [RAW_MODEL]  # one download, for the code not stored; none for pointer-only code


def test_harvested_code_marks_the_samples_whose_code_is_stored(corpus: Corpus, store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    got = shown(twins.harvested_code(corpus, "2001.00001", stored=VerifiedCode(store).is_stored))
    assert {sample["entry"]: sample.get("stored") for sample in flat_samples(got)} == {"entry": True, "other": None}


async def test_a_tampered_store_file_is_never_served_and_is_reported(corpus: Corpus, store: CodeStore, verified: Verified) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    (store.write_dir / f"{ENTRY_SHA}.py").write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3"))
    got = await code_answer(corpus, ENTRY_SHA, verified())
    stats = shown(overview.corpus_stats(corpus, store.problems))
    report = overview.load_report(corpus, store.problems)
    assert "code" not in got and got["withheld"] == "not_materialized"
    assert stats["load"]["by_reason"] == {"code_mismatch": 1} and stats["load"]["rejected"] == 1
    assert [problem["code"] for problem in report["problems"]] == ["code_mismatch"]


async def test_corpus_stats_looks_at_reported_bad_files_off_the_event_loop(
    corpus: Corpus, store: CodeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Looking at a bad file again is a stat, and a hash when it changed: never on the event loop. With none
    # reported, corpus_stats stays on it (a worker-thread hop would cost more than its microseconds of work).
    read_in: list[threading.Thread] = []
    problems = CodeStore.problems

    def recorded(self: CodeStore) -> Any:
        read_in.append(threading.current_thread())
        return problems.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(CodeStore, "problems", property(recorded))
    tools = PapercodeTools(lambda: corpus, VerifiedCode(store), lambda: None)
    loop = threading.current_thread()
    assert not store.has_problems
    assert not (await tools.corpus_stats()).is_error and read_in == [loop]
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    (store.write_dir / f"{ENTRY_SHA}.py").write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3"))
    store.scan()
    assert store.has_problems
    result = await tools.corpus_stats()
    assert read_in[1] is not loop and result.structured_content is not None
    assert result.structured_content["load"]["by_reason"] == {"code_mismatch": 1}


def _stored(corpus: Corpus, store: CodeStore) -> dict[str, Any]:
    got = shown(twins.harvested_code(corpus, "2001.00001", stored=VerifiedCode(store).is_stored))
    return {sample["entry"]: sample.get("stored") for sample in flat_samples(got)}


@pytest.mark.parametrize(
    "plant",
    [
        pytest.param(lambda path: path.write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3")), id="wrong-content"),
        pytest.param(lambda path: path.symlink_to("/etc/passwd"), id="symlink-to-etc-passwd"),
        pytest.param(lambda path: path.write_bytes(ENTRY_CODE.encode() + b"#" * MAX_CODE_BYTES), id="oversized"),
    ],
)
async def test_stored_is_true_only_for_code_get_code_serves(
    corpus: Corpus, store: CodeStore, verified: Verified, plant: Callable[[Path], object]
) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    plant(store.write_dir / f"{ENTRY_SHA}.py")
    listed = _stored(corpus, store)
    answer = await code_answer(corpus, ENTRY_SHA, verified())
    assert answer["withheld"] == "not_materialized" and "code" not in answer
    assert listed == _stored(corpus, store) == {"entry": None, "other": None}
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
async def test_a_bad_store_file_fixed_or_deleted_is_no_longer_counted(
    corpus: Corpus, store: CodeStore, verified: Verified, repair: str
) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    path = store.write_dir / f"{ENTRY_SHA}.py"
    path.write_text(ENTRY_CODE.replace("SCALE = 2", "SCALE = 3"))
    assert (await code_answer(corpus, ENTRY_SHA, verified()))["withheld"] == "not_materialized"
    before = shown(overview.corpus_stats(corpus, store.problems))
    if repair == "fixed":
        path.write_text(ENTRY_CODE)
        answer = await code_answer(corpus, ENTRY_SHA, verified())
        assert answer["verified"] is True and answer["code"] == ENTRY_CODE
    else:
        path.unlink()
    after = shown(overview.corpus_stats(corpus, store.problems))
    report = overview.load_report(corpus, store.problems)
    assert before["load"]["by_reason"] == {"code_mismatch": 1} and before["load"]["rejected"] == 1
    assert after["load"]["by_reason"] == {} and after["load"]["rejected"] == 0
    assert report["problems"] == [] and store.problems == []


# -- `stored` from memory: the store's held hashes ------------------------------------------------
#
# Once the store has been scanned, a sample's `stored` is answered without touching a file (`CodeStore.holds`). It
# is true for a hash whose file the store last found verified: at the scan, or since at a write, a read or a scan
# of a directory that changed. A file changed in place behind the server's back can be held until it is next read;
# `get_code` reads (and verifies) the bytes every time, refuses them, and the hash is held no more.


def _held(corpus: Corpus, code: VerifiedCode) -> dict[str, Any]:
    lookup = code.stored_lookup
    assert lookup is not None
    got = shown(twins.harvested_code(corpus, "2001.00001", stored=lookup))
    return {sample["entry"]: sample.get("stored") for sample in flat_samples(got)}


def test_a_scan_holds_exactly_the_files_that_verify(store: CodeStore) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    (store.write_dir / f"{ENTRY_SHA}.py").write_text(ENTRY_CODE)  # put there by another process
    (store.write_dir / f"{OTHER_SHA}.py").write_text("not the code\n")
    (store.write_dir / f"{CHANGED_SHA}.py").symlink_to(store.write_dir / f"{ENTRY_SHA}.py")
    code = VerifiedCode(store)
    assert code.stored_lookup is None and not store.holds(ENTRY_SHA)  # nothing scanned yet: the tools check files
    assert store.scan() == (1, 2)
    assert code.stored_lookup is not None
    assert [store.holds(sha) for sha in (ENTRY_SHA, OTHER_SHA, CHANGED_SHA)] == [True, False, False]
    assert sorted(Path(problem.path).name for problem in store.problems) == sorted([f"{OTHER_SHA}.py", f"{CHANGED_SHA}.py"])


def test_held_hashes_follow_the_stores_own_writes_and_reads(corpus: Corpus, store: CodeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    code = VerifiedCode(store)
    store.scan()
    assert _held(corpus, code) == {"entry": None, "other": None}
    path = store.write(OTHER_CODE)
    assert _held(corpus, code) == {"entry": None, "other": True}

    def no_files(*args: object, **kwargs: object) -> None:
        raise AssertionError("stored from memory touched a file")

    monkeypatch.setattr(CodeStore, "contains", no_files)
    monkeypatch.setattr("os.lstat", no_files)
    monkeypatch.setattr("os.stat", no_files)
    assert _held(corpus, code) == {"entry": None, "other": True}
    monkeypatch.undo()
    path.unlink()  # deleted behind the store's back: held until it is next read ...
    assert store.holds(OTHER_SHA)
    assert store.read(OTHER_SHA) is None  # ... which verifies the bytes
    assert _held(corpus, code) == {"entry": None, "other": None}


@pytest.mark.parametrize("change", ["corrupted", "deleted"])
async def test_get_code_never_serves_what_stored_held_stale(corpus: Corpus, store: CodeStore, verified: Verified, change: str) -> None:
    path = store.write(ENTRY_CODE)
    code = verified()
    store.scan()
    assert _held(corpus, code) == {"entry": True, "other": None}
    if change == "corrupted":  # in place: the directory does not change, so nothing but a read can tell
        with open(path, "r+") as stream:
            stream.write("#")
    else:
        path.unlink()
    answer = await code_answer(corpus, ENTRY_SHA, code)
    assert answer["withheld"] == "not_materialized" and "code" not in answer
    assert _held(corpus, code) == {"entry": None, "other": None}


def test_a_scan_sees_files_other_processes_add_or_remove(store: CodeStore) -> None:
    other_process = CodeStore(store.write_dir)
    store.scan()
    other_process.write(ENTRY_CODE)
    other_process.write(OTHER_CODE)
    assert not store.holds(ENTRY_SHA)
    store.scan()  # the directory changed: listed again
    assert store.holds(ENTRY_SHA) and store.holds(OTHER_SHA)
    assert store.write_dir is not None
    (store.write_dir / f"{OTHER_SHA}.py").unlink()
    store.scan()
    assert store.holds(ENTRY_SHA) and not store.holds(OTHER_SHA)


def test_a_scan_of_an_unchanged_store_reads_nothing_again(store: CodeStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.write(ENTRY_CODE)
    assert store.write_dir is not None
    os.utime(store.write_dir, ns=(time.time_ns() - 60 * 10**9,) * 2)  # changed a minute ago (a recent change is listed again)
    store.scan()
    listed: list[Path] = []
    files_in = CodeStore._files_in

    def listing(directory: Path) -> Iterator[Path]:
        listed.append(directory)
        return files_in(directory)

    monkeypatch.setattr(CodeStore, "_files_in", staticmethod(listing))
    monkeypatch.setattr(CodeStore, "_verified", lambda *args: pytest.fail("a file was read again"))
    store.scan()
    assert listed == []  # one stat of the directory


async def test_the_server_scans_the_store_while_it_serves_and_answers_stored_from_memory(
    corpus: Corpus, store: CodeStore, verified: Verified, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert store.write_dir is not None
    store.write_dir.mkdir(parents=True)
    (store.write_dir / f"{ENTRY_SHA}.py").write_text(ENTRY_CODE)
    code = verified()
    server = build_server(lambda: corpus, code)
    checked_in: list[str] = []
    contains = CodeStore.contains

    def checking(self: CodeStore, sha: str) -> bool:
        checked_in.append(threading.current_thread().name)
        return contains(self, sha)

    monkeypatch.setattr(CodeStore, "contains", checking)
    async with Client(server) as client:
        before = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"})
        assert checked_in and threading.main_thread().name not in checked_in  # not scanned yet: file checks, off the loop
        async with server.running():
            with anyio.fail_after(5):
                while code.stored_lookup is None:
                    await anyio.sleep(0.01)
            checked_in.clear()
            after = await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"})
    assert checked_in == []  # from memory
    for result in (before, after):
        assert result.structured_content is not None
        assert {s["entry"]: s.get("stored") for s in flat_samples(result.structured_content)} == {"entry": True, "other": None}


# -- get_code on demand, at the queries layer -----------------------------------------------------


async def test_get_code_downloads_verifies_and_stores_then_serves_from_the_store(
    corpus: Corpus, verified: Verified, github: FixtureServer, store: CodeStore
) -> None:
    code = verified(github.base_url)
    first = await code_answer(corpus, ENTRY_SHA, code)
    second = await code_answer(corpus, ENTRY_SHA, code)
    assert first["code"] == ENTRY_CODE and first["source"] == "fetched" and first["verified"] is True
    assert second["code"] == ENTRY_CODE and second["source"] == "store"
    assert github.requests == [RAW_MODEL]
    assert (store.write_dir / f"{ENTRY_SHA}.py").read_text() == ENTRY_CODE  # type: ignore[operator]


async def test_a_changed_file_is_a_hash_mismatch_that_is_remembered(corpus: Corpus, verified: Verified, github: FixtureServer) -> None:
    code = verified(github.base_url)
    first = await code_answer(corpus, CHANGED_SHA, code)
    second = await code_answer(corpus, CHANGED_SHA, code)
    assert "code" not in first and first["withheld"] == "hash_mismatch"
    assert interpreter() in first["note"] and first["note"].startswith("hash_mismatch:") and "Next:" in first["note"]
    assert second == first
    assert github.requests == [f"/lab/changed/HEAD/{PATH}"]  # asked once


@pytest.mark.parametrize(("sample", "withheld"), [("gone", "file_missing"), ("no_entry", "entry_missing")])
async def test_get_code_says_why_a_file_gives_no_verified_code(
    corpus: Corpus, verified: Verified, github: FixtureServer, sample: str, withheld: str
) -> None:
    got = await code_answer(corpus, SAMPLES[sample]["code_sha256_prefix"], verified(github.base_url))
    assert "code" not in got and got["withheld"] == withheld and got["note"].startswith(f"{withheld}:")


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
    corpus: Corpus, verified: Verified, github: FixtureServer, sample: str, withheld: str
) -> None:
    got = await code_answer(corpus, SAMPLES[sample]["code_sha256_prefix"], verified(github.base_url))
    assert "code" not in got and got["withheld"] == withheld
    assert github.requests == []


async def test_offline_get_code_never_downloads_and_names_the_command_that_stores_it(
    corpus: Corpus, verified: Verified, github: FixtureServer
) -> None:
    got = await code_answer(corpus, ENTRY_SHA, verified())
    assert got["withheld"] == "not_materialized"
    assert got["note"] == (
        "not_materialized: no verified copy is stored and fetching is off (--offline). Next: store it where this server runs:"
        f" `papercode materialize --fetch --repo {REPO}` (or `--repos DIR` over a clone at DIR/{REPO}), or serve without"
        " --offline; then call again. file_url has it meanwhile, unverified."
    )
    assert github.requests == []
    # A server with records or a store of its own: the command needs them too (named, never their paths).
    custom = await code_answer(corpus, ENTRY_SHA, verified(materialize_flags=("--records", "--code-dir")))
    assert (
        f"`papercode materialize --fetch --repo {REPO}` (or `--repos DIR` over a clone at DIR/{REPO}; with the server's --records and --code-dir)"
        in custom["note"]
    )


async def test_the_command_named_stores_the_code_and_get_code_then_serves_it(
    records: Path, tmp_path: Path, corpus: Corpus, verified: Verified, github: FixtureServer
) -> None:
    """The note's command, run as written (with this test's records, store and stand-in for GitHub), is the way to the code."""
    note = (await code_answer(corpus, ENTRY_SHA, verified(materialize_flags=("--records", "--code-dir", "--code-base-url"))))["note"]
    command = note.split("`")[1].split()
    assert command[:2] == ["papercode", "materialize"]
    assert await anyio.to_thread.run_sync(lambda: materialize(records, tmp_path, *command[2:], "--code-base-url", github.base_url)) == 0
    got = await code_answer(corpus, ENTRY_SHA, verified())
    assert got["code"] == ENTRY_CODE and got["verified"] is True and got["source"] == "store"


async def test_a_host_that_cannot_be_reached_is_not_answered_call_again_in_a_minute(corpus: Corpus, verified: Verified) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = verified(f"http://127.0.0.1:{port}")
    for sha in (ENTRY_SHA, OTHER_SHA):  # the second: the same base, not asked again for a while
        got = await code_answer(corpus, sha, code)
        assert got["withheld"] == "fetch_failed"
        assert got["note"].startswith(f"fetch_failed: 127.0.0.1:{port} cannot be reached from this machine (Connection refused)")
        assert got["note"].endswith(
            "Next: calling again does not help while this machine cannot reach the host: store it from a clone at"
            f" DIR/{REPO} with `papercode materialize --repos DIR --repo {REPO}`, then call again; or read it at file_url (unverified)."
        )


async def test_a_host_whose_certificate_this_machine_does_not_trust_is_answered_with_ssl_cert_file(
    corpus: Corpus, verified: Verified
) -> None:
    for untrusted in serve(tls=True):
        got = await code_answer(corpus, ENTRY_SHA, verified(untrusted.base_url))
        assert untrusted.requests == []
    assert got["withheld"] == "fetch_failed"
    assert got["note"].startswith(f"fetch_failed: the TLS handshake with 127.0.0.1:{untrusted.port} failed: certificate verify failed: ")
    assert got["note"].endswith(
        "Next: calling again does not help while TLS to the host fails here: if a proxy intercepts TLS or the CA bundle is missing where"
        " this server runs, set SSL_CERT_FILE to the bundle to trust and restart the server; or store it from a clone at"
        f" DIR/{REPO} with `papercode materialize --repos DIR --repo {REPO}`, then call again; or read it at file_url (unverified)."
    )


@pytest.fixture
def silent() -> Iterator[FixtureServer]:
    """A server that accepts the request for src/model.py and never answers (until teardown)."""
    for server in serve():

        def never_answer(request: object, release: threading.Event = server.release) -> None:
            release.wait(5)

        server.route(RAW_MODEL, never_answer)
        yield server


async def test_a_slow_server_answers_fetch_failed_instead_of_hanging(corpus: Corpus, verified: Verified, silent: FixtureServer) -> None:
    code = verified(silent.base_url, timeout=0.3)
    first = await code_answer(corpus, ENTRY_SHA, code)
    again = await code_answer(corpus, OTHER_SHA, code)  # same base, circuit open: answered without a request
    assert first["withheld"] == "fetch_failed" and "timed out" in first["note"]
    assert again["withheld"] == "fetch_failed"
    for answer in (first, again):  # a timeout may pass
        assert answer["note"].endswith("Next: call again in a minute, or read it at file_url (unverified).")
    assert silent.requests == [RAW_MODEL]


# -- what the edge adds: code as text/x-python, the store's marks and problems, the open-world hint -------


async def test_code_resource_adds_the_code_as_python(client: Client, corpus: Corpus, store: CodeStore, verified: Verified) -> None:
    store.write(ENTRY_CODE)
    contents = (await client.read_resource(f"code://{ENTRY_SHA}")).contents
    answer, code = contents
    assert isinstance(answer, TextResourceContents) and answer.mime_type == "application/json"
    assert json.loads(answer.text) == await code_answer(corpus, ENTRY_SHA, verified())
    assert json.loads(answer.text)["code"] == ENTRY_CODE
    assert isinstance(code, TextResourceContents) and code.mime_type == "text/x-python" and code.text == ENTRY_CODE
    tool = await client.call_tool("get_code", {"code_sha256": ENTRY_SHA[:10]})
    assert (
        tool.structured_content is not None
        and tool.structured_content["code"] == ENTRY_CODE
        and tool.structured_content["verified"] is True
    )


async def test_code_resource_without_code_is_the_answer_alone(client: Client) -> None:
    (answer,) = (await client.read_resource(f"code://{ENTRY_SHA}")).contents
    assert isinstance(answer, TextResourceContents) and json.loads(answer.text)["withheld"] == "not_materialized"


async def test_the_edge_answers_with_the_stores_marks_and_problems(client: Client, store: CodeStore) -> None:
    store.write(ENTRY_CODE)
    harvested = (await client.call_tool("get_harvested_code_for_paper", {"arxiv_id": "2001.00001"})).structured_content
    assert harvested is not None
    assert {sample["entry"]: sample.get("stored") for sample in flat_samples(harvested)} == {"entry": True, "other": None}
    assert store.write_dir is not None
    (store.write_dir / f"{OTHER_SHA}.py").write_text("tampered\n")
    assert (await client.call_tool("get_code", {"code_sha256": OTHER_SHA})).structured_content["withheld"] == "not_materialized"  # type: ignore[index]
    stats = (await client.call_tool("corpus_stats", {})).structured_content
    report = json.loads((await client.read_resource("corpus://load-report")).contents[0].text)  # type: ignore[union-attr]
    assert stats is not None and stats["load"]["by_reason"] == {"code_mismatch": 1} and stats["load"]["rejected"] == 1
    assert [problem["code"] for problem in report["problems"]] == ["code_mismatch"]


async def test_open_world_hint_is_true_only_while_fetching(
    corpus: Corpus, verified: Verified, github: FixtureServer, connect: Connect
) -> None:
    # What tools/list shows is the same in both eras (test_snapshot.py): one era here.
    for base_url, expected in ((github.base_url, True), (None, False)):
        async with connect(corpus, verified(base_url)) as client:
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
    assert f"9 samples: 2 stored now in {tmp_path / 'code'} (rebuilt with {interpreter()}), 0 stored already, 7 not stored\n" in out
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
    assert lines[0].startswith("2 samples: 0 stored now in ") and lines[0].endswith(", 2 stored already, 0 not stored")
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
    assert capsys.readouterr().out.startswith("1 sample: 1 stored now in ")
    assert [path.name for path in (tmp_path / "code").iterdir()] == [f"{OTHER_SHA}.py"]


def test_materialize_verified_but_not_written_reports_none_stored_and_exits_1(
    records: Path, tmp_path: Path, clones: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "code").write_text("a file where the store's directory should be")
    assert materialize(records, tmp_path, "--repos", str(clones)) == 1
    out = capsys.readouterr().out
    assert out.startswith("9 samples: 0 stored now in ") and ", 0 stored already, 9 not stored\n" in out
    assert any(line.split()[:2] == ["verified", "2"] for line in out.splitlines())
    assert f"nothing could be stored in {tmp_path / 'code'}" in out


def test_materialize_exits_1_when_nothing_could_be_verified(
    records: Path, tmp_path: Path, clones: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert materialize(records, tmp_path, "--repos", str(clones), "--paper", "2001.00002") == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("7 samples: 0 stored now in ") and first.endswith(", 0 stored already, 7 not stored"), out
    assert "nothing could be verified" in out


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
