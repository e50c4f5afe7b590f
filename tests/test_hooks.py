"""What the server holds for tests and benchmarks stays in the few places that say so.

A process test stops a process at a hold point (`core.holds`), and nothing else in the server reads a variable meant
for tests; a function the server never calls does not live in the server (a test's helper lives with the tests), but
for the few the server offers on purpose, named here with whom they serve.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

from papercode.core import holds

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "papercode"

# Functions nothing in the server calls, on purpose: each with what calls it.
CALLED_FROM_OUTSIDE = {
    "readable": "io: the stdio reader is a raw stream the SDK's text wrapper reads",
    "writable": "io: the stdio writer is a raw stream",
    "verify_token": "the SDK's TokenVerifier protocol: the SDK calls it for each HTTP request",
    "scored": "benchmarks/score_agreement.py and the overlay tests: BM25 scores of the same text in two indexes",
    "options_markdown": "docs/settings.md is rendered from it (tests/test_docs.py holds the page to it)",
}


def _sources(package: Path = PACKAGE) -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(package.rglob("*.py"))}


def test_only_core_holds_reads_a_variable_meant_for_tests() -> None:
    readers = sorted(str(path.relative_to(PACKAGE)) for path, text in _sources().items() if "PAPERCODE_TEST" in text)
    assert readers == ["core/holds.py"], f"only core/holds.py may read a PAPERCODE_TEST_* variable: {readers}"
    assert holds.VARIABLE.startswith("PAPERCODE_TEST_")


def test_every_hold_is_one_of_the_documented_points() -> None:
    points = set(get_args(holds.Point))
    held: set[str] = set()
    for text in _sources().values():
        held |= set(re.findall(r"\bhold\(\"([\w-]+)\"\)", text))
    assert held == points, f"hold points used {sorted(held)}, declared {sorted(points)}"
    for point in points:
        assert f"`{point}`" in (holds.__doc__ or ""), f"core.holds does not document the point {point}"


def unused_functions(package: Path = PACKAGE) -> list[str]:
    """The functions and methods in `package` that no code there names (decorated handlers and dunders aside)."""
    named: set[str] = set()
    defined: list[tuple[str, str]] = []
    for path, text in _sources(package).items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name):
                named.add(node.id)
            elif isinstance(node, ast.Attribute):
                named.add(node.attr)
            elif isinstance(node, ast.alias):
                named.add(node.name.rsplit(".", 1)[-1])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                named.add(node.value)  # getattr(module, "name"), a name looked up by string
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list and not node.name.startswith("__"):
                defined.append((f"{path.relative_to(package)}:{node.lineno}", node.name))
    return [f"{where} {name}" for where, name in defined if name not in named and name not in CALLED_FROM_OUTSIDE]


def test_no_server_function_is_there_for_the_tests_alone() -> None:
    assert not unused_functions(), "functions no server code calls: move a test's helper into tests/, or remove it"


def test_the_scan_finds_a_function_nothing_calls(tmp_path: Path) -> None:
    sample = "def used() -> int:\n    return 1\n\n\ndef only_for_tests() -> int:\n    return used()\n"
    (tmp_path / "module.py").write_text(sample, encoding="utf-8")
    assert unused_functions(tmp_path) == ["module.py:5 only_for_tests"]
