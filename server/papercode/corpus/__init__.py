"""A corpus and its life: the stages of a start, the snapshot that makes a warm start fast, reload without a restart.

`Corpus` (what every answer is asked of) is importable from here, loaded on first use: importing one module of the
package (`cli.main` imports `corpus.snapshot` as it starts) does not load the stages and the cold build's modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from papercode.core.lazy import loaded_on_first_use

if TYPE_CHECKING:  # what `__getattr__` loads on first use, named for the type checker and linters
    from .stages import Corpus

_LAZY = {"Corpus": ".stages"}


__getattr__ = loaded_on_first_use(__name__, _LAZY)


__all__ = ["Corpus"]
