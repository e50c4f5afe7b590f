"""The MCP edge, through the in-memory client in both protocol eras: each tool, the resources,
the prompts and the completions, once per era.

What an answer says is tested at the queries layer (test_queries.py); here the wire must carry exactly that:
structured content equal to the queries answer (JSON, no nulls) and the same compact JSON as text; a refused
call as a flagged result whose text is the `QueryError` (`code: ... Next: ...`); bad arguments caught by the
edge's own validation with the same shape; protocol errors (-32602) for unknown tools, resources and prompts.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, PromptReference, ResourceTemplateReference, TextContent, TextResourceContents

from papercode.answers import checks, completions, overview, prompts
from papercode.corpus.stages import Corpus
from papercode.edge.app import PapercodeServer, build_server
from tests.support.mcp import TOOL_NAMES
from tests.support.records import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL, make_record, make_sample, sha_for, write_records
from tests.support.tool_answers import answer, code_answer, code_refusal, refusal

pytestmark = pytest.mark.anyio

PAPER_TEMPLATE = ResourceTemplateReference(type="ref/resource", uri="paper://{+arxiv_id}")
CODE_TEMPLATE = ResourceTemplateReference(type="ref/resource", uri="code://{code_sha256}")
IMPLEMENT = PromptReference(type="ref/prompt", name="implement_paper")
COMPARE = PromptReference(type="ref/prompt", name="compare_implementations")


def _has_null(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_null(item) for item in value)
    return False


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A successful call's structured answer, after checking it matches its compact text block."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False, result.content
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text
    assert result.structured_content is not None
    assert result.structured_content == json.loads(text)
    assert "\n" not in text  # no indentation: one line
    assert text == orjson.dumps(json.loads(text)).decode()  # compact: no spaces between tokens
    assert not _has_null(result.structured_content)
    return result.structured_content


async def fail(client: Client, tool: str, **arguments: Any) -> str:
    """A failed call's text: flagged, one text block."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error is True
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


async def read_json(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    (content,) = result.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def prompt_text(client: Client, name: str, arguments: dict[str, str]) -> str:
    result = await client.get_prompt(name, arguments)
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    return message.content.text


async def completion_values(client: Client, ref: ResourceTemplateReference | PromptReference, name: str, value: str) -> list[str]:
    return (await client.complete(ref, {"name": name, "value": value})).completion.values


# A few records the bundled ones lack: ids that JSON numbers spell, an old-style id, and a record that is rejected.
SMALL_RECORDS = [
    make_record("0704.0001", "paper-0", [make_sample(sha_for("0704.0001"))]),
    make_record("2001.10000", "paper-1", [make_sample(sha_for("2001.10000"))]),
    make_record("hep-th/9901001", "old-style", [make_sample(sha_for("old"))], title="Old Style"),
    {"title": "no key at all"},
]


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return Corpus.load([write_records(tmp_path_factory.mktemp("small") / "records", SMALL_RECORDS)])


@pytest.fixture(scope="module")
def small_server(small_corpus: Corpus) -> PapercodeServer:
    return build_server(lambda: small_corpus)


@pytest.fixture
async def small_client(small_server: PapercodeServer, mode: str) -> AsyncIterator[Client]:
    async with Client(small_server, mode=mode) as connected:
        yield connected


# -- tools/list ------------------------------------------------------------------------------------------


async def test_the_tools_are_listed_read_only_with_schemas_and_descriptions(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == set(TOOL_NAMES) and len(tools) == len(TOOL_NAMES)
    for tool in tools:
        assert tool.annotations is not None, tool.name
        assert tool.annotations.read_only_hint is True, tool.name
        assert tool.annotations.idempotent_hint is True, tool.name
        assert tool.annotations.open_world_hint is False, tool.name
        assert tool.annotations.destructive_hint in (None, False), tool.name
        assert tool.output_schema is not None and tool.output_schema.get("type") == "object", tool.name
        assert tool.description and len(tool.description) > 40, tool.name


# -- each tool: the queries answer, on the wire ----------------------------------------------------------

WIRE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_harvested_code_for_paper", {"arxiv_id": BERTS_ICL, "status": "ran,unverified", "limit": 5}),
    ("list_samples_by_status", {"status": ["ran_draft_wrong", "ran_violates"], "inline_only": True, "limit": 2}),
    ("search_papers", {"query": "bert", "framework": "pytorch", "has_samples": True, "limit": 1}),
    ("get_paper", {"paper": BERT_MOUTH}),
    ("get_paper", {"paper": [BERTS_ICL, "/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a", "9999.99999"]}),
    ("find_papers_for_repo", {"repo": "https://github.com/nyu-dl/bert-gen", "limit": 1}),
    ("corpus_stats", {}),
    # A search that falls back to any word, one with no hits.
    ("search_papers", {"query": "bert zzqqxxjj"}),
    ("search_papers", {"query": "bert", "year_from": 2030}),
    # A title for an id (answered off the event loop).
    ("get_paper", {"paper": "berts are generative in-context learners"}),
    ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH_TITLE, "limit": 2}),
]


