"""The tools' answers straight from `papercode.answers` (`queries`, `leaderboards`), asked with the tools' own names and
arguments: what the queries-layer tests assert on, and what the MCP round trip compares the wire with.

`shown` is an answer as the edge sends it (JSON, nulls left out); `tests/test_mcp_roundtrip.py` checks that
every tool's structured content and text are exactly that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from papercode.answers import leaderboards, models, queries
from papercode.answers.models import CodeAnswer
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from papercode.index.search import SearchFilters
from papercode.verified.materialize import VerifiedCode
from papercode.verified.store import CodeStore

FILTERS = ("task", "method", "framework", "has_samples", "status", "official_code", "year_from", "year_to")


def shown(answer: BaseModel) -> dict[str, Any]:
    """An answer as the model receives it: JSON values, no nulls."""
    return answer.model_dump(mode="json", exclude_none=True)


def ask(corpus: Corpus, tool: str, **arguments: Any) -> BaseModel:
    """What `tool` answers for these arguments (named as in tools/list); get_code has its own `ask_code`."""
    if tool == "get_harvested_code_for_paper":
        return queries.harvested_code(corpus, **arguments)
    if tool == "list_samples_by_status":
        return queries.samples_by_status(corpus, **arguments)
    if tool == "search_papers":
        filters = SearchFilters(**{name: arguments.pop(name) for name in FILTERS if name in arguments})
        return queries.search_papers(corpus, filters=filters, **arguments)
    if tool == "get_paper":
        return queries.paper_detail(corpus, arguments["paper"])
    if tool == "find_papers_for_repo":
        return queries.papers_for_repo(corpus, **arguments)
    if tool == "corpus_stats":
        return queries.corpus_stats(corpus, **arguments)
    if tool == "get_leaderboard":
        return models.Leaderboard.model_validate(leaderboards.leaderboard_shown(corpus, **arguments))
    if tool == "describe":
        return models.Description.model_validate(leaderboards.describe_shown(corpus, **arguments))
    raise AssertionError(f"no such tool here: {tool}")


def answer(corpus: Corpus, tool: str, **arguments: Any) -> dict[str, Any]:
    return shown(ask(corpus, tool, **arguments))


async def ask_code(corpus: Corpus, code_sha256: str, code: VerifiedCode | None = None) -> CodeAnswer:
    """get_code's answer: the samples of a hash, then their verified code from `code` (by default an
    empty store and no downloads, as the server runs with no code store)."""
    found = queries.find_code(corpus, code_sha256)
    obtained = await (code or VerifiedCode(CodeStore(None))).obtain(found.rows)
    return queries.code_answer(corpus, found, obtained)


async def code_answer(corpus: Corpus, code_sha256: str, code: VerifiedCode | None = None) -> dict[str, Any]:
    return shown(await ask_code(corpus, code_sha256, code))


def refusal(call: Callable[..., object], *args: Any, **kwargs: Any) -> str:
    """The text of the QueryError a call raises: what the model reads for a failed tool call."""
    with pytest.raises(QueryError) as raised:
        call(*args, **kwargs)
    return str(raised.value)


async def code_refusal(corpus: Corpus, code_sha256: str) -> str:
    with pytest.raises(QueryError) as raised:
        await ask_code(corpus, code_sha256)
    return str(raised.value)
