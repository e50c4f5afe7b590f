"""The archive's serving form, beneath the records, answers as one index of the same papers did (issue #22).

An archive is built from generated rows (tests/support/archive_tables.py) and served beneath records. The same papers are
then loaded as one index, as the build before the serving form made it: the records first, then every archive paper
no record has, as the plain record the build wrote of it (`build_recording`), with `PaperSources` saying where the
archive's papers begin (as the old `Admission(archive=...)` counted them). Every tool must answer alike.

What may differ, and why:
- `next_cursor`: a cursor is signed with the index's fingerprint, which names the archive's build in the overlaid
  form. The pages they lead to are compared.
- `corpus_stats.load`: the one-index form read the archive's papers as records; the overlaid form reads the records
  only (the archive is opened, never read).
- the order of search hits of equal score: tantivy breaks a tie by where each document is (segment, then place), and
  the overlaid form keeps the archive's documents in the archive's segments (split between its two indexing threads)
  and the records' in one segment after them. Where records replace archive rows, scores also differ by a little
  (under 1 %): the replaced rows' documents are deleted in the overlay, and BM25 statistics count deleted documents
  until a merge, which the archive's index never has. Without replacements, scores are the same to the bit.
- completions of an arXiv id and lookups by the arXiv id or slug of an archive row a record replaced: the overlaid form
  leads them to the record (as the old one index did: its `Admission` kept them as keys of the record); the one-index
  form written here leaves those rows out, so it knows no such keys. They are tested on their own below.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
import tantivy

from papercode.answers import completions, models, overview, prompts, queries, twins
from papercode.archive import build_archive
from papercode.cli.main import main
from papercode.core.errors import QueryError
from papercode.core.limits import Limits
from papercode.corpus.stages import ARCHIVE_NEXT, Corpus, open_stages
from papercode.index import mapped
from papercode.index.mapped_archive import BUILDS, CURRENT, MANIFEST, current_build, open_archive
from papercode.index.overlaid import OverlaidIndex
from papercode.index.paper_index import PaperSources
from papercode.index.ranking import Ranking
from papercode.index.search_queries import SearchFilters, in_any_field
from papercode.index.search_schema import FIELDS, SCHEMA
from papercode.index.text_analysis import query_terms, query_tokens
from papercode.settings import settings_for
from tests.support.archive_tables import (
    Row,
    build_recording,
    bundled_records,
    bundled_rows,
    generated_rows,
    link_row,
    paper_row,
    read_only,
    slug_of,
    tree,
    write_json,
)
from tests.support.records import make_record, make_sample, sha_for, write_records

DATA_DATE = "2025-07-28"
SHARED = "https://github.com/shared/toolkit"
SHARED_REPO = "shared/toolkit"


def slug(row: Row) -> str:
    return str(row["paper_url"]).rsplit("/", 1)[1]


def archive_tables() -> tuple[list[Row], list[Row]]:
    """About 260 papers: generated ones, the bundled records' rows, and a repository many of them link to."""
    papers, links = generated_rows(240, 300, seed=22, description_words=(2, 5))
    bundled_papers, bundled_links = bundled_rows()
    papers += bundled_papers
    links += bundled_links
    links += [
        link_row(slug(papers[i]), SHARED, papers[i]["title"], is_official=i % 4 == 0, mentioned_in_paper=i % 3 == 0, framework="pytorch")
        for i in range(10, 24)
    ]
    return papers, links


def shared_link(official: bool) -> Row:
    return {"repo_url": SHARED, "is_official": int(official), "mentioned_in_paper": int(official), "framework": "pytorch"}


def shared_sample(n: int, **fields: Any) -> Row:
    return make_sample(sha_for("shared", n), repo=SHARED_REPO, path=f"toolkit/part_{n}.py", entry=f"part_{n}", **fields)


def records_that_add(papers: list[Row]) -> list[Row]:
    """Records of papers the archive lacks: they replace no row."""
    del papers
    return [
        make_record(
            "2999.00001",
            "a-record-only-paper",
            [shared_sample(1, repo_kind="listed"), make_sample(sha_for("own", 1), status="ran_honours")],
            title="Deep language models for robust data",
            abstract="A record's abstract about language models, learning and data.",
            code_links=[shared_link(False)],
            tasks=[{"task_slug": "language-modelling", "task_name": "Language Modelling"}],
            date="2023-05-06",
        ),
        make_record("2999.00002", "a-record-without-harvest", syntology=False, title="Neural vision learning", date="2020-01-02"),
    ]


