"""An archive build damaged, or one the system will not open, under a server (issue 30): the records are served alone
with the reason, "damaged" only when a check of the files says so; every file the manifest lists is size-checked at a
start; and a file cut short under a running server, which kills it by SIGBUS, leaves a line on stderr."""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace

import anyio
import httpx2
import pytest
import tantivy
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from papercode.answers import overview, queries, twins
from papercode.core import liveness
from papercode.core.limits import Limits
from papercode.corpus.reload import LiveCorpus
from papercode.corpus.snapshot import records_part, served_key
from papercode.corpus.stages import ARCHIVE_NEXT, Corpus, open_stages
from papercode.index import mapped, overlay
from papercode.index.mapped_archive import MANIFEST, UNOPENABLE_NEXT, ArchiveUnavailable, current_build, open_archive
from tests.support.archive_overlay import build_small_archive, overlay_records
from tests.support.http import WAIT, papercode_serve, wait_ready


@pytest.fixture
def damaged(overlaid: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the records, a copy of the archive to damage, its current build)."""
    records, served = overlaid
    archive = tmp_path / "archive"
    shutil.copytree(served, archive, symlinks=True)
    build = current_build(archive)
    assert build is not None
    return records, archive, build


def _flip_the_end(path: Path) -> None:
    """Bytes flipped where tantivy reads a file's footer: the same size, other bytes."""
    data = bytearray(path.read_bytes())
    data[-16:] = bytes(byte ^ 0xFF for byte in data[-16:])
    path.write_bytes(bytes(data))


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "meta.json cut short": (
        lambda build: (build / "search" / "meta.json").write_bytes(b'{"segments"'),
        "search/meta.json has 11 bytes, not the ",
    ),
    "meta.json missing": (lambda build: (build / "search" / "meta.json").unlink(), "search/meta.json is missing"),
    ".managed.json cut short": (lambda build: (build / "search" / ".managed.json").write_bytes(b"[]"), "search/.managed.json has 2 bytes"),
    "an .idx with flipped bytes": (
        lambda build: _flip_the_end(next((build / "search").glob("*.idx"))),
        ".idx: its bytes are not those the build wrote (sha256 differs)",
    ),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_search_index_leaves_the_records_served_alone_with_the_reason(damaged: tuple[Path, Path, Path], damage: str) -> None:
    records, archive, build = damaged
    harm, why = DAMAGE[damage]
    harm(build)
    corpus = Corpus.load([records], archive_dir=archive)
    note = corpus.archive_note
    assert corpus.archive is None and note is not None
    assert note.startswith(f"the archive is not served: the archive's build {build.name} is damaged: ") and why in note
    assert note.endswith(f". Next: {ARCHIVE_NEXT}") and str(archive) not in note
    stats = overview.corpus_stats(corpus)
    assert (stats.papers, stats.by_source, stats.archive) == (2, None, note)  # nothing claims the archive is served
    assert twins.paper_detail(corpus, "2001.00001").title == "The harvested record"  # the records' own, search included
    assert [hit.title for hit in queries.search_papers(corpus, "harvested").hits] == ["The harvested record"]


@pytest.mark.parametrize("damage", [name for name in DAMAGE if "cut short" in name or "missing" in name])
def test_every_file_the_manifest_lists_is_size_checked_when_the_archive_is_opened(damaged: tuple[Path, Path, Path], damage: str) -> None:
    """Not only the mapped columns: a search index file cut short is refused at open, before any stage serves it."""
    records, archive, build = damaged
    harm, why = DAMAGE[damage]
    harm(build)
    with pytest.raises(ArchiveUnavailable, match=f"is damaged: {why}"):
        open_archive(archive)
    for stage in open_stages([records], Limits(), None, archive_dir=archive):
        assert stage.corpus.archive is None and why in (stage.corpus.archive_note or ""), stage.kind


# -- what the system refuses is not damage ------------------------------------------------------------------------


def _too_many_open_files(*args: object, **kwargs: object) -> None:
    raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))


def _no_more_maps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive's columns cannot be mapped, as when the process is out of descriptors (a map holds one)."""
    monkeypatch.setattr(mapped, "mmap", SimpleNamespace(mmap=_too_many_open_files, ACCESS_READ=mmap.ACCESS_READ))


