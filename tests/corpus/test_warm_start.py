"""Warm start: a snapshot is served only when it is intact and built from exactly these records."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from papercode.answers import completions, overview, queries, resolving, twins
from papercode.core.limits import Limits
from papercode.corpus import snapshot
from papercode.corpus import stages as corpus_module
from papercode.corpus.stages import Corpus, Stage, open_stages
from papercode.index import columns
from papercode.ingest import parallel as search_build
from papercode.settings import bundled_records_dir


@pytest.fixture
def records(tmp_path: Path) -> Path:
    directory = tmp_path / "records"
    shutil.copytree(bundled_records_dir(), directory, ignore=shutil.ignore_patterns("README.md"))
    return directory


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts cold builds, so a test can tell a warm start from a rebuild."""
    calls: list[int] = []
    original = corpus_module.build_stages

    def counting(*args: Any, **kwargs: Any) -> Iterator[Corpus]:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(corpus_module, "build_stages", counting)
    return calls


def _answers(corpus: Corpus) -> tuple[object, ...]:
    """Every kind of lookup, so a restored index is compared on all its parts."""
    return (
        twins.harvested_code(corpus, "1902.04094").model_dump(),
        queries.search_papers(corpus, "generative").model_dump(),
        overview.corpus_stats(corpus).model_dump(),
        twins.samples_by_status(corpus, "ran,ran_honours", licence="mit", limit=3).model_dump(),
        twins.samples_by_status(corpus, "unverified", repo_kind="official", inline_only=True, language="Python").model_dump(),
        twins.paper_detail(corpus, "/paper/berts-are-generative-in-context-learners").model_dump(),
        queries.papers_for_repo(corpus, "https://github.com/nyu-dl/bert-gen").model_dump(),
        resolving.find_code(corpus, "013a68b0"),
        completions.complete(corpus, "arxiv_id", "19"),
        completions.complete(corpus, "code_sha256", "1e"),
    )


def test_second_open_is_a_warm_start_with_identical_answers(records: Path, tmp_path: Path, builds: list[int]) -> None:
    cold = Corpus.open([records], cache_dir=tmp_path / "cache")
    warm = Corpus.open([records], cache_dir=tmp_path / "cache")
    assert builds == [1]
    assert _answers(warm) == _answers(cold)


def test_cursors_from_before_a_warm_start_still_work(records: Path, tmp_path: Path) -> None:
    cold = Corpus.open([records], cache_dir=tmp_path / "cache")
    cursor = twins.harvested_code(cold, "2406.04823", limit=5).next_cursor
    warm = Corpus.open([records], cache_dir=tmp_path / "cache")
    assert twins.harvested_code(warm, "2406.04823", limit=5, cursor=cursor) == twins.harvested_code(
        cold, "2406.04823", limit=5, cursor=cursor
    )


def test_changed_record_forces_a_rebuild(records: Path, tmp_path: Path, builds: list[int]) -> None:
    Corpus.open([records], cache_dir=tmp_path / "cache")
    (records / "000_14282948c0d959ec.txt").unlink()
    rebuilt = Corpus.open([records], cache_dir=tmp_path / "cache")
    assert builds == [1, 1]
    assert len(rebuilt.index.papers) == 1


def test_touched_record_forces_a_rebuild(records: Path, tmp_path: Path, builds: list[int]) -> None:
    Corpus.open([records], cache_dir=tmp_path / "cache")
    target = records / "001_68f0e4c467ea2cc0.txt"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    Corpus.open([records], cache_dir=tmp_path / "cache")
    assert builds == [1, 1]


def test_other_limits_are_another_key(records: Path) -> None:
    assert snapshot.records_key([records], Limits()) != snapshot.records_key([records], Limits(max_string_chars=10))


def _snapshot_file(cache: Path) -> Path:
    (path,) = cache.glob("index-*.snapshot")
    return path


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[:-100], id="truncated"),
        pytest.param(lambda data: data[:-50] + bytes([data[-50] ^ 0xFF]) + data[-49:], id="flipped-byte"),
        pytest.param(lambda data: b"not a snapshot at all", id="foreign-file"),
        pytest.param(lambda data: b"PAPERCODE-SNAPSHOT\n" + b"\x00" * 200, id="zero-header"),
        pytest.param(lambda data: b"", id="empty"),
    ],
)
def test_damaged_snapshot_is_rebuilt_never_served(records: Path, tmp_path: Path, builds: list[int], damage) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "cache"
    expected = _answers(Corpus.open([records], cache_dir=cache))
    path = _snapshot_file(cache)
    path.write_bytes(damage(path.read_bytes()))
    again = Corpus.open([records], cache_dir=cache)
    assert builds == [1, 1]
    assert _answers(again) == expected
    # The rebuild wrote a good snapshot back.
    Corpus.open([records], cache_dir=cache)
    assert builds == [1, 1]


