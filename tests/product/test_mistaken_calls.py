"""Calls as agents get them wrong, across the nine tools: each is answered right, or refused with the fix.

One table, `MISTAKES`: each row is a call (a tool and its arguments, as an agent sent them) and what it gets: the
answer (`Answered`: what a field of it shows), a failed call (`Refused`: its code, and a fix its `Next:` names) or a
protocol error (`Unknown`: an unknown tool, JSON-RPC -32602, its code and the call its `Next:` names). Add a row where
its tool's rows are. The calls go through an in-memory client in both protocol eras, to a server over the bundled
records laid over an archive of the same papers with the leaderboards' tables (`build_bundled_archive`: Language
Modelling on Penn Treebank, one row, 1902.04094's), so that every tool has something to answer.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from papercode.corpus.stages import Corpus
from papercode.edge.app import PapercodeServer, build_server
from papercode.settings import bundled_records_dir
from tests.support.archive_overlay import build_bundled_archive
from tests.support.mcp import TOOL_NAMES
from tests.support.records import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL

pytestmark = pytest.mark.anyio

SHAPE = re.compile(r"^(?P<code>[a-z_]+): .+\. Next: (?P<next>.+)\.$", re.DOTALL)
SHA = "2a890c3f"  # a sample of 1902.04094's, by its prefix
OTHER_SHA = "013a68b0"
TASK, DATASET = "Language Modelling", "Penn Treebank"  # the one board: 1902.04094's result
BOTH_FORMS = '(a JSON list) or status="ran_honours,ran" (comma-separated)'


@dataclass(frozen=True)
class Answered:
    """Answered (no error): `shows` of the structured answer is `expected`."""

    shows: Callable[[dict[str, Any]], object]
    expected: object


@dataclass(frozen=True)
class Refused:
    """A failed call (`isError`) in papercode's shape, with this code, whose `Next:` names `fix`."""

    code: str
    fix: str


@dataclass(frozen=True)
class Unknown:
    """A protocol error (invalid params: an unknown tool) in papercode's shape, with this code, whose `Next:` names `fix`."""

    code: str
    fix: str


@dataclass(frozen=True)
class Mistake:
    tool: str
    arguments: dict[str, Any]
    gets: Answered | Refused | Unknown

    def __str__(self) -> str:
        return f"{self.tool}({', '.join(f'{name}={value!r}' for name, value in self.arguments.items())})"


def hits(answer: dict[str, Any]) -> list[str]:
    return sorted(hit["arxiv_id"] for hit in answer["hits"])


def papers(answer: dict[str, Any]) -> list[str]:
    return [entry["arxiv_id"] for entry in answer["papers"]]


def by_title(answer: dict[str, Any]) -> tuple[str, bool]:
    return answer["arxiv_id"], answer["query"].get("by_title", False)


def codes(answer: dict[str, Any]) -> list[str]:
    return [entry["query"]["resolved"] for entry in answer["codes"]]


