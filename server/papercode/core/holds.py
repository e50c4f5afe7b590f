"""Hold points: the places where a papercode process can be held, so that a test can kill or stop it there.

Tests of what a process leaves behind when it is killed (kill -9 at each stage of a start or of an archive build)
need it at a known point. `hold(point)` is a no-op unless `PAPERCODE_TEST_HOLD` names a file: then, while that file
exists and names `point` (one point per line; an empty file holds at every point), the process waits. A test creates
the file, starts the process, waits for it to reach the point (`PAPERCODE_TEST_HOLD` + `.reached` lists the points
reached, one per line), kills or stops it, and removes the file to let a process go on.

The points, in the order a process meets them:
- `build-started`: a cold build of the records has started its child process (and the child, before it reads);
- `archive-opened`: a start opened the archive's current build, before laying the records over it;
- `overlay-written`: a start wrote the overlay of the archive's search index, before opening it;
- `archive-reading`: `papercode archive build` made its new build's directory, before reading the first source;
- `archive-indexed`: the build wrote every paper and its search index, before its manifest and the switch.
"""

from __future__ import annotations

import os
import time
from typing import Final, Literal

VARIABLE: Final = "PAPERCODE_TEST_HOLD"
Point = Literal["build-started", "archive-opened", "overlay-written", "archive-reading", "archive-indexed"]
_POLL: Final = 0.02


def hold(point: Point) -> None:
    """Wait here while a test holds `point` (see the module docstring); return at once otherwise."""
    path = os.environ.get(VARIABLE)
    if not path or not _holds(path, point):
        return
    try:
        with open(path + ".reached", "a", encoding="utf-8") as reached:
            reached.write(f"{point} {os.getpid()}\n")
    except OSError:
        pass
    while _holds(path, point):
        time.sleep(_POLL)


def _holds(path: str, point: str) -> bool:
    try:
        with open(path, encoding="utf-8") as named:
            points = named.read().split()
    except OSError:
        return False
    return not points or point in points