def _search_directory(cache: Path) -> Path:
    (directory,) = cache.glob("index-*.search-*")
    return directory


def _largest_file(directory: Path) -> Path:
    return max((path for path in directory.iterdir() if path.is_file()), key=lambda path: path.stat().st_size)


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda directory: _flip_a_byte(_largest_file(directory)), id="flipped-byte"),
        pytest.param(lambda directory: _largest_file(directory).write_bytes(_largest_file(directory).read_bytes()[:-10]), id="truncated"),
        pytest.param(lambda directory: (directory / "meta.json").write_text("{}"), id="foreign-meta"),
        pytest.param(lambda directory: _largest_file(directory).unlink(), id="missing-file"),
        pytest.param(shutil.rmtree, id="missing-directory"),
    ],
)
def test_damaged_search_index_is_rebuilt_never_served(records: Path, tmp_path: Path, builds: list[int], damage) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "cache"
    expected = _answers(Corpus.open([records], cache_dir=cache))
    damage(_search_directory(cache))
    again = Corpus.open([records], cache_dir=cache)
    assert builds == [1, 1]
    assert _answers(again) == expected
    Corpus.open([records], cache_dir=cache)  # the rebuild wrote a good snapshot back
    assert builds == [1, 1]


@pytest.mark.parametrize("where", ["{prefix}../../elsewhere", "/tmp/elsewhere", "index-0000000000000000.search-x", "{prefix}x/.."])
def test_a_snapshot_naming_a_search_directory_outside_its_own_is_rebuilt(
    records: Path, tmp_path: Path, builds: list[int], where: str
) -> None:
    cache = tmp_path / "cache"
    expected = _answers(Corpus.open([records], cache_dir=cache))
    path = _snapshot_file(cache)
    data = path.read_bytes()
    header = snapshot._HEADER.unpack_from(data)
    *head, length, crc, manifest_length, _ = header
    manifest = json.dumps({"directory": where.format(prefix=f"{path.stem}.search-"), "files": []}).encode()
    payload = data[snapshot._HEADER.size + manifest_length :]
    path.write_bytes(snapshot._HEADER.pack(*head, length, crc, len(manifest), zlib.crc32(manifest)) + manifest + payload)
    assert _answers(Corpus.open([records], cache_dir=cache)) == expected
    assert builds == [1, 1]


