"""The fast paths of the keyed tools, each proven to say what the slower way it replaced says.

- Answers as shown: the keyed tools build their answers as JSON-ready dicts (`shaping.shown`), once, with no answer
  model and no dump; the answer models stay the schema the model sees. Each shown answer, validated into its model
  and dumped as the edge used to dump it (`model_dump(mode="json", exclude_none=True)`), gives the same JSON bytes
  (values and key order), for every paper and every page of every listing of the test corpora.
- Nothing is lost by grouping: every sample of every page, read back from its groups (`tool_answers.flat_samples`),
  is the sample as the index holds it, every field.
- A bare new-style arXiv id is read without the id patterns (`core.ids.parse_arxiv_id`).
- An abstract is a slice of the abstracts file written beside the search index (`SearchEngine.abstract`), not a
  stored document decompressed; snippets from the abstract read it there too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from papercode.answers import checks, models, queries, shaping, twins
from papercode.core.ids import _arxiv_id_by_patterns, parse_arxiv_id
from papercode.corpus.stages import Corpus
from papercode.index import search_writer
from papercode.index.abstracts import ABSTRACTS
from papercode.index.mapped_archive import ARCHIVE_BASE
from papercode.index.overlaid import OverlaidIndex
from papercode.index.paper_index import SampleRow
from papercode.index.search import SearchEngine
from papercode.index.search_documents import SearchDocument, document_texts, documents_of, paper_texts
from papercode.index.search_queries import SearchFilters
from tests.support.archive_overlay import build_small_archive, load_overlaid
from tests.support.tool_answers import STATUS_IMPLIES, flat_samples

PAGE = 7  # small, so that a paper's samples cross many pages (and the last, partial one)


def same_as_model(model: type[BaseModel], shown: dict[str, Any]) -> None:
    dumped = model.model_validate(shown).model_dump(mode="json", exclude_none=True)
    assert orjson.dumps(shown) == orjson.dumps(dumped)


def pages(ask: Callable[..., dict[str, Any]], *arguments: Any, **named: Any) -> Iterator[dict[str, Any]]:
    """Every page of one paged answer, following its cursors."""
    cursor = None
    while True:
        page = ask(*arguments, cursor=cursor, **named)
        yield page
        cursor = page.get("next_cursor")
        if cursor is None:
            return


def some_stored(sha: str) -> bool:
    return sha[-1] in "02468ace"


@pytest.fixture(params=["bundled", "synthetic", "overlaid"])
def any_corpus(request: pytest.FixtureRequest, tmp_path: Path) -> Corpus:
    if request.param == "overlaid":
        return load_overlaid(request.getfixturevalue("overlaid"))
    return request.getfixturevalue("corpus" if request.param == "bundled" else "synthetic_corpus")


def test_every_paper_and_every_page_of_its_samples(any_corpus: Corpus) -> None:
    corpus = any_corpus
    statuses = corpus.index.statuses()
    for paper in corpus.index.papers:
        same_as_model(models.PaperAnswer, queries.paper_detail_shown(corpus, paper.key))
        for stored in (None, some_stored):
            same_as_model(models.HarvestedCode, queries.harvested_code_shown(corpus, paper.key, stored=stored))
        if len(paper.samples) <= PAGE:  # one page, of the shape just checked
            continue
        for status, kind in ((None, None), (statuses[0], None), (statuses[1:3], "listed"), (None, "official")):
            for page in pages(
                queries.harvested_code_shown, corpus, paper.key, status=status, repo_kind=kind, limit=PAGE, stored=some_stored
            ):
                same_as_model(models.HarvestedCode, page)


def test_every_page_of_every_listing(any_corpus: Corpus) -> None:
    corpus = any_corpus
    statuses = corpus.index.statuses()
    # The largest page: every page of the synthetic corpus's 25,000 samples in a few seconds.
    # (Every synthetic sample is Python, and its Apache-2.0 ones are its inline ones: filters by language or by that
    # licence would walk the same pages again.)
    filters: list[dict[str, Any]] = [{}, {"inline_only": True}, {"repo_kind": "official"}, {"licence": "MIT"}]
    # Each status alone, then all of them under each filter. (Which samples a filter picks is
    # `test_every_listing_page_read_from_runs_or_buckets_is_the_listing_walked`'s; the shown answer does not depend on it.)
    # Every page of all of them, unfiltered, is held to the model (every sample once); of the others, the first two
    # pages and the last, each walked to its end.
    for status, chosen in [*((status, {}) for status in statuses), *((statuses, chosen) for chosen in filters)]:
        walked = list(pages(queries.samples_by_status_shown, corpus, status, limit=checks.MAX_LIMIT, **chosen))
        for page in walked if status == statuses and not chosen else [*walked[:2], *walked[2:][-1:]]:
            same_as_model(models.SampleList, page)
        assert sum(len(flat_samples(page)) for page in walked) == walked[-1]["total"]


def test_every_list_of_papers(any_corpus: Corpus) -> None:
    corpus = any_corpus
    keys = [paper.key for paper in corpus.index.papers]
    for start in range(0, len(keys), checks.MAX_PAPERS_ASKED):
        asked = keys[start : start + checks.MAX_PAPERS_ASKED]
        same_as_model(models.PaperAnswer, queries.paper_list_shown(corpus, asked))
    same_as_model(models.PaperAnswer, queries.paper_list_shown(corpus, [*keys[:3], "9999.99999", "not an id!"]))


def test_the_model_twins_are_the_shown_answers_validated(corpus: Corpus) -> None:
    paper = corpus.index.papers[0].key
    assert twins.paper_detail(corpus, paper) == models.PaperAnswer.model_validate(queries.paper_detail_shown(corpus, paper))
    assert twins.paper_list(corpus, [paper]) == models.PaperAnswer.model_validate(queries.paper_list_shown(corpus, [paper]))
    assert twins.harvested_code(corpus, paper) == models.HarvestedCode.model_validate(queries.harvested_code_shown(corpus, paper))
    assert twins.samples_by_status(corpus, "ran") == models.SampleList.model_validate(queries.samples_by_status_shown(corpus, "ran"))


def said(row: SampleRow, stored: Callable[[str], bool] | None = None, **listed: str) -> dict[str, Any]:
    """A sample as the index holds it, every field, as a grouped answer must let it be read (`flat_samples`): a
    contract check or verification level the record lacks reads as its status implies (the schema says so)."""
    check, level = STATUS_IMPLIES.get(row.status, (None, None))
    full = {
        "code_sha256": row.code_sha256,
        "entry": row.entry,
        "repo": row.repo,
        "repo_kind": row.repo_kind,
        "path": row.path,
        "language": row.language,
        "status": row.status,
        "contract_check": check if row.contract_check is None else row.contract_check,
        "verification_level": level if row.verification_level is None else row.verification_level,
        "licence": row.licence,
        "inline_ok": row.inline_ok,
        "stored": True if stored is not None and row.inline_ok and stored(row.code_sha256) else None,
        **listed,
    }
    return {key: value for key, value in full.items() if value is not None}


def grouped_order(rows: list[SampleRow], by_paper: bool) -> list[SampleRow]:
    """A page's samples in the order a grouped answer says them: by group (paper, when listed across papers; then
    repository with its kind, language, licence and inline_ok), then by file, each where its first sample is."""

    def group(row: SampleRow) -> tuple[Any, ...]:
        return (row.paper if by_paper else None, row.repo, row.repo_kind, row.language, row.licence, row.inline_ok)

    papers: dict[int, int] = {}
    groups: dict[tuple[Any, ...], int] = {}
    files: dict[tuple[Any, ...], int] = {}
    for position, row in enumerate(rows):
        papers.setdefault(row.paper if by_paper else -1, position)
        groups.setdefault(group(row), position)
        files.setdefault((*group(row), row.path), position)
    return sorted(rows, key=lambda row: (papers[row.paper if by_paper else -1], groups[group(row)], files[(*group(row), row.path)]))


def test_grouped_samples_say_every_field_of_every_sample(any_corpus: Corpus) -> None:
    corpus = any_corpus
    index = corpus.index
    for paper in index.papers:
        for status, kind in ((None, None), (index.statuses()[1:3], None), (None, "listed")):
            ids = index.samples.select(paper.samples, status, kind)
            for number, page in enumerate(
                pages(queries.harvested_code_shown, corpus, paper.key, status=status, repo_kind=kind, limit=PAGE, stored=some_stored)
            ):
                rows = index.samples.rows(ids[number * PAGE : (number + 1) * PAGE])
                assert flat_samples(page) == [said(row, some_stored) for row in grouped_order(rows, by_paper=False)]
    for statuses in [[status] for status in index.statuses()] + [index.statuses()]:
        for number, page in enumerate(pages(queries.samples_by_status_shown, corpus, statuses, limit=PAGE)):
            _, ids = index.list_sample_ids(statuses, offset=number * PAGE, limit=PAGE)
            rows = index.samples.rows(ids)
            expected = [
                said(row, paper=index.papers.key(row.paper), title=shaping.shorten(index.papers.title[row.paper], shaping.TITLE_CHARS))
                for row in grouped_order(rows, by_paper=True)
            ]
            assert flat_samples(page) == expected


_ID_LIKE = st.text(alphabet="0123456789.v/ :-aAxXrRiI\u0660\u0661\u00b2\u0969", min_size=0, max_size=14)


@given(st.one_of(_ID_LIKE, st.from_regex(r"\s?\d{4}\.\d{4,5}(v\d)?\s?", fullmatch=True)))
@settings(max_examples=200, deadline=None)
def test_a_bare_arxiv_id_is_read_as_the_patterns_read_it(text: str) -> None:
    assert parse_arxiv_id(text) == _arxiv_id_by_patterns(text.strip())


def listing_by_scan(
    listing: list[tuple[int, SampleRow]],
    statuses: list[str],
    *,
    repo_kind: str | None,
    language: str | None,
    licence: str | None,
    inline_only: bool,
) -> list[int]:
    """The listing's sample ids for these filters by walking the whole listing: what `list_sample_ids` must page."""
    return [
        i
        for i, row in listing
        if row.status in statuses
        and (repo_kind is None or row.repo_kind == repo_kind)
        and (language is None or (row.language or "").lower() == language.lower())
        and (licence is None or (row.licence or "").lower() == licence.lower())
        and (row.inline_ok or not inline_only)
    ]


