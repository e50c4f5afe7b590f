"""What a load found wrong: each rejected file, line, record or sample is a `Problem` in the `LoadReport`.

Shared by every layer that reads records or code files: the build fills a report, the index keeps it,
the answers show it. The loader never raises for bad data; it reports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One rejection (`error`) or oddity (`warning`) found while loading."""

    severity: Severity
    code: str
    path: str
    reason: str
    line: int | None = None

    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


@dataclass(slots=True)
class LoadReport:
    roots: list[str] = field(default_factory=list)
    files_seen: int = 0
    files_read: int = 0
    records_read: int = 0
    records_indexed: int = 0
    problems: list[Problem] = field(default_factory=list)

    def add(self, severity: Severity, code: str, path: str, reason: str, line: int | None = None) -> None:
        self.problems.append(Problem(severity, code, path, reason, line))

    @property
    def rejected(self) -> int:
        return sum(1 for problem in self.problems if problem.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for problem in self.problems if problem.severity == "warning")


# An absolute path inside a message: POSIX (two segments at least: not the `/paper/` of a URL pattern, nor the
# `//host/...` of a URL) or Windows, each segment up to a space, quote, colon or bracket.
_SEGMENT = r"""[^\s'"`:;,()<>\[\]{}/\\]+"""
_ABSOLUTE_PATH = re.compile(rf"(?<![\w.~:/\\-])(?:/{_SEGMENT}(?:/{_SEGMENT})+/?|[A-Za-z]:[\\/](?:{_SEGMENT}[\\/]?)*)")
_SEPARATORS = re.compile(r"[\\/]")


def shown_path(path: str, roots: Iterable[str] = ()) -> str:
    """`path` as a client may see it: relative to the records directory it is under, else (a records
    directory itself, or any other file) by its last component. No client learns where the server keeps files."""
    for root in sorted((root.rstrip("/\\") for root in roots), key=len, reverse=True):
        if root and path.startswith((root + "/", root + "\\")):
            return path[len(root) + 1 :]
    return _SEPARATORS.split(path.rstrip("/\\"))[-1] or path


def relative_to_roots(text: str, roots: Iterable[str]) -> str:
    """`text` (a load problem's reason) with the records directories in it shown as `shown_path` shows them."""
    for root in sorted((root.rstrip("/\\") for root in roots), key=len, reverse=True):
        if root:  # whole, longest first: a directory may hold spaces, or be inside another
            text = re.sub(rf"(?<![\w.~:/\\-]){re.escape(root)}[/\\]", "", text)  # a path under it: relative
            text = re.sub(rf"(?<![\w.~:/\\-]){re.escape(root)}(?![\w.~-])", shown_path(root).replace("\\", "\\\\"), text)
    return text


def without_paths(text: str, roots: Iterable[str] = ()) -> str:
    """`text` (an exception's message, say) with the records directories and every other absolute path
    in it shown as `shown_path` shows them."""
    return _ABSOLUTE_PATH.sub(lambda match: shown_path(match[0]), relative_to_roots(text, roots))


ProgressCallback = Callable[[int, int, int], None]
"""Called as (files done, files total, records read)."""
