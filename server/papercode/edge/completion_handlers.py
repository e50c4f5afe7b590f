"""Completions (`completion/complete`) for the prompts' arguments and the resource templates' variables: arXiv ids,
statuses and code hashes by prefix, from the corpus of the moment; none while it loads."""

from __future__ import annotations

import anyio.to_thread
from mcp.types import Completion, CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference

from papercode.answers import completions

from .server import CorpusSource, PapercodeServer


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