def test_every_listing_page_read_from_runs_or_buckets_is_the_listing_walked(any_corpus: Corpus) -> None:
    index = any_corpus.index
    statuses = index.statuses()
    order = list(index.listing_order)
    listing = list(zip(order, index.samples.rows(order), strict=True))
    assert any(run is not None for runs in index._runs_by_status.values() for _, _, run in runs)
    for wanted in [[status] for status in statuses] + [statuses[:2], statuses]:
        for kind, language, licence, inline_only in [
            (None, None, None, False),
            (None, None, None, True),
            ("official", None, None, False),
            ("official", None, None, True),
            ("listed", None, None, False),
            (None, "python", None, False),
            (None, None, "mit", True),
        ]:
            expected = listing_by_scan(listing, wanted, repo_kind=kind, language=language, licence=licence, inline_only=inline_only)
            for offset, limit in [(0, None), (0, 1), (0, 25), (3, 7), (len(expected) - 2, 5), (len(expected) + 1, 5)]:
                offset = max(offset, 0)
                end = None if limit is None else offset + limit
                got = index.list_sample_ids(
                    wanted, repo_kind=kind, language=language, licence=licence, inline_only=inline_only, offset=offset, limit=limit
                )
                assert got == (len(expected), expected[offset:end])


@pytest.mark.parametrize("threads_from", [1, 20_000], ids=["two-segments", "one-segment"])
def test_every_abstract_is_the_text_its_paper_s_document_had(
    synthetic_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_from: int
) -> None:
    monkeypatch.setattr(search_writer, "_TWO_THREADS_FROM", threads_from)
    papers = list(synthetic_corpus.index.papers)
    texts = {paper.ordinal: ("" if paper.ordinal % 7 == 3 else f"Über {paper.ordinal} — ✓ zebra") for paper in papers[1::2]}
    documents = [
        SearchDocument(paper, False, f"key-{paper}", f"title {paper}", text, "", [], [], [], [], None, None, 0, False)
        for paper, text in texts.items()
    ]
    search_writer.write_index(tmp_path / "index", documents, len(documents))
    engine = SearchEngine(tmp_path / "index")
    # Papers without a document (every other one), with an empty abstract, and past the last: none.
    assert [engine.abstract(paper) for paper in range(len(papers) + 2)] == [texts.get(paper) or None for paper in range(len(papers) + 2)]
    assert engine.abstract(-1) is None
    by_paper = {document.paper: document for document in documents}

    def texts_of(paper: int) -> dict[str, str]:
        document = by_paper[paper]
        return document_texts(document.title, document.authors, document.tasks, document.methods)

    page = engine.search("zebra", SearchFilters(), 0, 3, texts_of)
    assert page.total == sum(1 for text in texts.values() if text) and page.hits
    assert all(hit.snippet == f"Über {hit.paper} — ✓ **zebra**" for hit in page.hits)  # a snippet from the abstract
    page = engine.search("title", SearchFilters(), 0, 3, texts_of)
    assert page.total == len(documents) and all(hit.snippet == f"**title** {hit.paper}" for hit in page.hits)  # and from the texts given


