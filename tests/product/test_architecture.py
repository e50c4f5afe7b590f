"""ARCHITECTURE.md is held to the code: the modules its package table names are the modules there are, its layer list
is the import-linter contract, and what it says about where errors are shaped is where they are.

Each failure says what to change. When a module moves (a package renamed, a module split in two), the
failures list every row of the table to fix, in the words the table uses.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

from papercode.core.errors import ErrorCode, QueryError
from papercode.verified.materialize import OUTCOMES

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "server" / "papercode"
ARCHITECTURE = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _section(heading: str) -> str:
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", ARCHITECTURE, re.MULTILINE | re.DOTALL)
    assert found, f"ARCHITECTURE.md has no section '## {heading}'"
    return found.group(1)


# -- the package table and the modules there are ---------------------------------------------------------------------


def _without_parentheses(text: str) -> str:
    """`text` with every parenthesised remark removed (nested ones too): what is left names the modules."""
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


def documented_modules() -> dict[str, str]:
    """Each module the package table names, dotted under papercode (`edge.stdio`, `settings`), with the row that names
    it (as the table writes its first cell: `edge/`, `settings.py`)."""
    modules: dict[str, str] = {}
    for line in _section("Packages (`server/papercode/`)").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) != 3:
            continue
        row, named = cells[0].strip("`"), re.findall(r"`([\w.]+)`", _without_parentheses(cells[2]))
        if row.endswith("/"):
            package = row.rstrip("/")
            modules.update({f"{package}.{name}": row for name in named})
        else:
            modules[row.removesuffix(".py")] = row
    return modules


def existing_modules() -> set[str]:
    """Every module of server/papercode, dotted under papercode; a package's `__init__` is the package's row."""
    return {".".join(path.relative_to(PACKAGE).with_suffix("").parts) for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"}


def test_the_package_table_names_modules() -> None:
    named = documented_modules()
    assert {"edge.stdio", "settings", "core.errors"} <= set(named)
    assert named["edge.stdio"] == "edge/" and named["settings"] == "settings.py"


def test_every_module_the_table_names_exists() -> None:
    missing = [
        f"the `{row}` row names `{module.rpartition('.')[2]}`, and server/papercode/{module.replace('.', '/')}.py does not exist"
        f" (remove it, or name the module it became)"
        for module, row in sorted(documented_modules().items())
        if module not in existing_modules()
    ]
    assert not missing, "ARCHITECTURE.md's package table is out of date:\n" + "\n".join(missing)


def test_every_module_is_named_in_the_table() -> None:
    documented = documented_modules()
    rows = set(documented.values())
    unnamed = []
    for module in sorted(existing_modules() - set(documented)):
        package, _, name = module.rpartition(".")
        row = f"{package.replace('.', '/')}/" if package else f"{name}.py"
        where = f"the `{row}` row" if row in rows else f"a new `{row}` row"
        unnamed.append(f"server/papercode/{module.replace('.', '/')}.py: add `{name}` (and what it does) to {where}")
    assert not unnamed, "ARCHITECTURE.md's package table does not name every module:\n" + "\n".join(unnamed)


# -- the layers and the import-linter contracts ----------------------------------------------------------------------


def documented_layers() -> list[str]:
    """The layer block under '## Layers', top first: each line's layer (`corpus | verified | archive`)."""
    block = re.search(r"^```\n(.*?)^```", _section("Layers"), re.MULTILINE | re.DOTALL)
    assert block, "ARCHITECTURE.md's '## Layers' has no fenced block of layers"
    return [
        " | ".join(part.strip() for part in re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split("|"))
        for line in block.group(1).splitlines()
        if line.strip()
    ]


def _contract(kind: str, name: str = "") -> dict[str, object]:
    """The one import-linter contract of this type whose name starts with `name`."""
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == kind and str(c["name"]).startswith(name)]
    return dict(contract)


def contract_layers() -> list[str]:
    layers = _contract("layers")["layers"]
    assert isinstance(layers, list)
    return [" | ".join(part.strip().removeprefix("papercode.") for part in str(layer).split("|")) for layer in layers]


def test_the_layer_list_is_the_import_linter_contract() -> None:
    documented, enforced = documented_layers(), contract_layers()
    assert documented == enforced, (
        "ARCHITECTURE.md's layer block and pyproject.toml's layers contract differ; make them the same list, top first:\n"
        f"  ARCHITECTURE.md: {documented}\n  pyproject.toml:  {enforced}"
    )


def test_every_package_has_a_layer() -> None:
    layered = {name for layer in contract_layers() for name in layer.split(" | ")}
    top_level = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()} | {"settings"}
    assert layered == top_level, (
        "the layers (ARCHITECTURE.md and pyproject.toml) and the packages differ:"
        f" packages without a layer {sorted(top_level - layered)}, layers without a package {sorted(layered - top_level)}"
    )


def test_the_mcp_contract_covers_every_layer_below_the_edge() -> None:
    """ARCHITECTURE.md: 'a second contract keeps mcp, starlette and uvicorn out of everything below the edge'."""
    assert "a second contract keeps `mcp`, `starlette` and `uvicorn` out of everything below the edge" in " ".join(ARCHITECTURE.split())
    layers = contract_layers()
    below_edge = {name for layer in layers[layers.index("edge") + 1 :] for name in layer.split(" | ")}
    contract = _contract("forbidden", "Only the edge")
    sources = {str(module).removeprefix("papercode.") for module in contract["source_modules"]}  # type: ignore[attr-defined]
    assert sources == below_edge, (
        f"pyproject.toml's forbidden contract covers {sorted(sources)}; the layers below the edge are {sorted(below_edge)}"
    )
    assert set(contract["forbidden_modules"]) == {"mcp", "starlette", "uvicorn"}  # type: ignore[arg-type]