@pytest.mark.parametrize(("tool", "arguments"), WIRE_CALLS, ids=[tool for tool, _ in WIRE_CALLS])
async def test_a_tool_answers_on_the_wire_exactly_what_queries_answers(
    client: Client, corpus: Corpus, tool: str, arguments: dict[str, Any]
) -> None:
    sent = await call(client, tool, **arguments)
    assert sent == answer(corpus, tool, **arguments)
    if "next_cursor" in sent:  # and the cursor it gave takes the next page, over the wire too
        cursor = sent["next_cursor"]
        assert await call(client, tool, **arguments, cursor=cursor) == answer(corpus, tool, **arguments, cursor=cursor)


async def test_the_wire_says_how_a_search_matched(client: Client) -> None:
    fell_back = await call(client, "search_papers", query="bert zzqqxxjj")
    assert (fell_back["match"], fell_back["unmatched"], fell_back["total"]) == ("any", ["zzqqxxjj"], 2)
    emptied = await call(client, "search_papers", query="bert", year_from=2030)
    assert emptied["note"] == "no paper with these words matches year_from=2030. Next: call again without year_from"


async def test_the_wire_says_a_paper_was_named_by_its_title(client: Client) -> None:
    named = await call(client, "get_paper", paper=BERT_MOUTH_TITLE.lower())
    assert named["query"] == {"asked": BERT_MOUTH_TITLE.lower(), "resolved": BERT_MOUTH, "by_title": True}


async def test_get_code_answers_on_the_wire_exactly_what_queries_answers(client: Client, corpus: Corpus) -> None:
    for sha in ("2a890c3f", "992ab7ae4b4bf55c", ["992ab7ae4b4bf55c", "2a89", "2a890c3f"]):  # not stored; pointer-only; a list
        assert await call(client, "get_code", code_sha256=sha) == await code_answer(corpus, sha)


async def test_lists_of_ids_and_hashes_arrive_in_every_form_clients_send(client: Client, corpus: Corpus) -> None:
    # A JSON array, the same array as a JSON string (Claude Desktop sends lists so), bare numbers in it (as the
    # Inspector and some models send ids), the ids comma-separated.
    papers = answer(corpus, "get_paper", paper=[BERT_MOUTH, BERTS_ICL])
    assert [entry["arxiv_id"] for entry in papers["papers"]] == [BERT_MOUTH, BERTS_ICL]
    for sent in ([BERT_MOUTH, BERTS_ICL], json.dumps([BERT_MOUTH, BERTS_ICL]), [1902.04094, 2406.04823], f"{BERT_MOUTH}, {BERTS_ICL}"):
        assert await call(client, "get_paper", paper=sent) == papers
    hashes = await code_answer(corpus, ["18666511", "2a890c3f"])
    for sent in (["18666511", "2a890c3f"], [18666511, "2a890c3f"], json.dumps(["18666511", "2a890c3f"]), "18666511,2a890c3f"):
        assert await call(client, "get_code", code_sha256=sent) == hashes


@pytest.mark.parametrize(
    ("tool", "argument", "most"),
    [("get_paper", "paper", checks.MAX_PAPERS_ASKED), ("get_code", "code_sha256", checks.MAX_CODES_ASKED)],
)
async def test_a_list_is_bounded_in_either_form(client: Client, tool: str, argument: str, most: int) -> None:
    one = "2a890c3f" if tool == "get_code" else BERT_MOUTH
    for too_many, got in (([], 0), ([one] * (most + 1), most + 1), (",".join([one] * (most + 1)), most + 1)):
        text = await fail(client, tool, **{argument: too_many})
        assert (
            text.startswith(f"invalid_argument: a list takes 1 to {most} ")
            and f", got {got}. Next: call again with at most {most}." in text
        )
    await call(client, tool, **{argument: [one] * most})
    await call(client, tool, **{argument: ",".join([one] * most)})