def records_that_replace(papers: list[Row]) -> list[Row]:
    """Records of papers the archive has: by arXiv id, by slug, and one whose arXiv id is one row's and slug another's;
    the bundled records replace their own rows."""
    one, three, twelve, twenty = papers[1], papers[3], papers[12], papers[20]
    assert one["arxiv_id"] and three["arxiv_id"] and twenty["arxiv_id"] and twelve["arxiv_id"]
    return [
        *bundled_records(),
        make_record(
            one["arxiv_id"],
            "a-record-of-paper-one",
            [shared_sample(2, repo_kind="official"), make_sample(sha_for("own", 2))],
            title="Graph attention networks for robust vision",
            abstract="A record's abstract: graph attention, robust vision, deep learning.",
            code_links=[shared_link(True)],
            date="2021-03-04",
        ),
        make_record(
            None,
            slug(twenty),
            [make_sample(sha_for("own", 3), status="ran_draft_wrong")],
            title="A record known by the slug of paper twenty",
            code_links=[shared_link(False)],
            date="2019-09-09",
        ),
        make_record(
            three["arxiv_id"],
            slug(twelve),
            [make_sample(sha_for("own", 4))],
            title="A record with the arXiv id of paper three and the slug of paper twelve",
            date="2018-08-08",
        ),
        *records_that_add(papers),
    ]


@dataclasses.dataclass(frozen=True)
class Forms:
    """One set of papers served both ways."""

    overlaid: Corpus
    one_index: Corpus
    records: list[Row]
    replaced: list[Row]  # the archive papers the records replace, as the build wrote them


@dataclasses.dataclass(frozen=True)
class Built:
    archive: Path
    papers: list[Row]  # the archive's papers rows
    written: list[Row]  # every paper the build wrote, as a record, in build order
    root: Path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("serving")
    papers, links = archive_tables()
    sources = [write_json(root / "src" / "papers.json.gz", papers), write_json(root / "src" / "links.json", links)]
    summary, written = build_recording(sources, root / "archive", DATA_DATE)
    assert summary.papers == len(written) and summary.rejected.total() == 0
    return Built(root / "archive", papers, written, root)


def served_both_ways(built: Built, records: list[Row], name: str) -> Forms:
    directory = write_records(built.root / name / "records", records)
    overlaid = Corpus.load([directory], archive_dir=built.archive)
    assert overlaid.archive_note is None and isinstance(overlaid.index, OverlaidIndex)
    arxiv_ids = {record["arxiv_id"] for record in records if record["arxiv_id"]}
    slugs = {slug_of(record) for record in records}
    replaced = [paper for paper in built.written if paper.get("arxiv_id") in arxiv_ids or slug_of(paper) in slugs]
    kept = [paper for paper in built.written if paper not in replaced]
    archive_records = built.root / name / "archive-as-records"
    archive_records.mkdir()
    (archive_records / "papers.jsonl").write_bytes(b"".join(orjson.dumps(paper) + b"\n" for paper in kept))
    loaded = Corpus.load([directory, archive_records])
    assert loaded.index.report.problems == []
    index = dataclasses.replace(loaded.index, sources=PaperSources(archive_start=len(records), archive_replaced=len(replaced)))
    return Forms(overlaid, Corpus.compose(index, loaded.search), records, replaced)


@pytest.fixture(scope="module")
def replacing(built: Built) -> Forms:
    return served_both_ways(built, records_that_replace(built.papers), "replacing")


@pytest.fixture(scope="module")
def adding(built: Built) -> Forms:
    return served_both_ways(built, records_that_add(built.papers), "adding")


@pytest.fixture(params=["replacing", "adding"])
def forms(request: pytest.FixtureRequest) -> Forms:
    found: Forms = request.getfixturevalue(request.param)
    return found


# -- answers, tool by tool --------------------------------------------------------------------------


