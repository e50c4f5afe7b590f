"""Every tool through the in-memory MCP client, in both protocol eras, on the real records.

Counts are exact (see ../shared/notes/records.md). Whole answers are asserted where they are small.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import orjson
import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from conftest import (
    BERT_MOUTH,
    BERT_MOUTH_ORDER,
    BERT_MOUTH_TITLE,
    BERTS_ICL,
    BERTS_ICL_TITLE,
    CLAIM,
    TOOL_NAMES,
    make_record,
    make_sample,
    sha_for,
    write_records,
)
from papercode.corpus.stages import Corpus

pytestmark = pytest.mark.anyio

Connect = Callable[[Corpus], AbstractAsyncContextManager[Client]]
LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]

TOOLS = set(TOOL_NAMES)
ATTRIBUTION = "CC BY-SA 4.0, Code-with-Papers (codewithpapers.app/attribution); not affiliated with Papers with Code"
REAL_CLAIM = (
    "Per-sample execution status on synthesized fixtures; not a correctness claim about the paper. Samples come from "
    "repositories linked to the paper, official or community; repo_kind says which."
)
VALID_STATUSES = "valid: ran_honours, ran, ran_draft_wrong, ran_violates, unverified"


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


async def walk(client: Client, tool: str, key: str, **arguments: Any) -> list[Any]:
    """Every item of a paged answer, following next_cursor to the end."""
    items: list[Any] = []
    cursor = None
    for _ in range(200):
        page = await call(client, tool, **arguments, **({"cursor": cursor} if cursor else {}))
        items += page[key]
        cursor = page.get("next_cursor")
        if cursor is None:
            return items
    raise AssertionError("paging did not end")


# -- the tool list -------------------------------------------------------------------------


async def test_tool_names(client: Client) -> None:
    assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS


async def test_every_tool_is_read_only_idempotent_and_closed_world(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert tools
    for tool in tools:
        assert tool.annotations is not None, tool.name
        assert tool.annotations.read_only_hint is True, tool.name
        assert tool.annotations.idempotent_hint is True, tool.name
        assert tool.annotations.open_world_hint is False, tool.name
        assert tool.annotations.destructive_hint in (None, False), tool.name


async def test_every_tool_has_an_output_schema_and_a_description(client: Client) -> None:
    for tool in (await client.list_tools()).tools:
        assert tool.output_schema is not None and tool.output_schema.get("type") == "object", tool.name
        assert tool.description and len(tool.description) > 40, tool.name


async def test_unknown_tool_is_a_protocol_error(client: Client) -> None:
    with pytest.raises(MCPError) as error:
        await client.call_tool("get_everything", {})
    assert error.value.code == INVALID_PARAMS
    assert error.value.message == "not_found: unknown tool 'get_everything'; call tools/list for the available tools"


async def test_numbers_for_text_arguments_are_read_as_their_text(client: Client) -> None:
    # What the Inspector CLI sends for --tool-arg code_sha256=18666511 and --tool-arg query=2406.04823.
    code = await call(client, "get_code", code_sha256=18666511)
    assert code["query"] == {"asked": "18666511", "resolved": "1866651164e5bad9"}
    search = await call(client, "search_papers", query=2406.04823)
    assert search["query"] == "2406.04823"
    lost = await fail(client, "get_code", code_sha256=186665116400000.0)  # 1866651164e5 as JSON: digits are gone
    assert lost.startswith("invalid_argument: '186665116400000.0' is not a hex code hash") and "as a string" in lost


# -- get_harvested_code_for_paper -----------------------------------------------------------


async def test_ids_sent_as_json_numbers_resolve_exactly(load_corpus: LoadCorpus, connect: Connect) -> None:
    # The Inspector CLI (Node >= 22.19) and some models send unquoted ids: JSON numbers.
    records = [make_record(arxiv_id, f"paper-{n}", [make_sample(sha_for(arxiv_id))]) for n, arxiv_id in enumerate(["0704.0001", "2001.10000"])]
    async with connect(load_corpus(records)) as client:
        for number, arxiv_id in ((704.0001, "0704.0001"), (2001.1, "2001.10000")):
            harvested = await call(client, "get_harvested_code_for_paper", arxiv_id=number)
            paper = await call(client, "get_paper", paper=number)
            assert harvested["query"]["resolved"] == paper["query"]["resolved"] == arxiv_id


async def test_real_ids_sent_as_numbers(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=2406.04823)
    assert answer["query"] == {"asked": BERTS_ICL, "resolved": BERTS_ICL} and answer["counts"]["total"] == 26
    assert (await call(client, "get_paper", paper=1902.04094))["title"] == BERT_MOUTH_TITLE


async def test_a_number_that_is_no_arxiv_id_is_looked_up_as_its_text(client: Client) -> None:
    text = await fail(client, "get_paper", paper=1902)
    assert text.startswith("not_found: no paper with slug 1902 ")


async def test_harvested_bert_mouth_counts(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH)
    assert answer["counts"] == {
        "total": 10,
        "by_status": {"ran": 6, "ran_draft_wrong": 2, "ran_honours": 2},
        "by_repo_kind": {"official": 2, "listed": 8},
        "pointer_only": 2,
    }
    assert answer["matched"] == 10
    assert len(answer["samples"]) == 10
    assert "next_cursor" not in answer
    assert "note" not in answer


async def test_harvested_bert_mouth_default_order(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH)
    assert [(s["repo"], s["status"], s["entry"]) for s in answer["samples"]] == BERT_MOUTH_ORDER


async def test_harvested_bert_mouth_envelope(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH)
    assert answer["query"] == {"asked": BERT_MOUTH, "resolved": BERT_MOUTH}
    assert answer["paper"] == {
        "arxiv_id": BERT_MOUTH,
        "title": BERT_MOUTH_TITLE,
        "date": "2019-02-11",
        "url_abs": "http://arxiv.org/abs/1902.04094v2",
    }
    assert answer["claim"] == REAL_CLAIM
    assert answer["read_at"] == "2026-09-25T09:33:49+00:00"
    assert answer["attribution"] == ATTRIBUTION


async def test_harvested_sample_fields(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH, limit=1)
    assert answer["samples"] == [
        {
            "code_sha256": "2a890c3f8ff19f47",
            "entry": "preprocess",
            "repo": "nyu-dl/bert-gen",
            "repo_kind": "official",
            "path": "generate.py",
            "language": "python",
            "status": "ran_honours",
            "contract_check": "HONOURS",
            "verification_level": 1,
            "licence": "BSD-3-Clause",
            "inline_ok": True,
        }
    ]


async def test_harvested_bert_mouth_pointer_only_samples(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH)
    restricted = [(s["repo"], s["licence"]) for s in answer["samples"] if not s["inline_ok"]]
    assert restricted == [("opqrstuvcut/BertMouth", "NONE"), ("swastishreya/BERT_as_a_conditional_generative_model", "NONE")]
    assert [s["repo"] for s in answer["samples"] if s["repo_kind"] == "official"] == ["nyu-dl/bert-gen"] * 2


async def test_harvested_berts_icl_counts_and_first_page(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL)
    assert answer["counts"] == {
        "total": 26,
        "by_status": {"ran": 11, "unverified": 13, "ran_violates": 1, "ran_draft_wrong": 1},
        "by_repo_kind": {"official": 26},
        "pointer_only": 0,
    }
    assert answer["matched"] == 26
    assert len(answer["samples"]) == 25  # the default limit
    assert "next_cursor" in answer
    assert answer["paper"]["title"] == BERTS_ICL_TITLE


async def test_harvested_berts_icl_status_order(client: Client) -> None:
    samples = await walk(client, "get_harvested_code_for_paper", "samples", arxiv_id=BERTS_ICL)
    assert [s["status"] for s in samples] == ["ran"] * 11 + ["ran_draft_wrong", "ran_violates"] + ["unverified"] * 13
    assert {s["repo"] for s in samples} == {"ltgoslo/bert-in-context"}
    assert all(s["licence"] == "Apache-2.0" and s["inline_ok"] for s in samples)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("ran_honours", ["preprocess", "initialization_text"]),
        ("ran_draft_wrong", ["get_seed_sent", "detokenize"]),
        (["ran_honours", "ran_draft_wrong"], ["preprocess", "get_seed_sent", "initialization_text", "detokenize"]),
        ("ran_honours, ran_draft_wrong", ["preprocess", "get_seed_sent", "initialization_text", "detokenize"]),
        ("RAN_HONOURS", ["preprocess", "initialization_text"]),
    ],
)
async def test_harvested_status_filter(client: Client, status: str | list[str], expected: list[str]) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH, status=status)
    assert [s["entry"] for s in answer["samples"]] == expected
    assert answer["matched"] == len(expected)
    assert answer["counts"]["total"] == 10  # counts always cover every sample of the paper


async def test_harvested_repo_kind_filter(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH, repo_kind="official")
    assert [s["entry"] for s in answer["samples"]] == ["preprocess", "get_seed_sent"]
    assert answer["matched"] == 2


async def test_harvested_filters_matching_nothing_say_so(client: Client) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, status="ran_honours")
    assert answer["samples"] == [] and answer["matched"] == 0
    assert "no samples match" in answer["note"]


async def test_harvested_unknown_status_lists_valid_ones(client: Client) -> None:
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH, status="works")
    assert text.startswith("invalid_argument:")
    assert "'works'" in text and VALID_STATUSES in text and "Next:" in text


async def test_harvested_unknown_repo_kind(client: Client) -> None:
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id=BERT_MOUTH, repo_kind="upstream")
    assert text.startswith("invalid_argument:") and "official" in text and "community" in text


async def test_harvested_unknown_paper(client: Client) -> None:
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id="9999.99999")
    assert text.startswith("not_found:")
    assert "9999.99999" in text and "Next:" in text and "search_papers" in text


async def test_harvested_unknown_old_style_paper(client: Client) -> None:
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id="hep-th/9901001v2")
    assert text.startswith("not_found:") and "hep-th/9901001" in text and "Next:" in text


@pytest.mark.parametrize("arxiv_id", ["", "   ", "not an id!", "x" * 400])
async def test_harvested_bad_id_is_invalid_argument(client: Client, arxiv_id: str) -> None:
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id=arxiv_id)
    assert text.startswith("invalid_argument:") and "Next:" in text


async def test_harvested_paper_without_samples(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record("2001.00001", "no-harvest", syntology=False)])
    async with connect(corpus) as client:
        answer = await call(client, "get_harvested_code_for_paper", arxiv_id="2001.00001")
    assert answer["counts"] == {"total": 0, "by_status": {}, "by_repo_kind": {}, "pointer_only": 0}
    assert answer["samples"] == [] and answer["matched"] == 0
    assert "no harvested code samples" in answer["note"]
    assert "claim" not in answer and "read_at" not in answer and "next_cursor" not in answer


async def test_harvested_paper_with_empty_harvest(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record("2001.00001", "empty-harvest", samples=[])])
    async with connect(corpus) as client:
        answer = await call(client, "get_harvested_code_for_paper", arxiv_id="2001.00001")
    assert answer["samples"] == [] and answer["counts"]["total"] == 0
    assert "no harvested code samples" in answer["note"]
    assert answer["claim"] == CLAIM


# -- id forms ------------------------------------------------------------------------------

ARXIV_FORMS = [
    "1902.04094",
    "1902.04094v2",
    "1902.04094v1",
    "arXiv:1902.04094",
    "ARXIV:1902.04094",
    "arXiv:1902.04094v2",
    "https://arxiv.org/abs/1902.04094v2",
    "http://arxiv.org/pdf/1902.04094v2.pdf",
    "https://arxiv.org/abs/1902.04094",
    "  1902.04094  ",
    "\n1902.04094v2\t",
]


@pytest.mark.parametrize("asked", ARXIV_FORMS)
async def test_harvested_accepts_every_arxiv_form(client: Client, asked: str) -> None:
    answer = await call(client, "get_harvested_code_for_paper", arxiv_id=asked)
    assert answer["query"] == {"asked": asked, "resolved": BERT_MOUTH}
    assert answer["counts"]["total"] == 10


@pytest.mark.parametrize(
    "asked",
    [
        *ARXIV_FORMS,
        "bert-has-a-mouth-and-it-must-speak-bert-as-a",
        "/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a",
        "https://paperswithcode.com/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a",
        "https://codewithpapers.app/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a",
        "https://codewithpapers.app/paper/BERT-has-a-mouth-and-it-must-speak-bert-as-a/",
    ],
)
async def test_get_paper_accepts_ids_and_slugs(client: Client, asked: str) -> None:
    answer = await call(client, "get_paper", paper=asked)
    assert answer["query"] == {"asked": asked, "resolved": BERT_MOUTH}
    assert answer["title"] == BERT_MOUTH_TITLE


async def test_old_style_paper_resolves(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record("hep-th/9901001", "old-style", [make_sample(sha_for("old"))])])
    async with connect(corpus) as client:
        for asked in ("hep-th/9901001", "hep-th/9901001v2", "arXiv:hep-th/9901001", "https://arxiv.org/abs/hep-th/9901001v1"):
            answer = await call(client, "get_harvested_code_for_paper", arxiv_id=asked)
            assert answer["query"] == {"asked": asked, "resolved": "hep-th/9901001"}
            assert answer["counts"]["total"] == 1


async def test_slug_resolves_paper_without_arxiv_id(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record(None, "only-a-slug", [make_sample(sha_for("slug"))])])
    async with connect(corpus) as client:
        answer = await call(client, "get_harvested_code_for_paper", arxiv_id="/paper/only-a-slug")
    assert answer["query"] == {"asked": "/paper/only-a-slug", "resolved": "only-a-slug"}
    assert answer["paper"]["slug"] == "only-a-slug" and "arxiv_id" not in answer["paper"]


# -- get_paper -----------------------------------------------------------------------------


async def test_get_paper_bert_mouth(client: Client) -> None:
    answer = await call(client, "get_paper", paper=BERT_MOUTH)
    assert answer["authors"] == ["Alex Wang", "Kyunghyun Cho"] and answer["n_authors"] == 2
    assert answer["date"] == "2019-02-11"
    assert answer["proceeding"] == "WS 2019 6"
    assert answer["abstract"].startswith("We show that BERT (Devlin et al., 2018) is a Markov random field language")
    assert "abstract_truncated" not in answer
    assert answer["url_abs"] == "http://arxiv.org/abs/1902.04094v2"
    assert answer["url_pdf"] == "http://arxiv.org/pdf/1902.04094v2.pdf"
    assert answer["tasks"] == ["Language Modeling"]  # language-modeling / language-modelling merged
    assert len(answer["methods"]) == 10 and answer["more_methods"] == 4
    assert answer["samples"] == {
        "total": 10,
        "by_status": {"ran_honours": 2, "ran_draft_wrong": 2, "ran": 6},
        "by_repo_kind": {"official": 2, "listed": 8},
        "pointer_only": 2,
    }
    assert answer["snapshot"] == "2025-07-28"
    assert answer["read_at"] == "2026-09-25T09:33:49+00:00"
    assert answer["attribution"] == ATTRIBUTION


async def test_get_paper_code_links_official_first_and_capped(client: Client) -> None:
    answer = await call(client, "get_paper", paper=BERT_MOUTH)
    links = answer["code_links"]
    assert len(links) == 10 and answer["more_code_links"] == 3  # 13 code links
    assert links[:2] == [
        {
            "repo": "https://github.com/kyunghyuncho/bert-gen",
            "official": True,
            "framework": "pytorch",
            "mentioned_in_paper": True,
            "reach": "ok",
            "licence": "BSD-3-Clause",
        },
        {"repo": "https://github.com/nyu-dl/bert-gen", "official": True, "framework": "pytorch", "mentioned_in_paper": True},
    ]
    assert not any(link["official"] for link in links[2:])


async def test_get_paper_berts_icl(client: Client) -> None:
    answer = await call(client, "get_paper", paper=BERTS_ICL)
    assert answer["title"] == BERTS_ICL_TITLE
    assert answer["authors"] == ["David Samuel"] and answer["n_authors"] == 1
    assert answer["tasks"] == ["In-Context Learning"]
    assert len(answer["methods"]) == 10 and answer["more_methods"] == 9
    assert answer["code_links"] == [
        {
            "repo": "https://github.com/ltgoslo/bert-in-context",
            "official": True,
            "framework": "pytorch",
            "mentioned_in_paper": True,
            "reach": "ok",
            "licence": "Apache-2.0",
        }
    ]
    assert "more_code_links" not in answer and "proceeding" not in answer
    assert answer["samples"]["total"] == 26


async def test_get_paper_caps_authors_and_abstract(load_corpus: LoadCorpus, connect: Connect) -> None:
    record = make_record(authors=[f"Author {i}" for i in range(300)], abstract="word " * 1_000)
    async with connect(load_corpus([record])) as client:
        answer = await call(client, "get_paper", paper="2001.00001")
    assert answer["authors"] == [f"Author {i}" for i in range(10)] and answer["n_authors"] == 300
    assert len(answer["abstract"]) == 2_000 and answer["abstract_truncated"] is True


@pytest.mark.parametrize("paper", ["9999.99999", "no-such-slug", "/paper/no-such-slug", "https://paperswithcode.com/paper/no-such-slug"])
async def test_get_paper_unknown(client: Client, paper: str) -> None:
    text = await fail(client, "get_paper", paper=paper)
    assert text.startswith("not_found:") and "Next:" in text


# -- find_papers_for_repo ------------------------------------------------------------------


@pytest.mark.parametrize(
    "repo",
    [
        "nyu-dl/bert-gen",
        "NYU-DL/BERT-GEN",
        "https://github.com/nyu-dl/bert-gen",
        "https://github.com/nyu-dl/bert-gen.git",
        "https://github.com/nyu-dl/bert-gen/",
        "https://github.com/nyu-dl/bert-gen/tree/master/scripts",
        "https://GitHub.com/Nyu-Dl/Bert-Gen.git/",
    ],
)
async def test_find_papers_for_repo_forms(client: Client, repo: str) -> None:
    answer = await call(client, "find_papers_for_repo", repo=repo)
    assert answer == {
        "query": {"asked": repo, "resolved": "nyu-dl/bert-gen"},
        "total": 1,
        "papers": [
            {
                "arxiv_id": BERT_MOUTH,
                "title": BERT_MOUTH_TITLE,
                "is_official": True,
                "framework": "pytorch",
                "samples": 2,
                "statuses": {"ran_honours": 1, "ran_draft_wrong": 1},
            }
        ],
    }


async def test_find_papers_for_community_repo_with_samples(client: Client) -> None:
    answer = await call(client, "find_papers_for_repo", repo="seanrjohnson/protein_gibbs_sampler")
    assert answer["papers"] == [
        {
            "arxiv_id": BERT_MOUTH,
            "title": BERT_MOUTH_TITLE,
            "is_official": False,
            "framework": "pytorch",
            "samples": 6,
            "statuses": {"ran": 6},
        }
    ]


async def test_find_papers_for_linked_repo_without_samples(client: Client) -> None:
    answer = await call(client, "find_papers_for_repo", repo="https://github.com/kyunghyuncho/bert-gen")
    assert answer["papers"] == [
        {"arxiv_id": BERT_MOUTH, "title": BERT_MOUTH_TITLE, "is_official": True, "framework": "pytorch", "samples": 0, "statuses": {}}
    ]


async def test_find_papers_for_repo_from_tree_link(client: Client) -> None:
    answer = await call(client, "find_papers_for_repo", repo="2023-MindSpore-1/ms-code-12")
    assert [paper["arxiv_id"] for paper in answer["papers"]] == [BERT_MOUTH]
    assert answer["papers"][0]["framework"] == "mindspore"


async def test_find_papers_for_unknown_repo(client: Client) -> None:
    text = await fail(client, "find_papers_for_repo", repo="someone/nothing")
    assert text.startswith("not_found:") and "someone/nothing" in text and "Next:" in text


@pytest.mark.parametrize("repo", ["bert-gen", "", "https://github.com/nyu-dl"])
async def test_find_papers_for_malformed_repo(client: Client, repo: str) -> None:
    text = await fail(client, "find_papers_for_repo", repo=repo)
    assert text.startswith("invalid_argument:") and "Next:" in text


async def test_find_papers_for_repo_official_first(load_corpus: LoadCorpus, connect: Connect) -> None:
    link = {"repo_url": "https://github.com/shared/lib", "is_official": 0, "framework": "jax"}
    records = [
        make_record("2001.00001", "community-use", code_links=[link]),
        make_record("2001.00002", "many-samples", [make_sample(sha_for(i), repo="shared/lib", repo_kind="listed") for i in range(3)]),
        make_record("2001.00003", "the-origin", code_links=[{**link, "is_official": 1}]),
    ]
    async with connect(load_corpus(records)) as client:
        answer = await call(client, "find_papers_for_repo", repo="shared/lib")
    assert [(p["arxiv_id"], p["is_official"], p["samples"]) for p in answer["papers"]] == [
        ("2001.00003", True, 0),
        ("2001.00002", False, 3),
        ("2001.00001", False, 0),
    ]


# -- get_code ------------------------------------------------------------------------------


async def test_get_code_offline_with_an_empty_store_is_not_materialized(client: Client) -> None:
    answer = await call(client, "get_code", code_sha256="2a890c3f8ff19f47")
    assert answer["query"] == {"asked": "2a890c3f8ff19f47", "resolved": "2a890c3f8ff19f47"}
    assert answer["matches"] == [
        {
            "code_sha256": "2a890c3f8ff19f47",
            "entry": "preprocess",
            "repo": "nyu-dl/bert-gen",
            "repo_kind": "official",
            "path": "generate.py",
            "language": "python",
            "status": "ran_honours",
            "contract_check": "HONOURS",
            "verification_level": 1,
            "licence": "BSD-3-Clause",
            "inline_ok": True,
            "file_url": "https://github.com/nyu-dl/bert-gen/blob/HEAD/generate.py",
            "papers": [{"arxiv_id": BERT_MOUTH, "title": BERT_MOUTH_TITLE}],
        }
    ]
    assert answer["withheld"] == "not_materialized" and "code" not in answer and "verified" not in answer
    assert answer["note"].startswith("not_materialized:") and "Next:" in answer["note"]


@pytest.mark.parametrize("sha", ["992ab7ae4b4bf55c", "013a68b0ac4716fe"])
async def test_get_code_pointer_only_sample_is_licence_restricted(client: Client, sha: str) -> None:
    answer = await call(client, "get_code", code_sha256=sha)
    (match,) = answer["matches"]
    assert match["inline_ok"] is False and match["licence"] == "NONE"
    assert answer["withheld"] == "licence_restricted" and "code" not in answer
    assert answer["note"].startswith("licence_restricted:") and answer["note"].endswith("Next: do not copy or reproduce this code; link to file_url.")


async def test_get_code_never_returns_code_text_without_a_store(client: Client, corpus: Corpus) -> None:
    for sha in [row.code_sha256 for paper in corpus.index.papers for row in corpus.index.samples_of(paper)]:
        answer = await call(client, "get_code", code_sha256=sha)
        assert "code" not in answer and answer["withheld"] in ("licence_restricted", "not_materialized")


@pytest.mark.parametrize("asked", ["992ab7ae", "992AB7AE4B", " 992ab7ae4b4bf55c ", "992ab7ae4b4bf55c" + "0" * 48])
async def test_get_code_prefix_forms(client: Client, asked: str) -> None:
    answer = await call(client, "get_code", code_sha256=asked)
    assert answer["query"] == {"asked": asked, "resolved": "992ab7ae4b4bf55c"}
    assert [m["entry"] for m in answer["matches"]] == ["detokenize"]


@pytest.mark.parametrize("asked", ["zz", "992ab7ag", "0x992ab7ae", "", "992ab7ae-4b4b"])
async def test_get_code_non_hex(client: Client, asked: str) -> None:
    text = await fail(client, "get_code", code_sha256=asked)
    assert text.startswith("invalid_argument:") and "hex" in text and "Next:" in text


@pytest.mark.parametrize("asked", ["1e", "1ecf520", "2"])
async def test_get_code_short_prefix(client: Client, asked: str) -> None:
    text = await fail(client, "get_code", code_sha256=asked)
    assert text.startswith("invalid_argument:") and "8" in text and "Next:" in text


async def test_get_code_unknown_hash(client: Client) -> None:
    text = await fail(client, "get_code", code_sha256="deadbeefdeadbeef")
    assert text.startswith("not_found:") and "Next:" in text


async def test_get_code_ambiguous_prefix_lists_candidates(load_corpus: LoadCorpus, connect: Connect) -> None:
    records = [
        make_record("2001.00001", "first", [make_sample("abcdef0100000000", entry="one")]),
        make_record("2001.00002", "second", [make_sample("abcdef0199999999", entry="two")]),
    ]
    async with connect(load_corpus(records)) as client:
        text = await fail(client, "get_code", code_sha256="abcdef01")
        assert text.startswith("ambiguous:")
        assert "abcdef0100000000" in text and "abcdef0199999999" in text and "Next:" in text
        answer = await call(client, "get_code", code_sha256="abcdef019")
    assert [m["entry"] for m in answer["matches"]] == ["two"]


async def test_get_code_shared_hash_lists_every_paper(load_corpus: LoadCorpus, connect: Connect) -> None:
    sample = make_sample("1234567890abcdef", repo="shared/lib", path="lib.py", entry="f")
    records = [make_record("2001.00001", "first", [sample], title="First"), make_record("2001.00002", "second", [sample], title="Second")]
    async with connect(load_corpus(records)) as client:
        answer = await call(client, "get_code", code_sha256="1234567890abcdef")
    (match,) = answer["matches"]
    assert match["papers"] == [{"arxiv_id": "2001.00001", "title": "First"}, {"arxiv_id": "2001.00002", "title": "Second"}]


async def test_get_code_mixed_licences_on_one_hash_withhold_the_code(load_corpus: LoadCorpus, connect: Connect) -> None:
    # The same code under a pointer-only licence anywhere is never shown, even from the open copy.
    sha = "1234567890abcdef"
    records = [
        make_record("2001.00001", "a", [make_sample(sha, repo="a/open", licence="MIT", inline_ok=True)]),
        make_record("2001.00002", "b", [make_sample(sha, repo="b/closed", licence="NONE", inline_ok=False)]),
    ]
    async with connect(load_corpus(records)) as client:
        answer = await call(client, "get_code", code_sha256=sha)
    assert sorted(m["repo"] for m in answer["matches"]) == ["a/open", "b/closed"]
    assert answer["withheld"] == "licence_restricted" and "code" not in answer
    assert answer["note"].startswith("licence_restricted:")


# -- list_samples_by_status ----------------------------------------------------------------


async def test_list_ran_honours(client: Client) -> None:
    answer = await call(client, "list_samples_by_status", status="ran_honours")
    assert answer["statuses"] == ["ran_honours"] and answer["total"] == 2
    assert [(s["repo"], s["entry"], s["paper"], s["title"]) for s in answer["samples"]] == [
        ("nyu-dl/bert-gen", "preprocess", BERT_MOUTH, BERT_MOUTH_TITLE),
        ("opqrstuvcut/BertMouth", "initialization_text", BERT_MOUTH, BERT_MOUTH_TITLE),
    ]
    assert answer["attribution"] == ATTRIBUTION
    assert "next_cursor" not in answer


@pytest.mark.parametrize(
    ("status", "total"),
    [("ran", 17), ("unverified", 13), ("ran_draft_wrong", 3), ("ran_violates", 1), ("ran_honours", 2)],
)
async def test_list_totals_by_status(client: Client, status: str, total: int) -> None:
    answer = await call(client, "list_samples_by_status", status=status, limit=100)
    assert answer["total"] == total == len(answer["samples"])
    assert {s["status"] for s in answer["samples"]} == {status}


@pytest.mark.parametrize(
    "status", [["ran_violates", "ran_draft_wrong"], "ran_violates,ran_draft_wrong", " ran_violates , RAN_DRAFT_WRONG "]
)
async def test_list_several_statuses(client: Client, status: str | list[str]) -> None:
    answer = await call(client, "list_samples_by_status", status=status)
    assert answer["statuses"] == ["ran_violates", "ran_draft_wrong"]
    assert answer["total"] == 4
    # status best first across the corpus: ran_draft_wrong before ran_violates, official first
    assert [(s["status"], s["entry"]) for s in answer["samples"]] == [
        ("ran_draft_wrong", "get_seed_sent"),
        ("ran_draft_wrong", "normalize_answer"),
        ("ran_draft_wrong", "detokenize"),
        ("ran_violates", "exact_match_score"),
    ]


@pytest.mark.parametrize(
    ("filters", "total"),
    [
        ({"licence": "NONE"}, 2),
        ({"licence": "none"}, 2),
        ({"licence": "MIT"}, 0),
        ({"inline_only": True}, 3),
        ({"repo_kind": "listed"}, 2),
        ({"repo_kind": "official", "inline_only": True}, 3),
        ({"language": "python"}, 5),
        ({"language": "rust"}, 0),
    ],
)
async def test_list_filters(client: Client, filters: dict[str, Any], total: int) -> None:
    answer = await call(client, "list_samples_by_status", status="ran_honours,ran_draft_wrong", **filters)
    assert answer["total"] == total == len(answer["samples"])


async def test_list_unverified_are_all_from_berts_icl(client: Client) -> None:
    samples = await walk(client, "list_samples_by_status", "samples", status="unverified", limit=5)
    assert len(samples) == 13
    assert {(s["paper"], s["title"]) for s in samples} == {(BERTS_ICL, BERTS_ICL_TITLE)}


@pytest.mark.parametrize("status", ["works", "ran,works", "", " , "])
async def test_list_bad_status_lists_valid_ones(client: Client, status: str) -> None:
    text = await fail(client, "list_samples_by_status", status=status)
    assert text.startswith("invalid_argument:") and VALID_STATUSES in text and "Next:" in text


async def test_list_unknown_corpus_status_is_valid(load_corpus: LoadCorpus, connect: Connect) -> None:
    corpus = load_corpus([make_record(samples=[make_sample(sha_for(1), status="ran_someday")])])
    async with connect(corpus) as client:
        answer = await call(client, "list_samples_by_status", status="ran_someday")
        text = await fail(client, "list_samples_by_status", status="nope")
    assert answer["total"] == 1
    assert "ran_someday" in text


# -- search_papers -------------------------------------------------------------------------


async def test_search_hit_shape(client: Client) -> None:
    answer = await call(client, "search_papers", query="in-context learners")
    assert answer["query"] == "in-context learners" and answer["total"] == 1
    (hit,) = answer["hits"]
    assert {key: value for key, value in hit.items() if key != "snippet"} == {
        "arxiv_id": BERTS_ICL,
        "title": BERTS_ICL_TITLE,
        "year": 2024,
        "authors": ["David Samuel"],
        "n_authors": 1,
        "tasks": ["In-Context Learning"],
        "samples": 26,
        "best_status": "ran",
    }
    assert "**" in hit["snippet"]


async def test_search_title_match_ranks_above_abstract_match(client: Client) -> None:
    # "generative" is in 2406.04823's title; 1902.04094 has only "generate"/"generations" in its abstract.
    answer = await call(client, "search_papers", query="generative")
    assert [hit["arxiv_id"] for hit in answer["hits"]] == [BERTS_ICL, BERT_MOUTH]


async def test_search_ranking_on_a_tiny_corpus(load_corpus: LoadCorpus, connect: Connect) -> None:
    records = [
        make_record("2001.00001", "abstract-only", title="Plain Title", abstract="zebra zebra zebra stripes"),
        make_record("2001.00002", "in-title", title="Zebra Stripes", abstract="about animals"),
        make_record("2001.00003", "elsewhere", title="Unrelated", abstract="nothing here"),
    ]
    async with connect(load_corpus(records)) as client:
        answer = await call(client, "search_papers", query="zebra")
    assert [hit["arxiv_id"] for hit in answer["hits"]] == ["2001.00002", "2001.00001"]
    assert answer["total"] == 2


async def test_search_finds_authors_tasks_and_methods(client: Client) -> None:
    assert [h["arxiv_id"] for h in (await call(client, "search_papers", query="Kyunghyun"))["hits"]] == [BERT_MOUTH]
    assert [h["arxiv_id"] for h in (await call(client, "search_papers", query="DeBERTa"))["hits"]] == [BERTS_ICL]
    assert [h["arxiv_id"] for h in (await call(client, "search_papers", query="WordPiece"))["hits"]] == [BERT_MOUTH]


async def test_search_no_match(client: Client) -> None:
    answer = await call(client, "search_papers", query="quantum chromodynamics")
    assert answer == {"query": "quantum chromodynamics", "total": 0, "hits": []}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"task": "language-modelling"}, [BERT_MOUTH]),
        ({"task": "Language Modeling"}, [BERT_MOUTH]),
        ({"task": "in-context-learning"}, [BERTS_ICL]),
        ({"method": "DeBERTa"}, [BERTS_ICL]),
        ({"method": "adam"}, [BERTS_ICL, BERT_MOUTH]),
        ({"method": "WordPiece"}, [BERT_MOUTH]),
        ({"framework": "mindspore"}, [BERT_MOUTH]),
        ({"framework": "PyTorch"}, [BERTS_ICL, BERT_MOUTH]),
        ({"has_samples": True}, [BERTS_ICL, BERT_MOUTH]),
        ({"has_samples": False}, []),
        ({"status": "ran_honours"}, [BERT_MOUTH]),
        ({"status": "unverified"}, [BERTS_ICL]),
        ({"official_code": True}, [BERTS_ICL, BERT_MOUTH]),
        ({"official_code": False}, []),
        ({"year_from": 2020}, [BERTS_ICL]),
        ({"year_to": 2019}, [BERT_MOUTH]),
        ({"year_from": 2019, "year_to": 2019}, [BERT_MOUTH]),
        ({"method": "adam", "status": "ran_violates"}, [BERTS_ICL]),
        ({"framework": "pytorch", "year_to": 2020}, [BERT_MOUTH]),
        ({"task": "language-modeling", "year_from": 2020}, []),
        ({"framework": "mindspore", "status": "unverified"}, []),
        (
            {"method": "Adam", "framework": "pytorch", "has_samples": True, "official_code": True, "year_from": 2019},
            [BERTS_ICL, BERT_MOUTH],
        ),
    ],
)
async def test_search_filters_browse_newest_first(client: Client, filters: dict[str, Any], expected: list[str]) -> None:
    answer = await call(client, "search_papers", query="", **filters)
    assert [hit["arxiv_id"] for hit in answer["hits"]] == expected
    assert answer["total"] == len(expected)
    assert all("snippet" not in hit for hit in answer["hits"])


@pytest.mark.parametrize(
    ("filters", "expected"),
    [({"year_to": 2019}, [BERT_MOUTH]), ({"status": "ran_violates"}, [BERTS_ICL]), ({"task": "in-context-learning", "year_to": 2019}, [])],
)
async def test_search_filters_combine_with_a_query(client: Client, filters: dict[str, Any], expected: list[str]) -> None:
    answer = await call(client, "search_papers", query="bert", **filters)
    assert [hit["arxiv_id"] for hit in answer["hits"]] == expected


async def test_search_browse_without_filters_is_newest_first(client: Client) -> None:
    answer = await call(client, "search_papers")
    assert [hit["arxiv_id"] for hit in answer["hits"]] == [BERTS_ICL, BERT_MOUTH]


async def test_search_year_range_reversed(client: Client) -> None:
    text = await fail(client, "search_papers", query="bert", year_from=2024, year_to=2019)
    assert text.startswith("invalid_argument:") and "Next:" in text


async def test_search_unknown_status_filter(client: Client) -> None:
    text = await fail(client, "search_papers", query="bert", status="works")
    assert text.startswith("invalid_argument:") and VALID_STATUSES in text


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"bert',
        'bert "generative',
        "*",
        "bert*",
        "NEAR",
        "NEAR(bert generative)",
        "bert NEAR/2 generative",
        "col:bert",
        "title:bert",
        "abstract : markov",
        "(",
        "(bert",
        "bert)",
        "AND OR NOT",
        "bert AND",
        "NOT bert",
        "",
        "   ",
        "^bert",
        "-bert",
        "+bert",
        "{title}: bert",
        "bert''",
        "\\",
        "%_",
        "🙂 bert",
        "\x00",
    ],
)
async def test_search_hostile_query_syntax_never_raises(client: Client, query: str) -> None:
    answer = await call(client, "search_papers", query=query)
    assert answer["total"] == len(answer["hits"]) <= 2


async def test_search_hostile_query_still_finds_the_words(client: Client) -> None:
    answer = await call(client, "search_papers", query='"Markov* (random')
    assert [hit["arxiv_id"] for hit in answer["hits"]] == [BERT_MOUTH]


async def test_search_hit_caps_authors_and_uses_slug(load_corpus: LoadCorpus, connect: Connect) -> None:
    record = make_record(None, "slug-only-paper", title="Zebra Paper", authors=["A", "B", "C", "D", "E"])
    async with connect(load_corpus([record])) as client:
        (hit,) = (await call(client, "search_papers", query="zebra"))["hits"]
    assert hit["slug"] == "slug-only-paper" and "arxiv_id" not in hit
    assert hit["authors"] == ["A", "B", "C"] and hit["n_authors"] == 5
    assert hit["samples"] == 0 and "best_status" not in hit


# -- corpus_stats --------------------------------------------------------------------------


async def test_corpus_stats(client: Client) -> None:
    answer = await call(client, "corpus_stats")
    assert answer == {
        "papers": 2,
        "papers_with_samples": 2,
        "samples": 36,
        "by_status": {"ran": 17, "unverified": 13, "ran_draft_wrong": 3, "ran_honours": 2, "ran_violates": 1},
        "by_repo_kind": {"official": 28, "listed": 8},
        "by_licence": {"Apache-2.0": 26, "MIT": 6, "BSD-3-Clause": 2, "NONE": 2},
        "by_language": {"python": 36},
        "snapshots": ["2025-07-28"],
        "read_at_range": ["2026-09-24T18:15:14+00:00", "2026-09-25T09:33:49+00:00"],
        "load": {
            "files_seen": 2,
            "files_read": 2,
            "records_read": 2,
            "records_indexed": 2,
            "rejected": 0,
            "warnings": 0,
            "by_reason": {},
            "first_problems": [],
        },
        "attribution": ATTRIBUTION,
    }


async def test_corpus_stats_reports_load_problems(load_corpus: LoadCorpus, connect: Connect, tmp_path: Any) -> None:
    corpus = load_corpus([make_record(syntology=False), {"title": "no key at all"}])
    async with connect(corpus) as client:
        answer = await call(client, "corpus_stats")
    assert answer["papers"] == 1 and answer["papers_with_samples"] == 0 and answer["samples"] == 0
    assert answer["load"]["rejected"] == 1 and answer["load"]["by_reason"] == {"no_key": 1}
    assert len(answer["load"]["first_problems"]) == 1 and "no_key" in answer["load"]["first_problems"][0]


# -- paging --------------------------------------------------------------------------------

PAGED_CALLS = [
    ("get_harvested_code_for_paper", "samples", {"arxiv_id": BERTS_ICL}),
    ("get_harvested_code_for_paper", "samples", {"arxiv_id": BERT_MOUTH}),
    ("get_harvested_code_for_paper", "samples", {"arxiv_id": BERT_MOUTH, "status": "ran,ran_honours"}),
    ("list_samples_by_status", "samples", {"status": "ran,unverified,ran_honours"}),
    ("list_samples_by_status", "samples", {"status": ["ran_draft_wrong", "ran_violates", "ran_honours"], "inline_only": True}),
    ("search_papers", "hits", {"query": ""}),
    ("search_papers", "hits", {"query": "bert"}),
]


@pytest.mark.parametrize("limit", [1, 3, 7])
@pytest.mark.parametrize(("tool", "key", "arguments"), PAGED_CALLS)
async def test_walking_pages_gives_every_item_once_in_order(
    client: Client, tool: str, key: str, arguments: dict[str, Any], limit: int
) -> None:
    whole = (await call(client, tool, **arguments, limit=100))[key]
    assert whole
    walked = await walk(client, tool, key, **arguments, limit=limit)
    assert walked == whole
    assert len({json.dumps(item, sort_keys=True) for item in walked}) == len(walked)


async def test_walking_pages_of_find_papers_for_repo(load_corpus: LoadCorpus, connect: Connect) -> None:
    link = {"repo_url": "https://github.com/shared/lib", "is_official": 0, "framework": "jax"}
    records = [make_record(f"2001.{i:05d}", f"paper-{i}", code_links=[link]) for i in range(7)]
    async with connect(load_corpus(records)) as client:
        whole = await call(client, "find_papers_for_repo", repo="shared/lib", limit=100)
        walked = await walk(client, "find_papers_for_repo", "papers", repo="shared/lib", limit=3)
    assert whole["total"] == 7
    assert walked == whole["papers"]
    assert [paper["arxiv_id"] for paper in walked] == [f"2001.{i:05d}" for i in range(7)]


async def test_page_sizes_and_last_page(client: Client) -> None:
    first = await call(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=10)
    assert len(first["samples"]) == 10 and first["matched"] == 26
    second = await call(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=10, cursor=first["next_cursor"])
    third = await call(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=10, cursor=second["next_cursor"])
    assert len(second["samples"]) == 10 and len(third["samples"]) == 6
    assert "next_cursor" not in third


async def test_cursor_is_stable_for_the_same_query(client: Client) -> None:
    first = await call(client, "list_samples_by_status", status="ran", limit=3)
    again = await call(client, "list_samples_by_status", status="ran", limit=3)
    assert first["next_cursor"] == again["next_cursor"]
    page = await call(client, "list_samples_by_status", status="ran", limit=3, cursor=first["next_cursor"])
    repeat = await call(client, "list_samples_by_status", status="ran", limit=3, cursor=first["next_cursor"])
    assert page == repeat


async def test_cursor_carries_over_between_forms_of_the_same_statuses(client: Client) -> None:
    first = await call(client, "list_samples_by_status", status="ran,unverified", limit=5)
    same = await call(client, "list_samples_by_status", status=["ran", "unverified"], limit=5, cursor=first["next_cursor"])
    assert same == await call(client, "list_samples_by_status", status="ran,unverified", limit=5, cursor=first["next_cursor"])
    assert same["samples"][0] != first["samples"][0]


def _tamper(cursor: str) -> str:
    return cursor[:-1] + ("A" if cursor[-1] != "A" else "B")


@pytest.mark.parametrize("mangle", [_tamper, lambda c: c[:-2], lambda c: c + "AAAA", lambda c: "x", lambda c: "not a cursor!"])
async def test_tampered_cursor_is_invalid_argument(client: Client, mangle: Callable[[str], str]) -> None:
    first = await call(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=3)
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=3, cursor=mangle(first["next_cursor"]))
    assert text.startswith("invalid_argument:") and "cursor" in text and "Next:" in text


@pytest.mark.parametrize(
    ("issued", "replayed"),
    [
        ({"arxiv_id": BERTS_ICL}, {"arxiv_id": BERT_MOUTH}),
        ({"arxiv_id": BERT_MOUTH}, {"arxiv_id": BERT_MOUTH, "status": "ran"}),
        ({"arxiv_id": BERT_MOUTH, "status": "ran"}, {"arxiv_id": BERT_MOUTH, "status": "ran_honours"}),
        ({"arxiv_id": BERT_MOUTH}, {"arxiv_id": BERT_MOUTH, "repo_kind": "listed"}),
        ({"arxiv_id": BERT_MOUTH}, {"arxiv_id": BERT_MOUTH, "limit": 4}),
    ],
)
async def test_cursor_from_another_query_is_invalid_argument(client: Client, issued: dict[str, Any], replayed: dict[str, Any]) -> None:
    first = await call(client, "get_harvested_code_for_paper", **{"limit": 3, **issued})
    text = await fail(client, "get_harvested_code_for_paper", **{"limit": 3, **replayed, "cursor": first["next_cursor"]})
    assert text.startswith("invalid_argument:") and "Next:" in text


async def test_cursor_from_another_tool_is_invalid_argument(client: Client) -> None:
    samples = await call(client, "list_samples_by_status", status="ran", limit=3)
    text = await fail(client, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=3, cursor=samples["next_cursor"])
    assert text.startswith("invalid_argument:")
    hits = await call(client, "search_papers", query="", limit=1)
    text = await fail(client, "search_papers", query="bert", limit=1, cursor=hits["next_cursor"])
    assert text.startswith("invalid_argument:")
    text = await fail(client, "list_samples_by_status", status="unverified", limit=3, cursor=samples["next_cursor"])
    assert text.startswith("invalid_argument:")


LIMITED_CALLS = [
    ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH}),
    ("list_samples_by_status", {"status": "ran"}),
    ("search_papers", {"query": "bert"}),
    ("find_papers_for_repo", {"repo": "nyu-dl/bert-gen"}),
]


@pytest.mark.parametrize("limit", [0, -1, 101, 10_000])
@pytest.mark.parametrize(("tool", "arguments"), LIMITED_CALLS)
async def test_limit_out_of_range_is_invalid_argument(client: Client, tool: str, arguments: dict[str, Any], limit: int) -> None:
    text = await fail(client, tool, **arguments, limit=limit)
    assert text.startswith("invalid_argument:") and "limit" in text and "Next:" in text


@pytest.mark.parametrize("limit", [1, 100])
@pytest.mark.parametrize(("tool", "arguments"), LIMITED_CALLS)
async def test_limit_bounds_are_accepted(client: Client, tool: str, arguments: dict[str, Any], limit: int) -> None:
    await call(client, tool, **arguments, limit=limit)


# -- error shape ---------------------------------------------------------------------------

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


@pytest.mark.parametrize(
    "status",
    [["ran"] * 21, ",".join(["ran"] * 21), ["ran", "x" * 65], "ran," + "x" * 65],
    ids=["21-items", "21-comma-separated", "long-item", "long-comma-separated"],
)
async def test_an_oversized_status_list_is_refused(client: Client, status: str | list[str]) -> None:
    for tool, arguments in (("list_samples_by_status", {"status": status}), ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH, "status": status})):
        text = await fail(client, tool, **arguments)
        assert text.startswith("invalid_argument: status takes at most 20 values of at most 64 characters") and "Next:" in text


async def test_no_answer_reveals_where_the_server_keeps_its_files(tmp_path: Any, connect: Connect) -> None:
    records = write_records(tmp_path / "secret-place" / "records", [make_record(), {"title": "no key"}])
    async with connect(Corpus.load([records])) as client:
        stats = await call(client, "corpus_stats")
        report = (await client.read_resource("corpus://load-report")).contents[0].text  # type: ignore[union-attr]
    assert stats["load"]["first_problems"] == ["error no_key 001.json: record has neither a valid arxiv_id nor a /paper/<slug> url"]
    assert "secret-place" not in json.dumps(stats) and "secret-place" not in report
    assert json.loads(report)["problems"][0]["path"] == "001.json"
