"""The index, the search engine and the pager on their own (no MCP), on the real and tiny corpora."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from papercode.answers.models import SampleCounts
from papercode.core.errors import QueryError
from papercode.core.ids import normalize_repo, repo_key
from papercode.core.ordering import status_rank
from papercode.core.paging import Pager
from papercode.corpus.stages import Corpus
from papercode.index.columns import PaperColumns, StringTable
from papercode.index.fields import CodeLinkRow, PaperDetails, PaperRow, details_blob, link_row, paper_columns
from papercode.index.paper_index import task_key
from papercode.index.search_documents import paper_texts
from papercode.index.search_queries import SearchFilters
from papercode.index.text_analysis import query_terms
from tests.support.records import BERT_MOUTH, BERT_MOUTH_ORDER, BERTS_ICL, list_samples, make_record, make_sample, sha_for

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]


def test_real_corpus_sizes(corpus: Corpus) -> None:
    index = corpus.index
    assert len(index.papers) == 2
    assert len(index.samples) == 36
    assert index.report.records_indexed == 2
    assert index.report.problems == []


def test_papers_by_arxiv_id_and_slug(corpus: Corpus) -> None:
    index = corpus.index
    assert sorted(index.by_arxiv) == [BERT_MOUTH, BERTS_ICL]
    assert sorted(index.by_slug) == ["bert-has-a-mouth-and-it-must-speak-bert-as-a", "berts-are-generative-in-context-learners"]
    paper = index.paper_by_slug("berts-are-generative-in-context-learners")
    same = index.paper_by_arxiv(BERTS_ICL)
    assert paper is not None and same is not None and paper.key == same.key == BERTS_ICL
    assert index.paper_by_arxiv("9999.99999") is None
    assert index.paper_by_slug("nope") is None


def test_paper_samples_are_stored_in_default_order(corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv(BERT_MOUTH)
    assert paper is not None
    assert [(row.repo, row.status, row.entry) for row in corpus.index.samples_of(paper)] == BERT_MOUTH_ORDER


def test_counts_over_the_whole_corpus(corpus: Corpus) -> None:
    index = corpus.index
    assert dict(index.status_counts) == {"ran": 17, "unverified": 13, "ran_draft_wrong": 3, "ran_honours": 2, "ran_violates": 1}
    assert dict(index.repo_kind_counts) == {"official": 28, "listed": 8}
    assert dict(index.licence_counts) == {"Apache-2.0": 26, "MIT": 6, "BSD-3-Clause": 2, "NONE": 2}
    assert dict(index.language_counts) == {"python": 36}


def test_every_sample_hash_is_found_by_its_full_prefix(corpus: Corpus) -> None:
    shas = [row.code_sha256 for paper in corpus.index.papers for row in corpus.index.samples_of(paper)]
    assert len(set(shas)) == 36
    for sha in shas:
        assert corpus.index.shas_with_prefix(sha) == [sha]


def test_sample_row_fields(corpus: Corpus) -> None:
    paper = corpus.index.paper_by_arxiv(BERT_MOUTH)
    assert paper is not None
    row = corpus.index.samples_of(paper)[-1]
    assert (row.code_sha256, row.repo, row.path, row.entry) == (
        "992ab7ae4b4bf55c",
        "swastishreya/BERT_as_a_conditional_generative_model",
        "bert-babble.py",
        "detokenize",
    )
    assert (row.status, row.contract_check, row.verification_level, row.licence, row.inline_ok) == (
        "ran_draft_wrong",
        "OUTPUT_MISDECLARED",
        1,
        "NONE",
        False,
    )
    assert corpus.index.papers[row.paper].key == paper.key == BERT_MOUTH


def test_sha_prefix_lookup(corpus: Corpus) -> None:
    assert corpus.index.shas_with_prefix("1e") == ["1ecf520984f04d3a", "1edc73f4d0b284d9"]
    assert corpus.index.shas_with_prefix("1ecf") == ["1ecf520984f04d3a"]
    assert corpus.index.shas_with_prefix("ffff") == []
    assert len(corpus.index.shas_with_prefix("", most=5)) == 5


def test_arxiv_id_prefix_lookup(corpus: Corpus) -> None:
    assert corpus.index.arxiv_ids_with_prefix("19") == [BERT_MOUTH]
    assert corpus.index.arxiv_ids_with_prefix("") == [BERT_MOUTH, BERTS_ICL]
    assert corpus.index.arxiv_ids_with_prefix("3") == []


def test_list_samples_totals_and_order(corpus: Corpus) -> None:
    total, rows = list_samples(corpus.index, ["ran_honours", "ran"])
    listed = list(rows)
    assert total == len(listed) == 19
    # status first, then official first, then showable first
    assert [row.status for row in listed[:2]] == ["ran_honours", "ran_honours"]
    assert [row.repo for row in listed[:2]] == ["nyu-dl/bert-gen", "opqrstuvcut/BertMouth"]
    assert [row.repo_kind for row in listed[2:]] == ["official"] * 11 + ["listed"] * 6


def test_list_samples_filters(corpus: Corpus) -> None:
    index = corpus.index
    assert list_samples(index, ["ran"], licence="mit")[0] == 6
    assert list_samples(index, ["ran"], repo_kind="official")[0] == 11
    assert list_samples(index, ["ran_honours"], inline_only=True)[0] == 1
    assert list_samples(index, ["ran_draft_wrong"], language="PYTHON")[0] == 3
    assert list_samples(index, ["ran"], language="rust")[0] == 0


def test_statuses_keep_unknown_values_after_the_known_ones(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record(samples=[make_sample(sha_for(1), status="ran_someday"), make_sample(sha_for(2))])])
    assert corpus.index.statuses() == ["ran_honours", "ran", "ran_draft_wrong", "ran_violates", "unverified", "ran_someday"]
    paper = corpus.index.papers[0]
    assert [row.status for row in corpus.index.samples_of(paper)] == ["ran", "ran_someday"]


def test_status_rank_orders_best_first() -> None:
    ranked = sorted(["unverified", "ran", "whatever", "ran_violates", "ran_honours", "ran_draft_wrong"], key=status_rank)
    assert ranked == ["ran_honours", "ran", "ran_draft_wrong", "ran_violates", "unverified", "whatever"]


@pytest.mark.parametrize(("a", "b"), [("language-modeling", "language-modelling"), ("Language Modeling", "language_modelling")])
def test_task_key_merges_near_duplicates(a: str, b: str) -> None:
    assert task_key(a) == task_key(b)


def test_task_key_keeps_different_tasks_apart() -> None:
    assert task_key("language-modeling") != task_key("in-context-learning")


def test_paper_without_harvest_has_no_samples(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record(syntology=False)])
    assert corpus.index.samples_of(corpus.index.papers[0]) == []
    assert len(corpus.index.samples) == 0


def test_paper_without_arxiv_id_is_keyed_by_slug(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus([make_record(arxiv_id=None, slug="only-a-slug")])
    paper = corpus.index.paper_by_slug("only-a-slug")
    assert paper is not None and paper.key == "only-a-slug"
    assert corpus.index.by_arxiv == {}


# -- search --------------------------------------------------------------------------------


def test_query_terms_keep_only_the_words() -> None:
    assert query_terms('bert "generative" NEAR(x y) title:foo *') == ["bert", "generative", "NEAR", "x", "y", "title", "foo"]
    assert query_terms("(((") == []


def test_search_ranks_title_match_above_abstract_only(load_corpus: LoadCorpus) -> None:
    corpus = load_corpus(
        [
            make_record("2001.00001", "in-abstract", title="Unrelated Heading", abstract="We study the zebra and the zebra herd."),
            make_record("2001.00002", "in-title", title="Zebra Crossing", abstract="Nothing to see."),
        ]
    )
    page = corpus.search.search("zebra", SearchFilters(), 0, 10, paper_texts(corpus.index))
    assert page.total == 2
    assert [corpus.index.papers[hit.paper].key for hit in page.hits] == ["2001.00002", "2001.00001"]


def test_search_browse_is_newest_first(corpus: Corpus) -> None:
    page = corpus.search.search("", SearchFilters(), 0, 10, paper_texts(corpus.index))
    assert page.total == 2
    assert [corpus.index.papers[hit.paper].key for hit in page.hits] == [BERTS_ICL, BERT_MOUTH]
    assert all(hit.snippet is None for hit in page.hits)


def test_search_snippet_marks_matched_words(corpus: Corpus) -> None:
    hits = corpus.search.search("markov", SearchFilters(), 0, 10, paper_texts(corpus.index)).hits
    assert len(hits) == 1
    assert hits[0].snippet is not None and "**Markov**" in hits[0].snippet


def test_search_falls_back_to_any_word(corpus: Corpus) -> None:
    page = corpus.search.search("markov deberta", SearchFilters(), 0, 10, paper_texts(corpus.index))
    assert page.total == 2 and page.any_word
    assert {corpus.index.papers[hit.paper].key for hit in page.hits} == {BERT_MOUTH, BERTS_ICL}


# -- paging --------------------------------------------------------------------------------


def test_cursor_round_trip_and_stability() -> None:
    pager = Pager(b"index-1")
    query = {"tool": "t", "paper": "1902.04094", "limit": 3}
    cursor = pager.encode(query, 6)
    assert pager.encode(dict(query), 6) == cursor
    assert pager.decode(query, cursor) == 6
    assert pager.decode(query, None) == 0
    assert pager.decode(query, "") == 0


@pytest.mark.parametrize(
    "other",
    [
        {"tool": "t", "paper": "2406.04823", "limit": 3},
        {"tool": "t", "paper": "1902.04094", "limit": 4},
        {"tool": "u", "paper": "1902.04094", "limit": 3},
    ],
)
def test_cursor_from_another_query_is_rejected(other: dict[str, object]) -> None:
    pager = Pager(b"index-1")
    cursor = pager.encode({"tool": "t", "paper": "1902.04094", "limit": 3}, 6)
    with pytest.raises(QueryError) as error:
        pager.decode(other, cursor)
    assert error.value.code == "invalid_argument"


def test_cursor_from_another_index_is_rejected() -> None:
    query = {"tool": "t"}
    cursor = Pager(b"index-1").encode(query, 3)
    with pytest.raises(QueryError):
        Pager(b"index-2").decode(query, cursor)


@pytest.mark.parametrize("mangle", [lambda c: c[:-1], lambda c: c + "A", lambda c: "B" + c[1:], lambda c: "!!!", lambda c: "é"])
def test_tampered_cursor_is_rejected(mangle: Callable[[str], str]) -> None:
    pager = Pager(b"index-1")
    cursor = pager.encode({"tool": "t"}, 3)
    with pytest.raises(QueryError) as error:
        pager.decode({"tool": "t"}, mangle(cursor))
    assert str(error.value).startswith("invalid_argument: ")
    assert "Next: " in str(error.value)


def test_a_later_duplicate_replaces_the_earlier_paper_everywhere(load_corpus: LoadCorpus) -> None:
    older = make_record("2001.00001", "same", samples=[make_sample(sha_for("old", i), status="ran", repo="old/repo") for i in range(3)])
    newer = make_record("2001.00001", "same", samples=[make_sample(sha_for("new", 0), status="unverified", repo="new/repo")])
    older["syntology"]["read_at"], newer["syntology"]["read_at"] = "2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"
    corpus = load_corpus([older, make_record("2001.00002", "other", samples=[make_sample(sha_for("other", 0))]), newer])
    index = corpus.index
    paper = index.paper_by_arxiv("2001.00001")
    assert paper is not None and [row.code_sha256 for row in index.samples_of(paper)] == [sha_for("new", 0)]
    assert index.live_samples == 2 and dict(index.status_counts) == {"unverified": 1, "ran": 1}
    assert list_samples(index, index.statuses())[0] == 2
    assert index.shas_with_prefix(sha_for("old", 0)) == [] and index.sample_ids_for_sha(sha_for("new", 0)) == list(paper.samples)
    assert index.papers_for_repo("old/repo") is None and index.papers_for_repo("new/repo") == [paper.ordinal]


def test_list_samples_buckets_with_many_distinct_values(load_corpus: LoadCorpus) -> None:
    # Thousands of languages and licences: more (status, kind, language, licence, inline) combinations than a
    # listing bucket key can count directly.
    samples = [
        make_sample(sha_for("many", i), language=f"lang{i}", licence=f"LIC-{i}", status=("ran", "unverified")[i % 2], inline_ok=i % 3 == 0)
        for i in range(2_500)
    ]
    index = load_corpus([make_record(samples=samples)]).index
    for i in (0, 1, 1_234, 2_499):
        total, rows = list_samples(index, index.statuses(), language=f"LANG{i}", licence=f"lic-{i}")
        assert total == 1 and rows[0].code_sha256 == sha_for("many", i)
    total, rows = list_samples(index, ["ran"], inline_only=True)
    assert total == len([i for i in range(2_500) if i % 2 == 0 and i % 3 == 0]) == len(rows)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Owner/Name",
        "https://github.com/owner/name.git",
        "https://github.com/owner/name.GIT",
        "https://github.com/owner/name/",
        "https://github.com/owner/name/tree/main/src",
        "https://github.com/owner",
        "https://github.com/owner/na me",
        "https://github.com/owner/name ",
        " https://github.com/owner/name",
        "http://www.GitHub.com/owner/name",
        "https://gitlab.com/owner/name",
        "https://github.com/.../...",
        "owner/name",
    ],
)
def test_a_code_link_names_the_repository_normalize_repo_does(url: str) -> None:
    assert repo_key(url) == normalize_repo(url)


@given(st.text(alphabet="abcAB.-_/ :git", max_size=30).map(lambda rest: "https://github.com/" + rest))
def test_a_code_link_names_the_repository_normalize_repo_does_whatever_follows(url: str) -> None:
    assert repo_key(url) == normalize_repo(url)


def test_the_builder_sets_every_paper_column() -> None:
    columns = PaperColumns(StringTable())
    assert set(paper_columns()) == set(vars(columns)) - {"strings"}


def test_sample_counts_read_from_the_columns_match_the_rows(corpus: Corpus, synthetic_corpus: Corpus) -> None:
    for index in (corpus.index, synthetic_corpus.index):
        for paper in index.papers:
            rows = index.samples_of(paper)
            tally = index.samples.counts(paper.samples)
            assert tally.keys() == SampleCounts.model_fields.keys()  # the answer's shape, declared there only
            assert tally["total"] == len(rows)
            assert list(tally["by_status"].items()) == list(Counter(row.status for row in rows).items())  # first-seen order too
            assert list(tally["by_repo_kind"].items()) == list(Counter(row.repo_kind for row in rows).items())
            assert tally["pointer_only"] == sum(not row.inline_ok for row in rows)
            assert index.samples.counts(list(paper.samples)) == tally  # ids as a list, not a range: the same tally


# -- the details blob: its bytes are a format (snapshots and every archive build hold them) ---------------------------

_OPTIONAL_TEXT = st.none() | st.text(max_size=8)
_LINKS = st.lists(
    st.builds(
        CodeLinkRow,
        _OPTIONAL_TEXT,
        st.text(max_size=12),
        st.booleans(),
        st.none() | st.booleans(),
        _OPTIONAL_TEXT,
        _OPTIONAL_TEXT,
        _OPTIONAL_TEXT,
    ),
    max_size=3,
)


_DETAILS = st.builds(
    PaperDetails,
    authors=st.lists(st.text(max_size=8), max_size=3),
    tasks=st.lists(st.tuples(st.text(max_size=6), st.text(max_size=6)), max_size=3),
    methods=st.lists(st.text(max_size=6), max_size=3),
    code_links=_LINKS,
    proceeding=_OPTIONAL_TEXT,
    url_pdf=_OPTIONAL_TEXT,
)


def _blob_as_written_before(details: PaperDetails) -> bytes:
    """The blob as papercode wrote it before the details had a declared shape: a dict of lists, each link a plain
    tuple of `CodeLinkRow`'s fields, `p` and `pdf` only when given, written by orjson."""
    links = [tuple(msgspec.structs.astuple(link)) for link in details.code_links]
    written: dict[str, object] = {"a": details.authors, "t": details.tasks, "m": details.methods, "l": links}
    for key, value in (("p", details.proceeding), ("pdf", details.url_pdf)):
        if value is not None:
            written[key] = value
    return orjson.dumps(written)


@given(_DETAILS)
def test_the_details_blob_keeps_its_bytes_and_reads_back(details: PaperDetails) -> None:
    blob = details_blob(details)
    assert blob == _blob_as_written_before(details)
    row = PaperRow(0, None, "s", "T", None, None, None, None, None, None, len(details.authors), range(0), blob)
    assert row.details() == details


def test_the_details_blob_of_a_paper_is_these_bytes() -> None:
    links = [
        link_row("https://github.com/Owner/Name", True, None, "pytorch"),
        link_row("https://gitlab.com/g/p", False, True, None, reach="ok", licence="MIT"),
    ]
    blob = details_blob(PaperDetails(["Ann", "Bé"], [("qa", "Question Answering")], ["Adam"], links, None, "u"))
    assert blob == (
        b'{"a":["Ann","B\xc3\xa9"],"t":[["qa","Question Answering"]],"m":["Adam"],'
        b'"l":[["owner/name","https://github.com/Owner/Name",true,null,"pytorch",null,null],'
        b'["gitlab.com/g/p","https://gitlab.com/g/p",false,true,null,"ok","MIT"]],"pdf":"u"}'
    )
