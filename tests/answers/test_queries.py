"""Every tool, resource, prompt and completion at the `queries` layer, in-process on the real records and on
small corpora: the answers the model reads, and the `QueryError` text of every refusal.

Counts are exact: the bundled records are fixed (`records/README.md` lists them, with their samples). Whole answers
are asserted where they are small. What the MCP edge adds (argument validation, the wire shape, errors as results) is
tested in test_mcp_roundtrip.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import orjson
import pytest

from papercode.answers import checks, completions, overview, prompts, queries, resolving
from papercode.corpus.stages import Corpus
from papercode.verified.materialize import SampleOutcome
from tests.support.records import (
    BERT_MOUTH,
    BERT_MOUTH_ORDER,
    BERT_MOUTH_TITLE,
    BERTS_ICL,
    BERTS_ICL_TITLE,
    CLAIM,
    make_record,
    make_sample,
    sha_for,
    write_records,
)
from tests.support.tool_answers import answer, code_answer, code_refusal, flat_samples, refusal, shown

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]

ATTRIBUTION = "CC BY-SA 4.0, Code-with-Papers (codewithpapers.app/attribution); not affiliated with Papers with Code"
REAL_CLAIM = (
    "Per-sample execution status on synthesized fixtures; not a correctness claim about the paper. Samples come from "
    "repositories linked to the paper, official or community; repo_kind says which."
)
VALID_STATUSES = "valid: ran_honours, ran, ran_draft_wrong, ran_violates, unverified"
# The first sample of 1902.04094, every field said (`tool_answers.flat_samples`).
PREPROCESS_SAMPLE = {
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

# 2406.04823's one code link, as answers show it.
BERTS_ICL_CODE_LINK = {
    "repo": "https://github.com/ltgoslo/bert-in-context",
    "official": True,
    "framework": "pytorch",
    "mentioned_in_paper": True,
    "reach": "ok",
    "licence": "Apache-2.0",
}


def pages(corpus: Corpus, tool: str, **arguments: Any) -> list[dict[str, Any]]:
    """Every page of a paged answer, following next_cursor to the end."""
    found: list[dict[str, Any]] = []
    cursor = None
    for _ in range(200):
        page = answer(corpus, tool, **arguments, **({"cursor": cursor} if cursor else {}))
        found.append(page)
        cursor = page.get("next_cursor")
        if cursor is None:
            return found
    raise AssertionError("paging did not end")


def items(page: dict[str, Any], key: str) -> list[Any]:
    """A page's items: its samples one by one (`flat_samples`), or its `key` list."""
    return flat_samples(page) if key == "samples" else list(page[key])


def walk(corpus: Corpus, tool: str, key: str, **arguments: Any) -> list[Any]:
    """Every item of a paged answer, page after page."""
    return [item for page in pages(corpus, tool, **arguments) for item in items(page, key)]


def harvested(corpus: Corpus, arxiv_id: str, **arguments: Any) -> dict[str, Any]:
    return answer(corpus, "get_harvested_code_for_paper", arxiv_id=arxiv_id, **arguments)


def paper(corpus: Corpus, asked: str | list[str]) -> dict[str, Any]:
    return answer(corpus, "get_paper", paper=asked)


def listed(corpus: Corpus, status: str | list[str], **arguments: Any) -> dict[str, Any]:
    return answer(corpus, "list_samples_by_status", status=status, **arguments)


def search(corpus: Corpus, query: str = "", **arguments: Any) -> dict[str, Any]:
    return answer(corpus, "search_papers", query=query, **arguments)


def repo_papers(corpus: Corpus, repo: str, **arguments: Any) -> dict[str, Any]:
    return answer(corpus, "find_papers_for_repo", repo=repo, **arguments)


# -- get_harvested_code_for_paper -----------------------------------------------------------


def test_harvested_bert_mouth_counts(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH)
    assert got["counts"] == {
        "total": 10,
        "by_status": {"ran": 6, "ran_draft_wrong": 2, "ran_honours": 2},
        "by_repo_kind": {"official": 2, "listed": 8},
        "pointer_only": 2,
    }
    assert "matched" not in got  # every sample matches: counts.total
    assert len(flat_samples(got)) == 10
    assert "next_cursor" not in got
    assert "note" not in got


def test_harvested_bert_mouth_default_order(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH)
    assert [(s["repo"], s["status"], s["entry"]) for s in flat_samples(got)] == BERT_MOUTH_ORDER


def test_harvested_bert_mouth_envelope(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH)
    assert got["query"] == {"asked": BERT_MOUTH}  # resolved to what was asked
    assert got["paper"] == {"arxiv_id": BERT_MOUTH, "title": BERT_MOUTH_TITLE}
    assert got["elsewhere"] == "get_paper: date, links and claim (what statuses mean)" and "claim" not in got
    assert got["read_at"] == "2026-09-25T09:33:49+00:00"
    assert got["attribution"] == ATTRIBUTION


def test_harvested_sample_fields(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH, limit=1)
    assert flat_samples(got) == [PREPROCESS_SAMPLE]
    # Grouped: the repository's fields once, the file's path once, each sample what is its own (its contract check and
    # verification level are what ran_honours says, and python and inline_ok true are the defaults: left out).
    assert got["samples"] == [
        {
            "repo": "nyu-dl/bert-gen",
            "repo_kind": "official",
            "licence": "BSD-3-Clause",
            "files": {"generate.py": [{"code_sha256": "2a890c3f8ff19f47", "entry": "preprocess", "status": "ran_honours"}]},
        }
    ]


def test_harvested_groups_by_repository_then_file(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH)
    assert [
        (group["repo"], group.get("inline_ok", True), {path: len(samples) for path, samples in group["files"].items()})
        for group in got["samples"]
    ] == [
        ("nyu-dl/bert-gen", True, {"generate.py": 2}),
        ("opqrstuvcut/BertMouth", False, {"bert_mouth.py": 1}),
        (
            "seanrjohnson/protein_gibbs_sampler",
            True,
            {"src/pgen/esm_msa_sampler.py": 1, "src/pgen/esm_sampler.py": 1, "src/pgen/models.py": 1, "src/pgen/pgen_msa_revised.py": 3},
        ),
        ("swastishreya/BERT_as_a_conditional_generative_model", False, {"bert-babble.py": 1}),
    ]


def test_harvested_bert_mouth_pointer_only_samples(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH)
    restricted = [(s["repo"], s["licence"]) for s in flat_samples(got) if not s["inline_ok"]]
    assert restricted == [("opqrstuvcut/BertMouth", "NONE"), ("swastishreya/BERT_as_a_conditional_generative_model", "NONE")]
    assert [s["repo"] for s in flat_samples(got) if s["repo_kind"] == "official"] == ["nyu-dl/bert-gen"] * 2


