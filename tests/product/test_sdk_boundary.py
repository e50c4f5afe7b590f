"""papercode's boundary with the libraries it builds on: every package it imports is declared, and no module
of the server or the benchmarks uses a private name of the SDK or of the HTTP stack it brings (`mcp`,
`mcp_types`, `uvicorn`, `starlette`, `sse_starlette`): `server._tool_manager` and the like pin papercode to
one minor version of them.

The private-name check is static and precise without knowing types: it collects every `_name` those
libraries define (functions, classes, attributes they assign, module globals) and that papercode does not
define itself, and reports each `x._name`, `getattr(x, "_name")` and import of a private module or name of
theirs in papercode's code (also on `self`: a subclass of an SDK class reaching into its base counts).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server"
CHECKED = (SERVER, ROOT / "benchmarks")
OWN_TOP_LEVEL = {"papercode", "papercode_mcp", "benchmarks"}
LIBRARIES = ("mcp", "mcp_types", "uvicorn", "starlette", "sse_starlette")


def _modules(*roots: Path) -> list[Path]:
    return sorted(path for root in roots for path in root.rglob("*.py") if "__pycache__" not in path.parts)


def _imported_top_level(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _undeclared(modules: list[Path], requirements: list[str]) -> dict[str, list[str]]:
    """The third-party packages `modules` import that no line of `requirements` provides."""
    declared = {Requirement(line).name.lower().replace("_", "-") for line in requirements}
    distributions = packages_distributions()
    imported: set[str] = set()
    for path in modules:
        imported |= _imported_top_level(ast.parse(path.read_text(), str(path)))
    third_party = sorted(imported - set(sys.stdlib_module_names) - OWN_TOP_LEVEL)
    providers = {module: {name.lower().replace("_", "-") for name in distributions.get(module, [module])} for module in third_party}
    return {module: sorted(names) for module, names in providers.items() if not names & declared}


def test_every_package_the_server_imports_is_a_declared_dependency() -> None:
    """The archive commands may import what the `archive` extra installs (they say how to install it when it is
    missing); everything else only what `serve` installs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    archive = SERVER / "papercode" / "archive"
    undeclared = _undeclared([path for path in _modules(SERVER) if archive not in path.parents], project["dependencies"])
    assert not undeclared, f"imported but not in pyproject.toml's dependencies: {undeclared}"
    undeclared = _undeclared(_modules(archive), [*project["dependencies"], *project["optional-dependencies"]["archive"]])
    assert not undeclared, f"imported but not in pyproject.toml's dependencies: {undeclared}"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")


def _private_names_defined(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8", errors="replace"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {name for name in names if _is_private(name)}


@cache
def library_private_names() -> frozenset[str]:
    """The private names the libraries define and papercode does not (its own `_lock` is its own)."""
    files: list[Path] = []
    for library in LIBRARIES:
        spec = importlib.util.find_spec(library)
        assert spec is not None and spec.submodule_search_locations, f"{library} is not installed as a package"
        files += _modules(*(Path(location) for location in spec.submodule_search_locations))
    return frozenset(_private_names_defined(files) - _private_names_defined(_modules(*CHECKED)))


class _PrivateUses(ast.NodeVisitor):
    """Every use of a library's private name (see the module docstring), as (line, source)."""

    def __init__(self, private: frozenset[str]) -> None:
        self.private = private
        self.found: list[tuple[int, str]] = []

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in self.private:
            self.found.append((node.lineno, ast.unparse(node)))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1:
            name = node.args[1]
            if isinstance(name, ast.Constant) and name.value in self.private:
                self.found.append((node.lineno, ast.unparse(node)))
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        parts = (node.module or "").split(".")
        private = any(_is_private(part) for part in parts) or any(_is_private(alias.name) for alias in node.names)
        if node.level == 0 and parts[0] in LIBRARIES and private:
            self.found.append((node.lineno, ast.unparse(node)))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] in LIBRARIES and any(_is_private(part) for part in parts):
                self.found.append((node.lineno, ast.unparse(node)))


def private_uses(source: str) -> list[str]:
    visitor = _PrivateUses(library_private_names())
    visitor.visit(ast.parse(source))
    return [text for _, text in visitor.found]


@pytest.mark.parametrize("path", _modules(*CHECKED), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_module_uses_a_private_name_of_the_sdk_or_the_http_stack(path: Path) -> None:
    found = private_uses(path.read_text(encoding="utf-8"))
    assert not found, f"{path.relative_to(ROOT)} uses private names of {', '.join(LIBRARIES)}: {found}"


def test_the_check_catches_what_it_is_for() -> None:
    source = """
from mcp.server.mcpserver import MCPServer
from mcp.shared._context_streams import create_context_streams
from papercode.edge.server import PapercodeServer
class Mine(PapercodeServer):
    def method(self):
        return self._tool_manager, self._lock, self.list_tools
def build(server):
    server._tool_manager.list_tools()
    getattr(server, "_lowlevel_server")
    return MCPServer("x")._lowlevel_server, server._tool_manager._tools
"""
    assert private_uses(source) == [
        "from mcp.shared._context_streams import create_context_streams",
        "self._tool_manager",
        "server._tool_manager",
        "getattr(server, '_lowlevel_server')",
        "MCPServer('x')._lowlevel_server",
        "server._tool_manager._tools",
        "server._tool_manager",
    ]
