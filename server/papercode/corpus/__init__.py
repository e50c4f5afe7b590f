"""A corpus and its life: the stages of a start, the snapshot that makes a warm start fast, reload without a restart.

`Corpus` (what every answer is asked of) is importable from here, loaded on first use: importing one module of the
package (`cli.main` imports `corpus.snapshot` as it starts) does not load the stages and the cold build's modules.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what `__getattr__` loads on first use, named for the type checker and linters
    from .stages import Corpus

_LAZY = {"Corpus": "stages"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)


__all__ = ["Corpus"]