REFUSED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_harvested_code_for_paper", {"arxiv_id": "9999.99999"}),
    ("list_samples_by_status", {"status": "works"}),
    ("search_papers", {"query": "bert", "year_from": 2024, "year_to": 2019}),
    ("get_paper", {"paper": "/paper/no-such-slug"}),
    ("get_paper", {"paper": "Attention is all you need"}),  # a title of no paper: the search to make
    ("find_papers_for_repo", {"repo": "someone/nothing"}),
    ("get_leaderboard", {"task": "semantic segmentation"}),  # no archive served: how to add its leaderboards
    ("describe", {"kind": "method", "name": "BERT"}),
]


@pytest.mark.parametrize(("tool", "arguments"), REFUSED_CALLS, ids=[tool for tool, _ in REFUSED_CALLS])
async def test_a_refusal_is_a_flagged_result_with_the_query_errors_text(
    client: Client, corpus: Corpus, tool: str, arguments: dict[str, Any]
) -> None:
    text = await fail(client, tool, **arguments)
    assert text == refusal(answer, corpus, tool, **arguments)
    assert text.split(":")[0] in ("not_found", "invalid_argument") and "Next:" in text and "Error executing tool" not in text


async def test_a_get_code_refusal_is_a_flagged_result_with_the_query_errors_text(client: Client, corpus: Corpus) -> None:
    for sha in ("deadbeefdeadbeef", "2a89", "zz"):
        assert await fail(client, "get_code", code_sha256=sha) == await code_refusal(corpus, sha)


async def test_unknown_tool_is_a_protocol_error(client: Client) -> None:
    with pytest.raises(MCPError) as error:
        await client.call_tool("get_everything", {})
    assert error.value.code == INVALID_PARAMS
    assert error.value.message == (
        f"not_found: unknown tool 'get_everything'; papercode's tools: {', '.join(TOOL_NAMES)}. "
        "Next: call the one that fits (tools/list describes each)."
    )


# -- the edge's own argument handling ------------------------------------------------------------------------

BAD_CALLS = [
    ("get_harvested_code_for_paper", {}),
    ("get_harvested_code_for_paper", {"arxiv_id": ["1902.04094"]}),
    ("get_paper", {"paper": True}),
    ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH, "limit": "many"}),
    ("list_samples_by_status", {}),
    ("list_samples_by_status", {"status": "ran", "inline_only": "perhaps"}),
    ("search_papers", {"query": "bert", "year_from": "last year"}),
    ("search_papers", {"query": "bert " * 300}),
    ("get_paper", {}),
    ("find_papers_for_repo", {"repo": ["a/b"]}),
    ("get_code", {}),
    ("get_code", {"code_sha256": "g" * 16}),
]


@pytest.mark.parametrize(("tool", "arguments"), BAD_CALLS)
async def test_bad_arguments_are_flagged_invalid_argument_with_next_step(client: Client, tool: str, arguments: dict[str, Any]) -> None:
    text = await fail(client, tool, **arguments)
    assert text.startswith("invalid_argument:"), text
    assert "Next:" in text
    assert "Error executing tool" not in text


LIMITED_CALLS = [
    ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH}),
    ("list_samples_by_status", {"status": "ran"}),
    ("search_papers", {"query": "bert"}),
    ("find_papers_for_repo", {"repo": "nyu-dl/bert-gen"}),
]


@pytest.mark.parametrize(("tool", "arguments"), LIMITED_CALLS, ids=[tool for tool, _ in LIMITED_CALLS])
async def test_the_limit_is_checked_at_the_edge(client: Client, tool: str, arguments: dict[str, Any]) -> None:
    for limit in (0, -1, 101, 10_000):
        text = await fail(client, tool, **arguments, limit=limit)
        assert text.startswith("invalid_argument:") and "limit" in text and "Next:" in text, (limit, text)
    for limit in (1, 100):
        await call(client, tool, **arguments, limit=limit)


async def test_numbers_for_text_arguments_are_read_as_their_text(client: Client) -> None:
    # What the Inspector CLI sends for --tool-arg code_sha256=18666511 and --tool-arg query=2406.04823.
    code = await call(client, "get_code", code_sha256=18666511)
    assert code["query"] == {"asked": "18666511", "resolved": "1866651164e5bad9"}
    search = await call(client, "search_papers", query=2406.04823)
    assert search["query"] == "2406.04823"
    lost = await fail(client, "get_code", code_sha256=186665116400000.0)  # 1866651164e5 as JSON: digits are gone
    assert lost.startswith("invalid_argument: '186665116400000.0' is not a hex code hash") and "as a string" in lost


