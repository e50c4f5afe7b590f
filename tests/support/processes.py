"""Real processes the process tests start, watched and ended: `papercode ARGS` run to its end (`run_papercode`), a
bounded wait for something to appear (`wait_for`), a process's children (`children`), whether one still runs or is gone
(`running`, `gone_within`), and ending them outright (`kill_hard`, `end_all`). Every wait is bounded; a poll takes the
place of a sleep.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.build_phases import phases_left_out
from tests.support.checkout import THIS_CHECKOUT

WAIT = 30.0  # seconds: a bound on every wait, never a sleep
PROMPTLY = 5.0  # seconds: how soon a process must be gone


def run_papercode(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`papercode ARGS` in a child process, with this checkout's code (and `env` over this process's environment); its
    stderr less an archive build's phase lines (`build_phases`)."""
    environment = {**os.environ, **THIS_CHECKOUT, **(env or {})}
    command = [sys.executable, "-m", "papercode", *map(str, args)]
    return phases_left_out(subprocess.run(command, capture_output=True, text=True, env=environment, cwd=cwd, timeout=300, check=False))


def wait_for(found: Callable[[], int | None], seconds: float = WAIT) -> int:
    """What `found` returns once it returns something (polled), failing the test after `seconds`."""
    deadline = time.monotonic() + seconds
    while (value := found()) is None:
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (`ps` reads the same on Linux and macOS)."""
    listing = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True, check=True).stdout
    return [int(child) for child, parent in (line.split() for line in listing.splitlines()) if int(parent) == pid]


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by its parent) has ended too.
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


def gone_within(pid: int, seconds: float = PROMPTLY) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill_hard(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(WAIT)


def end_all(processes: list[subprocess.Popen[bytes]]) -> None:
    """Kill each process and its children, wait for it, close its pipes."""
    for process in processes:
        with contextlib.suppress(OSError):
            for pid in children(process.pid):
                os.kill(pid, signal.SIGKILL)
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