def test_the_workarounds_contract_forbids_every_layer_but_the_edge_and_core() -> None:
    """ARCHITECTURE.md: 'a third keeps the workarounds (edge/compat/) from importing any layer of papercode's but the
    edge and core'."""
    assert "a third keeps the workarounds (`edge/compat/`) from importing any layer of papercode's but the edge and `core`" in " ".join(
        ARCHITECTURE.split()
    )
    contract = _contract("forbidden", "Workarounds")
    assert contract["source_modules"] == ["papercode.edge.compat"]
    others = {name for layer in contract_layers() for name in layer.split(" | ")} - {"edge", "core"}
    assert set(contract["forbidden_modules"]) == {f"papercode.{name}" for name in others}  # type: ignore[arg-type]


# -- where errors are shaped -----------------------------------------------------------------------------------------

# The codes a model reads at the head of an error: papercode's own (`core.errors`), the edge's three for what never
# reaches papercode's code, and the reasons code is withheld (`get_code`'s `withheld`).
CODES = {*get_args(ErrorCode), "internal_error", "invalid_request", "exiting", *OUTCOMES}
_CODED = re.compile(rf"^(?:{'|'.join(sorted(CODES))}): ")
# A code given as a value, then what happened and the next step: `f"{code}: {detail}. Next: {step}."`.
_CODE_GIVEN = re.compile(r"^\{\}: .*\. Next: ")
# Whose messages a person reads after `papercode: ` (their `what: …. Next: …` is not a model's error).
_COMMAND_LINE = ("cli", "archive")


def _strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of each string and f-string outside docstrings, an f-string's values shown as `{}`."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    parts = {id(value) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for value in node.values}
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in parts:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(value.value if isinstance(value, ast.Constant) else "{}" for value in node.values)


def _modules() -> Iterator[tuple[str, ast.AST]]:
    for module in sorted(existing_modules()):
        path = PACKAGE / f"{module.replace('.', '/')}.py"
        yield module, ast.parse(path.read_text(encoding="utf-8"))


def model_error_shapers() -> dict[str, str]:
    """Each module that writes the head of an error a model reads, with the first place it does."""
    found: dict[str, str] = {}
    for module, tree in _modules():
        command_line = module.split(".")[0] in _COMMAND_LINE
        for line, text in _strings(tree):
            if _CODED.match(text) or (not command_line and _CODE_GIVEN.match(text)):
                found.setdefault(module, f"line {line}: {text[:60]!r}")
    return found


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of `function`'s body, not those of a function defined inside it (a callback that writes a line of
    progress is not its outer function's error)."""
    inner = ast.FunctionDef | ast.AsyncFunctionDef
    pending: list[ast.AST] = [node for node in function.body if not isinstance(node, inner)]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, inner))


def command_line_error_writers() -> dict[str, str]:
    """Each module with a function that writes `papercode: <message>` to stderr and returns the exit code."""
    found: dict[str, str] = {}
    for module, tree in _modules():
        for function in (node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)):
            writes = any(
                isinstance(call, ast.Call)
                and ast.unparse(call.func) == "sys.stderr.write"
                and [text for _, text in _strings(call)] == ["papercode: {}\n"]
                for call in _own_nodes(function)
            )
            returns = any(isinstance(node, ast.Return) and node.value is not None for node in _own_nodes(function))
            if writes and returns:
                found.setdefault(module, function.name)
    return found


def _claimed(lead: str) -> set[str]:
    """The modules the bullet of '## Where errors are shaped' that starts with **lead** names (`edge.server`, ...),
    outside parentheses: a parenthesised remark (who raises, which codes) is not a claim, as in the package table."""
    bullet = re.search(rf"^- \*\*{re.escape(lead)}\*\*(.*?)(?=^- |\Z)", _section("Where errors are shaped"), re.MULTILINE | re.DOTALL)
    assert bullet, f"ARCHITECTURE.md's '## Where errors are shaped' has no bullet starting **{lead}**"
    modules = existing_modules()
    named = set()
    for dotted in re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)`", _without_parentheses(bullet.group(1))):
        parts = dotted.split(".")
        named |= {".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in modules}
    return named


def test_the_one_shape_of_a_models_error_is_the_one_documented() -> None:
    assert str(QueryError("not_found", "no paper with arXiv id 9999.99999", "use search_papers")) == (
        "not_found: no paper with arXiv id 9999.99999. Next: use search_papers."
    )
    assert "`<code>: <what happened>. Next: <what to do>.`" in _section("Where errors are shaped")


def test_the_scan_finds_what_shapes_errors() -> None:
    shapers, writers = model_error_shapers(), command_line_error_writers()
    assert {"core.errors", "edge.server"} <= set(shapers) and "cli.failure" in writers
    assert _CODED.match("not_found: no paper") and _CODE_GIVEN.match("{}: {}. Next: {}.")
    assert not _CODED.match("get_paper: date, links and claim") and not _CODE_GIVEN.match("{}: no such file")


@pytest.mark.parametrize(
    ("lead", "found"),
    [("What a model reads", model_error_shapers), ("What a person reads", command_line_error_writers)],
    ids=["model", "command line"],
)
def test_errors_are_shaped_where_the_architecture_says(lead: str, found: object) -> None:
    actual = found()  # type: ignore[operator]
    claimed = _claimed(lead)
    problems = [
        f"`{module}` shapes errors ({actual[module]}): name it in the bullet **{lead}**" for module in sorted(set(actual) - claimed)
    ]
    problems += [f"`{module}` is named in the bullet **{lead}** and shapes none: remove it" for module in sorted(claimed - set(actual))]
    assert not problems, "ARCHITECTURE.md's '## Where errors are shaped' is not true:\n" + "\n".join(problems)