async def test_real_ids_sent_as_numbers(client: Client) -> None:
    got = await call(client, "get_harvested_code_for_paper", arxiv_id=2406.04823)
    assert got["query"] == {"asked": BERTS_ICL} and got["counts"]["total"] == 26
    assert (await call(client, "get_paper", paper=1902.04094))["title"] == BERT_MOUTH_TITLE


async def test_a_number_that_is_no_arxiv_id_is_looked_up_as_its_text(client: Client) -> None:
    assert (await fail(client, "get_paper", paper=1902)).startswith("not_found: no paper with slug 1902 ")


async def test_ids_sent_as_json_numbers_resolve_exactly(small_client: Client) -> None:
    # The Inspector CLI (Node >= 22.19) and some models send unquoted ids: JSON numbers.
    for number, arxiv_id in ((704.0001, "0704.0001"), (2001.1, "2001.10000")):
        harvested = await call(small_client, "get_harvested_code_for_paper", arxiv_id=number)
        paper = await call(small_client, "get_paper", paper=number)
        assert harvested["query"] == paper["query"] == {"asked": arxiv_id}  # the id the number spells, found as it is


# -- resources -----------------------------------------------------------------------------------------------


async def test_resource_listing(client: Client) -> None:
    resources = {resource.uri: resource.mime_type for resource in (await client.list_resources()).resources}
    assert resources == {
        "corpus://stats": "application/json",
        "corpus://load-report": "application/json",
        "ui://papercode/leaderboard": "text/html;profile=mcp-app",
        "ui://papercode/paper": "text/html;profile=mcp-app",
    }
    templates = {template.uri_template: template.mime_type for template in (await client.list_resource_templates()).resource_templates}
    assert templates == {"paper://{+arxiv_id}": "application/json", "code://{code_sha256}": "application/json"}


@pytest.mark.parametrize(
    "asked",
    [BERT_MOUTH, BERTS_ICL, "1902.04094v2", "arXiv:1902.04094", "bert-has-a-mouth-and-it-must-speak-bert-as-a", BERT_MOUTH_TITLE],
)
async def test_paper_resource_is_get_papers_view(client: Client, corpus: Corpus, asked: str) -> None:
    got = await read_json(client, f"paper://{asked}")
    assert got == answer(corpus, "get_paper", paper=asked)
    assert got["query"]["asked"] == asked and got["title"] in (BERT_MOUTH_TITLE, "BERTs are Generative In-Context Learners")


async def test_paper_resource_with_old_style_id(small_client: Client) -> None:
    got = await read_json(small_client, "paper://hep-th/9901001")
    assert got["arxiv_id"] == "hep-th/9901001" and got["title"] == "Old Style"


@pytest.mark.parametrize("uri", ["paper://hep-th/9901001", "paper://9999.99999", "paper://no-such-slug", "paper://hep-th/9901001v2"])
async def test_unknown_paper_resource_is_invalid_params(client: Client, uri: str) -> None:
    with pytest.raises(MCPError) as error:
        await client.read_resource(uri)
    assert error.value.code == INVALID_PARAMS == -32602
    assert "not_found" in error.value.message


@pytest.mark.parametrize("sha", ["992ab7ae4b4bf55c", "2a890c3f"])
async def test_code_resource_is_get_codes_answer(client: Client, corpus: Corpus, sha: str) -> None:
    got = await read_json(client, f"code://{sha}")
    assert got == await code_answer(corpus, sha) == await call(client, "get_code", code_sha256=sha)
    assert "code" not in got and got["withheld"] in ("licence_restricted", "not_materialized")


@pytest.mark.parametrize("sha", ["deadbeefdeadbeef", "zz", "1e"])
async def test_bad_code_resource_is_invalid_params(client: Client, sha: str) -> None:
    with pytest.raises(MCPError) as error:
        await client.read_resource(f"code://{sha}")
    assert error.value.code == -32602


async def test_stats_resource_is_corpus_stats(client: Client, corpus: Corpus) -> None:
    stats = await read_json(client, "corpus://stats")
    assert stats == answer(corpus, "corpus_stats") == await call(client, "corpus_stats")
    assert (stats["papers"], stats["samples"]) == (2, 36)


async def test_load_report_resource_is_the_load_report(client: Client, small_client: Client, corpus: Corpus, small_corpus: Corpus) -> None:
    assert await read_json(client, "corpus://load-report") == overview.load_report(corpus)
    with_a_problem = await read_json(small_client, "corpus://load-report")
    assert with_a_problem == json.loads(orjson.dumps(overview.load_report(small_corpus)))
    assert [problem["code"] for problem in with_a_problem["problems"]] == ["no_key"]