def test_the_documents_must_come_in_paper_order(tmp_path: Path) -> None:
    documents = [SearchDocument(paper, False, f"k{paper}", "t", "a", "", [], [], [], [], None, None, 0, False) for paper in (0, 2, 1)]
    with pytest.raises(ValueError, match="in paper order"):
        search_writer.write_index(tmp_path / "index", documents, len(documents))


@pytest.mark.parametrize("damage", ["missing", "empty", "cut short", "count too large", "count too small"])
def test_a_missing_or_damaged_abstracts_file_is_refused(tmp_path: Path, damage: str) -> None:
    documents = [
        SearchDocument(paper, False, f"k{paper}", "t", f"abstract {paper}", "", [], [], [], [], None, None, 0, False) for paper in range(3)
    ]
    search_writer.write_index(tmp_path / "index", documents, len(documents))
    assert SearchEngine(tmp_path / "index").abstract(2) == "abstract 2"
    path = tmp_path / "index" / ABSTRACTS
    data = path.read_bytes()
    if damage == "missing":
        path.unlink()
    else:
        path.write_bytes(
            {
                "empty": b"",
                "cut short": data[:-3],
                "count too large": data[:-8] + (99).to_bytes(8, "little"),
                "count too small": data[:-8] + (0).to_bytes(8, "little"),
            }[damage]
        )
    with pytest.raises(ValueError):  # a snapshot holding it is rebuilt, never served
        SearchEngine(tmp_path / "index")


