"""The tools' answers straight from `papercode.answers` (`queries`, `leaderboards`; get_code's through the edge's
`obtain_code_answer`, which obtains the code), asked with the tools' own names and arguments: what the queries-layer
tests assert on, and what the MCP round trip compares the wire with. `flat_samples` reads a grouped answer's samples
one by one, as the model is told to.

`shown` is an answer as the edge sends it (JSON, nulls left out); `tests/edge/test_mcp_roundtrip.py` checks that
every tool's structured content and text are exactly that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from papercode.answers import leaderboards, models, overview, queries, twins
from papercode.answers.models import CodeAnswer
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from papercode.edge.tools import obtain_code_answer
from papercode.index.search_queries import SearchFilters
from papercode.verified.materialize import VerifiedCode
from papercode.verified.store import CodeStore

FILTERS = ("task", "method", "framework", "has_samples", "status", "official_code", "year_from", "year_to")

# What a grouped answer leaves out of a sample, as its output schema documents it: written out here, not imported,
# so that `flat_samples` reads answers as the model is told to.
STATUS_IMPLIES = {
    "ran_honours": ("HONOURS", 1),
    "ran": (None, 1),
    "ran_draft_wrong": ("OUTPUT_MISDECLARED", 1),
    "ran_violates": ("VIOLATES", 1),
    "unverified": (None, 0),
}


def flat_samples(got: dict[str, Any]) -> list[dict[str, Any]]:
    """A grouped answer's samples (get_harvested_code_for_paper's `samples`, list_samples_by_status's `papers`) one by
    one, in the answer's order, each with every field the answer says of it: its group's fields, its file's path, its
    own, and the defaults its schema documents filled in; a field that is none left out. This is each sample as the
    flat answers before issue #25 showed it (with `paper` and `title` in a listing)."""
    if "papers" in got:
        status = got["statuses"][0] if len(got["statuses"]) == 1 else None
        return [
            {**sample, "paper": listed["paper"], "title": listed["title"]}
            for listed in got["papers"]
            for sample in _flat(listed["samples"], status)
        ]
    return _flat(got["samples"], None)


def _flat(groups: list[dict[str, Any]], status: str | None) -> list[dict[str, Any]]:
    samples = []
    for group in groups:
        for path, own in group["files"].items():
            for sample in own:
                said = sample.get("status", status)
                check, level = STATUS_IMPLIES.get(said, (None, None))
                full = {
                    "code_sha256": sample["code_sha256"],
                    "entry": sample["entry"],
                    "repo": group["repo"],
                    "repo_kind": group["repo_kind"],
                    "path": path,
                    "language": group.get("language", "python") or None,
                    "status": said,
                    "contract_check": sample.get("contract_check", check),
                    "verification_level": sample.get("verification_level", level),
                    "licence": group.get("licence"),
                    "inline_ok": group.get("inline_ok", True),
                    "stored": sample.get("stored"),
                }
                samples.append({key: value for key, value in full.items() if value is not None})
    return samples


def shown(answer: BaseModel) -> dict[str, Any]:
    """An answer as the model receives it: JSON values, no nulls."""
    return answer.model_dump(mode="json", exclude_none=True)


def ask(corpus: Corpus, tool: str, **arguments: Any) -> BaseModel:
    """What `tool` answers for these arguments (named as in tools/list); get_code has its own `ask_code`."""
    if tool == "get_harvested_code_for_paper":
        return twins.harvested_code(corpus, **arguments)
    if tool == "list_samples_by_status":
        return twins.samples_by_status(corpus, **arguments)
    if tool == "search_papers":
        filters = SearchFilters(**{name: arguments.pop(name) for name in FILTERS if name in arguments})
        return queries.search_papers(corpus, filters=filters, **arguments)
    if tool == "get_paper":
        asked = arguments["paper"]
        return twins.paper_detail(corpus, asked) if isinstance(asked, str) else twins.paper_list(corpus, asked)
    if tool == "find_papers_for_repo":
        return queries.papers_for_repo(corpus, **arguments)
    if tool == "corpus_stats":
        return overview.corpus_stats(corpus, **arguments)
    if tool == "get_leaderboard":
        return models.Leaderboard.model_validate(leaderboards.leaderboard_shown(corpus, **arguments))
    if tool == "describe":
        return models.Description.model_validate(leaderboards.describe_shown(corpus, **arguments))
    raise AssertionError(f"no such tool here: {tool}")


def answer(corpus: Corpus, tool: str, **arguments: Any) -> dict[str, Any]:
    return shown(ask(corpus, tool, **arguments))


async def ask_code(corpus: Corpus, code_sha256: str | list[str], code: VerifiedCode | None = None) -> CodeAnswer:
    """get_code's answer (for one hash or a list): the samples of a hash, then their verified code from `code` (by
    default an empty store and no downloads, as the server runs with no code store)."""
    return await obtain_code_answer(corpus, code or VerifiedCode(CodeStore(None)), code_sha256)


async def code_answer(corpus: Corpus, code_sha256: str | list[str], code: VerifiedCode | None = None) -> dict[str, Any]:
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
