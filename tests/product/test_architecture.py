"""ARCHITECTURE.md is held to the code: its package lines and its module index are the docstrings' first sentences,
every module it names exists (and every name it gives one, such as `corpus.reload.LiveCorpus`), its layer list is the
import-linter contract, what it says about where errors are shaped is where they are, and no line of it is longer than
`MAX_LINE` characters.

The package lines and the module index are generated sections: `PAPERCODE_UPDATE_SNAPSHOTS=1` rewrites them from the
docstrings (review the diff). Each failure says what to change.
"""

from __future__ import annotations

import ast
import re
import textwrap
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import get_args

import pytest

from papercode.core.errors import ErrorCode, QueryError
from papercode.verified.materialize import OUTCOMES
from tests.support import generated, python_source

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "server" / "papercode"
ARCHITECTURE_PATH = REPO / "ARCHITECTURE.md"
ARCHITECTURE = ARCHITECTURE_PATH.read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
MAX_LINE = 160  # a map is read on a screen: no line of ARCHITECTURE.md is longer
PACKAGE_LINE = 130  # a package's line in the map is the first sentence of its docstring: at most this long
WRAP = 120  # the module index's lines are wrapped at this width
REWRITE = "PAPERCODE_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/product/test_architecture.py"


def _section(heading: str) -> str:
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", ARCHITECTURE, re.MULTILINE | re.DOTALL)
    assert found, f"ARCHITECTURE.md has no section '## {heading}'"
    return found.group(1)


def _without_parentheses(text: str) -> str:
    """`text` with every parenthesised remark removed (nested ones too): what is left names the modules."""
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


# -- the docstrings, and the sections generated from them ------------------------------------------------------------


