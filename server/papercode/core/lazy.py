"""Names a package or module gives but loads on first use: its `__getattr__`, made from a table of where each lives.

A package imports cheaply what every user of it needs and leaves the rest to the first use of a name (`papercode.archive`
leaves pyarrow's modules; `papercode.corpus` the stages; `papercode.bench` everything), while its `__all__` and its
`if TYPE_CHECKING:` imports name them for the type checker and linters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def loaded_on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of the module `package` (its `__name__`) that loads each name of `homes` from its module
    (relative to `package` when it starts with a dot); any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(home, package), name)

    return __getattr__
