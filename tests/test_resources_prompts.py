"""Resources, prompts and completions through the in-memory client, in both protocol eras."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, PromptReference, ResourceTemplateReference, TextContent, TextResourceContents

from conftest import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL, BERTS_ICL_TITLE, make_record, make_sample, sha_for
from papercode.corpus.stages import Corpus

pytestmark = pytest.mark.anyio

Connect = Callable[[Corpus], AbstractAsyncContextManager[Client]]
LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]

PAPER_TEMPLATE = ResourceTemplateReference(type="ref/resource", uri="paper://{+arxiv_id}")
CODE_TEMPLATE = ResourceTemplateReference(type="ref/resource", uri="code://{code_sha256}")
IMPLEMENT = PromptReference(type="ref/prompt", name="implement_paper")
COMPARE = PromptReference(type="ref/prompt", name="compare_implementations")


async def read_json(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    (content,) = result.contents
    assert isinstance(content, TextResourceContents)
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def tool_answer(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert result.is_error is False
    return result.structured_content


async def prompt_text(client: Client, name: str, arxiv_id: str) -> str:
    result = await client.get_prompt(name, {"arxiv_id": arxiv_id})
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    return message.content.text


# -- resources -----------------------------------------------------------------------------


async def test_resource_listing(client: Client) -> None:
    resources = {resource.uri: resource.mime_type for resource in (await client.list_resources()).resources}
    assert resources == {"corpus://stats": "application/json", "corpus://load-report": "application/json"}
    templates = {template.uri_template: template.mime_type for template in (await client.list_resource_templates()).resource_templates}
    assert templates == {"paper://{+arxiv_id}": "application/json", "code://{code_sha256}": "application/json"}


@pytest.mark.parametrize("arxiv_id", [BERT_MOUTH, BERTS_ICL])
async def test_paper_resource_is_get_papers_view(client: Client, arxiv_id: str) -> None:
    assert await read_json(client, f"paper://{arxiv_id}") == await tool_answer(client, "get_paper", paper=arxiv_id)


@pytest.mark.parametrize("asked", ["1902.04094v2", "arXiv:1902.04094", "bert-has-a-mouth-and-it-must-speak-bert-as-a"])
async def test_paper_resource_takes_other_id_forms(client: Client, asked: str) -> None:
    answer = await read_json(client, f"paper://{asked}")
    assert answer["query"] == {"asked": asked, "resolved": BERT_MOUTH}
    assert answer["title"] == BERT_MOUTH_TITLE


async def test_paper_resource_with_old_style_id(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record("hep-th/9901001", "old-style", [make_sample(sha_for("old"))], title="Old Style")])
    async with connect(corpus) as client:
        answer = await read_json(client, "paper://hep-th/9901001")
    assert answer["arxiv_id"] == "hep-th/9901001" and answer["title"] == "Old Style"


@pytest.mark.parametrize("uri", ["paper://hep-th/9901001", "paper://9999.99999", "paper://no-such-slug", "paper://hep-th/9901001v2"])
async def test_unknown_paper_resource_is_invalid_params(client: Client, uri: str) -> None:
    with pytest.raises(MCPError) as error:
        await client.read_resource(uri)
    assert error.value.code == INVALID_PARAMS == -32602
    assert "not_found" in error.value.message


async def test_code_resource_is_get_codes_answer(client: Client) -> None:
    answer = await read_json(client, "code://992ab7ae4b4bf55c")
    assert answer == await tool_answer(client, "get_code", code_sha256="992ab7ae4b4bf55c")
    assert answer["withheld"] == "licence_restricted" and "code" not in answer


async def test_code_resource_takes_a_prefix(client: Client) -> None:
    answer = await read_json(client, "code://2a890c3f")
    assert answer["query"]["resolved"] == "2a890c3f8ff19f47"
    assert answer["withheld"] == "not_materialized"


@pytest.mark.parametrize("sha", ["deadbeefdeadbeef", "zz", "1e"])
async def test_bad_code_resource_is_invalid_params(client: Client, sha: str) -> None:
    with pytest.raises(MCPError) as error:
        await client.read_resource(f"code://{sha}")
    assert error.value.code == -32602


async def test_stats_resource_is_corpus_stats(client: Client) -> None:
    stats = await read_json(client, "corpus://stats")
    assert stats == await tool_answer(client, "corpus_stats")
    assert (stats["papers"], stats["samples"]) == (2, 36)


async def test_load_report_resource_on_clean_records(client: Client) -> None:
    assert await read_json(client, "corpus://load-report") == {
        "summary": {
            "files_seen": 2,
            "files_read": 2,
            "records_read": 2,
            "records_indexed": 2,
            "rejected": 0,
            "warnings": 0,
            "by_reason": {},
        },
        "problems": [],
        "more_problems": 0,
    }


async def test_load_report_resource_lists_problems(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record(), {"title": "no key at all"}])
    async with connect(corpus) as client:
        report = await read_json(client, "corpus://load-report")
    assert report["summary"]["rejected"] == 1
    (problem,) = report["problems"]
    assert problem["severity"] == "error" and problem["code"] == "no_key"
    assert problem["path"].endswith("001.json") and problem["reason"]
    assert "line" not in problem  # a .json file has no line; nulls are left out


async def test_unknown_resource_scheme(client: Client) -> None:
    with pytest.raises(MCPError) as error:
        await client.read_resource("nope://x")
    assert error.value.code == -32602


# -- prompts -------------------------------------------------------------------------------


async def test_prompt_listing(client: Client) -> None:
    prompts = {
        prompt.name: [(arg.name, arg.required) for arg in prompt.arguments or []] for prompt in (await client.list_prompts()).prompts
    }
    assert prompts == {"implement_paper": [("arxiv_id", True)], "compare_implementations": [("arxiv_id", True)]}


async def test_implement_paper_prompt(client: Client) -> None:
    text = await prompt_text(client, "implement_paper", BERT_MOUTH)
    assert BERT_MOUTH_TITLE in text
    assert "We show that BERT (Devlin et al., 2018) is a Markov random field language" in text  # the abstract
    assert "get_code" in text
    assert "licence" in text.lower()
    assert "code_sha256=2a890c3f8ff19f47" in text  # the best sample comes first
    assert text.index("2a890c3f8ff19f47") < text.index("8c1bb7962bc49e93") < text.index("013a68b0ac4716fe")
    assert "CC BY-SA 4.0" in text


async def test_implement_paper_marks_pointer_only_samples(client: Client) -> None:
    text = await prompt_text(client, "implement_paper", BERT_MOUTH)
    (line,) = [line for line in text.splitlines() if "013a68b0ac4716fe" in line]
    assert "POINTER ONLY" in line and "NONE" in line
    (showable,) = [line for line in text.splitlines() if "2a890c3f8ff19f47" in line]
    assert "POINTER ONLY" not in showable


async def test_implement_paper_without_samples(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record("2001.00001", "no-harvest", title="Lonely Paper", syntology=False)])
    async with connect(corpus) as client:
        text = await prompt_text(client, "implement_paper", "2001.00001")
    assert "Lonely Paper" in text and "No code samples" in text


async def test_implement_paper_accepts_any_id_form(client: Client) -> None:
    text = await prompt_text(client, "implement_paper", "https://arxiv.org/abs/2406.04823v2")
    assert BERTS_ICL_TITLE in text


async def test_compare_implementations_prompt(client: Client) -> None:
    text = await prompt_text(client, "compare_implementations", BERT_MOUTH)
    assert BERT_MOUTH_TITLE in text
    assert "licence" in text.lower()
    assert "https://github.com/nyu-dl/bert-gen: official" in text
    assert "seanrjohnson/protein_gibbs_sampler" in text and "6 ran" in text
    assert "swastishreya/BERT_as_a_conditional_generative_model" in text
    assert "get_harvested_code_for_paper" in text


async def test_compare_implementations_mentions_get_code(client: Client) -> None:
    assert "get_code" in await prompt_text(client, "compare_implementations", BERT_MOUTH)


async def test_compare_implementations_flags_pointer_only_repos(client: Client) -> None:
    text = await prompt_text(client, "compare_implementations", BERT_MOUTH)
    (line,) = [line for line in text.splitlines() if "opqrstuvcut/BertMouth" in line]
    assert "NONE" in line or "pointer" in line.lower()


@pytest.mark.parametrize("name", ["implement_paper", "compare_implementations"])
async def test_prompt_missing_argument_is_invalid_params(client: Client, name: str) -> None:
    for arguments in ({}, {"arxiv_id": ""}):
        with pytest.raises(MCPError) as error:
            await client.get_prompt(name, arguments)
        assert error.value.code == INVALID_PARAMS
        assert "arxiv_id" in error.value.message


@pytest.mark.parametrize("name", ["implement_paper", "compare_implementations"])
@pytest.mark.parametrize("arxiv_id", ["9999.99999", "hep-th/9901001", "not an id!"])
async def test_prompt_unknown_id_is_invalid_params(client: Client, name: str, arxiv_id: str) -> None:
    with pytest.raises(MCPError) as error:
        await client.get_prompt(name, {"arxiv_id": arxiv_id})
    assert error.value.code == INVALID_PARAMS


async def test_unknown_prompt_is_invalid_params(client: Client) -> None:
    with pytest.raises(MCPError) as error:
        await client.get_prompt("summarise_everything", {"arxiv_id": BERT_MOUTH})
    assert error.value.code == INVALID_PARAMS


# -- completions ---------------------------------------------------------------------------


async def completion_values(client: Client, ref: ResourceTemplateReference | PromptReference, name: str, value: str) -> list[str]:
    return (await client.complete(ref, {"name": name, "value": value})).completion.values


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("19", [BERT_MOUTH]),
        ("2406.0", [BERTS_ICL]),
        ("", [BERT_MOUTH, BERTS_ICL]),
        ("arXiv:24", [BERTS_ICL]),
        ("1902.04094v2", [BERT_MOUTH]),
        ("3", []),
    ],
)
async def test_paper_template_completes_arxiv_ids(client: Client, value: str, expected: list[str]) -> None:
    assert await completion_values(client, PAPER_TEMPLATE, "arxiv_id", value) == expected


@pytest.mark.parametrize("ref", [IMPLEMENT, COMPARE])
async def test_prompts_complete_arxiv_ids(client: Client, ref: PromptReference) -> None:
    assert await completion_values(client, ref, "arxiv_id", "24") == [BERTS_ICL]


async def test_completion_result_counts(client: Client) -> None:
    completion = (await client.complete(PAPER_TEMPLATE, {"name": "arxiv_id", "value": ""})).completion
    assert completion.total == 2 and completion.has_more is False


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ran_", ["ran_honours", "ran_draft_wrong", "ran_violates"]),
        ("ran", ["ran_honours", "ran", "ran_draft_wrong", "ran_violates"]),
        ("u", ["unverified"]),
        ("RAN_H", ["ran_honours"]),
        ("x", []),
    ],
)
async def test_status_values_complete_by_prefix(client: Client, value: str, expected: list[str]) -> None:
    assert await completion_values(client, IMPLEMENT, "status", value) == expected


async def test_code_template_completes_hashes(client: Client) -> None:
    assert await completion_values(client, CODE_TEMPLATE, "code_sha256", "1e") == ["1ecf520984f04d3a", "1edc73f4d0b284d9"]
    assert await completion_values(client, CODE_TEMPLATE, "code_sha256", "zz") == []


async def test_unknown_argument_completes_nothing(client: Client) -> None:
    assert await completion_values(client, IMPLEMENT, "style", "s") == []


async def test_arxiv_completion_is_capped_at_20(load_corpus: LoadCorpus, connect: Connect) -> None:
    records = [make_record(f"2001.{i:05d}", f"paper-{i}") for i in range(25)]
    async with connect(load_corpus(records)) as client:
        values = await completion_values(client, PAPER_TEMPLATE, "arxiv_id", "2001")
    assert values == [f"2001.{i:05d}" for i in range(20)]
