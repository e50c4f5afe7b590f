"""The prompts, and completions for their arguments and for the resource templates' variables."""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, Completion, CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference

from papercode.answers import completions, prompts
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus

from .server import CorpusSource, PapercodeServer


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


def register_completions(server: PapercodeServer, source: CorpusSource) -> None:
    @server.completion()  # type: ignore[untyped-decorator,no-untyped-call]  # the SDK leaves it untyped
    async def complete(
        ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
    ) -> Completion | None:
        known = {prompt.name for prompt in await server.list_prompts()} | {
            template.uri_template for template in await server.list_resource_templates()
        }
        if (ref.name if isinstance(ref, PromptReference) else ref.uri) not in known:
            return None
        if server.live is not None and server.live.ready_for("index") is None:  # still loading: nothing to offer yet
            return Completion(values=[], total=0, has_more=False)
        values = await anyio.to_thread.run_sync(completions.complete, source(), argument.name, argument.value)
        return Completion(values=values, total=len(values), has_more=False) if values is not None else None