@pytest.mark.parametrize("which", ["bundled", "synthetic", "overlaid"])
def test_snippets_are_cut_from_the_texts_that_were_indexed(
    which: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tantivy stores no text: `paper_texts` rebuilds each paper's from the index's columns, and must give what its
    # document indexed, or a snippet's marks would fall in the wrong places. Every document a build writes goes
    # through `IndexWriting.add`: the records' (`write_index`) and the archive's (`archive.serving`), alike.
    indexed: dict[int, SearchDocument] = {}
    add = search_writer.IndexWriting.add

    def capture(self: search_writer.IndexWriting, document: SearchDocument) -> None:
        indexed[document.paper] = document
        add(self, document)

    monkeypatch.setattr(search_writer.IndexWriting, "add", capture)
    if which == "overlaid":
        records, _ = request.getfixturevalue("overlaid")
        corpus = load_overlaid((records, build_small_archive(tmp_path_of(request) / "sources", tmp_path_of(request) / "archive")))
        index = corpus.index
        assert isinstance(index, OverlaidIndex) and index.ordinals is not None
        ordinals = index.ordinals
        by_paper = {
            (value if value < ARCHIVE_BASE else ordinals.of_archive(value - ARCHIVE_BASE)): document
            for value, document in indexed.items()
            if value < ARCHIVE_BASE or ordinals.visible(value - ARCHIVE_BASE)  # a replaced row's document is deleted
        }
    else:
        corpus = Corpus.load(
            [Path(root) for root in request.getfixturevalue("corpus" if which == "bundled" else "synthetic_corpus").index.report.roots]
        )
        by_paper = indexed
    texts = paper_texts(corpus.index)
    assert len(by_paper) == len(corpus.index.papers)
    for paper, document in by_paper.items():
        assert texts(paper) == document_texts(document.title, document.authors, document.tasks, document.methods)
        assert corpus.search is not None and corpus.search.abstract(paper) == (document.abstract or None)


def tmp_path_of(request: pytest.FixtureRequest) -> Path:
    path: Path = request.getfixturevalue("tmp_path")
    return path


@pytest.mark.parametrize("which", ["bundled", "synthetic", "overlaid"])
def test_the_documents_an_overlay_lays_are_those_the_build_indexed(
    which: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`search_documents.documents_of` makes the records' documents again from the index's columns and abstracts (what the overlay
    adds over the archive's index): the documents the build wrote, field for field (a duplicate's winner is written
    once, so it replaces nothing there)."""
    written: list[SearchDocument] = []
    write_index = search_writer.write_index

    def capture(directory: Path, documents: Any, count: int) -> None:
        documents = list(documents)
        written.extend(documents)
        write_index(directory, documents, count)

    monkeypatch.setattr(search_writer, "write_index", capture)
    if which == "overlaid":
        records, _ = request.getfixturevalue("overlaid")
        corpus = Corpus.load([records])
    else:
        corpus = Corpus.load(
            [Path(root) for root in request.getfixturevalue("corpus" if which == "bundled" else "synthetic_corpus").index.report.roots]
        )
    assert isinstance(corpus.search, SearchEngine) and written
    again = list(documents_of(corpus.index, corpus.search.abstract))
    assert again == [msgspec.structs.replace(document, replacing=False) for document in written]