def without_cursor(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer but its cursor's text (signed with the index's fingerprint): whether it has one stays."""
    return {**answer, "next_cursor": "next" if answer.get("next_cursor") else None}


def pages(ask: Callable[..., Any], *arguments: Any, **named: Any) -> Iterator[dict[str, Any]]:
    """Every page of one paged answer (as shown: a dict, or a model dumped), following its cursors."""
    cursor = None
    while True:
        page = ask(*arguments, cursor=cursor, **named)
        shown = page if isinstance(page, dict) else page.model_dump(mode="json", exclude_none=True)
        yield without_cursor(shown)
        cursor = shown.get("next_cursor") and (page["next_cursor"] if isinstance(page, dict) else page.next_cursor)
        if not cursor:
            return


def test_the_numbering_is_the_one_index_s(forms: Forms) -> None:
    overlaid, one = forms.overlaid.index, forms.one_index.index
    assert len(overlaid.papers) == len(one.papers)
    assert [paper.key for paper in overlaid.papers] == [paper.key for paper in one.papers]
    assert overlaid.sources == one.sources


def test_get_paper_and_get_harvested_code_for_paper_answer_alike(forms: Forms) -> None:
    overlaid, one = forms.overlaid, forms.one_index
    for paper in one.index.papers:
        keys = [paper.key] if paper.slug is None else [paper.key, paper.slug, f"/paper/{paper.slug}"]
        for key in keys:
            assert queries.paper_detail_shown(overlaid, key) == queries.paper_detail_shown(one, key), key
            for stored in (None, lambda sha: sha.endswith(("0", "8"))):
                assert without_cursor(queries.harvested_code_shown(overlaid, key, stored=stored)) == without_cursor(
                    queries.harvested_code_shown(one, key, stored=stored)
                ), key
        assert list(pages(queries.harvested_code_shown, overlaid, paper.key, limit=1)) == list(
            pages(queries.harvested_code_shown, one, paper.key, limit=1)
        )
    for missing in ("2998.99999", "no-such-paper"):
        for ask in (queries.paper_detail_shown, queries.harvested_code_shown):
            with pytest.raises(QueryError) as in_overlaid:
                ask(overlaid, missing)
            with pytest.raises(QueryError) as in_one:
                ask(one, missing)
            assert str(in_overlaid.value) == str(in_one.value)


def test_find_papers_for_repo_answers_alike(forms: Forms) -> None:
    overlaid, one = forms.overlaid, forms.one_index
    assert isinstance(overlaid.index, OverlaidIndex) and overlaid.index.archive is not None
    repos = {*one.index.repo_names, *overlaid.index.repo_names, *overlaid.index.archive.repo_names}
    assert SHARED_REPO in repos and len(repos) > 300
    found = 0
    for repo in sorted(repos):
        try:
            expected = list(pages(queries.papers_for_repo, one, repo, limit=4))
        except QueryError as error:  # only a replaced row linked it
            with pytest.raises(QueryError) as in_overlaid:
                queries.papers_for_repo(overlaid, repo)
            assert str(in_overlaid.value) == str(error)
            continue
        assert list(pages(queries.papers_for_repo, overlaid, repo, limit=4)) == expected, repo
        found += 1
    assert found > 300


def test_the_repository_many_papers_link_to_lists_them_in_one_order(forms: Forms) -> None:
    """Records with samples from it, records that link it, archive papers that link it: one list, official first, then
    those with the most samples from it, then by paper key, as one index lists them."""
    overlaid = queries.papers_for_repo(forms.overlaid, SHARED, limit=100)
    assert overlaid.model_dump() == {**queries.papers_for_repo(forms.one_index, SHARED, limit=100).model_dump(), "next_cursor": None}
    officials = [paper.is_official for paper in overlaid.papers]
    assert officials == sorted(officials, reverse=True) and any(officials) and not all(officials)


def all_hits(corpus: Corpus, query: str, filters: SearchFilters) -> tuple[int, list[dict[str, Any]]]:
    answers = list(pages(queries.search_papers, corpus, query, filters, limit=40))
    assert len({answer["total"] for answer in answers}) == 1
    return answers[0]["total"], [hit for answer in answers for hit in answer["hits"]]


def key(hit: dict[str, Any]) -> str:
    return str(hit.get("arxiv_id") or hit["slug"])


def match_scores(corpus: Corpus, query: str, *, every_word: bool = True) -> dict[str, float]:
    """Each paper's BM25 score for a ranked query, as `Ranking.search` ranks by it (the query `Ranking._match` calls
    `matched`: every word in any field, each field weighted; or any word, where no paper has them all), read from the
    searcher directly: to tell an order that differs among near-equal scores from one that does not."""
    ranking = corpus.search
    assert isinstance(ranking, Ranking)
    joiner = tantivy.Occur.Must if every_word else tantivy.Occur.Should
    matched = tantivy.Query.boolean_query([(joiner, in_any_field(query_tokens(word))) for word in query_terms(query)])
    result = ranking._searcher.search(matched, 100_000)
    papers = ranking._papers([address for _, address in result.hits])
    return {corpus.index.papers[paper].key: score for paper, (score, _) in zip(papers, result.hits, strict=True)}


QUERIES = ("graph", "attention model", "robust vision", "language", "neural network data", "bert", "markov", "graph zebra")
FILTERS = (  # but the first, each lets a few of the papers through (a snippet for each hit is most of a search's time)
    SearchFilters(),
    SearchFilters(year_from=2015, year_to=2016),
    SearchFilters(has_samples=True),
    SearchFilters(has_samples=False, official_code=True, year_from=2021),
    SearchFilters(framework="jax", year_to=2013),
    SearchFilters(status=("ran",)),
    SearchFilters(task="Language Modelling"),
    SearchFilters(method="Method 3 Graph"),
)


def compare_search(forms: Forms, tolerance: Callable[[str], float], *, snippets: bool = True) -> int:
    """Every query under every filter: the same total and the same hits (with their snippets, or without when
    `snippets` is false: then only whether each has one); every pair of hits the two forms order differently has
    scores (the one-index's) within `tolerance(query)` of each other. How many hits were compared."""
    compared = 0
    for query in QUERIES:
        with_all, with_any = (match_scores(forms.one_index, query, every_word=every) for every in (True, False))
        for every_word in (True, False):
            assert match_scores(forms.overlaid, query, every_word=every_word).keys() == (with_all if every_word else with_any).keys()
        for filters in FILTERS:
            total, expected = all_hits(forms.one_index, query, filters)
            got_total, got = all_hits(forms.overlaid, query, filters)
            if not snippets:
                expected, got = ([{**hit, "snippet": bool(hit.get("snippet"))} for hit in hits] for hits in (expected, got))
            assert got_total == total and len(got) == len(expected), (query, filters)
            assert sorted(got, key=key) == sorted(expected, key=key), (query, filters)
            # no paper (these filters let through) has every word: then the search ranks those with any
            scores = with_all if all(key(hit) in with_all for hit in got) else with_any
            place = {key(hit): i for i, hit in enumerate(expected)}
            order = [key(hit) for hit in got]
            places, values = np.array([place[paper] for paper in order]), np.array([scores[paper] for paper in order])
            later = np.triu(np.ones((len(order), len(order)), dtype=bool), 1)
            swapped = later & (places[None, :] < places[:, None])  # [i, j]: i before j here, after j in one index
            gaps = np.abs(values[:, None] - values[None, :]) / np.maximum(values[:, None], values[None, :])
            assert not (swapped & (gaps > tolerance(query))).any(), (
                query,
                filters,
                [(order[i], order[j]) for i, j in zip(*np.nonzero(swapped), strict=True)],
            )
            compared += len(got)
    return compared


def test_search_papers_ranks_alike_to_the_bit_over_an_archive_no_record_replaces(adding: Forms) -> None:
    """One set of BM25 statistics over the overlay: every paper scores what it scores in one index, to the bit, so
    the two orders differ only among papers of equal score."""
    for query in QUERIES:
        for every_word in (True, False):
            assert match_scores(adding.overlaid, query, every_word=every_word) == match_scores(
                adding.one_index, query, every_word=every_word
            )
    assert compare_search(adding, lambda query: 1e-9) > 1_000


def test_search_papers_finds_the_same_papers_over_an_archive_records_replace(replacing: Forms) -> None:
    """The replaced rows' documents are deleted in the overlay, but BM25 statistics count a deleted document until a
    merge (which the archive's index never has): each word weighs as if the replaced rows were there. One word's
    weight is every paper's, so a one-word query orders the papers alike but for near ties; with several words, each
    weighs by how many replaced rows have it, and papers of close scores can swap: within 5 % here, where 6 of 248
    rows are replaced and share every word of their records (a real archive's share is far smaller). A snippet is the
    fragment with the most weight of the words found: it may be another fragment of the same text, for the same reason."""
    tolerance = {1: 0.005}
    assert compare_search(replacing, lambda query: tolerance.get(len(query_terms(query)), 0.05), snippets=False) > 1_000


@pytest.mark.parametrize(
    "filters", FILTERS, ids=lambda filters: ",".join(f"{k}={v}" for k, v in dataclasses.asdict(filters).items() if v is not None) or "none"
)
def test_browsing_is_the_same_order(forms: Forms, filters: SearchFilters) -> None:
    """Without a query, newest first, then by a hash of the paper's key: computed alike in both indexes."""
    assert all_hits(forms.overlaid, "", filters) == all_hits(forms.one_index, "", filters)


def test_corpus_stats_counts_alike(forms: Forms) -> None:
    overlaid, one = (overview.corpus_stats(corpus).model_dump() for corpus in (forms.overlaid, forms.one_index))
    overlaid_load, one_load = overlaid.pop("load"), one.pop("load")
    assert overlaid == one
    assert overlaid["by_source"] == {
        "records": len(forms.records),
        "archive": len(forms.overlaid.index.papers) - len(forms.records),
        "archive_rows_replaced": len(forms.replaced),
    }
    assert (overlaid_load["records_read"], one_load["records_read"]) == (len(forms.records), len(forms.one_index.index.papers))
    assert overlaid_load["rejected"] == overlaid_load["warnings"] == 0


def test_list_samples_by_status_answers_alike(forms: Forms) -> None:
    for status in forms.one_index.index.statuses():
        assert list(pages(queries.samples_by_status_shown, forms.overlaid, status, limit=2)) == list(
            pages(queries.samples_by_status_shown, forms.one_index, status, limit=2)
        )


def test_prompts_and_completions_answer_alike(forms: Forms) -> None:
    overlaid, one = forms.overlaid, forms.one_index
    for paper in one.index.papers:
        assert prompts.implement_prompt(overlaid, paper.key) == prompts.implement_prompt(one, paper.key)
        assert prompts.compare_prompt(overlaid, paper.key) == prompts.compare_prompt(one, paper.key)
    replaced_ids = {paper["arxiv_id"] for paper in forms.replaced if paper.get("arxiv_id")} - {
        record["arxiv_id"] for record in forms.records
    }
    for prefix in ("", "1", "1000.", "1000.0001", "1000.00003", "2", "2999.", "1902.04094", "arXiv:1000.001", "9"):
        parsed = prefix.removeprefix("arXiv:")
        known = one.index.arxiv_ids_with_prefix(parsed, 10_000)
        expected = sorted({*known, *(arxiv for arxiv in replaced_ids if arxiv.startswith(parsed))})[: completions.COMPLETIONS]
        assert completions.complete(overlaid, "arxiv_id", prefix) == expected, prefix
        assert completions.complete(overlaid, "status", prefix) == completions.complete(one, "status", prefix)
        assert completions.complete(overlaid, "code_sha256", prefix) == completions.complete(one, "code_sha256", prefix)


# -- a record wins -----------------------------------------------------------------------------------


def test_a_record_wins_by_arxiv_id_by_slug_and_by_both_at_once(replacing: Forms, built: Built) -> None:
    corpus = replacing.overlaid
    one, three, twelve, twenty = (built.papers[i] for i in (1, 3, 12, 20))

    def answered(asked: str) -> tuple[str, str | None, str | None, str, int]:
        """The paper an id leads to: its title, arXiv id, slug (shown without an arXiv id), attribution, samples."""
        detail = twins.paper_detail(corpus, asked)
        return detail.title, detail.arxiv_id, detail.slug, detail.attribution, detail.samples.total

    by_arxiv = ("Graph attention networks for robust vision", one["arxiv_id"], None, models.ATTRIBUTION, 2)
    assert answered(one["arxiv_id"]) == answered(slug(one)) == answered("a-record-of-paper-one") == by_arxiv
    by_slug = ("A record known by the slug of paper twenty", None, slug(twenty), models.ATTRIBUTION, 1)
    assert answered(slug(twenty)) == answered(twenty["arxiv_id"]) == by_slug  # the archive's arXiv id leads to the record
    both = ("A record with the arXiv id of paper three and the slug of paper twelve", three["arxiv_id"], None, models.ATTRIBUTION, 1)
    assert answered(three["arxiv_id"]) == answered(slug(three)) == answered(slug(twelve)) == answered(twelve["arxiv_id"]) == both
    assert twins.paper_detail(corpus, slug(twelve)).query.resolved == three["arxiv_id"]  # the record's key
    for record in bundled_records():
        assert answered(record["arxiv_id"])[3:] == (models.ATTRIBUTION, len(record["syntology"]["samples"]))
    # every replaced row's arXiv id and slug lead to a record
    titles = {record["title"] for record in replacing.records}
    for paper in replacing.replaced:
        for asked in filter(None, (paper.get("arxiv_id"), slug_of(paper))):
            assert twins.paper_detail(corpus, asked).title in titles, asked


def test_search_finds_a_replaced_paper_once_as_its_record(replacing: Forms) -> None:
    corpus = replacing.overlaid
    for record in replacing.records:
        total, hits = all_hits(corpus, record["title"], SearchFilters())
        assert total == len(hits)
        assert [key(hit) for hit in hits].count(record["arxiv_id"] or slug_of(record)) == 1, record["title"]
    for paper in replacing.replaced:
        _, hits = all_hits(corpus, paper["title"], SearchFilters())
        assert paper["title"] not in {hit["title"] for hit in hits} - {record["title"] for record in replacing.records}
    _, browsed = all_hits(corpus, "", SearchFilters())
    assert len(browsed) == len(corpus.index.papers) == len({key(hit) for hit in browsed})


def test_repository_lists_show_the_record_not_the_archive_row(replacing: Forms, built: Built) -> None:
    listed = {paper.arxiv_id or paper.slug: paper for paper in queries.papers_for_repo(replacing.overlaid, SHARED, limit=100).papers}
    one, twelve, twenty = (built.papers[i] for i in (1, 12, 20))
    assert twelve["arxiv_id"] not in listed and slug(twelve) not in listed  # its record does not link the repository
    assert listed[slug(twenty)].is_official is False  # the row linked it as official; the record does not
    assert listed[one["arxiv_id"]].is_official is True and listed[one["arxiv_id"]].samples == 1
    assert listed["2999.00001"].samples == 1
    archive_rows = [i for i in range(10, 24) if i not in (12, 20)]
    assert {built.papers[i]["arxiv_id"] or slug(built.papers[i]) for i in archive_rows} <= listed.keys()
    assert len(listed) == len(archive_rows) + 3


def test_by_source_counts_the_records_the_archive_and_the_rows_replaced(replacing: Forms, built: Built) -> None:
    stats = overview.corpus_stats(replacing.overlaid)
    # the bundled records replace their own rows; the others one row each, and one of them two
    assert len(replacing.replaced) == 2 + 1 + 1 + 2
    assert stats.by_source == {"records": 7, "archive": len(built.written) - 6, "archive_rows_replaced": 6}
    assert stats.papers == 7 + len(built.written) - 6


# -- scores ------------------------------------------------------------------------------------------


def title_score(corpus: Corpus, paper: str, token: str) -> float:
    """Paper `paper`'s BM25 score for one token of its title, in the title field alone."""
    ranking = corpus.search
    assert isinstance(ranking, Ranking)
    result = ranking._searcher.search(tantivy.Query.term_query(SCHEMA, "title", token), 100_000)
    papers = ranking._papers([address for _, address in result.hits])
    return next(score for found, (score, _) in zip(papers, result.hits, strict=True) if corpus.index.papers[found].key == paper)


def idf(documents: int, having: int) -> float:
    """BM25's inverse document frequency, as tantivy computes it."""
    return math.log(1 + (documents - having + 0.5) / (having + 0.5))


def test_a_paper_scores_the_same_from_the_archive_as_from_a_record_of_its_text_but_for_its_rarest_words(
    adding: Forms, built: Built
) -> None:
    """The same paper, once from the archive, once from a record of the same text (what the build wrote of it) above
    the same archive. One set of BM25 statistics serves both; but the archive row the record replaces, deleted, is still
    counted in them (until a merge, which the archive's index never has): each word of the paper is in one document
    more than it seems. Exactly that (BM25's idf, with one document more) is the difference: within 1 % for a word a
    fifth of the papers have here (in a 600,000-paper archive, for a word ten papers have); for a word only this paper
    has, it weighs for every paper with it alike, and less: 10 % here, 4 % at 600,000 papers (ln(600,000 / 2.5) /
    ln(600,000 / 1.5))."""
    paper = next(paper for paper in built.written if paper.get("arxiv_id") and paper.get("abstract") and paper.get("tasks"))
    key = paper["arxiv_id"]
    as_record = served_both_ways(built, [*adding.records, paper], "same-text").overlaid
    assert twins.paper_detail(as_record, key).attribution == models.ATTRIBUTION
    assert twins.paper_detail(adding.overlaid, key).attribution == models.ARCHIVE_ATTRIBUTION
    ranking = adding.overlaid.search
    assert isinstance(ranking, Ranking)
    documents = len(adding.overlaid.index.papers)  # no document deleted: every one is a paper
    common = rare = 0
    for token in sorted({token for word in query_terms(paper["title"]) for token in query_tokens(word)}):
        having = ranking._searcher.doc_freq("title", token)
        ratio = title_score(as_record, key, token) / title_score(adding.overlaid, key, token)
        assert ratio == pytest.approx(idf(documents + 1, having + 1) / idf(documents, having), rel=0.002), token
        if having >= documents // 5:
            assert ratio == pytest.approx(1, rel=0.01), token
            common += 1
        elif having == 1:
            assert ratio < 0.95, token  # among 250 papers, a word only it has weighs 10 % less
            rare += 1
    assert common >= 3 and rare >= 1
    for word in query_terms(paper["title"]):  # in every field, as search ranks
        tokens = query_tokens(word)
        having = [ranking._searcher.doc_freq(field, token) for field in FIELDS for token in tokens]
        if all(count == 0 or count >= documents // 5 for count in having):
            assert match_scores(as_record, word)[key] == pytest.approx(match_scores(adding.overlaid, word)[key], rel=0.01), word
            common += 1
    assert common >= 5


# -- an archive segment every paper of which a record replaces ---------------------------------------


def test_an_archive_segment_whose_every_paper_a_record_replaces_is_served(tmp_path: Path) -> None:
    """The overlay's commit drops a segment whose every document it deletes: no merge, the archive is served."""
    build_archive(
        [write_json(tmp_path / "papers.json", [paper_row("only-one", "The only paper", arxiv_id="2101.00001")])], tmp_path / "archive"
    )
    records = write_records(tmp_path / "records", [make_record("2101.00001", "only-one", title="Its record")])
    corpus = Corpus.load([records], archive_dir=tmp_path / "archive")
    assert corpus.archive_note is None
    assert overview.corpus_stats(corpus).by_source == {"records": 1, "archive": 0, "archive_rows_replaced": 1}
    assert [hit.title for hit in queries.search_papers(corpus, "paper record").hits] == ["Its record"]


# -- the archive is never written -----------------------------------------------------------------------


@pytest.mark.parametrize("copied", [False, True], ids=["as-built", "copied-without-its-lock"])
def test_starts_reloads_and_searches_never_write_the_archive(built: Built, tmp_path: Path, copied: bool) -> None:
    """The archive's whole tree (every entry's mode, size, times and bytes, none added) is as it was after starts
    cold and warm, a check, reloads and every kind of query; every file still has the bytes its manifest says. The
    tree is read-only; the tests run as root, whom that does not stop, so what is proved is that nothing is written,
    not that writing would fail (`tests/archive/test_kills.py` serves a read-only mount, and as another user)."""
    archive = tmp_path / "archive"
    ignore = (lambda directory, names: [".lock"]) if copied else None
    shutil.copytree(built.archive, archive, symlinks=True, ignore=ignore)
    read_only(archive)
    before = tree(archive)
    records = write_records(tmp_path / "records", records_that_replace(built.papers))
    for _ in range(2):
        corpus = Corpus.load([records], archive_dir=archive)
        for query in QUERIES:
            queries.search_papers(corpus, query)
        queries.search_papers(corpus, "", SearchFilters(year_from=2012))
        for paper in list(corpus.index.papers)[::25]:
            queries.paper_detail_shown(corpus, paper.key)
            queries.harvested_code_shown(corpus, paper.key)
        queries.papers_for_repo(corpus, SHARED)
        overview.corpus_stats(corpus)
        for stage in open_stages([records], Limits(), tmp_path / "cache", archive_dir=archive):  # cold, then warm
            assert stage.corpus.archive_note is None
        assert (
            main(["check", "--records", str(records), "--archive", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")])
            == 0
        )
        del corpus
        gc.collect()
    assert tree(archive) == before
    build = current_build(archive)
    assert build is not None
    manifest = orjson.loads((build / MANIFEST).read_bytes())
    assert (
        mapped.verify(build, {name: mapped.FileFacts(facts["bytes"], facts["sha256"]) for name, facts in manifest["files"].items()}) == []
    )


# -- an archive of another format -------------------------------------------------------------------------


def format_1_archive(directory: Path) -> Path:
    """An archive as papercode wrote it before the serving form: `archive.json` and record shards."""
    (directory / "records").mkdir(parents=True)
    (directory / "archive.json").write_bytes(orjson.dumps({"format": "papercode-archive", "format_version": 1, "records_dir": "records"}))
    record = {"url": "/paper/old-form", "title": "A paper of the old form", "arxiv_id": "2003.00003"}
    (directory / "records" / "papers-00.jsonl").write_bytes(orjson.dumps(record) + b"\n")
    return directory


def future_archive(directory: Path, built: Built) -> Path:
    """A build of a later format than this papercode serves (its manifest says so), made current."""
    shutil.copytree(built.archive, directory, symlinks=True)
    build = current_build(directory)
    assert build is not None
    manifest = orjson.loads((build / MANIFEST).read_bytes())
    (build / MANIFEST).write_bytes(orjson.dumps({**manifest, "format_version": 3}))
    return directory


ARCHIVES: dict[str, tuple[Callable[[Path, Built], Path], str]] = {
    "format-1": (lambda directory, built: format_1_archive(directory), "format 1"),
    "format-3": (future_archive, "format 3"),
    "missing": (lambda directory, built: directory, "there is no archive in archive"),
}


@pytest.mark.parametrize("kind", ARCHIVES)
def test_an_archive_of_another_format_or_none_leaves_the_records_served_alone_saying_why(
    kind: str, built: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, why = ARCHIVES[kind]
    archive = make(tmp_path / "archive", built)
    records = write_records(tmp_path / "records", records_that_add(built.papers))
    corpus = Corpus.load([records], archive_dir=archive)
    assert corpus.archive is None and corpus.archive_note is not None
    assert (
        why in corpus.archive_note and "papercode archive build" in corpus.archive_note and "papercode archive fetch" in corpus.archive_note
    )
    assert str(tmp_path) not in corpus.archive_note
    stats = overview.corpus_stats(corpus)
    assert (stats.papers, stats.by_source) == (2, None)
    assert twins.paper_detail(corpus, "2999.00001").title == "Deep language models for robust data"
    assert main(["check", "--records", str(records), "--archive", "--archive-dir", str(archive), "--code-dir", str(tmp_path / "code")]) == 1
    out = capsys.readouterr().out
    assert f"archive: {corpus.archive_note}\n" in out


@pytest.mark.parametrize("kind", ARCHIVES)
def test_corpus_stats_the_load_notice_and_not_found_say_why_the_archive_is_not_served(kind: str, built: Built, tmp_path: Path) -> None:
    make, why = ARCHIVES[kind]
    corpus = Corpus.load(
        [write_records(tmp_path / "records", records_that_add(built.papers))], archive_dir=make(tmp_path / "archive", built)
    )
    note = corpus.archive_note
    assert note is not None and why in note
    assert overview.corpus_stats(corpus).archive == note
    assert overview.load_notice(corpus) == ("warning", f"loaded 2 papers; {note}")
    reason, _, next_step = note.partition(". Next: ")
    asks: list[Callable[[], object]] = [
        lambda: twins.paper_detail(corpus, "2003.00003"),  # an arXiv id the archive might have had
        lambda: twins.paper_detail(corpus, "old-form"),  # a slug
        lambda: queries.papers_for_repo(corpus, "owner/never-linked"),  # a repository
    ]
    for ask in asks:
        with pytest.raises(QueryError) as error:
            ask()
        assert error.value.code == "not_found"
        assert error.value.detail.endswith(f" ({reason})") and error.value.next_step.startswith(next_step + "; or ")


def test_not_found_says_the_whole_reason_and_papercodes_next_step_whatever_the_reason_holds(built: Built, tmp_path: Path) -> None:
    """The reason and the next step are kept apart, never cut out of one line again: a directory whose name holds
    ". Next: " stays in the reason."""
    records = write_records(tmp_path / "records", records_that_add(built.papers))
    corpus = Corpus.load([records], archive_dir=tmp_path / "archive. Next: remove the records")
    with pytest.raises(QueryError) as error:
        twins.paper_detail(corpus, "2003.00003")
    assert error.value.detail.endswith(" (the archive is not served: there is no archive in archive. Next: remove the records)")
    assert error.value.next_step.startswith(f"{ARCHIVE_NEXT}; or ")


def test_an_archive_served_or_not_asked_for_says_nothing_of_it(adding: Forms, built: Built, tmp_path: Path) -> None:
    for corpus in (adding.overlaid, Corpus.load([write_records(tmp_path / "records", records_that_add(built.papers))])):
        assert corpus.archive_note is None and overview.corpus_stats(corpus).archive is None and overview.load_notice(corpus) is None
        with pytest.raises(QueryError) as error:
            twins.paper_detail(corpus, "2998.99999")
        assert "archive" not in str(error.value)


def test_a_damaged_build_is_not_served_and_says_so(built: Built, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    shutil.copytree(built.archive, archive, symlinks=True)
    build = current_build(archive)
    assert build is not None
    title = build / "papers" / "title.data"
    title.write_bytes(title.read_bytes()[:-1])
    corpus = Corpus.load([write_records(tmp_path / "records", records_that_add(built.papers))], archive_dir=archive)
    assert corpus.archive is None and corpus.archive_note is not None
    assert f"the archive's build {build.name} is damaged" in corpus.archive_note and "title.data" in corpus.archive_note


# -- builds no server holds ---------------------------------------------------------------------------------


def test_a_build_a_server_holds_is_kept_and_the_next_build_after_it_is_gone_removes_it(built: Built, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    shutil.copytree(built.archive, archive, symlinks=True)
    held = current_build(archive)
    assert held is not None
    corpus = Corpus.load([write_records(tmp_path / "records", records_that_add(built.papers))], archive_dir=archive)
    sources = [write_json(tmp_path / "src" / "papers.json", [paper_row("newer", "A newer build's paper", arxiv_id="2102.00001")])]
    newer = build_archive(sources, archive, data_date=DATA_DATE)
    assert sorted(os.listdir(archive / BUILDS)) == sorted([held.name, newer.build_id])
    assert os.readlink(archive / CURRENT) == f"{BUILDS}/{newer.build_id}"
    still = next(paper["arxiv_id"] for paper in built.written[20:] if paper.get("arxiv_id"))
    assert twins.paper_detail(corpus, still).attribution == models.ARCHIVE_ATTRIBUTION  # still served, whole
    assert queries.search_papers(corpus, "graph").total > 0
    opened = open_archive(archive)  # a server starting now gets the new build
    assert (opened.build_id, len(opened)) == (newer.build_id, 1)
    opened.close()
    del corpus
    gc.collect()
    newest = build_archive(sources, archive, data_date=DATA_DATE)
    assert sorted(os.listdir(archive / BUILDS)) == [newest.build_id]


def test_an_overlay_is_made_in_memory_unless_tmpdir_says_where_scratch_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    from papercode.index import overlay

    monkeypatch.delenv("TMPDIR", raising=False)
    expected = Path("/dev/shm") if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None
    assert overlay.overlay_parent() == expected
    monkeypatch.setenv("TMPDIR", "/somewhere/else")
    assert overlay.overlay_parent() is None  # the temporary directory, which TMPDIR names


def test_a_start_sweeps_overlays_a_dead_process_left_where_overlays_are_made(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from papercode.cli import main as cli
    from papercode.index import overlay

    monkeypatch.setattr(overlay, "_MEMORY_FILES", tmp_path)
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(cli, "overlay_parent", overlay.overlay_parent)
    dead = tmp_path / f"{overlay.OVERLAY_PREFIX}999999999-abc"
    dead.mkdir()
    cli.clear_leftovers(settings_for("serve", {"--cache-dir": str(tmp_path / "cache"), "--code-dir": str(tmp_path / "code")}))
    assert not dead.exists()
