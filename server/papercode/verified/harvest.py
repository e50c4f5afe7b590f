"""The harvest recipe: rebuild a sample's harvested module from its source file.

A sample's `code_sha256_prefix` is not a hash of the raw function text. It is the first
`SHA_PREFIX_LENGTH` (16) hex characters of the sha256 of a small module rebuilt from the source file: the entry function,
the top-level statements it needs (transitively), and the imports among them, each rendered
by `ast.unparse`. Rebuilding it here and comparing prefixes proves that the code handed to an
agent is exactly the code that was harvested and run. `ast.unparse` output differs between
Python versions (3.11 reproduces every real sample), so a mismatch can also mean "this Python
renders the file differently"; callers say which interpreter ran.

Pure: no I/O, no MCP. A file is parsed once (`SourceModule.parse`), however many entries are
rebuilt from it.
"""

from __future__ import annotations

import ast
import hashlib
import platform
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from papercode.core.ids import SHA_PREFIX_LENGTH

NotRebuiltOutcome = Literal["syntax_error", "entry_missing", "unsupported_language"]

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_IMPORTS = (ast.Import, ast.ImportFrom)
_NOT_THIRD_PARTY = frozenset(sys.stdlib_module_names) | {"__future__"}


def interpreter() -> str:
    """The Python that renders the code (the recipe's output depends on it), e.g. `CPython 3.11.7`."""
    return f"{platform.python_implementation()} {platform.python_version()}"


def sha256_prefix(code: str) -> str:
    """What `code_sha256_prefix` holds for this module text."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:SHA_PREFIX_LENGTH]


@dataclass(frozen=True, slots=True)
class HarvestedModule:
    """An entry function with everything it needs from its file, rendered as one module."""

    code: str
    sha256_prefix: str
    requires: tuple[str, ...]  # non-standard-library top-level modules it imports, sorted


@dataclass(frozen=True, slots=True)
class NotRebuilt:
    """Why no module could be rebuilt: the file does not parse, has no such entry, or is not Python."""

    outcome: NotRebuiltOutcome
    reason: str


def unsupported_language(language: str | None) -> NotRebuilt:
    """A sample in another language: the recipe rebuilds Python only."""
    return NotRebuilt("unsupported_language", f"language {language!r} is not Python; only Python samples can be rebuilt")


def requires_of(code: str) -> tuple[str, ...]:
    """The non-standard-library top-level modules a module imports (for code read back from a store)."""
    try:
        return _requires(ast.parse(code).body)
    except (SyntaxError, ValueError):
        return ()


class SourceModule:
    """One parsed Python source file, from which any of its top-level functions can be rebuilt."""

    def __init__(self, tree: ast.Module) -> None:
        self._body = tree.body
        self._binders: dict[str, list[int]] = {}  # name -> positions of the top-level statements binding it
        self._entries: dict[str, int] = {}  # top-level function name -> position of its first def
        for position, statement in enumerate(self._body):
            for name in _bound_at_top_level(statement):
                self._binders.setdefault(name, []).append(position)
            if isinstance(statement, _FUNCTIONS):
                self._entries.setdefault(statement.name, position)

    @classmethod
    def parse(cls, source: str | bytes, language: str | None = "python") -> SourceModule | NotRebuilt:
        """Parse a file's text (bytes honour a PEP 263 coding line); `language` is the sample's."""
        if (language or "").lower() != "python":
            return unsupported_language(language)
        try:
            return cls(ast.parse(source))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:  # ValueError: NUL bytes
            where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
            return NotRebuilt("syntax_error", f"the file does not parse under {interpreter()}{where}: {type(exc).__name__}")

    def rebuild(self, entry: str) -> HarvestedModule | NotRebuilt:
        """The harvested module for the top-level function `entry`."""
        position = self._entries.get(entry)
        if position is None:
            return NotRebuilt("entry_missing", f"the file has no top-level function {entry!r}")
        needed = self._dependencies(position)
        imports = [self._body[p] for p in needed if isinstance(self._body[p], _IMPORTS)]
        others = [self._body[p] for p in needed if not isinstance(self._body[p], _IMPORTS)]
        try:
            import_lines = list(dict.fromkeys(ast.unparse(statement) for statement in imports))
            blocks = ["\n".join(import_lines)] if import_lines else []
            blocks += [ast.unparse(statement) for statement in others]
            blocks.append(ast.unparse(self._body[position]))
        except RecursionError:
            return NotRebuilt("syntax_error", f"{entry!r} is nested too deeply to render under {interpreter()}")
        code = "\n\n".join(blocks) + "\n"
        return HarvestedModule(code, sha256_prefix(code), _requires([*imports, *others, self._body[position]]))

    def _dependencies(self, entry: int) -> list[int]:
        """Positions, in file order, of every top-level statement the entry needs, transitively."""
        needed: set[int] = set()
        pending = [entry]
        while pending:
            statement = self._body[pending.pop()]
            if isinstance(statement, _IMPORTS):
                continue
            for name in _free_names(statement):
                for position in self._binders.get(name, ()):
                    if position != entry and position not in needed:
                        needed.add(position)
                        pending.append(position)
        return sorted(needed)


def _bound_at_top_level(statement: ast.stmt) -> Iterable[str]:
    """The names a module-level statement binds, for the kinds the recipe follows."""
    if isinstance(statement, _IMPORTS):
        return _imported_names(statement)
    if isinstance(statement, _SCOPES):
        return (statement.name,)
    if isinstance(statement, ast.Assign):
        # Only names stored to: `TABLE[key] = 1` or `log.level = 10` binds no name.
        return [
            node.id
            for target in statement.targets
            for node in ast.walk(target)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
        ]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return (statement.target.id,)
    return ()


def _imported_names(statement: ast.Import | ast.ImportFrom) -> list[str]:
    # `import a.b` binds `a`; `import a.b as c` binds `c`; `from m import *` binds nothing we can name.
    if isinstance(statement, ast.Import):
        return [alias.asname or alias.name.split(".")[0] for alias in statement.names]
    return [alias.asname or alias.name for alias in statement.names if alias.name != "*"]


def _free_names(statement: ast.stmt) -> set[str]:
    """The names a statement reads that it does not bind itself.

    For a function or class: every name read anywhere inside it (body, decorators, annotations,
    defaults), minus what it assigns or deletes, its parameters, the functions and classes
    nested in it and what it imports inside itself. For an assignment: every name it reads.
    """
    reads: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    if not isinstance(statement, _SCOPES):
        return reads
    if isinstance(statement, _FUNCTIONS):
        arguments = statement.args
        bound.update(arg.arg for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])
        bound.update(arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None)
    for node in ast.walk(statement):
        if node is not statement and isinstance(node, _SCOPES):
            bound.add(node.name)
        elif isinstance(node, _IMPORTS):
            bound.update(_imported_names(node))
    return reads - bound


def _requires(statements: Iterable[ast.stmt]) -> tuple[str, ...]:
    modules: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return tuple(sorted(modules - _NOT_THIRD_PARTY))