def test_harvested_berts_icl_counts_and_first_page(corpus: Corpus) -> None:
    got = harvested(corpus, BERTS_ICL)
    assert got["counts"] == {
        "total": 26,
        "by_status": {"ran": 11, "unverified": 13, "ran_violates": 1, "ran_draft_wrong": 1},
        "by_repo_kind": {"official": 26},
    }  # pointer_only 0: left out
    assert "matched" not in got
    assert len(flat_samples(got)) == 25  # the default limit
    assert "next_cursor" in got
    assert got["paper"]["title"] == BERTS_ICL_TITLE


RANK = {"ran_honours": 0, "ran": 1, "ran_draft_wrong": 2, "ran_violates": 3, "unverified": 4}


@pytest.mark.parametrize("limit", [25, 10, 100])
def test_harvested_berts_icl_status_order(corpus: Corpus, limit: int) -> None:
    walked = pages(corpus, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL, limit=limit)
    samples = [sample for page in walked for sample in flat_samples(page)]
    assert sorted(RANK[s["status"]] for s in samples) == [1] * 11 + [2, 3] + [4] * 13
    assert {s["repo"] for s in samples} == {"ltgoslo/bert-in-context"}
    assert all(s["licence"] == "Apache-2.0" and s["inline_ok"] for s in samples)
    for page in walked:  # best first: the files by their best sample, each file's samples in order
        files = [[RANK[sample["status"]] for sample in file] for group in page["samples"] for file in group["files"].values()]
        assert all(file == sorted(file) for file in files)
        assert [file[0] for file in files] == sorted(file[0] for file in files)
    if limit < 26:  # a page is the next samples of the paper's order: none on a later page before one on an earlier
        ranks = [[RANK[sample["status"]] for sample in flat_samples(page)] for page in walked]
        assert all(max(earlier) <= min(later) for earlier, later in pairwise(ranks))


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
def test_harvested_status_filter(corpus: Corpus, status: str | list[str], expected: list[str]) -> None:
    got = harvested(corpus, BERT_MOUTH, status=status)
    assert [s["entry"] for s in flat_samples(got)] == expected
    assert got["matched"] == len(expected)
    assert got["counts"]["total"] == 10  # counts always cover every sample of the paper


def test_harvested_repo_kind_filter(corpus: Corpus) -> None:
    got = harvested(corpus, BERT_MOUTH, repo_kind="official")
    assert [s["entry"] for s in flat_samples(got)] == ["preprocess", "get_seed_sent"]
    assert got["matched"] == 2


def test_harvested_filters_matching_nothing_say_so(corpus: Corpus) -> None:
    got = harvested(corpus, BERTS_ICL, status="ran_honours")
    assert got["samples"] == [] and got["matched"] == 0
    assert "no samples match" in got["note"]


def test_harvested_unknown_status_lists_valid_ones(corpus: Corpus) -> None:
    text = refusal(harvested, corpus, BERT_MOUTH, status="works")
    assert text.startswith("invalid_argument:")
    assert "'works'" in text and VALID_STATUSES in text and "Next:" in text


def test_harvested_unknown_repo_kind(corpus: Corpus) -> None:
    text = refusal(harvested, corpus, BERT_MOUTH, repo_kind="upstream")
    assert text.startswith("invalid_argument:") and "official" in text and "community" in text


def test_harvested_unknown_paper(corpus: Corpus) -> None:
    text = refusal(harvested, corpus, "9999.99999")
    assert text.startswith("not_found:")
    assert "9999.99999" in text and "Next:" in text and "search_papers" in text


def test_harvested_unknown_old_style_paper(corpus: Corpus) -> None:
    text = refusal(harvested, corpus, "hep-th/9901001v2")
    assert text.startswith("not_found:") and "hep-th/9901001" in text and "Next:" in text


@pytest.mark.parametrize("arxiv_id", ["", "   ", "?!", "x" * 400])
def test_harvested_bad_id_is_invalid_argument(corpus: Corpus, arxiv_id: str) -> None:
    text = refusal(harvested, corpus, arxiv_id)
    assert text.startswith("invalid_argument:") and "Next:" in text


def test_harvested_paper_without_samples(load_corpus: LoadCorpus) -> None:
    got = harvested(load_corpus([make_record("2001.00001", "no-harvest", syntology=False)]), "2001.00001")
    assert got["counts"] == {"total": 0, "by_status": {}, "by_repo_kind": {}}
    assert got["samples"] == [] and "matched" not in got
    assert "no harvested code samples" in got["note"]
    assert "read_at" not in got and "next_cursor" not in got


def test_harvested_paper_with_empty_harvest(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record("2001.00001", "empty-harvest", samples=[])])
    got = harvested(corpus, "2001.00001")
    assert got["samples"] == [] and got["counts"]["total"] == 0
    assert "no harvested code samples" in got["note"]
    assert paper(corpus, "2001.00001")["claim"] == CLAIM


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
def test_harvested_accepts_every_arxiv_form(corpus: Corpus, asked: str) -> None:
    got = harvested(corpus, asked)
    assert got["query"] == ({"asked": asked} if asked == BERT_MOUTH else {"asked": asked, "resolved": BERT_MOUTH})
    assert got["counts"]["total"] == 10


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
def test_get_paper_accepts_ids_and_slugs(corpus: Corpus, asked: str) -> None:
    got = paper(corpus, asked)
    assert got["query"] == ({"asked": asked} if asked == BERT_MOUTH else {"asked": asked, "resolved": BERT_MOUTH})
    assert got["title"] == BERT_MOUTH_TITLE


def test_old_style_paper_resolves(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record("hep-th/9901001", "old-style", [make_sample(sha_for("old"))])])
    for asked in ("hep-th/9901001", "hep-th/9901001v2", "arXiv:hep-th/9901001", "https://arxiv.org/abs/hep-th/9901001v1"):
        got = harvested(corpus, asked)
        assert got["query"] == ({"asked": asked} if asked == "hep-th/9901001" else {"asked": asked, "resolved": "hep-th/9901001"})
        assert got["counts"]["total"] == 1


def test_slug_resolves_paper_without_arxiv_id(load_corpus: LoadCorpus) -> None:
    got = harvested(load_corpus([make_record(None, "only-a-slug", [make_sample(sha_for("slug"))])]), "/paper/only-a-slug")
    assert got["query"] == {"asked": "/paper/only-a-slug", "resolved": "only-a-slug"}
    assert got["paper"]["slug"] == "only-a-slug" and "arxiv_id" not in got["paper"]


def test_a_number_that_is_no_arxiv_id_is_looked_up_as_its_text(corpus: Corpus) -> None:
    # What the edge makes of a bare JSON number 1902 (test_mcp_roundtrip.py sends the number itself).
    assert refusal(paper, corpus, "1902").startswith("not_found: no paper with slug 1902 ")


