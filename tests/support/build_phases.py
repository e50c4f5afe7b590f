"""The lines an archive build writes on stderr off a terminal, one as each phase starts (`archive.build_progress`;
`papercode archive fetch` builds too): tested in tests/archive/test_build.py, left out where a test reads the rest of
stderr (a failure's one line, a fetch's downloads)."""

from __future__ import annotations

import subprocess

PHASE = "building archive: "


def without_phases(stderr: str) -> str:
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(PHASE))


def phases_left_out(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """`result` with its stderr less the build's phase lines."""
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout, without_phases(result.stderr))
