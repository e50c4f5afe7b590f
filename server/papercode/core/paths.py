"""A path the user gives (a flag, an environment variable, an XDG base directory), read the same way everywhere.

Surrounding whitespace is never part of a directory's name: it is what `$(cat file)`, an env file or a copied line
leaves behind, and a build that stripped it while `serve` did not would write where `serve` never looks.
"""

from __future__ import annotations

import os
from pathlib import Path


def given_path(text: str) -> Path | None:
    """`text` as a path, surrounding whitespace dropped and `~` expanded; None when nothing is left."""
    text = text.strip()
    return Path(text).expanduser() if text else None


def xdg_base(variable: str, fallback: str) -> Path:
    """An XDG base directory: `$variable` when it holds an absolute path (a relative one is ignored, as the XDG
    spec says), else `~/<fallback>`."""
    chosen = given_path(os.environ.get(variable, ""))
    return chosen if chosen is not None and chosen.is_absolute() else Path.home() / fallback