def test_a_rebuild_replaces_the_search_directory(records: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    Corpus.open([records], cache_dir=cache)
    before = _search_directory(cache)
    (records / "000_14282948c0d959ec.txt").unlink()
    rebuilt = Corpus.open([records], cache_dir=cache)
    after = _search_directory(cache)  # exactly one: the old one is gone
    assert after != before
    assert queries.search_papers(rebuilt, "").total == 1


@pytest.mark.parametrize("child", [False, pytest.param(True, marks=pytest.mark.process)])  # True: a real child process
def test_a_cold_build_leaves_no_search_files_behind(records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: bool) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(search_build, "CHILD_PROCESS_BYTES", 0 if child else search_build.CHILD_PROCESS_BYTES)
    corpus = Corpus.open([records], cache_dir=None)
    assert queries.search_papers(corpus, "generative").total == 2
    assert list(scratch.iterdir()) == []


def test_snapshot_of_other_records_is_not_served(records: Path, tmp_path: Path, builds: list[int]) -> None:
    cache = tmp_path / "cache"
    Corpus.open([records], cache_dir=cache)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(records / "001_68f0e4c467ea2cc0.txt", other)
    # A snapshot of the other records, planted under this corpus's name.
    other_corpus = Corpus.load([other])
    snapshot.save(_snapshot_file(cache), snapshot.records_key([other], Limits()), other_corpus.index, other_corpus.search)
    served = Corpus.open([records], cache_dir=cache)
    assert len(served.index.papers) == 2


def test_unwritable_cache_still_serves(records: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    corpus = Corpus.open([records], cache_dir=blocker)
    assert len(corpus.index.papers) == 2


def test_no_cache_dir_never_writes(records: Path, tmp_path: Path, builds: list[int]) -> None:
    Corpus.open([records], cache_dir=None)
    Corpus.open([records], cache_dir=None)
    assert builds == [1, 1]
    assert not list(tmp_path.rglob("*.snapshot"))


@pytest.mark.parametrize("background", [True, False])
def test_pending_key_is_the_records_key(records: Path, background: bool) -> None:
    pending = snapshot.PendingKey([records], Limits(), background=background)
    assert pending.result() == snapshot.records_key([records], Limits())
    assert pending.result() == pending.result()  # asked twice: the same answer, one child


def test_warm_start_knows_its_records_key(records: Path, tmp_path: Path) -> None:
    cold = Corpus.open([records], cache_dir=tmp_path / "cache")
    warm = Corpus.open([records], cache_dir=tmp_path / "cache")
    assert cold.records_key == warm.records_key == snapshot.records_key([records], Limits())


def _kinds(stages: list[Stage]) -> list[str]:
    return [stage.kind for stage in stages]


def test_stages_of_a_first_start_are_keyed_then_complete(records: Path, tmp_path: Path) -> None:
    stages = list(open_stages([records], Limits(), tmp_path / "cache"))
    assert _kinds(stages) == ["keyed", "complete"]
    keyed, complete = stages
    assert keyed.corpus.search is None and complete.corpus.search is not None
    assert keyed.built_at is None and complete.built_at is None
    assert twins.harvested_code(keyed.corpus, "1902.04094") == twins.harvested_code(complete.corpus, "1902.04094")
    assert keyed.corpus.records_key == complete.corpus.records_key == snapshot.records_key([records], Limits())


def test_stages_of_a_warm_start_are_one_complete(records: Path, tmp_path: Path, builds: list[int]) -> None:
    list(open_stages([records], Limits(), tmp_path / "cache"))
    (stage,) = open_stages([records], Limits(), tmp_path / "cache")
    assert stage.kind == "complete" and stage.corpus.search is not None and stage.built_at is not None
    assert builds == [1]


def test_changed_records_serve_the_old_snapshot_as_stale_while_rebuilding(records: Path, tmp_path: Path) -> None:
    list(open_stages([records], Limits(), tmp_path / "cache"))
    (records / "000_14282948c0d959ec.txt").unlink()
    stages = list(open_stages([records], Limits(), tmp_path / "cache"))
    assert _kinds(stages) == ["stale", "keyed", "complete"]
    assert [len(stage.corpus.index.papers) for stage in stages] == [2, 1, 1]
    assert stages[0].built_at is not None and stages[0].corpus.search is not None
    (again,) = open_stages([records], Limits(), tmp_path / "cache")  # the rebuild wrote the new snapshot
    assert len(again.corpus.index.papers) == 1


def test_a_damaged_snapshot_is_never_a_stage(records: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    list(open_stages([records], Limits(), cache))
    path = _snapshot_file(cache)
    path.write_bytes(path.read_bytes()[:-100])
    assert _kinds(list(open_stages([records], Limits(), cache))) == ["keyed", "complete"]


def test_a_snapshot_of_another_declaration_of_the_fields_is_rebuilt_never_served(
    records: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    list(open_stages([records], Limits(), tmp_path / "cache"))
    (records / "000_14282948c0d959ec.txt").unlink()  # other records: an intact snapshot would be served as stale
    monkeypatch.setattr(columns, "LAYOUT", "another declaration of the fields (index.fields)")
    assert _kinds(list(open_stages([records], Limits(), tmp_path / "cache"))) == ["keyed", "complete"]


def test_stages_without_a_cache(records: Path) -> None:
    assert _kinds(list(open_stages([records], Limits(), None))) == ["keyed", "complete"]


def test_stages_may_be_resumed_in_another_thread(records: Path, tmp_path: Path) -> None:
    # The server runs each step of the generator in whichever worker thread is free.
    stages = open_stages([records], Limits(), tmp_path / "cache")
    first: list[str] = []
    stepped, release = threading.Event(), threading.Event()

    def first_step() -> None:
        first.append(next(stages).kind)
        stepped.set()
        release.wait(60)  # alive until the next step is done, so that step cannot get this thread's id

    worker = threading.Thread(target=first_step)
    worker.start()
    try:
        assert stepped.wait(60)
        assert [*first, next(stages).kind] == ["keyed", "complete"]
    finally:
        release.set()
        worker.join(60)
