"""Each test module stands alone: what tests share lives in `tests/support/` (or is a fixture of `tests/conftest.py`),
never in a test module another one imports. Importing a test module runs its module-level code a second time and ties
two files together that are meant to change apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
NOT_OURS = {"node_modules", "__pycache__"}


def _is_test_module(dotted: str) -> bool:
    """A module pytest collects tests from: `tests.<...>.test_<name>`."""
    parts = dotted.split(".")
    return parts[0] == "tests" and len(parts) > 1 and parts[-1].startswith("test_")


def _package_of(path: Path, root: Path) -> list[str]:
    """The package `path` is a module of, part by part (`["tests", "edge"]`; `root` is the folder that holds `tests/`)."""
    return list(path.relative_to(root).parent.parts)


def imports_of_test_modules(path: Path, root: Path) -> list[str]:
    """Each import in `path` of a test module, as `<line> <module>`: `from tests.a.test_b import x`,
    `from tests.a import test_b`, `import tests.a.test_b`, and their relative forms."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno} {alias.name}" for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            package = _package_of(path, root)
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if _is_test_module(module):
                found.append(f"{node.lineno} {module}")
            else:
                found += [f"{node.lineno} {module}.{alias.name}" for alias in node.names if _is_test_module(f"{module}.{alias.name}")]
    return found


def _python_files(tests: Path) -> list[Path]:
    return sorted(path for path in tests.rglob("*.py") if not NOT_OURS & set(path.relative_to(tests).parts))


def test_no_test_module_imports_another() -> None:
    found = [
        f"{path.relative_to(TESTS.parent)}:{where}"
        for path in _python_files(TESTS)
        for where in imports_of_test_modules(path, TESTS.parent)
    ]
    assert not found, f"test modules imported by others (move what they share into tests/support/): {found}"


@pytest.mark.parametrize(
    "line",
    [
        "from tests.edge.test_http import ACCEPT",
        "from tests.edge import test_http",
        "import tests.edge.test_http",
        "import tests.edge.test_http as http_tests",
        "from .test_http import ACCEPT",
        "from . import test_http",
        "from ..edge.test_http import ACCEPT",
    ],
)
def test_the_scan_finds_each_form_of_the_import(tmp_path: Path, line: str) -> None:
    module = tmp_path / "tests" / "edge" / "test_other.py"
    module.parent.mkdir(parents=True)
    module.write_text(f"from tests.support.http import TOKEN\n{line}\n", encoding="utf-8")
    assert imports_of_test_modules(module, tmp_path) == ["2 tests.edge.test_http"]