MISTAKES = [
    # -- get_harvested_code_for_paper ------------------------------------------------------------------------------
    Mistake(
        "get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH_TITLE.lower()}, Answered(lambda answer: answer["query"]["by_title"], True)
    ),
    Mistake("get_harvested_code_for_paper", {"paper_id": BERT_MOUTH}, Refused("invalid_argument", f'arxiv_id="{BERT_MOUTH}"')),
    Mistake("get_harvested_code_for_paper", {"paper": BERT_MOUTH}, Refused("invalid_argument", f'arxiv_id="{BERT_MOUTH}"')),
    Mistake("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH, "top_k": 5}, Refused("invalid_argument", "with limit=5")),
    Mistake("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH, "statuses": "ran"}, Refused("invalid_argument", 'with status="ran"')),
    Mistake(
        "get_harvested_code_for_paper",
        {"arxiv_id": BERT_MOUTH, "status": ["ran_honours", "ran_draft_wrong"]},
        Answered(lambda answer: answer["matched"], 4),  # 2 of each: both statuses read
    ),
    Mistake(
        "get_harvested_code_for_paper",
        {"arxiv_id": BERT_MOUTH, "status": "ran_honours, ran_draft_wrong"},
        Answered(lambda answer: answer["matched"], 4),
    ),
    # -- list_samples_by_status -------------------------------------------------------------------------------------
    Mistake("list_samples_by_status", {"status": "ran", "max_results": 2}, Refused("invalid_argument", "with limit=2")),
    Mistake("list_samples_by_status", {"statuses": ["ran"]}, Refused("invalid_argument", 'with status=["ran"]')),
    Mistake("list_samples_by_status", {"status": "ran", "license": "MIT"}, Refused("invalid_argument", 'with licence="MIT"')),
    Mistake("list_samples_by_status", {"status": ["ran_violates", "ran_draft_wrong"]}, Answered(lambda answer: answer["total"], 4)),
    Mistake("list_samples_by_status", {"status": "ran_violates,ran_draft_wrong"}, Answered(lambda answer: answer["total"], 4)),
    Mistake("list_samples_by_status", {"status": 5}, Refused("invalid_argument", f'status=["ran_honours", "ran"] {BOTH_FORMS}')),
    Mistake("list_samples_by_status", {"status": [1, 2]}, Refused("invalid_argument", f'status=["ran_honours", "ran"] {BOTH_FORMS}')),
    Mistake("list_samples_by_status", {"status": "ran,works"}, Refused("invalid_argument", "several: status=")),
    # -- search_papers ----------------------------------------------------------------------------------------------
    Mistake("search_papers", {"q": "bert"}, Refused("invalid_argument", 'call again with query="bert"')),
    Mistake("search_papers", {"text": "markov random field"}, Refused("invalid_argument", 'with query="markov random field"')),
    Mistake("search_papers", {"querry": "bert"}, Refused("invalid_argument", 'with query="bert"')),  # by edit distance
    Mistake("search_papers", {"query": "bert", "q": "gpt"}, Refused("invalid_argument", "without 'q' (query is given)")),
    Mistake("search_papers", {"query": "bert", "year": 2019}, Refused("invalid_argument", "with year_from=2019, year_to=2019")),
    Mistake("search_papers", {"query": "bert", "yearFrom": 2019}, Refused("invalid_argument", "with year_from=2019")),
    Mistake("search_papers", {"query": "bert", "max_results": 2, "foo": 1}, Refused("invalid_argument", "with limit=2 and without 'foo'")),
    Mistake("search_papers", {"query": "bert", "status": ["ran_honours", "unverified"]}, Answered(hits, [BERT_MOUTH, BERTS_ICL])),
    Mistake("search_papers", {"query": "bert", "status": "ran_honours,unverified"}, Answered(hits, [BERT_MOUTH, BERTS_ICL])),
    Mistake("search_papers", {"query": "bert", "status": {"any": "ran"}}, Refused("invalid_argument", BOTH_FORMS)),
    # A list's item is one value, as every tool that takes several reads it: a comma in it is not split.
    Mistake("search_papers", {"query": "bert", "status": ["ran_honours,unverified"]}, Refused("invalid_argument", "several: status=")),
    Mistake("list_samples_by_status", {"status": ["ran_honours,unverified"]}, Refused("invalid_argument", "several: status=")),
    # A word that matches nothing is named, and the search says it fell back to any word; no hits says why, with the call.
    Mistake(
        "search_papers",
        {"query": "bert zzqqxxjj"},
        Answered(lambda answer: (answer.get("match"), answer.get("unmatched")), ("any", ["zzqqxxjj"])),
    ),
    Mistake("search_papers", {"query": "zzqqxxjj"}, Answered(lambda answer: "Next: check the spelling" in answer["note"], True)),
    Mistake(
        "search_papers",
        {"query": "bert", "year_from": 2030},
        Answered(lambda answer: "Next: call again without year_from" in answer["note"], True),
    ),
    # Papers have every word and the filter leaves them out: no hits of any word, and the filter named.
    Mistake(
        "search_papers",
        {"query": "bert markov", "status": "unverified"},
        Answered(
            lambda answer: (answer.get("match"), answer["total"], answer["note"].endswith("Next: call again without status")),
            (None, 0, True),
        ),
    ),
    # -- get_paper --------------------------------------------------------------------------------------------------
    Mistake("get_paper", {"id": BERT_MOUTH}, Refused("invalid_argument", f'call again with paper="{BERT_MOUTH}"')),
    Mistake("get_paper", {"arxiv_id": BERT_MOUTH}, Refused("invalid_argument", f'with paper="{BERT_MOUTH}"')),
    Mistake("get_paper", {"paper": BERT_MOUTH, "ids": [BERTS_ICL]}, Refused("invalid_argument", "without 'ids' (paper is given)")),
    Mistake("get_paper", {"paper": f"{BERT_MOUTH},{BERTS_ICL}"}, Answered(papers, [BERT_MOUTH, BERTS_ICL])),
    Mistake(
        "get_paper",
        {"paper": f"arXiv:{BERTS_ICL}v1, /paper/bert-has-a-mouth-and-it-must-speak-bert-as-a"},
        Answered(papers, [BERTS_ICL, BERT_MOUTH]),
    ),
    # A title's commas do not split it: it is one paper argument (here the start of a title, which names no paper).
    Mistake(
        "get_paper",
        {"paper": BERT_MOUTH_TITLE.split(":")[0]},
        Refused("not_found", f'call search_papers(query="{BERT_MOUTH_TITLE.split(":")[0]}")'),
    ),
    # Hyphenated words as a title writes them are no slugs: not split, one title (which names no paper).
    Mistake("get_paper", {"paper": "Zero-Shot, Few-Shot"}, Refused("not_found", 'call search_papers(query="Zero-Shot, Few-Shot")')),
    # A title where an id goes: the one paper with that whole title, saying so.
    Mistake("get_paper", {"paper": BERT_MOUTH_TITLE}, Answered(by_title, (BERT_MOUTH, True))),
    Mistake("get_paper", {"paper": "berts are generative in context learners."}, Answered(by_title, (BERTS_ICL, True))),
    Mistake(
        "get_paper", {"paper": "Attention is all you need"}, Refused("not_found", 'call search_papers(query="Attention is all you need")')
    ),
    Mistake(
        "get_paper",
        {"paper": {"id": BERT_MOUTH}},
        Refused("invalid_argument", '(a JSON list) or paper="1902.04094,2406.04823" (comma-separated)'),
    ),
    # -- find_papers_for_repo ---------------------------------------------------------------------------------------
    Mistake(
        "find_papers_for_repo",
        {"repo_url": "https://github.com/nyu-dl/bert-gen"},
        Refused("invalid_argument", 'with repo="https://github.com/nyu-dl/bert-gen"'),
    ),
    Mistake(
        "find_papers_for_repo",
        {"repository": "nyu-dl/bert-gen", "page_size": 5},
        Refused("invalid_argument", 'with repo="nyu-dl/bert-gen", limit=5'),
    ),
    # -- get_code ---------------------------------------------------------------------------------------------------
    Mistake("get_code", {"sha": SHA}, Refused("invalid_argument", f'with code_sha256="{SHA}"')),
    Mistake("get_code", {"id": SHA}, Refused("invalid_argument", f'with code_sha256="{SHA}"')),
    Mistake("get_code", {"code_sha256": f"{SHA}, {OTHER_SHA}"}, Answered(codes, ["2a890c3f8ff19f47", "013a68b0ac4716fe"])),
    Mistake("get_code", {"code_sha256": [SHA, OTHER_SHA]}, Answered(codes, ["2a890c3f8ff19f47", "013a68b0ac4716fe"])),
    Mistake("get_code", {"code_sha256": [True]}, Refused("invalid_argument", "(a JSON list) or code_sha256=")),
    # -- corpus_stats -----------------------------------------------------------------------------------------------
    Mistake("corpus_stats", {"verbose": True}, Refused("invalid_argument", "call again without 'verbose'")),
    # -- get_leaderboard --------------------------------------------------------------------------------------------
    Mistake("get_leaderboard", {"task": TASK, "benchmark": DATASET}, Refused("invalid_argument", f'with dataset="{DATASET}"')),
    Mistake("get_leaderboard", {"task": TASK, "dataset": DATASET, "sort": "asc"}, Refused("invalid_argument", 'with order="asc"')),
    Mistake("get_leaderboard", {"task": TASK, "datset": DATASET}, Refused("invalid_argument", f'with dataset="{DATASET}"')),
    # 1902.04094 has no ran_violates sample and has ran_honours: one row, when the second value is read too.
    Mistake(
        "get_leaderboard", {"task": TASK, "dataset": DATASET, "status": ["ran_violates", "ran_honours"]}, Answered(lambda a: a["total"], 1)
    ),
    Mistake("get_leaderboard", {"task": TASK, "dataset": DATASET, "status": "ran_violates,ran_honours"}, Answered(lambda a: a["total"], 1)),
    Mistake("get_leaderboard", {"task": TASK, "dataset": DATASET, "status": 7}, Refused("invalid_argument", BOTH_FORMS)),
    # A dataset's name where the task goes: said, with the call to its benchmark.
    Mistake("get_leaderboard", {"task": DATASET}, Refused("not_found", f"call get_leaderboard(task='{TASK}', dataset='{DATASET}')")),
    # -- describe ---------------------------------------------------------------------------------------------------
    Mistake("describe", {"kind": "dataset", "name": TASK}, Refused("not_found", f"call describe(kind='task', name='{TASK}')")),
    Mistake("describe", {"kind": "benchmarks", "name": DATASET}, Answered(lambda answer: answer["kind"], "dataset")),
    Mistake("describe", {"kind": "paper", "name": "BERT"}, Refused("invalid_argument", "call search_papers(query='BERT')")),
    Mistake("describe", {"kind": "datset", "name": DATASET}, Refused("invalid_argument", "call again with kind='dataset'")),
    # the nearest kind as the nearest argument (a few edits away): a fragment is no misspelling
    Mistake("describe", {"kind": "set", "name": DATASET}, Refused("invalid_argument", "call again with kind task, method or dataset")),
    Mistake("describe", {"type": "dataset", "name": DATASET}, Refused("invalid_argument", 'with kind="dataset"')),
    Mistake("describe", {"kind": "dataset", "id": DATASET}, Refused("invalid_argument", f'with name="{DATASET}"')),
    # -- tools that do not exist ------------------------------------------------------------------------------------
    Mistake("search", {"query": "bert"}, Unknown("not_found", 'call search_papers(query="bert")')),
    Mistake("search", {"q": "bert", "max_results": 3}, Unknown("not_found", 'call search_papers(query="bert", limit=3)')),
    Mistake("searchPapers", {"query": "bert"}, Unknown("not_found", 'call search_papers(query="bert")')),
    Mistake("mcp__papercode__get_paper", {"paper": BERT_MOUTH}, Unknown("not_found", f'call get_paper(paper="{BERT_MOUTH}")')),
    Mistake("get_papers", {"ids": [BERT_MOUTH, BERTS_ICL]}, Unknown("not_found", f'call get_paper(paper=["{BERT_MOUTH}","{BERTS_ICL}"])')),
    Mistake(
        "get_code_for_paper", {"arxiv_id": BERT_MOUTH}, Unknown("not_found", f'call get_harvested_code_for_paper(arxiv_id="{BERT_MOUTH}")')
    ),
    Mistake("leaderboard", {"task": TASK}, Unknown("not_found", f'call get_leaderboard(task="{TASK}")')),
    Mistake("stats", {}, Unknown("not_found", "call corpus_stats()")),
    Mistake("frobnicate", {}, Unknown("not_found", "call the one that fits (tools/list describes each)")),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> PapercodeServer:
    """The bundled records over an archive of the same papers with the leaderboards' tables."""
    corpus = Corpus.load([bundled_records_dir()], archive_dir=build_bundled_archive(tmp_path_factory.mktemp("mistakes")))
    assert corpus.archive_note is None
    return build_server(lambda: corpus)


@pytest.fixture
async def client(server: PapercodeServer, mode: str) -> AsyncIterator[Client]:
    async with Client(server, mode=mode) as connection:
        yield connection


def test_the_table_covers_every_tool_and_guessed_tools() -> None:
    assert {mistake.tool for mistake in MISTAKES} >= set(TOOL_NAMES)
    assert any(isinstance(mistake.gets, Unknown) for mistake in MISTAKES) and len(MISTAKES) >= 40


@pytest.mark.parametrize("mistake", MISTAKES, ids=str)
async def test_a_mistaken_call_is_answered_right_or_refused_with_the_fix(client: Client, mistake: Mistake) -> None:
    gets = mistake.gets
    if isinstance(gets, Unknown):
        with pytest.raises(MCPError) as error:
            await client.call_tool(mistake.tool, mistake.arguments)
        assert error.value.code == INVALID_PARAMS
        assert_shaped(error.value.message, gets.code, gets.fix)
        return
    result = await client.call_tool(mistake.tool, mistake.arguments)
    text = "".join(block.text for block in result.content if block.type == "text")
    if isinstance(gets, Refused):
        assert result.is_error, text
        assert_shaped(text, gets.code, gets.fix)
        return
    assert not result.is_error, text
    assert result.structured_content is not None
    assert gets.shows(result.structured_content) == gets.expected


def assert_shaped(text: str, code: str, fix: str) -> None:
    shaped = SHAPE.match(text)
    assert shaped, text
    assert shaped["code"] == code, text
    assert fix in shaped["next"], text


async def test_every_input_schema_is_closed(client: Client) -> None:
    # A host that validates arguments refuses a misnamed one before it is sent.
    for tool in (await client.list_tools()).tools:
        assert tool.input_schema.get("additionalProperties") is False, tool.name


async def test_an_unknown_argument_error_lists_what_the_tool_takes(client: Client) -> None:
    result = await client.call_tool("search_papers", {"q": "bert"})
    assert result.content[0].type == "text" and result.content[0].text == (
        "invalid_argument: search_papers takes no argument 'q' (it takes query, task, method, framework, has_samples, "
        'status, official_code, year_from, year_to, limit, cursor). Next: call again with query="bert".'
    )
