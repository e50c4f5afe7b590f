"""A path the user gives (a flag, an environment variable, an XDG base directory), read the same way everywhere.

Surrounding whitespace is never part of a directory's name: it is what `$(cat file)`, an env file or a copied line
leaves behind, and a build that stripped it while `serve` did not would write where `serve` never looks.

A directory papercode removes things in (the archive's) is also taken as its real path once, where the setting is
read (`RealPath`): what a build writes, a start removes and a server opens are then compared as the same paths,
however the user wrote it (relative, through a symlink, under a symlinked parent or home).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class RealPath:
    """A path as the user gave it (`given`, for messages) and the one it names (`real`: absolute, every symlink on the
    way followed, the last one too, even when nothing is where it points yet), which is what papercode uses."""

    given: Path
    real: Path

    @classmethod
    def of(cls, given: Path) -> RealPath:
        return cls(given, Path(os.path.realpath(given)))

    @property
    def through_symlink(self) -> bool:
        """Whether a symlink led there (its own name, a parent's, or the home directory's)."""
        return self.real != Path(os.path.abspath(self.given))

    @property
    def shown(self) -> str:
        """The path as the user gave it, and, where it reads otherwise, the real one."""
        return str(self.given) if str(self.given) == str(self.real) else f"{self.given} (that is {self.real})"
