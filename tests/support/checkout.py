"""This checkout: the server's code every test and every child process runs (pyproject.toml's `pythonpath` for the
tests' own process; `THIS_CHECKOUT` for a child given an environment of its own)."""

from __future__ import annotations

from pathlib import Path

SERVER_DIR = Path(__file__).resolve().parents[2] / "server"
THIS_CHECKOUT = {"PYTHONPATH": str(SERVER_DIR)}
