"""The suite tests this checkout's code, in this process and in the processes it starts, whatever the virtualenv has
installed (pyproject.toml's `pythonpath`, and the PYTHONPATH conftest.py sets for children)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import papercode
from tests.support.checkout import SERVER_DIR


def test_this_process_imports_this_checkouts_papercode() -> None:
    assert Path(papercode.__file__).resolve().parent == SERVER_DIR / "papercode"


@pytest.mark.process
def test_a_child_process_imports_this_checkouts_papercode() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import papercode; print(papercode.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd="/",
    )
    assert Path(done.stdout.strip()).resolve().parent == SERVER_DIR / "papercode"