# -- get_paper -----------------------------------------------------------------------------


def test_get_paper_bert_mouth(corpus: Corpus) -> None:
    got = paper(corpus, BERT_MOUTH)
    assert got["authors"] == ["Alex Wang", "Kyunghyun Cho"] and got["n_authors"] == 2
    assert got["date"] == "2019-02-11"
    assert got["proceeding"] == "WS 2019 6"
    assert got["abstract"].startswith("We show that BERT (Devlin et al., 2018) is a Markov random field language")
    assert "abstract_truncated" not in got
    assert got["url_abs"] == "http://arxiv.org/abs/1902.04094v2"
    assert got["url_pdf"] == "http://arxiv.org/pdf/1902.04094v2.pdf"
    assert got["tasks"] == ["Language Modeling"]  # language-modeling / language-modelling merged
    assert len(got["methods"]) == 10 and got["more_methods"] == 4
    assert got["samples"] == {
        "total": 10,
        "by_status": {"ran_honours": 2, "ran_draft_wrong": 2, "ran": 6},
        "by_repo_kind": {"official": 2, "listed": 8},
        "pointer_only": 2,
    }
    assert got["claim"] == REAL_CLAIM
    assert got["snapshot"] == "2025-07-28"
    assert got["read_at"] == "2026-09-25T09:33:49+00:00"
    assert got["attribution"] == ATTRIBUTION


def test_get_paper_code_links_official_first_and_capped(corpus: Corpus) -> None:
    got = paper(corpus, BERT_MOUTH)
    links = got["code_links"]
    assert len(links) == 10 and got["more_code_links"] == 3  # 13 code links
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
    assert not any("official" in link for link in links[2:])  # absent: false


def test_get_paper_berts_icl(corpus: Corpus) -> None:
    got = paper(corpus, BERTS_ICL)
    assert got["title"] == BERTS_ICL_TITLE
    assert got["authors"] == ["David Samuel"] and got["n_authors"] == 1
    assert got["tasks"] == ["In-Context Learning"]
    assert len(got["methods"]) == 10 and got["more_methods"] == 9
    assert got["code_links"] == [BERTS_ICL_CODE_LINK]
    assert "more_code_links" not in got and "proceeding" not in got
    assert got["samples"]["total"] == 26


def test_get_paper_caps_authors_and_abstract(load_corpus: LoadCorpus) -> None:
    record = make_record(authors=[f"Author {i}" for i in range(300)], abstract="word " * 1_000)
    got = paper(load_corpus([record]), "2001.00001")
    assert got["authors"] == [f"Author {i}" for i in range(10)] and got["n_authors"] == 300
    assert len(got["abstract"]) == 2_000 and got["abstract_truncated"] is True


