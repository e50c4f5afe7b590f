"""What a load found wrong: each rejected file, line, record or sample is a `Problem` in the `LoadReport`.

Shared by every layer that reads records or code files: the build fills a report, the index keeps it,
the answers show it. The loader never raises for bad data; it reports.
"""

from __future__ import annotations

from collections.abc import Callable
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




ProgressCallback = Callable[[int, int, int], None]
"""Called as (files done, files total, records read)."""
