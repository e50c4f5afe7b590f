"""The prompts' handlers: each renders its text (`answers.prompts`) from the corpus of the moment;
what a prompt cannot render from is the client's mistake (invalid params)."""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from papercode.answers import prompts
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus

from .server import CorpusSource


def register_prompts(server: MCPServer, source: CorpusSource) -> None:
    @server.prompt(title="Implement a paper")
    def implement_paper(arxiv_id: str) -> str:
        """Start implementing a paper from its best harvested code samples."""
        return _prompt_text(lambda corpus: prompts.implement_prompt(corpus, arxiv_id), source)

    @server.prompt(title="Compare implementations")
    def compare_implementations(arxiv_id: str) -> str:
        """Choose among a paper's repositories using their samples' statuses and licences."""
        return _prompt_text(lambda corpus: prompts.compare_prompt(corpus, arxiv_id), source)


def _prompt_text(render: Callable[[Corpus], str], source: CorpusSource) -> str:
    try:
        return render(source())
    except QueryError as error:
        raise MCPError(INVALID_PARAMS, str(error)) from error