@pytest.mark.parametrize("asked", ["9999.99999", "no-such-slug", "/paper/no-such-slug", "https://paperswithcode.com/paper/no-such-slug"])
def test_get_paper_unknown(corpus: Corpus, asked: str) -> None:
    text = refusal(paper, corpus, asked)
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
def test_find_papers_for_repo_forms(corpus: Corpus, repo: str) -> None:
    assert repo_papers(corpus, repo) == {
        "query": {"asked": repo} if repo == "nyu-dl/bert-gen" else {"asked": repo, "resolved": "nyu-dl/bert-gen"},
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


def test_find_papers_for_community_repo_with_samples(corpus: Corpus) -> None:
    assert repo_papers(corpus, "seanrjohnson/protein_gibbs_sampler")["papers"] == [
        {
            "arxiv_id": BERT_MOUTH,
            "title": BERT_MOUTH_TITLE,
            "is_official": False,
            "framework": "pytorch",
            "samples": 6,
            "statuses": {"ran": 6},
        }
    ]


def test_find_papers_for_linked_repo_without_samples(corpus: Corpus) -> None:
    assert repo_papers(corpus, "https://github.com/kyunghyuncho/bert-gen")["papers"] == [
        {"arxiv_id": BERT_MOUTH, "title": BERT_MOUTH_TITLE, "is_official": True, "framework": "pytorch", "samples": 0, "statuses": {}}
    ]


def test_find_papers_for_repo_from_tree_link(corpus: Corpus) -> None:
    got = repo_papers(corpus, "2023-MindSpore-1/ms-code-12")
    assert [found["arxiv_id"] for found in got["papers"]] == [BERT_MOUTH]
    assert got["papers"][0]["framework"] == "mindspore"


def test_find_papers_for_unknown_repo(corpus: Corpus) -> None:
    text = refusal(repo_papers, corpus, "someone/nothing")
    assert text.startswith("not_found:") and "someone/nothing" in text and "Next:" in text


@pytest.mark.parametrize("repo", ["bert-gen", "", "https://github.com/nyu-dl"])
def test_find_papers_for_malformed_repo(corpus: Corpus, repo: str) -> None:
    text = refusal(repo_papers, corpus, repo)
    assert text.startswith("invalid_argument:") and "Next:" in text


def test_find_papers_for_repo_official_first(load_corpus: LoadCorpus) -> None:
    link = {"repo_url": "https://github.com/shared/lib", "is_official": 0, "framework": "jax"}
    records = [
        make_record("2001.00001", "community-use", code_links=[link]),
        make_record("2001.00002", "many-samples", [make_sample(sha_for(i), repo="shared/lib", repo_kind="listed") for i in range(3)]),
        make_record("2001.00003", "the-origin", code_links=[{**link, "is_official": 1}]),
    ]
    got = repo_papers(load_corpus(records), "shared/lib")
    assert [(p["arxiv_id"], p["is_official"], p["samples"]) for p in got["papers"]] == [
        ("2001.00003", True, 0),
        ("2001.00002", False, 3),
        ("2001.00001", False, 0),
    ]


# -- get_code (no code store, no downloads: test_verified_code.py has both) -----------------


@pytest.mark.anyio
async def test_get_code_offline_with_an_empty_store_is_not_materialized(corpus: Corpus) -> None:
    got = await code_answer(corpus, "2a890c3f8ff19f47")
    assert got["query"] == {"asked": "2a890c3f8ff19f47"}
    assert got["matches"] == [
        {
            "entry": "preprocess",
            "repo": "nyu-dl/bert-gen",
            "repo_kind": "official",
            "path": "generate.py",
            "status": "ran_honours",
            "licence": "BSD-3-Clause",
            "file_url": "https://github.com/nyu-dl/bert-gen/blob/HEAD/generate.py",
            "papers": [{"arxiv_id": BERT_MOUTH, "title": BERT_MOUTH_TITLE}],
        }
    ]
    assert got["withheld"] == "not_materialized" and "code" not in got and "verified" not in got
    assert got["note"].startswith("not_materialized:") and "Next:" in got["note"]


@pytest.mark.anyio
@pytest.mark.parametrize("sha", ["992ab7ae4b4bf55c", "013a68b0ac4716fe"])
async def test_get_code_pointer_only_sample_is_licence_restricted(corpus: Corpus, sha: str) -> None:
    got = await code_answer(corpus, sha)
    (match,) = got["matches"]
    assert match["inline_ok"] is False and match["licence"] == "NONE"
    assert got["withheld"] == "licence_restricted" and "code" not in got
    assert got["note"].startswith("licence_restricted:") and got["note"].endswith(
        "Next: do not copy or reproduce this code; link to file_url."
    )


@pytest.mark.anyio
async def test_get_code_never_returns_code_text_without_a_store(corpus: Corpus) -> None:
    shas = [row.code_sha256 for found in corpus.index.papers for row in corpus.index.samples_of(found)]
    assert len(shas) == 36
    for sha in shas:
        got = await code_answer(corpus, sha)
        assert "code" not in got and got["withheld"] in ("licence_restricted", "not_materialized")
        if got["withheld"] == "not_materialized":  # the one way to it: the command that stores it, for its repository
            assert f"`papercode materialize --fetch --repo {got['matches'][0]['repo']}`" in got["note"], got["note"]


@pytest.mark.anyio
@pytest.mark.parametrize("asked", ["992ab7ae", "992AB7AE4B", " 992ab7ae4b4bf55c ", "992ab7ae4b4bf55c" + "0" * 48])
async def test_get_code_prefix_forms(corpus: Corpus, asked: str) -> None:
    got = await code_answer(corpus, asked)
    assert got["query"] == {"asked": asked, "resolved": "992ab7ae4b4bf55c"}
    assert [m["entry"] for m in got["matches"]] == ["detokenize"]


@pytest.mark.anyio
@pytest.mark.parametrize("asked", ["zz", "992ab7ag", "0x992ab7ae", "", "992ab7ae-4b4b", "g" * 16, "186665116400000.0"])
async def test_get_code_non_hex(corpus: Corpus, asked: str) -> None:
    text = await code_refusal(corpus, asked)
    assert text.startswith("invalid_argument:") and "hex" in text and "Next:" in text


@pytest.mark.anyio
@pytest.mark.parametrize("asked", ["1e", "1ecf520", "2"])
async def test_get_code_short_prefix(corpus: Corpus, asked: str) -> None:
    text = await code_refusal(corpus, asked)
    assert text.startswith("invalid_argument:") and "8" in text and "Next:" in text


@pytest.mark.anyio
async def test_get_code_unknown_hash(corpus: Corpus) -> None:
    text = await code_refusal(corpus, "deadbeefdeadbeef")
    assert text.startswith("not_found:") and "Next:" in text


@pytest.mark.anyio
async def test_get_code_ambiguous_prefix_lists_candidates(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus(
        [
            make_record("2001.00001", "first", [make_sample("abcdef0100000000", entry="one")]),
            make_record("2001.00002", "second", [make_sample("abcdef0199999999", entry="two")]),
        ]
    )
    text = await code_refusal(corpus, "abcdef01")
    assert text.startswith("ambiguous:")
    assert "abcdef0100000000" in text and "abcdef0199999999" in text and "Next:" in text
    got = await code_answer(corpus, "abcdef019")
    assert [m["entry"] for m in got["matches"]] == ["two"]


@pytest.mark.anyio
async def test_get_code_shared_hash_lists_every_paper(load_corpus: LoadCorpus) -> None:
    sample = make_sample("1234567890abcdef", repo="shared/lib", path="lib.py", entry="f")
    records = [make_record("2001.00001", "first", [sample], title="First"), make_record("2001.00002", "second", [sample], title="Second")]
    (match,) = (await code_answer(load_corpus(records), "1234567890abcdef"))["matches"]
    assert match["papers"] == [{"arxiv_id": "2001.00001", "title": "First"}, {"arxiv_id": "2001.00002", "title": "Second"}]


@pytest.mark.anyio
async def test_get_code_mixed_licences_on_one_hash_withhold_the_code(load_corpus: LoadCorpus) -> None:
    # The same code under a pointer-only licence anywhere is never shown, even from the open copy.
    sha = "1234567890abcdef"
    records = [
        make_record("2001.00001", "a", [make_sample(sha, repo="a/open", licence="MIT", inline_ok=True)]),
        make_record("2001.00002", "b", [make_sample(sha, repo="b/closed", licence="NONE", inline_ok=False)]),
    ]
    got = await code_answer(load_corpus(records), sha)
    assert sorted(m["repo"] for m in got["matches"]) == ["a/open", "b/closed"]
    assert got["withheld"] == "licence_restricted" and "code" not in got
    assert got["note"].startswith("licence_restricted:")


# -- list_samples_by_status ----------------------------------------------------------------


def test_list_ran_honours(corpus: Corpus) -> None:
    got = listed(corpus, "ran_honours")
    assert got["statuses"] == ["ran_honours"] and got["total"] == 2
    assert [(s["repo"], s["entry"], s["paper"], s["title"]) for s in flat_samples(got)] == [
        ("nyu-dl/bert-gen", "preprocess", BERT_MOUTH, BERT_MOUTH_TITLE),
        ("opqrstuvcut/BertMouth", "initialization_text", BERT_MOUTH, BERT_MOUTH_TITLE),
    ]
    assert got["attribution"] == ATTRIBUTION
    assert "next_cursor" not in got


@pytest.mark.parametrize(
    ("status", "total"),
    [("ran", 17), ("unverified", 13), ("ran_draft_wrong", 3), ("ran_violates", 1), ("ran_honours", 2)],
)
def test_list_totals_by_status(corpus: Corpus, status: str, total: int) -> None:
    got = listed(corpus, status, limit=100)
    assert got["total"] == total == len(flat_samples(got))
    assert {s["status"] for s in flat_samples(got)} == {status}
    assert not any(
        "status" in sample for group in got["papers"] for repo in group["samples"] for file in repo["files"].values() for sample in file
    )


@pytest.mark.parametrize(
    "status", [["ran_violates", "ran_draft_wrong"], "ran_violates,ran_draft_wrong", " ran_violates , RAN_DRAFT_WRONG "]
)
def test_list_several_statuses(corpus: Corpus, status: str | list[str]) -> None:
    got = listed(corpus, status)
    assert got["statuses"] == ["ran_violates", "ran_draft_wrong"]
    assert got["total"] == 4
    # Status best first across the corpus (ran_draft_wrong before ran_violates, official first), then by paper: a
    # paper's samples are said together, where its first comes.
    assert [(s["paper"], s["status"], s["entry"]) for s in flat_samples(got)] == [
        (BERT_MOUTH, "ran_draft_wrong", "get_seed_sent"),
        (BERT_MOUTH, "ran_draft_wrong", "detokenize"),
        (BERTS_ICL, "ran_draft_wrong", "normalize_answer"),
        (BERTS_ICL, "ran_violates", "exact_match_score"),
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
def test_list_filters(corpus: Corpus, filters: dict[str, Any], total: int) -> None:
    got = listed(corpus, "ran_honours,ran_draft_wrong", **filters)
    assert got["total"] == total == len(flat_samples(got))


def test_list_unverified_are_all_from_berts_icl(corpus: Corpus) -> None:
    samples = walk(corpus, "list_samples_by_status", "samples", status="unverified", limit=5)
    assert len(samples) == 13
    assert {(s["paper"], s["title"]) for s in samples} == {(BERTS_ICL, BERTS_ICL_TITLE)}


@pytest.mark.parametrize("status", ["works", "ran,works", "", " , "])
def test_list_bad_status_lists_valid_ones(corpus: Corpus, status: str) -> None:
    text = refusal(listed, corpus, status)
    assert text.startswith("invalid_argument:") and VALID_STATUSES in text and "Next:" in text


def test_list_unknown_corpus_status_is_valid(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record(samples=[make_sample(sha_for(1), status="ran_someday")])])
    assert listed(corpus, "ran_someday")["total"] == 1
    assert "ran_someday" in refusal(listed, corpus, "nope")


def test_list_says_a_single_status_once(corpus: Corpus) -> None:
    assert listed(corpus, "ran_honours")["papers"] == [
        {
            "paper": BERT_MOUTH,
            "title": BERT_MOUTH_TITLE,
            "samples": [
                {
                    "repo": "nyu-dl/bert-gen",
                    "repo_kind": "official",
                    "licence": "BSD-3-Clause",
                    "files": {"generate.py": [{"code_sha256": "2a890c3f8ff19f47", "entry": "preprocess"}]},
                },
                {
                    "repo": "opqrstuvcut/BertMouth",
                    "repo_kind": "listed",
                    "licence": "NONE",
                    "inline_ok": False,
                    "files": {"bert_mouth.py": [{"code_sha256": "013a68b0ac4716fe", "entry": "initialization_text"}]},
                },
            ],
        }
    ]
    several = listed(corpus, "ran_honours,ran_violates")
    assert [sample["status"] for sample in flat_samples(several)] == ["ran_honours", "ran_honours", "ran_violates"]


def test_samples_of_a_repository_that_differ_in_what_it_says_are_grouped_apart(load_corpus: LoadCorpus) -> None:
    # A repository's group says its licence, inline_ok and language for every sample in it: samples that differ in
    # one make a group of their own. What a sample says against its status is said by the sample.
    samples = [
        make_sample(sha_for("a"), entry="a", path="x.py"),
        make_sample(sha_for("b"), entry="b", path="x.py", inline_ok=False),
        make_sample(sha_for("c"), entry="c", path="x.py", licence="Apache-2.0"),
        make_sample(sha_for("d"), entry="d", path="x.ipynb", language="jupyter"),
        make_sample(sha_for("e"), entry="e", path="y.py", language=None, licence=None),
        make_sample(sha_for("f"), entry="f", path="x.py", status="ran_honours", contract_check="VIOLATES", verification_level=0),
        make_sample(sha_for("g"), entry="g", path="x.py", status="unverified", contract_check=None, verification_level=1),
    ]
    got = harvested(load_corpus([make_record(samples=samples)]), "2001.00001")
    assert got["samples"] == [
        {
            "repo": "owner/repo",
            "repo_kind": "official",
            "licence": "MIT",
            "files": {
                "x.py": [
                    {
                        "code_sha256": sha_for("f"),
                        "entry": "f",
                        "status": "ran_honours",
                        "contract_check": "VIOLATES",
                        "verification_level": 0,
                    },
                    {"code_sha256": sha_for("a"), "entry": "a", "status": "ran"},
                    {"code_sha256": sha_for("g"), "entry": "g", "status": "unverified", "verification_level": 1},
                ]
            },
        },
        {
            "repo": "owner/repo",
            "repo_kind": "official",
            "language": "jupyter",
            "licence": "MIT",
            "files": {"x.ipynb": [{"code_sha256": sha_for("d"), "entry": "d", "status": "ran"}]},
        },
        {
            "repo": "owner/repo",
            "repo_kind": "official",
            "licence": "Apache-2.0",
            "files": {"x.py": [{"code_sha256": sha_for("c"), "entry": "c", "status": "ran"}]},
        },
        {
            "repo": "owner/repo",
            "repo_kind": "official",
            "language": "",
            "files": {"y.py": [{"code_sha256": sha_for("e"), "entry": "e", "status": "ran"}]},
        },
        {
            "repo": "owner/repo",
            "repo_kind": "official",
            "licence": "MIT",
            "inline_ok": False,
            "files": {"x.py": [{"code_sha256": sha_for("b"), "entry": "b", "status": "ran"}]},
        },
    ]


# -- get_paper and get_code with lists ---------------------------------------------------------


def test_get_paper_list_answers_each_id_in_order_in_brief(corpus: Corpus) -> None:
    asked = [BERTS_ICL, "https://paperswithcode.com/paper/bert-has-a-mouth-and-it-must-speak-bert-as-a", "9999.99999", "?!"]
    got = paper(corpus, asked)
    assert got == {
        "papers": [
            {
                "arxiv_id": BERTS_ICL,
                "title": BERTS_ICL_TITLE,
                "authors": ["David Samuel"],
                "n_authors": 1,
                "date": "2024-06-07",
                "code_links": [BERTS_ICL_CODE_LINK],
                "samples": {
                    "total": 26,
                    "by_status": {"ran": 11, "ran_draft_wrong": 1, "ran_violates": 1, "unverified": 13},
                    "by_repo_kind": {"official": 26},
                },
            },
            {
                "arxiv_id": BERT_MOUTH,
                "title": BERT_MOUTH_TITLE,
                "authors": ["Alex Wang", "Kyunghyun Cho"],
                "n_authors": 2,
                "date": "2019-02-11",
                "code_links": paper(corpus, BERT_MOUTH)["code_links"][:3],  # official first, the first three
                "more_code_links": 10,
                "samples": paper(corpus, BERT_MOUTH)["samples"],
            },
            {"asked": "9999.99999", "error": "not_found"},
            {"asked": "?!", "error": "invalid_argument"},
        ],
        "note": "not_found: use search_papers with words from the title; invalid_argument: pass an id like 1902.04094, "
        "arXiv:1902.04094v2, an arxiv.org URL or /paper/<slug>; or use search_papers with words from the title",
        "attribution": ATTRIBUTION,
    }


def test_get_paper_list_entry_of_a_paper_without_samples_leaves_them_out(load_corpus: LoadCorpus) -> None:
    got = paper(load_corpus([make_record("2001.00001", "bare", syntology=False, authors=[])]), ["2001.00001"])
    assert got["papers"] == [{"arxiv_id": "2001.00001", "title": "A Test Paper", "n_authors": 0, "date": "2020-01-01"}]


@pytest.mark.parametrize("count", [0, checks.MAX_PAPERS_ASKED + 1])
def test_get_paper_list_takes_1_to_25_ids(corpus: Corpus, count: int) -> None:
    text = refusal(queries.paper_list_shown, corpus, [BERT_MOUTH] * count)
    assert text == f"invalid_argument: a list takes 1 to 25 paper ids, got {count}. Next: call again with at most 25."


@pytest.mark.anyio
async def test_get_code_list_marks_unknown_ambiguous_and_malformed_hashes_in_place(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus(
        [
            make_record("2001.00001", "first", [make_sample("abcdef0100000000", entry="one")]),
            make_record("2001.00002", "second", [make_sample("abcdef0199999999", entry="two")]),
        ]
    )
    got = await code_answer(corpus, ["abcdef01", "abcdef019", "deadbeef", "zz", "abcdef0100000000"])
    assert [entry.get("error") or entry["matches"][0]["entry"] for entry in got["codes"]] == [
        "ambiguous",
        "two",
        "not_found",
        "invalid_argument",
        "one",
    ]
    assert got["codes"][0] == {"asked": "abcdef01", "error": "ambiguous"}
    assert got["codes"][1] == await code_answer(corpus, "abcdef019")
    assert got["note"] == (
        "ambiguous: call again with one full 16-character code_sha256; not_found: take a code_sha256 from "
        "get_harvested_code_for_paper or list_samples_by_status; invalid_argument: pass the code_sha256 of a sample "
        "(16 hex characters) as a string: a bare number loses digits"
    )


@pytest.mark.parametrize("count", [0, checks.MAX_CODES_ASKED + 1])
def test_get_code_list_takes_1_to_10_hashes(corpus: Corpus, count: int) -> None:
    text = refusal(resolving.find_codes, corpus, ["2a890c3f"] * count)
    assert text == f"invalid_argument: a list takes 1 to 10 code hashes, got {count}. Next: call again with at most 10."


def test_get_code_list_cut_to_size_says_how_many_were_left_out(corpus: Corpus) -> None:
    # Ten hashes whose verified code is 3,000 characters each: the answer stops before its entries pass
    # `LIST_ENTRY_BYTES`, counts the hashes left out and says how to get them.
    shas = [row.code_sha256 for row in corpus.index.samples_of(corpus.index.papers[1])[:10]]
    found = resolving.find_codes(corpus, shas)
    big = [
        SampleOutcome(item.sha, item.rows[0].repo, item.rows[0].path, item.rows[0].entry, "verified", code="x" * 3_000, source="store")
        for item in found
        if isinstance(item, resolving.FoundCode)
    ]
    got = shown(queries.code_list_answer(corpus, shas, found, big))
    answered = len(got["codes"])
    assert answered == 3 and got["left_out"] == 10 - answered
    assert [entry["query"]["asked"] for entry in got["codes"]] == shas[:answered]
    assert got["note"] == f"left_out: the last {10 - answered} were left out to keep this answer small: call get_code again with them"
    assert len(orjson.dumps(got)) < 4 * 4_000


# -- search_papers -------------------------------------------------------------------------


def test_search_hit_shape(corpus: Corpus) -> None:
    got = search(corpus, "in-context learners")
    assert got["query"] == "in-context learners" and got["total"] == 1
    (hit,) = got["hits"]
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


def test_search_title_match_ranks_above_abstract_match(corpus: Corpus) -> None:
    # "generative" is in 2406.04823's title; 1902.04094 has only "generate"/"generations" in its abstract.
    assert [hit["arxiv_id"] for hit in search(corpus, "generative")["hits"]] == [BERTS_ICL, BERT_MOUTH]


def test_search_ranking_on_a_tiny_corpus(load_corpus: LoadCorpus) -> None:
    records = [
        make_record("2001.00001", "abstract-only", title="Plain Title", abstract="zebra zebra zebra stripes"),
        make_record("2001.00002", "in-title", title="Zebra Stripes", abstract="about animals"),
        make_record("2001.00003", "elsewhere", title="Unrelated", abstract="nothing here"),
    ]
    got = search(load_corpus(records), "zebra")
    assert [hit["arxiv_id"] for hit in got["hits"]] == ["2001.00002", "2001.00001"]
    assert got["total"] == 2


def test_search_finds_authors_tasks_and_methods(corpus: Corpus) -> None:
    assert [h["arxiv_id"] for h in search(corpus, "Kyunghyun")["hits"]] == [BERT_MOUTH]
    assert [h["arxiv_id"] for h in search(corpus, "DeBERTa")["hits"]] == [BERTS_ICL]
    assert [h["arxiv_id"] for h in search(corpus, "WordPiece")["hits"]] == [BERT_MOUTH]


def test_search_no_match(corpus: Corpus) -> None:
    assert search(corpus, "quantum chromodynamics") == {
        "query": "quantum chromodynamics",
        "match": "any",
        "unmatched": ["quantum", "chromodynamics"],
        "total": 0,
        "hits": [],
        "note": "no paper of this corpus of 2 papers has any of these words. Next: ask the operator to run `papercode archive "
        "fetch`, then `papercode serve --archive`, to search the 576k papers of the Papers-with-Code archive; or search with "
        "other words",
    }


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
def test_search_filters_browse_newest_first(corpus: Corpus, filters: dict[str, Any], expected: list[str]) -> None:
    got = search(corpus, "", **filters)
    assert [hit["arxiv_id"] for hit in got["hits"]] == expected
    assert got["total"] == len(expected)
    assert all("snippet" not in hit for hit in got["hits"])


@pytest.mark.parametrize(
    ("filters", "expected"),
    [({"year_to": 2019}, [BERT_MOUTH]), ({"status": "ran_violates"}, [BERTS_ICL]), ({"task": "in-context-learning", "year_to": 2019}, [])],
)
def test_search_filters_combine_with_a_query(corpus: Corpus, filters: dict[str, Any], expected: list[str]) -> None:
    assert [hit["arxiv_id"] for hit in search(corpus, "bert", **filters)["hits"]] == expected


def test_search_browse_without_filters_is_newest_first(corpus: Corpus) -> None:
    assert [hit["arxiv_id"] for hit in answer(corpus, "search_papers")["hits"]] == [BERTS_ICL, BERT_MOUTH]


def test_search_year_range_reversed(corpus: Corpus) -> None:
    text = refusal(search, corpus, "bert", year_from=2024, year_to=2019)
    assert text.startswith("invalid_argument:") and "Next:" in text


def test_search_unknown_status_filter(corpus: Corpus) -> None:
    text = refusal(search, corpus, "bert", status="works")
    assert text.startswith("invalid_argument:") and VALID_STATUSES in text


def test_search_query_over_1000_characters(corpus: Corpus) -> None:
    text = refusal(search, corpus, "bert " * 300)
    assert text.startswith("invalid_argument: query is over 1000 characters") and "Next:" in text


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
def test_search_hostile_query_syntax_never_raises(corpus: Corpus, query: str) -> None:
    got = search(corpus, query)
    assert got["total"] == len(got["hits"]) <= 2


def test_search_hostile_query_still_finds_the_words(corpus: Corpus) -> None:
    assert [hit["arxiv_id"] for hit in search(corpus, '"Markov* (random')["hits"]] == [BERT_MOUTH]


def test_search_hit_caps_authors_and_uses_slug(load_corpus: LoadCorpus) -> None:
    record = make_record(None, "slug-only-paper", title="Zebra Paper", authors=["A", "B", "C", "D", "E"])
    (hit,) = search(load_corpus([record]), "zebra")["hits"]
    assert hit["slug"] == "slug-only-paper" and "arxiv_id" not in hit
    assert hit["authors"] == ["A", "B", "C"] and hit["n_authors"] == 5
    assert hit["samples"] == 0 and "best_status" not in hit


# -- corpus_stats and the load report ---------------------------------------------------------


def test_corpus_stats(corpus: Corpus) -> None:
    assert answer(corpus, "corpus_stats") == {
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


def test_corpus_stats_reports_load_problems(load_corpus: LoadCorpus) -> None:
    got = answer(load_corpus([make_record(syntology=False), {"title": "no key at all"}]), "corpus_stats")
    assert got["papers"] == 1 and got["papers_with_samples"] == 0 and got["samples"] == 0
    assert got["load"]["rejected"] == 1 and got["load"]["by_reason"] == {"no_key": 1}
    assert len(got["load"]["first_problems"]) == 1 and "no_key" in got["load"]["first_problems"][0]


def test_load_report_on_clean_records(corpus: Corpus) -> None:
    assert overview.load_report(corpus) == {
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


def test_load_report_lists_problems(load_corpus: LoadCorpus) -> None:
    report = overview.load_report(load_corpus([make_record(), {"title": "no key at all"}]))
    assert report["summary"]["rejected"] == 1
    (problem,) = report["problems"]
    assert problem["severity"] == "error" and problem["code"] == "no_key"
    assert problem["path"].endswith("001.json") and problem["reason"]
    assert "line" not in problem  # a .json file has no line; nulls are left out


def test_no_answer_reveals_where_the_server_keeps_its_files(tmp_path: Any) -> None:
    corpus = Corpus.load([write_records(tmp_path / "secret-place" / "records", [make_record(), {"title": "no key"}])])
    stats = answer(corpus, "corpus_stats")
    report = json.dumps(overview.load_report(corpus))  # corpus://load-report is this, as JSON
    assert stats["load"]["first_problems"] == ["error no_key 001.json: record has neither a valid arxiv_id nor a /paper/<slug> url"]
    assert "secret-place" not in json.dumps(stats) and "secret-place" not in report
    assert json.loads(report)["problems"][0]["path"] == "001.json"


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
def test_walking_pages_gives_every_item_once_in_order(corpus: Corpus, tool: str, key: str, arguments: dict[str, Any], limit: int) -> None:
    whole = items(answer(corpus, tool, **arguments, limit=100), key)
    assert whole
    walked = walk(corpus, tool, key, **arguments, limit=limit)
    # Samples are grouped within each page (by paper, repository, file), so pages keep the order between them and
    # each groups its own: walked, every sample once.
    assert walked == whole if key != "samples" else sorted(map(json.dumps, walked)) == sorted(map(json.dumps, whole))
    assert len({json.dumps(item, sort_keys=True) for item in walked}) == len(walked)


def test_walking_pages_of_find_papers_for_repo(load_corpus: LoadCorpus) -> None:
    link = {"repo_url": "https://github.com/shared/lib", "is_official": 0, "framework": "jax"}
    corpus = load_corpus([make_record(f"2001.{i:05d}", f"paper-{i}", code_links=[link]) for i in range(7)])
    whole = repo_papers(corpus, "shared/lib", limit=100)
    walked = walk(corpus, "find_papers_for_repo", "papers", repo="shared/lib", limit=3)
    assert whole["total"] == 7
    assert walked == whole["papers"]
    assert [found["arxiv_id"] for found in walked] == [f"2001.{i:05d}" for i in range(7)]


def test_page_sizes_and_last_page(corpus: Corpus) -> None:
    first = harvested(corpus, BERTS_ICL, limit=10)
    assert len(flat_samples(first)) == 10 and first["counts"]["total"] == 26
    second = harvested(corpus, BERTS_ICL, limit=10, cursor=first["next_cursor"])
    third = harvested(corpus, BERTS_ICL, limit=10, cursor=second["next_cursor"])
    assert len(flat_samples(second)) == 10 and len(flat_samples(third)) == 6
    assert "next_cursor" not in third


def test_cursor_is_stable_for_the_same_query(corpus: Corpus) -> None:
    first = listed(corpus, "ran", limit=3)
    again = listed(corpus, "ran", limit=3)
    assert first["next_cursor"] == again["next_cursor"]
    page = listed(corpus, "ran", limit=3, cursor=first["next_cursor"])
    repeat = listed(corpus, "ran", limit=3, cursor=first["next_cursor"])
    assert page == repeat


def test_cursor_carries_over_between_forms_of_the_same_statuses(corpus: Corpus) -> None:
    first = listed(corpus, "ran,unverified", limit=5)
    same = listed(corpus, ["ran", "unverified"], limit=5, cursor=first["next_cursor"])
    assert same == listed(corpus, "ran,unverified", limit=5, cursor=first["next_cursor"])
    assert flat_samples(same)[0] != flat_samples(first)[0]


def _tamper(cursor: str) -> str:
    return cursor[:-1] + ("A" if cursor[-1] != "A" else "B")


@pytest.mark.parametrize("mangle", [_tamper, lambda c: c[:-2], lambda c: c + "AAAA", lambda c: "x", lambda c: "not a cursor!"])
def test_tampered_cursor_is_invalid_argument(corpus: Corpus, mangle: Callable[[str], str]) -> None:
    first = harvested(corpus, BERTS_ICL, limit=3)
    text = refusal(harvested, corpus, BERTS_ICL, limit=3, cursor=mangle(first["next_cursor"]))
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
def test_cursor_from_another_query_is_invalid_argument(corpus: Corpus, issued: dict[str, Any], replayed: dict[str, Any]) -> None:
    first = answer(corpus, "get_harvested_code_for_paper", **{"limit": 3, **issued})
    text = refusal(answer, corpus, "get_harvested_code_for_paper", **{"limit": 3, **replayed, "cursor": first["next_cursor"]})
    assert text.startswith("invalid_argument:") and "Next:" in text


def test_cursor_from_another_tool_is_invalid_argument(corpus: Corpus) -> None:
    samples = listed(corpus, "ran", limit=3)
    assert refusal(harvested, corpus, BERTS_ICL, limit=3, cursor=samples["next_cursor"]).startswith("invalid_argument:")
    hits = search(corpus, "", limit=1)
    assert refusal(search, corpus, "bert", limit=1, cursor=hits["next_cursor"]).startswith("invalid_argument:")
    assert refusal(listed, corpus, "unverified", limit=3, cursor=samples["next_cursor"]).startswith("invalid_argument:")


LIMITED_CALLS = [
    ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH}),
    ("list_samples_by_status", {"status": "ran"}),
    ("search_papers", {"query": "bert"}),
    ("find_papers_for_repo", {"repo": "nyu-dl/bert-gen"}),
]


@pytest.mark.parametrize("limit", [0, -1, 101, 10_000])
@pytest.mark.parametrize(("tool", "arguments"), LIMITED_CALLS)
def test_limit_out_of_range_is_invalid_argument(corpus: Corpus, tool: str, arguments: dict[str, Any], limit: int) -> None:
    text = refusal(answer, corpus, tool, **arguments, limit=limit)
    assert text.startswith("invalid_argument:") and "limit" in text and "Next:" in text


@pytest.mark.parametrize("limit", [1, 100])
@pytest.mark.parametrize(("tool", "arguments"), LIMITED_CALLS)
def test_limit_bounds_are_accepted(corpus: Corpus, tool: str, arguments: dict[str, Any], limit: int) -> None:
    answer(corpus, tool, **arguments, limit=limit)


@pytest.mark.parametrize(
    "status",
    [["ran"] * 21, ",".join(["ran"] * 21), ["ran", "x" * 65], "ran," + "x" * 65],
    ids=["21-items", "21-comma-separated", "long-item", "long-comma-separated"],
)
def test_an_oversized_status_list_is_refused(corpus: Corpus, status: str | list[str]) -> None:
    for tool, arguments in (
        ("list_samples_by_status", {"status": status}),
        ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH, "status": status}),
    ):
        text = refusal(answer, corpus, tool, **arguments)
        assert text.startswith("invalid_argument: status takes at most 20 values of at most 64 characters") and "Next:" in text


# -- prompts -------------------------------------------------------------------------------


def test_implement_paper_prompt(corpus: Corpus) -> None:
    text = prompts.implement_prompt(corpus, BERT_MOUTH)
    assert BERT_MOUTH_TITLE in text
    assert "We show that BERT (Devlin et al., 2018) is a Markov random field language" in text  # the abstract
    assert "get_code" in text
    assert "licence" in text.lower()
    assert "code_sha256=2a890c3f8ff19f47" in text  # the best sample comes first
    assert text.index("2a890c3f8ff19f47") < text.index("8c1bb7962bc49e93") < text.index("013a68b0ac4716fe")
    assert "CC BY-SA 4.0" in text


def test_implement_paper_marks_pointer_only_samples(corpus: Corpus) -> None:
    text = prompts.implement_prompt(corpus, BERT_MOUTH)
    (line,) = [line for line in text.splitlines() if "013a68b0ac4716fe" in line]
    assert "POINTER ONLY" in line and "NONE" in line
    (showable,) = [line for line in text.splitlines() if "2a890c3f8ff19f47" in line]
    assert "POINTER ONLY" not in showable


def test_implement_paper_without_samples(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record("2001.00001", "no-harvest", title="Lonely Paper", syntology=False)])
    text = prompts.implement_prompt(corpus, "2001.00001")
    assert "Lonely Paper" in text and "No code samples" in text


