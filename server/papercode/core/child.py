"""A child process of papercode's, for work that takes the other core: a fresh interpreter (`python -m <module>`,
started with `subprocess`, never a bare `fork`: a server builds in a background thread while its event loop runs) that
imports this very copy of papercode.

Its errors go to a file, not a pipe: nobody reads them until it ends, and a full pipe would stall it. It ends as soon as
this process is gone, however it went (kill -9 included): it is handed the read end of a pipe only this process holds
the write end of (`watch_parent`). `core.scratch` stops it at exit and on SIGTERM, before the directories it writes
into are removed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from . import scratch

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding this copy of the `papercode` package


class ChildProcess:
    """`python -m <module> <args> [<descriptor>]`: the last argument, on POSIX, is the pipe `watch_parent` watches.
    Its stdin and stdout are pipes (`process`); its stderr goes to `errors`."""

    def __init__(self, module: str, args: Sequence[str], errors: Path) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [PACKAGE_ROOT, os.environ.get("PYTHONPATH")])))
        self._errors = open(errors, "w+b")  # noqa: SIM115 - closed by close()
        watched: int | None = None
        self._parent_alive: int | None = None
        if os.name == "posix":
            watched, self._parent_alive = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", module, *args] + ([str(watched)] if watched is not None else []),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                env=env,
                pass_fds=(watched,) if watched is not None else (),
            )
        except BaseException:
            self._errors.close()
            if self._parent_alive is not None:
                os.close(self._parent_alive)
            raise
        finally:
            if watched is not None:
                os.close(watched)
        scratch.own_process(self.process)  # stopped before its directories are removed, at exit or on SIGTERM

    def failure(self) -> str:
        """Stop it (if it still runs) and say how it ended: `exit <code>: <its last line on stderr>`."""
        self.kill()
        self._errors.seek(0)
        detail = (self._errors.read().decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        return f"exit {self.process.returncode}: {detail}"

    def kill(self) -> None:
        self.process.kill()
        self.process.communicate()

    def close(self) -> None:
        """Once it has ended: let go of it and of its pipes and file."""
        scratch.disown_process(self.process)
        self._errors.close()
        if self._parent_alive is not None:
            os.close(self._parent_alive)
            self._parent_alive = None


def watch_parent(argv: list[str]) -> list[str]:
    """In the child: `argv` without the watched pipe's descriptor (its last item on POSIX); a thread ends this process
    as soon as the parent is gone (the pipe, which the parent never writes to, reports end of file)."""
    if os.name != "posix":
        return argv
    descriptor = int(argv[-1])

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(descriptor, 1):
                pass
        os._exit(1)

    threading.Thread(target=watch, name="parent watch", daemon=True).start()
    return argv[:-1]
