"""Memory of a process and every process below it, polled from `/proc/PID/status`.

No counter the kernel keeps gives the peak of a sum over several processes (`ru_maxrss` is each process's own, and of
the children only the largest), nor any peak of anonymous memory at all: so a `TreeSampler` thread reads a field
(`VmRSS`, `RssAnon`, ...) of the process and of all its descendants every few milliseconds, adds them up, and keeps
the peak of that sum and the last value. A peak shorter than the interval can be missed; the interval is reported.
Linux only (`/proc`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

INTERVAL_S = 0.01


def children(pid: int) -> list[int]:
    """The direct children of `pid` (every thread's: a child belongs to the thread that forked it)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
        except OSError:
            continue
        found.extend(int(child) for child in text.split())
    return found


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    pids, queue = [], [pid]
    while queue:
        current = queue.pop()
        pids.append(current)
        queue.extend(children(current))
    return pids


def status_kb(pid: int, fields: Iterable[str]) -> dict[str, int]:
    """The given fields of `/proc/PID/status` (kB); missing ones (a process ending, a zombie) are 0."""
    wanted = {field + ":" for field in fields}
    out = dict.fromkeys((field[:-1] for field in wanted), 0)
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status.read().decode().splitlines():
                name, _, rest = line.partition("\t") if "\t" in line else line.partition(" ")
                if name in wanted:
                    out[name[:-1]] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def tree_bytes(pid: int, field: str) -> tuple[int, int]:
    """`field` summed over `pid`'s tree, in bytes, and how many processes it counted."""
    pids = tree(pid)
    return sum(status_kb(p, (field,))[field] for p in pids) * 1024, len(pids)


def rollup_kb(pid: int, fields: Iterable[str]) -> dict[str, int]:
    """The given fields of `/proc/PID/smaps_rollup` (kB: `Pss`, `Pss_Anon`, `Pss_File`, ...): a page shared by n
    processes counts 1/n in each one's `Pss`. Missing ones are 0."""
    out = dict.fromkeys(fields, 0)
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        name, _, rest = line.partition(":")
        if name in out:
            out[name] = int(rest.split()[0])
    return out


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of `pid` and every process below it, and of the children they have waited for."""
    ticks = 0
    for process in tree(pid):
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime (fields 14-17 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


class TreeSampler:
    """Polls `field` summed over the tree of `pid` (or, with `pid=None`, of this process's children only: the
    processes it spawned, not itself) every `interval` seconds in a thread, from `start()` to `stop()`."""

    def __init__(self, field: str, pid: int | None = None, interval: float = INTERVAL_S) -> None:
        self.field = field
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.last = 0
        self.most_processes = 0
        self.samples = 0
        self.marks: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"sampler-{field}", daemon=True)

    def _read(self) -> tuple[int, int]:
        if self.pid is not None:
            return tree_bytes(self.pid, self.field)
        total = count = 0
        for child in children(os.getpid()):
            value, n = tree_bytes(child, self.field)
            total, count = total + value, count + n
        return total, count

    def _run(self) -> None:
        while not self._stop.is_set():
            value, count = self._read()
            self.samples += 1
            if count:
                self.last = value
                self.peak = max(self.peak, value)
                self.most_processes = max(self.most_processes, count)
            self._stop.wait(self.interval)

    def start(self) -> TreeSampler:
        self._thread.start()
        return self

    def mark(self, name: str) -> int:
        """Read the sum now (outside the polling), keep it under `name`, and count it towards the peak."""
        value, count = self._read()
        if count:
            self.peak = max(self.peak, value)
        self.marks[name] = value
        return value

    def reset_peak(self) -> None:
        self.peak = self.last

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "peak_bytes": self.peak,
            "last_bytes": self.last,
            "marks": dict(self.marks),
            "processes": self.most_processes,
            "samples": self.samples,
            "interval_s": self.interval,
        }
