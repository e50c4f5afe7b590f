"""In `answers/`, one name means one thing: an answer model is not named like a class of another layer, and no local or
parameter takes the name of one of the answers' functions (as `shown`, the function that builds an answer as shown,
once also named lists of problems and counts)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "papercode"


def _trees(directory: Path) -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(directory.rglob("*.py"))}


def classes_named_twice(package: Path) -> list[str]:
    """Each class of `package`'s `answers/` that another module of `package` declares by the same name."""
    declared: dict[str, list[Path]] = {}
    for path, tree in _trees(package).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                declared.setdefault(node.name, []).append(path.relative_to(package))
    return sorted(
        f"{name}: {', '.join(map(str, paths))}"
        for name, paths in declared.items()
        if len(paths) > 1 and any(path.parts[0] == "answers" for path in paths)
    )


def locals_named_like_functions(answers: Path) -> list[str]:
    """Each parameter or local of a function in `answers` named like a module-level function there."""
    trees = _trees(answers)
    functions = {node.name for tree in trees.values() for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    found = []
    for path, tree in trees.items():
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            arguments = function.args
            names = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
            names += [node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)]
            found += [f"{path.name}:{function.lineno} {name}" for name in names if name in functions]
    return sorted(set(found))


def test_no_answer_class_shares_its_name_with_another_class_of_the_server() -> None:
    assert not classes_named_twice(PACKAGE)


def test_no_local_of_the_answers_is_named_like_one_of_their_functions() -> None:
    assert not locals_named_like_functions(PACKAGE / "answers")


def test_the_scans_find_what_they_look_for(tmp_path: Path) -> None:
    (tmp_path / "answers").mkdir()
    (tmp_path / "index").mkdir()
    (tmp_path / "answers" / "models.py").write_text("class SearchHit:\n    pass\n", encoding="utf-8")
    (tmp_path / "index" / "search.py").write_text("class SearchHit:\n    pass\n", encoding="utf-8")
    (tmp_path / "answers" / "shaping.py").write_text(
        "def shown(**fields):\n    return fields\n\n\ndef problems(most):\n    shown = [most]\n    return shown\n", encoding="utf-8"
    )
    assert classes_named_twice(tmp_path) == ["SearchHit: answers/models.py, index/search.py"]
    assert locals_named_like_functions(tmp_path / "answers") == ["shaping.py:5 shown"]
