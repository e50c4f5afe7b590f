"""Tests only (`tests/archive/test_kills.py` puts this directory first on a server's PYTHONPATH): a papercode process
ends only once none of its threads is in a build (bounded), however it ends (`os._exit`, or at exit).

A server ending mid-build stops its build child and ends at once (`cli.main._end_now_if_still_building`): whether its
build thread sees the child end before the process does is a race. Here it always does, so a test can tell what the
thread makes of it (a failed build to warn of and build again, or the end it is).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time

_real_exit = os._exit


def _building() -> bool:
    me = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        while ident != me and frame is not None:
            if frame.f_code.co_name == "build_stages" and "papercode" in frame.f_code.co_filename:
                return True
            frame = frame.f_back
    return False


def _wait_for_builds() -> None:
    deadline = time.monotonic() + 20
    while _building() and time.monotonic() < deadline:
        time.sleep(0.01)


def _exit_after_builds(status: int) -> None:
    _wait_for_builds()
    _real_exit(status)


os._exit = _exit_after_builds  # type: ignore[assignment]
atexit.register(_wait_for_builds)  # registered first, so it runs last: after papercode's own clean-up
