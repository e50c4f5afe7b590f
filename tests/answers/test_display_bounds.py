"""Answers stay bounded even when a record is hostile: long titles and names are cut for display,
over-long sample identifiers are rejected at load, and filters take several statuses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client
from mcp.types import PromptReference, ResourceTemplateReference

from papercode.answers import queries, shaping, twins
from papercode.corpus.stages import Corpus
from papercode.index.search_queries import SearchFilters
from tests.support.records import BERT_MOUTH, make_record, make_sample, sha_for

pytestmark = pytest.mark.anyio

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]


def test_long_title_and_author_names_are_cut_in_every_answer(load_corpus: LoadCorpus) -> None:
    title = "Deep " * 10_000
    corpus = load_corpus([make_record(title=title, authors=["A" * 5_000], samples=[make_sample(sha_for(1))])])
    listed = twins.samples_by_status(corpus, "ran").papers[0].title
    hit = queries.search_papers(corpus, "deep").hits[0]
    detail = twins.paper_detail(corpus, "2001.00001")
    listed_paper = twins.paper_list(corpus, ["2001.00001"]).papers[0].title  # type: ignore[index]
    for shown in (listed, hit.title, detail.title, listed_paper):
        assert len(shown) == shaping.TITLE_CHARS and shown.endswith("…") and title.startswith(shown[:-1])
    assert [len(name) for name in hit.authors] == [shaping.AUTHOR_CHARS]
    assert [len(name) for name in detail.authors] == [shaping.AUTHOR_CHARS]


def test_realistic_titles_are_shown_whole(corpus: Corpus) -> None:
    assert (
        twins.paper_detail(corpus, BERT_MOUTH).title == "BERT has a Mouth, and It Must Speak: BERT as a Markov Random Field Language Model"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("entry", "f" * 201), ("repo", "o/" + "r" * 200), ("path", "p/" * 201), ("status", "x" * 65), ("licence", "L" * 65)],
)
def test_over_long_sample_identifier_is_dropped_and_reported(load_corpus: LoadCorpus, field: str, value: str) -> None:
    good, bad = make_sample(sha_for("good")), make_sample(sha_for("bad"), **{field: value})
    corpus = load_corpus([make_record(samples=[good, bad])])
    assert [row.code_sha256 for row in corpus.index.samples_of(corpus.index.papers[0])] == [good["code_sha256_prefix"]]
    (problem,) = corpus.index.report.problems
    assert problem.code == "invalid_sample" and field in problem.reason


def test_search_status_filter_takes_several_statuses(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus(
        [
            make_record("2001.00001", "honours", [make_sample(sha_for(1), status="ran_honours")], title="Alpha"),
            make_record("2001.00002", "violates", [make_sample(sha_for(2), status="ran_violates")], title="Beta"),
            make_record("2001.00003", "unverified", [make_sample(sha_for(3), status="unverified")], title="Gamma"),
        ]
    )
    found = queries.search_papers(corpus, "", SearchFilters(status=("ran_honours", "ran_violates")))
    assert sorted(hit.arxiv_id or "" for hit in found.hits) == ["2001.00001", "2001.00002"]
    assert found.total == 2


async def test_completion_answers_only_for_our_prompts_and_templates(client: Client) -> None:
    ours = await client.complete(PromptReference(type="ref/prompt", name="implement_paper"), {"name": "arxiv_id", "value": "19"})
    assert ours.completion.values == [BERT_MOUTH]
    other = await client.complete(PromptReference(type="ref/prompt", name="someone_elses"), {"name": "arxiv_id", "value": "19"})
    assert other.completion.values == []
    template = ResourceTemplateReference(type="ref/resource", uri="elsewhere://{arxiv_id}")
    assert (await client.complete(template, {"name": "arxiv_id", "value": "19"})).completion.values == []
