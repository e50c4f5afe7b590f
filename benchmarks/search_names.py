"""papercode's full-text search by name, wherever the papercode benchmarked declares it.

Since issue #24 the search is cut into modules under `index/` (`search_queries`, `search_writer`, ...); before, one
module `index.search` held it all, and before the subpackages `papercode.search` did. The documents it indexes are
made by `ingest.documents.search_document` for what `ingest.admission.Admission` admits (before, both were in
`ingest.builder`, earlier `build.builder`). A benchmark that runs an
exported commit (its `server/` first on PYTHONPATH) finds each name in whichever of these that commit has.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = (
    "papercode.index.search_queries",
    "papercode.index.search_documents",
    "papercode.index.search_writer",
    "papercode.index.text_analysis",
    "papercode.index.abstracts",
    "papercode.index.ranking",
    "papercode.index.search",
    "papercode.search",
    "papercode.ingest.documents",
    "papercode.ingest.admission",
    "papercode.ingest.builder",
    "papercode.build.builder",
)
_ABSENT = object()


def search_name(name: str, default: Any = _ABSENT) -> Any:
    """The search's `name` (`default` when this papercode has none; without a default, `ImportError`)."""
    return declared(name, _MODULES, "search", default)


def declared(name: str, modules: tuple[str, ...], part: str, default: Any = _ABSENT) -> Any:
    """`name` from the first of `modules` this papercode has that declares it (`default` when none does; without a
    default, `ImportError` naming the `part` of papercode looked in)."""
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, name):
            return getattr(module, name)
    if default is _ABSENT:
        raise ImportError(f"this papercode's {part} has no {name}")
    return default