def test_too_many_open_files_is_not_called_damage(overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    records, archive = overlaid
    _no_more_maps(monkeypatch)
    note = Corpus.load([records], archive_dir=archive).archive_note
    assert note is not None and "damaged" not in note and ARCHIVE_NEXT not in note
    assert note.endswith(" cannot be opened: Too many open files. Next: " + UNOPENABLE_NEXT)


def _refused(monkeypatch: pytest.MonkeyPatch, path: Path, error: int) -> None:
    """`os.open` of `path` fails with `error`, as it does for any file once the process is out of descriptors."""
    opening = os.open

    def refusing(file: str | Path, flags: int, *args: int, **kwargs: object) -> int:
        if Path(file) == path:
            raise OSError(error, os.strerror(error))
        return opening(file, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)


@pytest.mark.parametrize("refused", ["the build's lock", "the manifest"])
def test_out_of_descriptors_at_the_lock_or_the_manifest_says_so_not_that_the_archive_kept_changing(
    overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    """The lock on the build is the first descriptor a start takes, the manifest the second: out of descriptors, it
    failed there, and was told as a build switching three times or as a manifest to fetch again."""
    records, archive = overlaid
    build = current_build(archive)
    assert build is not None
    _refused(monkeypatch, build if refused == "the build's lock" else build / MANIFEST, errno.EMFILE)
    note = Corpus.load([records], archive_dir=archive).archive_note
    reason = f"the archive's build {build.name} cannot be opened: Too many open files"
    assert note == f"the archive is not served: {reason}. Next: {UNOPENABLE_NEXT}"


def test_a_file_system_without_locks_is_said_with_what_to_fix(overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """No lock, no serving: a build could remove what the server maps. Said as it is, not as a build switching."""
    _, archive = overlaid
    build = current_build(archive)
    assert build is not None

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(liveness.fcntl, "flock", no_locks)
    with pytest.raises(ArchiveUnavailable) as raised:
        open_archive(archive)
    assert str(raised.value) == f"the archive's build {build.name} cannot be opened: No locks available"
    assert raised.value.next_step == UNOPENABLE_NEXT


def test_an_overlay_tantivy_cannot_open_is_damage_only_when_the_files_are_not_the_build_s(
    overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, archive = overlaid

    def refused(path: str) -> bool:
        raise ValueError("Failed to open file for read: 'IoError { Too many open files (os error 24) }'")

    monkeypatch.setattr(tantivy.Index, "is_compatible", refused)
    note = Corpus.load([records], archive_dir=archive).archive_note
    assert note is not None and "damaged" not in note
    assert "search index of the archive's build " in note and "cannot be opened: Failed to open file for read" in note
    assert note.endswith(f". Next: {UNOPENABLE_NEXT}")


def _files_hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The search index's files an overlay that failed checked against the manifest's sha256 (a read of them all)."""
    checked: list[str] = []
    check = overlay.first_damage

    def recording(directory: Path, files: Mapping[str, mapped.FileFacts]) -> str | None:
        checked.extend(files)
        return check(directory, files)

    monkeypatch.setattr(overlay, "first_damage", recording)
    return checked


def test_an_index_of_another_tantivy_version_is_said_without_hashing_its_files(
    overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, archive = overlaid
    checked = _files_hashed(monkeypatch)
    monkeypatch.setattr(tantivy.Index, "is_compatible", lambda path: False)
    note = Corpus.load([records], archive_dir=archive).archive_note
    assert note is not None and "the archive's search index was written by another tantivy version" in note
    assert checked == []


def test_a_schema_tantivy_refuses_is_checked_before_it_is_called_another_schema(
    overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, archive = overlaid
    checked = _files_hashed(monkeypatch)

    def refused(index: tantivy.Index) -> tantivy.Index:
        raise ValueError("Schema error: 'the fields differ'")

    monkeypatch.setattr(overlay, "open_index", refused)
    note = Corpus.load([records], archive_dir=archive).archive_note
    assert note is not None and "the archive's search index has another schema (Schema error" in note
    assert checked and all(name.startswith("search/") for name in checked)


def test_a_reload_the_system_refuses_the_archive_is_a_failed_reload_not_damage(
    overlaid: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, archive = overlaid
    roots = [records]
    live = LiveCorpus(
        lambda key: open_stages(roots, Limits(), None, None, key and records_part(key), archive_dir=archive),
        fingerprint=lambda: served_key(roots, Limits(), archive),
    )
    anyio.run(live.load)
    _no_more_maps(monkeypatch)
    assert anyio.run(live.reload, "SIGHUP") is False
    assert live.last_error is not None and "cannot be opened: Too many open files" in live.last_error
    assert "damaged" not in live.last_error and live.health()["status"] == "degraded" and live().archive is not None


# -- a mapped file cut short under a running server ---------------------------------------------------------------


@pytest.mark.process
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.skipif(not hasattr(signal, "SIGBUS") or sys.platform == "darwin", reason="Linux's SIGBUS on a truncated map")
async def test_a_file_cut_short_under_a_server_kills_it_with_a_line_on_stderr(tmp_path: Path) -> None:
    """Nothing can stop another process from truncating a file the server maps, nor catch the SIGBUS that follows
    in Python: the server dies, and its stderr says so (`faulthandler`)."""
    records = overlay_records(tmp_path / "records")
    archive = build_small_archive(tmp_path / "sources", tmp_path / "archive")
    build = current_build(archive)
    assert build is not None
    args = ("--transport", "streamable-http", "--records", str(records), "--archive", "--archive-dir", str(archive))
    with papercode_serve(tmp_path, *args) as (process, url):
        await anyio.to_thread.run_sync(wait_ready, url)
        answered = []
        async with httpx2.AsyncClient(timeout=WAIT) as http:
            with pytest.raises(Exception):  # noqa: B017 - the server is gone: whatever the transport raises
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    answered.append(await client.call_tool("get_paper", {"paper": "2003.00003"}))
                    os.truncate(build / "papers" / "blob.data", 0)
                    answered.append(await client.call_tool("get_paper", {"paper": "no-arxiv-archive-paper"}))
        assert process.wait(WAIT) == -signal.SIGBUS
        assert process.stderr is not None
        stderr = process.stderr.read()
    assert [answer.is_error for answer in answered] == [False]  # the first answered, the second never did
    assert "Fatal Python error: Bus error" in stderr
