"""The resources: get_paper's and get_code's answers by URI, and the corpus's statistics and load report."""

from __future__ import annotations

from typing import Any

import orjson
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from pydantic import BaseModel

from papercode.answers import overview, queries
from papercode.core.errors import QueryError
from papercode.verified.materialize import VerifiedCode

from .server import CodeAnswerText, CorpusSource, PapercodeServer
from .tools import obtain_code_answer

CODE_TEMPLATE = "code://{code_sha256}"


def json_text(answer: BaseModel | dict[str, Any]) -> str:
    """An answer as compact JSON; a dict is one already as shown (`shaping.shown`)."""
    return orjson.dumps(answer if isinstance(answer, dict) else answer.model_dump(mode="json", exclude_none=True)).decode()


def _not_found(error: QueryError) -> ResourceNotFoundError:
    return ResourceNotFoundError(str(error))


def register_resources(server: PapercodeServer, source: CorpusSource, code: VerifiedCode) -> None:
    @server.resource("paper://{+arxiv_id}", mime_type="application/json", title="Paper", description="get_paper's view of one paper")
    def paper_resource(arxiv_id: str) -> str:
        try:
            return json_text(queries.paper_detail_shown(source(), arxiv_id))
        except QueryError as error:
            raise _not_found(error) from error

    @server.resource(
        CODE_TEMPLATE,
        mime_type="application/json",
        title="Code sample",
        description="get_code's answer for one code hash; verified code follows as text/x-python",
    )
    async def code_resource(code_sha256: str) -> str:
        try:
            answer = await obtain_code_answer(source(), code, code_sha256)
        except QueryError as error:
            raise _not_found(error) from error
        return CodeAnswerText(json_text(answer), answer.code)

    @server.resource("corpus://stats", mime_type="application/json", title="Corpus statistics")
    def stats_resource() -> str:
        return json_text(overview.corpus_stats(source(), code.store.problems, server.readiness()))

    @server.resource(
        "corpus://load-report",
        mime_type="application/json",
        title="Load report",
        description="Every rejected or suspect record, with path, line and reason",
    )
    def load_report_resource() -> str:
        return orjson.dumps(overview.load_report(source(), code.store.problems)).decode()