def test_implement_paper_accepts_any_id_form(corpus: Corpus) -> None:
    assert BERTS_ICL_TITLE in prompts.implement_prompt(corpus, "https://arxiv.org/abs/2406.04823v2")


def test_compare_implementations_prompt(corpus: Corpus) -> None:
    text = prompts.compare_prompt(corpus, BERT_MOUTH)
    assert BERT_MOUTH_TITLE in text
    assert "licence" in text.lower()
    assert "https://github.com/nyu-dl/bert-gen: official" in text
    assert "seanrjohnson/protein_gibbs_sampler" in text and "6 ran" in text
    assert "swastishreya/BERT_as_a_conditional_generative_model" in text
    assert "get_harvested_code_for_paper" in text
    assert "get_code" in text


def test_compare_implementations_flags_pointer_only_repos(corpus: Corpus) -> None:
    text = prompts.compare_prompt(corpus, BERT_MOUTH)
    (line,) = [line for line in text.splitlines() if "opqrstuvcut/BertMouth" in line]
    assert "NONE" in line or "pointer" in line.lower()


@pytest.mark.parametrize("prompt", [prompts.implement_prompt, prompts.compare_prompt])
@pytest.mark.parametrize("arxiv_id", ["9999.99999", "hep-th/9901001", "not an id!", "?!", ""])
def test_prompt_for_an_unknown_or_bad_id_is_refused(corpus: Corpus, prompt: Callable[[Corpus, str], str], arxiv_id: str) -> None:
    text = refusal(prompt, corpus, arxiv_id)
    assert text.split(":")[0] in {"not_found", "invalid_argument"} and "Next:" in text


