"""A paper argument that is a title, not an id (issue #31): every tool, resource and prompt that takes a paper answers
the one paper whose whole title it is (case, accents, punctuation and spacing aside), through the search index's
title field, over the records alone and over records laid over an archive; the answer says so
(`query.by_title`). A title that names no paper, or several, is refused with the `search_papers` call to make."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from papercode.answers import prompts, queries, resolving
from papercode.corpus.stages import Corpus
from tests.support.archive_overlay import load_overlaid
from tests.support.records import BERT_MOUTH, BERT_MOUTH_TITLE, BERTS_ICL, BERTS_ICL_TITLE, make_record
from tests.support.tool_answers import answer, refusal

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]


def paper(corpus: Corpus, asked: str | list[str]) -> dict[str, Any]:
    return answer(corpus, "get_paper", paper=asked)


def by_title(asked: str, resolved: str) -> dict[str, Any]:
    return {"asked": asked, "resolved": resolved, "by_title": True}


@pytest.mark.parametrize(
    ("asked", "key"),
    [
        (BERTS_ICL_TITLE, BERTS_ICL),
        (BERT_MOUTH_TITLE, BERT_MOUTH),
        ("berts are generative in-context learners", BERTS_ICL),
        ("  BERTs  are Generative In Context Learners. ", BERTS_ICL),  # spacing, a hyphen, a full stop
        ("bert has a mouth and it must speak bert as a markov random field language model", BERT_MOUTH),
        ("BÉRT has a Mouth, and It Must Speak — BERT as a Markov Random Field Language Model", BERT_MOUTH),  # an accent, a dash
        ("bert-has-a-mouth-and-it-must-speak-bert-as-a-markov-random-field-language-model", BERT_MOUTH),  # a slug of no paper
    ],
)
def test_a_title_names_its_paper_and_the_answer_says_so(corpus: Corpus, asked: str, key: str) -> None:
    got = paper(corpus, asked)
    assert got["query"] == by_title(asked, key)
    assert {name: value for name, value in got.items() if name != "query"} == {
        name: value for name, value in paper(corpus, key).items() if name != "query"
    }


def test_every_tool_and_prompt_that_takes_a_paper_takes_its_title(corpus: Corpus) -> None:
    title = BERTS_ICL_TITLE.upper()
    harvested = answer(corpus, "get_harvested_code_for_paper", arxiv_id=title)
    assert harvested["query"] == by_title(title, BERTS_ICL)
    assert harvested["samples"] == answer(corpus, "get_harvested_code_for_paper", arxiv_id=BERTS_ICL)["samples"]
    # The paper:// resource is get_paper's answer (queries.paper_detail_shown); the prompts resolve as the tools do.
    assert queries.paper_detail_shown(corpus, title)["query"] == by_title(title, BERTS_ICL)
    assert prompts.implement_prompt(corpus, title) == prompts.implement_prompt(corpus, BERTS_ICL)
    assert prompts.compare_prompt(corpus, title) == prompts.compare_prompt(corpus, BERTS_ICL)


def test_a_list_marks_the_entries_a_title_named(corpus: Corpus) -> None:
    got = paper(corpus, [BERTS_ICL_TITLE, BERT_MOUTH])
    (first, second) = got["papers"]
    assert first["query"] == by_title(BERTS_ICL_TITLE, BERTS_ICL) and first["arxiv_id"] == BERTS_ICL
    assert "query" not in second and second["arxiv_id"] == BERT_MOUTH


@pytest.mark.parametrize(
    "asked",
    [
        "BERTs are Generative",  # part of a title
        "BERTs are Generative In-Context Learners and more",  # more than a title
        "BERT are Generative In-Context Learner",  # the stems of the title's words, not its words
        "Attention is all you need",
    ],
)
def test_a_text_that_is_no_papers_title_is_refused_with_the_search_to_make(corpus: Corpus, asked: str) -> None:
    assert refusal(paper, corpus, asked) == (
        f'not_found: no paper with title {asked!r} in this corpus of 2 papers. Next: call search_papers(query="{asked}").'
    )


def test_a_slug_of_no_paper_is_looked_up_as_a_title_too(corpus: Corpus) -> None:
    assert refusal(paper, corpus, "BERT") == (
        "not_found: no paper with slug bert or title 'BERT' in this corpus of 2 papers. Next: call search_papers(query=\"BERT\")."
    )
    assert refusal(paper, corpus, "https://paperswithcode.com/paper/no-such-slug") == (
        "not_found: no paper with slug no-such-slug or title 'no-such-slug' in this corpus of 2 papers. "
        'Next: call search_papers(query="no-such-slug").'
    )


def test_an_arxiv_id_of_no_paper_is_not_looked_up_as_a_title(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record("2001.00001", "numbered", title="2001.00002")])
    assert refusal(paper, corpus, "2001.00002").startswith("not_found: no paper with arXiv id 2001.00002 ")


def test_a_title_several_papers_have_is_ambiguous_and_names_them(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus(
        [
            make_record("2001.00001", "first", title="Deep Residual Learning"),
            make_record(None, "second", title="Deep residual learning."),
            make_record("2001.00003", "third", title="Deep Residual Learning for Image Recognition"),
        ]
    )
    assert refusal(paper, corpus, "deep residual learning") == (
        "ambiguous: 2 papers have the title 'deep residual learning': 2001.00001, second. "
        'Next: call again with one of these ids, or call search_papers(query="deep residual learning").'
    )
    assert paper(corpus, "Deep Residual Learning for Image Recognition")["arxiv_id"] == "2001.00003"


def test_a_title_among_many_longer_titles_holding_it_is_found(load_corpus: LoadCorpus) -> None:
    # The title's words as a phrase of the title field give the candidates, best first: a title of just those words
    # ranks before the longer ones, however many there are.
    longer = [make_record(f"2001.{n:05d}", f"longer-{n}", title=f"Graph Networks for task {n}") for n in range(1, 60)]
    corpus = load_corpus([*longer, make_record("2002.00001", "exact", title="Graph Networks")])
    assert paper(corpus, "graph networks")["query"] == by_title("graph networks", "2002.00001")


def test_over_an_archive_a_title_names_a_record_or_an_archive_paper(overlaid: tuple[Path, Path]) -> None:
    corpus = load_overlaid(overlaid)
    assert paper(corpus, "a paper only the archive has")["query"] == by_title("a paper only the archive has", "2003.00003")
    assert paper(corpus, "Conference paper without an arXiv id")["slug"] == "no-arxiv-archive-paper"
    assert paper(corpus, "The Harvested Record")["query"] == by_title("The Harvested Record", "2001.00001")
    # The archive's row of 2001.00001 is replaced by the record: its title names no paper any more.
    assert refusal(paper, corpus, "The archive's title").startswith('not_found: no paper with title "The archive\'s title" in this corpus')


def test_a_text_without_words_is_no_title(corpus: Corpus) -> None:
    assert refusal(paper, corpus, "?!") == (
        "invalid_argument: '?!' is not an arXiv id, a paper slug or a title. Next: pass an id like 1902.04094, "
        "arXiv:1902.04094v2, an arxiv.org URL or /paper/<slug>; or use search_papers with words from the title."
    )


def test_a_text_that_is_not_unicode_is_no_title(corpus: Corpus) -> None:
    # A lone surrogate (only an in-process caller can send one) cannot be analysed as words: refused, not a crash.
    assert refusal(paper, corpus, "\ud800").startswith("invalid_argument: '\\ud800' is not an arXiv id, a paper slug or a title.")


def test_a_title_waits_for_the_search_index_and_an_id_does_not(corpus: Corpus) -> None:
    keyed = Corpus.compose(corpus.index, None)  # the "keyed" stage of a start: the full text is still being built

    def harvested(asked: str) -> dict[str, Any]:
        return answer(keyed, "get_harvested_code_for_paper", arxiv_id=asked)

    assert refusal(harvested, BERTS_ICL_TITLE).startswith("loading: the full-text index is still being built.")
    assert harvested(BERTS_ICL)["paper"]["arxiv_id"] == BERTS_ICL


@pytest.mark.parametrize(
    ("asked", "searches"),
    [
        (BERTS_ICL_TITLE, True),
        ("BERT", True),  # slug-shaped, but no paper's slug
        (BERTS_ICL, False),
        ("9999.99999", False),  # refused at once: an arXiv id is never a title
        ("bert-has-a-mouth-and-it-must-speak-bert-as-a", False),  # a paper's slug
        ("", False),
    ],
)
def test_the_edge_knows_which_papers_need_a_search(corpus: Corpus, asked: str, searches: bool) -> None:
    # A search runs in a worker thread, never on the event loop (edge.tools).
    assert resolving.searches_titles(corpus, asked) is searches