async def test_unknown_resource_scheme(client: Client) -> None:
    with pytest.raises(MCPError) as error:
        await client.read_resource("nope://x")
    assert error.value.code == -32602


# -- prompts -------------------------------------------------------------------------------------------------


async def test_prompt_listing(client: Client) -> None:
    prompts = {
        prompt.name: [(arg.name, arg.required) for arg in prompt.arguments or []] for prompt in (await client.list_prompts()).prompts
    }
    assert prompts == {"implement_paper": [("arxiv_id", True)], "compare_implementations": [("arxiv_id", True)]}


@pytest.mark.parametrize(
    ("name", "render"), [("implement_paper", prompts.implement_prompt), ("compare_implementations", prompts.compare_prompt)]
)
@pytest.mark.parametrize("arxiv_id", [BERT_MOUTH, "https://arxiv.org/abs/2406.04823v2"])
async def test_a_prompt_is_the_queries_text_as_one_user_message(
    client: Client, corpus: Corpus, name: str, render: Any, arxiv_id: str
) -> None:
    text = await prompt_text(client, name, {"arxiv_id": arxiv_id})
    assert text == render(corpus, arxiv_id)


@pytest.mark.parametrize("name", ["implement_paper", "compare_implementations"])
async def test_prompt_missing_argument_is_invalid_params(client: Client, name: str) -> None:
    for arguments in ({}, {"arxiv_id": ""}):
        with pytest.raises(MCPError) as error:
            await client.get_prompt(name, arguments)
        assert error.value.code == INVALID_PARAMS
        assert "arxiv_id" in error.value.message


@pytest.mark.parametrize(
    ("name", "render"), [("implement_paper", prompts.implement_prompt), ("compare_implementations", prompts.compare_prompt)]
)
@pytest.mark.parametrize("arxiv_id", ["9999.99999", "hep-th/9901001", "not an id!"])
async def test_prompt_unknown_id_is_invalid_params_with_the_query_errors_text(
    client: Client, corpus: Corpus, name: str, render: Any, arxiv_id: str
) -> None:
    with pytest.raises(MCPError) as error:
        await client.get_prompt(name, {"arxiv_id": arxiv_id})
    assert error.value.code == INVALID_PARAMS
    assert error.value.message == refusal(render, corpus, arxiv_id)


async def test_unknown_prompt_is_invalid_params(client: Client) -> None:
    with pytest.raises(MCPError) as error:
        await client.get_prompt("summarise_everything", {"arxiv_id": BERT_MOUTH})
    assert error.value.code == INVALID_PARAMS


# -- completions ---------------------------------------------------------------------------------------------


async def test_paper_template_completes_arxiv_ids(client: Client, corpus: Corpus) -> None:
    for value in ("19", "", "arXiv:24", "3"):
        assert await completion_values(client, PAPER_TEMPLATE, "arxiv_id", value) == completions.complete(corpus, "arxiv_id", value)
    completion = (await client.complete(PAPER_TEMPLATE, {"name": "arxiv_id", "value": ""})).completion
    assert completion.values == [BERT_MOUTH, BERTS_ICL] and completion.total == 2 and completion.has_more is False


@pytest.mark.parametrize("ref", [IMPLEMENT, COMPARE])
async def test_prompts_complete_arxiv_ids(client: Client, ref: PromptReference) -> None:
    assert await completion_values(client, ref, "arxiv_id", "24") == [BERTS_ICL]


async def test_status_and_code_values_complete(client: Client) -> None:
    assert await completion_values(client, IMPLEMENT, "status", "ran_") == ["ran_honours", "ran_draft_wrong", "ran_violates"]
    assert await completion_values(client, CODE_TEMPLATE, "code_sha256", "1e") == ["1ecf520984f04d3a", "1edc73f4d0b284d9"]
    assert await completion_values(client, CODE_TEMPLATE, "code_sha256", "zz") == []


async def test_unknown_argument_completes_nothing(client: Client) -> None:
    assert await completion_values(client, IMPLEMENT, "style", "s") == []


def test_small_corpus_is_what_the_edge_tests_need(small_corpus: Corpus) -> None:
    assert sorted(paper.key for paper in small_corpus.index.papers) == ["0704.0001", "2001.10000", "hep-th/9901001"]
    assert small_corpus.index.report.rejected == 1