# -- completions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("19", [BERT_MOUTH]),
        ("2406.0", [BERTS_ICL]),
        ("", [BERT_MOUTH, BERTS_ICL]),
        ("arXiv:24", [BERTS_ICL]),
        ("1902.04094v2", [BERT_MOUTH]),
        ("3", []),
        ("24", [BERTS_ICL]),
    ],
)
def test_arxiv_ids_complete_by_prefix(corpus: Corpus, value: str, expected: list[str]) -> None:
    assert completions.complete(corpus, "arxiv_id", value) == expected


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
def test_status_values_complete_by_prefix(corpus: Corpus, value: str, expected: list[str]) -> None:
    assert completions.complete(corpus, "status", value) == expected


def test_code_hashes_complete_by_prefix(corpus: Corpus) -> None:
    assert completions.complete(corpus, "code_sha256", "1e") == ["1ecf520984f04d3a", "1edc73f4d0b284d9"]
    assert completions.complete(corpus, "code_sha256", "zz") == []


def test_unknown_argument_completes_nothing(corpus: Corpus) -> None:
    assert completions.complete(corpus, "style", "s") is None  # the edge sends an empty completion for it


def test_arxiv_completion_is_capped_at_20(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record(f"2001.{i:05d}", f"paper-{i}") for i in range(25)])
    assert completions.complete(corpus, "arxiv_id", "2001") == [f"2001.{i:05d}" for i in range(20)]
