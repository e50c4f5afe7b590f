"""Python source as the static tests read it: which string constants of a parsed module are docstrings."""

from __future__ import annotations

import ast


def docstrings(tree: ast.AST) -> set[int]:
    """The `id` of each docstring's node in `tree` (a module's, a class's, a function's): prose about the code, which a
    scan for what the code does leaves out."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
