"""`core.liveness`: whether a process runs (by its id), and the advisory locks papercode's processes hold on what they
use (the archive's builds and its `.lock`, the scratch entries). One copy of each, for every caller."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

from papercode.core import liveness

NO_PROCESS = 4_194_304  # within the range of a pid, above every one Linux (2**22 at most) and macOS hand out


@pytest.mark.parametrize("pid", [2**31, 9_999_999_999, 2**63, 2**64])
def test_a_pid_past_the_platforms_range_is_left_alone_not_a_crash(pid: int) -> None:
    """`os.kill` raises OverflowError for these: no process can have them, and what cannot be judged is left alone."""
    with pytest.raises(OverflowError):
        os.kill(pid, 0)
    assert liveness.process_alive(pid) is True


def test_this_process_runs_and_a_pid_no_process_has_does_not() -> None:
    assert liveness.process_alive(os.getpid()) is True
    assert liveness.process_alive(NO_PROCESS) is False


def test_an_exclusive_lock_excludes_every_other_and_shared_locks_share(tmp_path: Path) -> None:
    first = liveness.lock_directory(tmp_path)
    assert first is not None
    try:
        assert liveness.lock_directory(tmp_path) is None and liveness.lock_directory(tmp_path, shared=True) is None
    finally:
        os.close(first)  # the lock goes with its descriptor
    readers = [liveness.lock_directory(tmp_path, shared=True) for _ in range(2)]
    try:
        assert None not in readers and liveness.lock_directory(tmp_path) is None
    finally:
        for reader in readers:
            assert reader is not None
            os.close(reader)
    again = liveness.lock_directory(tmp_path)
    assert again is not None
    os.close(again)


def test_a_lock_on_an_open_file_is_taken_or_refused_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    path.touch()
    holder, other = os.open(path, os.O_RDWR), os.open(path, os.O_RDWR)
    try:
        assert liveness.lock(holder) is True
        assert liveness.lock(other) is False and liveness.lock(other, shared=True) is False
    finally:
        os.close(holder)
    try:
        assert liveness.lock(other, wait=True) is True
    finally:
        os.close(other)


def test_a_directory_that_is_not_there_cannot_be_locked(tmp_path: Path) -> None:
    assert liveness.lock_directory(tmp_path / "gone") is None
    (tmp_path / "file").touch()
    assert liveness.lock_directory(tmp_path / "file") is None


def test_an_error_of_the_system_is_raised_not_taken_for_a_lock_in_the_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of descriptors, a directory cannot be opened to be locked: that says nothing of who uses it (None would
    say "gone, or in use"), so the caller is told."""

    def out_of_descriptors(*args: object) -> int:
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    monkeypatch.setattr(liveness.os, "open", out_of_descriptors)
    with pytest.raises(OSError) as raised:
        liveness.lock_directory(tmp_path)
    assert raised.value.errno == errno.EMFILE


def test_a_file_system_without_locks_raises_and_keeps_no_descriptor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[int] = []
    opening = os.open

    def recording(*args: Any) -> int:
        opened.append(opening(*args))
        return opened[-1]

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(liveness.os, "open", recording)
    monkeypatch.setattr(liveness.fcntl, "flock", no_locks)
    with pytest.raises(OSError) as raised:
        liveness.lock_directory(tmp_path, shared=True)
    monkeypatch.undo()
    assert raised.value.errno == errno.ENOLCK and len(opened) == 1
    with pytest.raises(OSError) as closed:
        os.fstat(opened[0])
    assert closed.value.errno == errno.EBADF