def module_path(module: str) -> Path:
    """The file of a module or package, dotted under papercode (`edge.stdio`, `edge.compat`)."""
    path = PACKAGE.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def existing_modules() -> set[str]:
    """Every module of server/papercode, dotted under papercode; a package's `__init__` is the package's line."""
    return {".".join(path.relative_to(PACKAGE).with_suffix("").parts) for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"}


def existing_packages() -> set[str]:
    """Every package under server/papercode, dotted (`edge`, `edge.compat`)."""
    return {".".join(path.parent.relative_to(PACKAGE).parts) for path in PACKAGE.rglob("__init__.py") if path.parent != PACKAGE}


def layer_modules() -> set[str]:
    """The modules at the top of server/papercode that are layers of their own (`settings`, `bench`): all but the
    package's `__init__` and `__main__` (the command line's entry, as the script's)."""
    return {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "__main__"}


def first_sentence(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line: up to the first `.`, `!` or `?` that ends a
    word before a space (not in a code span, not after `e.g` or `i.e`), else the whole paragraph."""
    paragraph = " ".join(docstring.strip().split("\n\n", 1)[0].split())
    prose = re.sub(r"`[^`]*`", lambda span: "`" * len(span[0]), paragraph)  # a code span's stops are not the sentence's
    ends = re.search(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s|$)", prose)
    return paragraph[: ends.end()] if ends else paragraph


def _wrapped(entry: str) -> list[str]:
    """A list entry wrapped at `WRAP`, never inside a code span."""
    kept = re.sub(r"`[^`]*`", lambda span: span[0].replace(" ", "\0"), entry)
    lines = textwrap.wrap(kept, WRAP, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    return [line.replace("\0", " ") for line in lines]


@cache
def docstring_of(module: str) -> str | None:
    return ast.get_docstring(ast.parse(module_path(module).read_text(encoding="utf-8")))


def _in_layer_order(names: set[str]) -> list[str]:
    """Modules or packages in the order of the layers, top first (a subpackage after its package), then by name."""
    order = [name for layer in contract_layers() for name in layer_names(layer)]

    def place(name: str) -> tuple[int, str]:
        top = name.split(".")[0]
        return (order.index(top) if top in order else len(order), name)

    return sorted(names, key=place)


def packages_markdown() -> str:
    """The generated section `packages`: one line a package, the first sentence of its docstring, in layer order
    (the modules that are layers of their own, such as settings, among them)."""
    rows = ["| package | what it is for |", "|---|---|"]
    for name in _in_layer_order(existing_packages() | layer_modules()):
        shown = f"{name.replace('.', '/')}/" if name in existing_packages() else f"{name}.py"
        sentence = first_sentence(docstring_of(name) or "").replace("|", "\\|")  # a table's cell: its `|` escaped
        rows.append(f"| `{shown}` | {sentence} |")
    return "\n".join(rows) + "\n"


def modules_markdown() -> str:
    """The generated section `modules`: every module, by package in layer order, with the first sentence of its
    docstring, wrapped."""
    lines: list[str] = []
    modules = existing_modules()
    by_package: dict[str, list[str]] = {}
    for module in modules:
        by_package.setdefault(module.rpartition(".")[0], []).append(module)
    for package in [*_in_layer_order(set(by_package) - {""}), ""]:
        lines.append(f"**`{package.replace('.', '/')}/`**" if package else "**top level**")
        lines.append("")
        for module in sorted(by_package.get(package, [])):
            lines += _wrapped(f"- `{module}`: {first_sentence(docstring_of(module) or '')}")
        lines.append("")
    return "\n".join(lines)


def indexed_modules(body: str | None = None) -> dict[str, str]:
    """The module index as ARCHITECTURE.md holds it (or as `body` writes it): each module it lists, with its line
    (unwrapped)."""
    body = generated.sections(ARCHITECTURE).get("modules", "") if body is None else body
    return {
        found[1]: " ".join(found[2].split())
        for found in re.finditer(r"^- `([\w.]+)`: (.*?)(?=^- |^\*\*|\Z)", body, re.MULTILINE | re.DOTALL)
    }


def test_every_module_opens_with_a_sentence_that_says_what_it_is_for() -> None:
    missing = [
        f"{module_path(module).relative_to(REPO)} has no docstring: open it with one sentence that says what the module is"
        " for (ARCHITECTURE.md's module index shows that sentence)"
        for module in sorted(existing_modules() | existing_packages())
        if not (docstring_of(module) or "").strip()
    ]
    assert not missing, "\n".join(missing) + f"\nThen rewrite the module index: {REWRITE}"


def test_every_package_line_is_short() -> None:
    long = [
        f"{module_path(name).relative_to(REPO)}: the first sentence of its docstring is {len(sentence)} characters; say what the"
        f" package is for in at most {PACKAGE_LINE} (the rest of the docstring can say more)"
        for name in sorted(existing_packages() | layer_modules())
        if len(sentence := first_sentence(docstring_of(name) or "")) > PACKAGE_LINE
    ]
    assert not long, "\n".join(long)


def test_the_package_lines_are_the_packages_docstrings() -> None:
    generated.hold("packages", packages_markdown())


def test_the_module_index_is_the_modules_docstrings() -> None:
    """A module added, moved, removed or with a new first sentence: rewrite the index (the failure says how)."""
    indexed = indexed_modules()
    expected = {module: first_sentence(docstring_of(module) or "") for module in existing_modules()}
    drift = [f"  not listed: {module}" for module in sorted(set(expected) - set(indexed))]
    drift += [f"  listed, and no such module: {module}" for module in sorted(set(indexed) - set(expected))]
    drift += [
        f"  its first sentence changed: {module}" for module in sorted(set(expected) & set(indexed)) if expected[module] != indexed[module]
    ]
    generated.hold("modules", modules_markdown(), "\n" + "\n".join(drift) if drift else "")


def test_the_first_sentence_is_read_up_to_its_end() -> None:
    assert first_sentence("One thing: it does this, e.g. that.\nSecond `a.b` sentence.") == "One thing: it does this, e.g. that."
    assert first_sentence("Spans\n  two lines, reads `archive.json`. Then more.\n\nAnother paragraph.") == (
        "Spans two lines, reads `archive.json`."
    )
    assert first_sentence("A heading without a full stop\n\nThe rest.") == "A heading without a full stop"
    assert first_sentence("Fails in `one line. Next: this`, always. Then.") == "Fails in `one line. Next: this`, always."
    assert _wrapped("- `x`: " + "word " * 30 + "`a code span that must stay on one line`")[-1].endswith(
        "`a code span that must stay on one line`"
    )


def test_the_index_is_read_back_as_written() -> None:
    read = indexed_modules(modules_markdown())
    assert read == {module: first_sentence(docstring_of(module) or "") for module in existing_modules()}


# -- every name the map gives a module ---------------------------------------------------------------------------------

_FILE = re.compile(r"\.(json|md|py|toml|txt|snapshot)$")


def _defines(module: str, name: str) -> bool:
    """Whether `module` (a module or package) defines or imports `name` at its top level, or lists it among what it
    loads on first use (a package's `__getattr__`, as `papercode.archive` does)."""
    tree = ast.parse(module_path(module).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return True
        if isinstance(node, ast.ImportFrom | ast.Import) and any((alias.asname or alias.name) == name for alias in node.names):
            return True
        if isinstance(node, ast.If) and any(  # `if TYPE_CHECKING:` imports what `__getattr__` loads
            isinstance(inner, ast.ImportFrom) and any(alias.name == name for alias in inner.names) for inner in node.body
        ):
            return True
    if module not in existing_packages():
        return False
    inside = module_path(module).parent
    return (inside / f"{name}.py").exists() or (inside / name / "__init__.py").exists()  # a module or subpackage


def named_in_the_map() -> set[str]:
    """Every dotted name in a code span of ARCHITECTURE.md's prose (outside the generated sections) that starts with a
    package or module of papercode's: `corpus.reload.LiveCorpus`, `edge.compat`."""
    prose = generated.SECTION.sub("", ARCHITECTURE)
    tops = {name.split(".")[0] for name in existing_modules() | existing_packages()}
    spans = re.findall(r"`([^`\n]+)`", prose)
    return {
        span for span in spans if re.fullmatch(r"[a-z_]+(\.[A-Za-z_]+)+", span) and span.split(".")[0] in tops and not _FILE.search(span)
    }


def test_every_name_the_map_gives_is_in_the_code() -> None:
    known = set(indexed_modules()) | existing_packages()
    problems = []
    for name in sorted(named_in_the_map()):
        parts = name.split(".")
        module = next((".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in known), None)
        if module is None:
            problems.append(f"`{name}`: no module of the index is named so (name the module it became)")
            continue
        rest = parts[len(module.split(".")) :]
        if rest and not _defines(module, rest[0]):
            problems.append(f"`{name}`: {module_path(module).relative_to(REPO)} defines no `{rest[0]}` (name what it became)")
    assert not problems, "ARCHITECTURE.md names what the code does not have:\n" + "\n".join(problems)


def test_the_scan_finds_the_names_the_map_gives() -> None:
    named = named_in_the_map()
    assert {"corpus.reload.LiveCorpus", "edge.compat.unknown_tool", "core.scratch"} <= named
    assert not any(_FILE.search(name) for name in named)
    assert _defines("corpus.reload", "LiveCorpus") and not _defines("corpus.reload", "NoSuchThing")
    assert _defines("archive", "build_archive") and _defines("edge", "compat")


def test_no_line_is_longer_than_the_map_allows() -> None:
    long = [f"line {number}: {len(line)} characters" for number, line in enumerate(ARCHITECTURE.splitlines(), 1) if len(line) > MAX_LINE]
    assert not long, f"ARCHITECTURE.md has lines over {MAX_LINE} characters (break them):\n" + "\n".join(long)


# -- the layers and the import-linter contracts ----------------------------------------------------------------------


def _layer(written: str) -> str:
    """A layer as written (`corpus | verified | archive`, `papercode.cli : papercode.bench`), spaced alike and without
    the `papercode.` prefix: `|` parts never import each other, `:` parts may."""
    return re.sub(r"\s*([|:])\s*", r" \1 ", " ".join(part.removeprefix("papercode.") for part in written.split()))


def layer_names(layer: str) -> list[str]:
    """The packages of a layer (`corpus | verified | archive`: three)."""
    return [part.strip() for part in re.split(r"[|:]", layer)]


def documented_layers() -> list[str]:
    """The layer block under '## Layers', top first: each line's layer (`corpus | verified | archive`)."""
    block = re.search(r"^```\n(.*?)^```", _section("Layers"), re.MULTILINE | re.DOTALL)
    assert block, "ARCHITECTURE.md's '## Layers' has no fenced block of layers"
    return [_layer(re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]) for line in block.group(1).splitlines() if line.strip()]


def _contract(kind: str, name: str = "") -> dict[str, object]:
    """The one import-linter contract of this type whose name starts with `name`."""
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == kind and str(c["name"]).startswith(name)]
    return dict(contract)


def contract_layers() -> list[str]:
    layers = _contract("layers")["layers"]
    assert isinstance(layers, list)
    return [_layer(str(layer)) for layer in layers]


def test_the_layer_list_is_the_import_linter_contract() -> None:
    documented, enforced = documented_layers(), contract_layers()
    assert documented == enforced, (
        "ARCHITECTURE.md's layer block and pyproject.toml's layers contract differ; make them the same list, top first:\n"
        f"  ARCHITECTURE.md: {documented}\n  pyproject.toml:  {enforced}"
    )


def test_every_package_has_a_layer() -> None:
    layered = {name for layer in contract_layers() for name in layer_names(layer)}
    top_level = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()} | layer_modules()
    assert layered == top_level, (
        "the layers (ARCHITECTURE.md and pyproject.toml) and the packages differ:"
        f" packages without a layer {sorted(top_level - layered)}, layers without a package {sorted(layered - top_level)}"
    )


def test_the_mcp_contract_covers_every_layer_below_the_edge() -> None:
    """ARCHITECTURE.md: 'a second contract keeps mcp, starlette and uvicorn out of everything below the edge'."""
    assert "a second contract keeps `mcp`, `starlette` and `uvicorn` out of everything below the edge" in " ".join(ARCHITECTURE.split())
    layers = contract_layers()
    below_edge = {name for layer in layers[layers.index("edge") + 1 :] for name in layer_names(layer)}
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
    others = {name for layer in contract_layers() for name in layer_names(layer)} - {"edge", "core"}
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
    docstrings = python_source.docstrings(tree)
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
    modules = set(indexed_modules())
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
