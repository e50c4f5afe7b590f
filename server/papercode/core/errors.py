"""The one error shape every answer uses: `<code>: <what happened>. Next: <what to do>.`"""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal["not_found", "ambiguous", "invalid_argument", "loading", "load_failed"]


class QueryError(Exception):
    """A bad or unanswerable request, explained for the agent that made it."""

    def __init__(self, code: ErrorCode, detail: str, next_step: str) -> None:
        self.code = code
        self.detail = detail
        self.next_step = next_step
        super().__init__(f"{code}: {detail}. Next: {next_step}.")
