"""How a search matched, said in every `search_papers` answer (issue #31): `match: "any"` when no paper has every
word and the search fell back to any of them, `unmatched` for the words no paper has, and, for an answer with no
hits, a `note` with the next step that fits (the filter that emptied it, or other words, or the archive when none
is served)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from papercode.corpus.stages import Corpus
from papercode.settings import bundled_records_dir
from tests.support.archive_overlay import load_overlaid
from tests.support.records import BERT_MOUTH, BERTS_ICL
from tests.support.tool_answers import answer

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]

NO_WORD_MATCHES = "no paper of this corpus of 2 papers has any of these words"
ARCHIVE_FOR_MORE = (
    "ask the operator to run `papercode archive fetch`, then `papercode serve --archive`, to search the 576k papers of "
    "the Papers-with-Code archive; or search with other words"
)


def search(corpus: Corpus, query: str = "", **arguments: Any) -> dict[str, Any]:
    return answer(corpus, "search_papers", query=query, **arguments)


def keys(got: dict[str, Any]) -> list[str]:
    return [hit["arxiv_id"] for hit in got["hits"]]


@pytest.mark.parametrize("query", ["bert generative", "bert", ""])
def test_a_search_whose_hits_have_every_word_says_nothing_more(corpus: Corpus, query: str) -> None:
    got = search(corpus, query)
    assert got["total"] > 0 and not {"match", "unmatched", "note"} & got.keys()


def test_a_search_that_falls_back_to_any_word_says_so_and_names_the_word_no_paper_has(corpus: Corpus) -> None:
    got = search(corpus, "bert zzqqxxjj")
    assert (got["match"], got["unmatched"], got["total"], sorted(keys(got))) == ("any", ["zzqqxxjj"], 2, [BERT_MOUTH, BERTS_ICL])
    assert "note" not in got


def test_words_each_in_some_paper_but_none_with_all_fall_back_with_none_unmatched(corpus: Corpus) -> None:
    got = search(corpus, "markov deberta")
    assert (got["match"], got["total"]) == ("any", 2) and "unmatched" not in got


def test_each_unmatched_word_is_named_once_as_typed(corpus: Corpus) -> None:
    long_word = "x" * 120  # too long to be indexed: it can match nothing
    got = search(corpus, f"deberta zzqqxxjj ZZQQXXJJ zzqqxxjj {long_word}")
    assert got["unmatched"] == ["zzqqxxjj", "ZZQQXXJJ", long_word]
    assert (got["match"], keys(got)) == ("any", [BERTS_ICL])


def test_a_word_no_paper_has_gives_no_hits_and_over_the_records_alone_names_the_archive(corpus: Corpus) -> None:
    assert search(corpus, "zzqqxxjj") == {
        "query": "zzqqxxjj",
        "unmatched": ["zzqqxxjj"],
        "total": 0,
        "hits": [],
        "note": f"{NO_WORD_MATCHES}. Next: {ARCHIVE_FOR_MORE}",
    }
    got = search(corpus, "quantum chromodynamics", has_samples=True)  # the words, not the filter, find nothing
    assert (got["match"], got["unmatched"], got["note"]) == (
        "any",
        ["quantum", "chromodynamics"],
        f"{NO_WORD_MATCHES}. Next: {ARCHIVE_FOR_MORE}",
    )


@pytest.mark.parametrize(
    ("query", "filters", "note"),
    [
        ("bert", {"year_from": 2030}, "no paper with these words matches year_from=2030. Next: call again without year_from"),
        ("", {"year_from": 2030}, "no paper matches year_from=2030. Next: call again without year_from"),
        (
            "bert",
            {"task": "Image Classification"},
            'no paper with these words matches task="Image Classification". Next: call again without task',
        ),
        (
            "bert zzqqxxjj",
            {"has_samples": False, "year_from": 2020},
            "no paper with these words matches has_samples=false. Next: call again without has_samples",
        ),
        (
            "",
            {"method": "ResNet", "has_samples": False},
            'no paper matches method="ResNet" or has_samples=false. Next: call again without method and has_samples',
        ),
        (
            "bert",
            {"year_from": 2020, "year_to": 2020},  # each alone finds a paper (2024, 2019), together none
            "no paper with these words matches these filters together (year_from=2020, year_to=2020). Next: call again with fewer of them",
        ),
    ],
)
def test_no_hits_because_of_filters_names_the_filter_that_emptied_it(
    corpus: Corpus, query: str, filters: dict[str, Any], note: str
) -> None:
    got = search(corpus, query, **filters)
    assert (got["total"], got["hits"], got["note"]) == (0, [], note)


@pytest.mark.parametrize(("filters", "shown"), [({"year_from": 2020}, "year_from=2020"), ({"status": "unverified"}, 'status="unverified"')])
def test_papers_with_every_word_that_a_filter_leaves_out_give_no_hits_naming_it_not_the_hits_of_any_word(
    corpus: Corpus, filters: dict[str, Any], shown: str
) -> None:
    assert keys(search(corpus, "bert markov")) == [BERT_MOUTH]  # every word: 2019, ran_honours
    assert keys(search(corpus, "bert", **filters)) == [BERTS_ICL]  # what falling back to any word would have found
    name = next(iter(filters))
    assert search(corpus, "bert markov", **filters) == {
        "query": "bert markov",
        "total": 0,
        "hits": [],
        "note": f"no paper with these words matches {shown}. Next: call again without {name}",
    }
    assert "match" not in search(corpus, "markov random", **filters)  # falling back would find nothing either


def test_over_an_archive_no_hits_asks_for_other_words(overlaid: tuple[Path, Path]) -> None:
    got = search(load_overlaid(overlaid), "zzqqxxjj")
    assert got["note"] == (
        "no paper of this corpus of 4 papers has any of these words. Next: check the spelling, or search with other words "
        "(of a title, an author, a task or a method)"
    )


def test_a_word_only_replaced_archive_rows_had_is_unmatched(overlaid: tuple[Path, Path]) -> None:
    # "title" is in the archive's rows of the two papers the records replace, and nowhere else: those rows are
    # deleted from the search, so no paper has the word.
    corpus = load_overlaid(overlaid)
    assert search(corpus, "title")["unmatched"] == ["title"]
    assert search(corpus, "paper title")["unmatched"] == ["title"]


def test_an_archive_asked_for_and_not_served_says_why_and_what_to_run(tmp_path: Path) -> None:
    corpus = Corpus.load([bundled_records_dir()], archive_dir=tmp_path / "no-archive")
    assert corpus.archive_note is not None
    note = search(corpus, "zzqqxxjj")["note"]
    assert note.startswith(f"{NO_WORD_MATCHES} (the archive is not served: ")
    assert note.endswith(
        "). Next: run `papercode archive fetch` (downloads it) or `papercode archive build SOURCE...` (from files you have); or search with other words"
    )
