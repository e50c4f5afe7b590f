"""papercode's answers by name, wherever the papercode benchmarked declares them.

Since issue #24 the answers are cut into modules: `answers.resolving` finds what an argument names (`find_code`),
`answers.overview` answers `corpus_stats`, `answers.queries` keeps one function a tool; before, `answers.queries` held
them all. A benchmark that runs an exported commit (its `server/` first on PYTHONPATH) finds each name in whichever of
these that commit has.
"""

from __future__ import annotations

from typing import Any

from .search_names import declared

_MODULES = (
    "papercode.answers.resolving",
    "papercode.answers.overview",
    "papercode.answers.queries",
)


def answer_name(name: str) -> Any:
    """The answers' `name`; `ImportError` when this papercode has none."""
    return declared(name, _MODULES, "answers")
