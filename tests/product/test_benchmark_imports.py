"""The benchmarks stand on one entry point: of papercode they import `papercode.bench` alone, every name it gives loads
and serves a benchmark, no benchmark imports another's private name, and their imports make no circle.

Static, over every module of `benchmarks/`: each import (a function's too) and the Python a benchmark hands a child
process as a string (`python -c CODE`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from papercode import bench
from tests.support import python_source

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"


@cache
def _modules() -> dict[str, ast.Module]:
    """Every module of benchmarks/, by dotted name (`benchmarks.run`), parsed."""
    return {
        "benchmarks." + path.stem if path.stem != "__init__" else "benchmarks": ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(BENCHMARKS.glob("*.py"))
    }


def _code_strings(tree: ast.AST) -> Iterator[ast.Module]:
    """The strings in `tree` that are Python importing something (the code a benchmark runs in a child), parsed."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lstrip().startswith(("import ", "from ")):
            try:
                yield ast.parse(node.value)
            except SyntaxError:
                continue


def imports(module: str, tree: ast.AST) -> Iterator[tuple[int, str, list[str]]]:
    """(line, the module imported as a dotted name, the names taken from it) of each import in `tree`, relative ones
    made absolute; `from . import run` is the import of `benchmarks.run`."""
    package = "benchmarks"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = package if node.level else ""
            dotted = ".".join(part for part in (base, node.module or "") if part)
            names = [alias.name for alias in node.names]
            if node.level and not node.module:  # `from . import run, report`: the modules themselves
                for name in names:
                    yield node.lineno, f"{package}.{name}", []
            else:
                yield node.lineno, dotted, names


def every_import() -> Iterator[tuple[str, int, str, list[str]]]:
    """(benchmark module, line, module imported, names taken) for its own imports and those of the code it runs."""
    for module, tree in _modules().items():
        for line, imported, names in imports(module, tree):
            yield module, line, imported, names
        for code in _code_strings(tree):
            for line, imported, names in imports(module, code):
                yield module, line, imported, names


def test_of_papercode_the_benchmarks_import_papercode_bench_alone() -> None:
    reached = [
        f"{module}:{line} imports {imported}{' ' + ', '.join(names) if names else ''}"
        for module, line, imported, names in every_import()
        if imported.split(".")[0] == "papercode" and not (imported == "papercode.bench" or (imported == "papercode" and names == ["bench"]))
    ]
    assert not reached, (
        "benchmarks reach into papercode past papercode.bench; give what they need from server/papercode/bench.py:\n" + "\n".join(reached)
    )


def test_no_benchmark_names_a_module_of_papercode_to_import_it_by_name() -> None:
    """No table of where a function lives or used to live (`importlib.import_module("papercode.index.search")`): a
    string outside a docstring names no module of papercode's but `papercode.bench`."""
    named = []
    for module, tree in _modules().items():
        docstrings = python_source.docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                named += [f"{module}:{node.lineno} names {found}" for found in re.findall(r"\bpapercode\.(?!bench\b)[a-z_]+", node.value)]
    assert not named, "benchmarks name papercode's modules; ask papercode.bench instead:\n" + "\n".join(named)


def _used_of_bench() -> dict[str, str]:
    """Each name of `papercode.bench` a benchmark uses (`bench.NAME`, `from papercode.bench import NAME`), with where."""
    used: dict[str, str] = {}
    for module, tree in _modules().items():
        for code in [tree, *_code_strings(tree)]:
            for node in ast.walk(code):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "bench"
                    and not node.attr.startswith("__")
                ):
                    used.setdefault(node.attr, f"{module}:{node.lineno}")
            for line, imported, names in imports(module, code):
                if imported == "papercode.bench":
                    used.update({name: f"{module}:{line}" for name in names if name not in used})
    for spec in ("DEFAULT_BUILD",):  # `module:function` specs a harness imports by name
        value = next(
            node.value.value
            for node in ast.walk(_modules()["benchmarks.archive_bench"])
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == spec for t in node.targets)
            if isinstance(node.value, ast.Constant)
        )
        module_name, _, function = str(value).partition(":")
        if module_name == "papercode.bench":
            used.setdefault(function, f"benchmarks.archive_bench {spec}")
    return used


def test_every_name_the_benchmarks_use_of_papercode_bench_is_there() -> None:
    missing = [f"{where} uses bench.{name}" for name, where in sorted(_used_of_bench().items()) if name not in bench.__all__]
    assert not missing, "papercode.bench does not give what the benchmarks use (add it to server/papercode/bench.py):\n" + "\n".join(
        missing
    )


def test_every_name_papercode_bench_gives_loads_and_serves_a_benchmark() -> None:
    """A name whose module moved fails here, in the default suite, not in a benchmark's run."""
    for name in bench.__all__:
        assert getattr(bench, name) is not None, name
    unused = sorted(set(bench.__all__) - set(_used_of_bench()))
    assert not unused, f"papercode.bench gives names no benchmark uses (remove them): {unused}"


def test_no_benchmark_imports_another_benchmarks_private_name() -> None:
    private = []
    for module, tree in _modules().items():
        imported_modules = {
            alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level for alias in node.names
        }
        for line, imported, names in imports(module, tree):
            if imported.startswith("benchmarks"):
                private += [f"{module}:{line} imports {imported}.{name}" for name in names if name.startswith("_")]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported_modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                private.append(f"{module}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not private, "a benchmark uses another's private name (make it public, in benchmarks/harness.py if shared):\n" + "\n".join(
        private
    )


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, tree in modules.items():
        for _, imported, names in imports(module, tree):
            targets = {imported} | {f"{imported}.{name}" for name in names}
            graph[module] |= {target for target in targets if target in modules and target != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle of `graph` (module -> the modules it imports), as the path that closes it."""
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_the_benchmarks_imports_make_no_circle() -> None:
    found = circles(_graph())
    assert not found, "import circles in benchmarks/ (move what both need into a module both import):\n" + "\n".join(
        " -> ".join(path) for path in found
    )


def test_the_scans_find_what_they_look_for() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    code = ast.parse('from .run import machine\nfrom . import harness\nCODE = "from papercode import bench\\nbench.gc_policy()"\n')
    assert list(imports("benchmarks.x", code)) == [(1, "benchmarks.run", ["machine"]), (2, "benchmarks.harness", [])]
    assert [list(imports("benchmarks.x", inner)) for inner in _code_strings(code)] == [[(1, "papercode", ["bench"])]]
    assert "benchmarks.results" in _graph()["benchmarks.run"] and "tool_answers" in _used_of_bench()
