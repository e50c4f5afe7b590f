"""Generated sections of the Markdown pages: what sits between `<!-- generated: NAME -->` and
`<!-- end generated: NAME -->` is written by code, never by hand, and a test holds each to what its code writes.

`SECTIONS` names every generated section and the page that holds it (`tests/product/test_docs.py` checks that a page
holds no other); `hold` is the check each section's test makes, and with `PAPERCODE_UPDATE_SNAPSHOTS=1` it rewrites the
section instead, for the diff to be reviewed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# name -> the page that holds it, and the test that holds the section to its code
SECTIONS = {
    "settings": ("docs/settings.md", "tests/product/test_docs.py"),
    "outcomes": ("docs/verified-code.md", "tests/product/test_docs.py"),
    "packages": ("ARCHITECTURE.md", "tests/product/test_architecture.py"),
    "modules": ("ARCHITECTURE.md", "tests/product/test_architecture.py"),
}
SECTION = re.compile(r"<!-- generated: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- end generated: (?P=name) -->", re.DOTALL)


def sections(text: str) -> dict[str, str]:
    """Each generated section of `text`, by name: what lies between its two markers."""
    return {found["name"]: found["body"] for found in SECTION.finditer(text)}


def hold(name: str, expected: str, drifted: str = "") -> None:
    """Assert that the section `name` is `expected`; with PAPERCODE_UPDATE_SNAPSHOTS=1, rewrite it instead and skip.
    `drifted` says, on failure, what differs (by default only that it does)."""
    page, test = SECTIONS[name]
    path = REPO / page
    text = path.read_text(encoding="utf-8")
    assert name in sections(text), f"{page} has no section <!-- generated: {name} --> … <!-- end generated: {name} -->"
    if os.environ.get("PAPERCODE_UPDATE_SNAPSHOTS") and sections(text)[name] != expected:
        found = next(match for match in SECTION.finditer(text) if match["name"] == name)
        path.write_text(text[: found.start("body")] + expected + text[found.end("body") :], encoding="utf-8")
        pytest.skip(f"{page}'s generated section {name} rewritten; run again to check it")
    assert sections(text)[name] == expected, (
        f"{page}'s generated section {name} has drifted from the code{': ' + drifted if drifted else ''}\n"
        f"Rewrite it with `PAPERCODE_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest {test}` and review the diff."
    )
