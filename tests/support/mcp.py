"""MCP as the tests speak it: the protocol eras, the tools as tools/list names them, and an in-memory client on a
fresh server over a corpus (the `connect` fixture of conftest.py hands out `connected`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp import Client

from papercode.corpus.stages import Corpus
from papercode.edge.app import build_server
from papercode.verified.materialize import VerifiedCode

MODES = ("auto", "legacy")
# The tools, as tools/list names them (tests/product/test_snapshot.py holds everything else the model sees).
TOOL_NAMES = (
    "get_harvested_code_for_paper",
    "list_samples_by_status",
    "search_papers",
    "get_paper",
    "find_papers_for_repo",
    "get_code",
    "corpus_stats",
    "get_leaderboard",
    "describe",
)

Connect = Callable[..., AbstractAsyncContextManager[Client]]  # the `connect` fixture: `connected`


@asynccontextmanager
async def connected(
    corpus: Corpus | Callable[[], Corpus], verified: VerifiedCode | None = None, *, mode: str = "auto", **client_options: Any
) -> AsyncIterator[Client]:
    """A client connected in memory to a server of its own over `corpus` (or what a callable gives at each call)."""
    source = corpus if callable(corpus) else lambda: corpus
    async with Client(build_server(source, verified), mode=mode, **client_options) as client:
        yield client
