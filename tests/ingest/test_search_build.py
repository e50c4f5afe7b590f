"""The search database is built beside the index (here or in a child process) and agrees with it: a duplicate's
winner replaces what it beat, and a child that read other records is not trusted."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from papercode.answers import overview, queries, twins
from papercode.core.limits import Limits
from papercode.core.load_report import LoadReport
from papercode.corpus.stages import Corpus, build_stages
from papercode.index import snippets
from papercode.index.search import SearchEngine
from papercode.index.search_documents import paper_texts
from papercode.index.search_queries import SearchFilters
from papercode.ingest import parallel as search_build
from papercode.ingest.admission import Admission
from papercode.ingest.decode import iter_records
from papercode.ingest.documents import search_document
from papercode.ingest.duplicates import facts
from papercode.ingest.files import find_record_files
from tests.support.hostile_records import HOSTILE_LIMITS, plain_record, plain_sample, write_hostile_set
from tests.support.records import list_samples, make_record, write_records

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]


def test_duplicate_winner_replaces_the_loser_in_search(load_corpus: LoadCorpus) -> None:
    older = make_record("2001.00001", "same", title="Quokka estimation", abstract="About quokkas.")
    newer = make_record("2001.00001", "same", title="Wombat estimation", abstract="About wombats.")
    older["syntology"]["read_at"], newer["syntology"]["read_at"] = "2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"
    corpus = load_corpus([older, make_record("2001.00002", "other", title="Unrelated"), newer])
    assert queries.search_papers(corpus, "quokka").total == 0
    found = queries.search_papers(corpus, "wombat")
    assert [hit.arxiv_id for hit in found.hits] == ["2001.00001"] and found.hits[0].title == "Wombat estimation"
    assert twins.paper_detail(corpus, "2001.00001").abstract == "About wombats."
    assert queries.search_papers(corpus, "").total == 2  # browsing counts each paper once


def _hits(corpus: Corpus, query: str) -> list[tuple[str | None, str | None]]:
    return [(hit.arxiv_id, hit.snippet) for hit in queries.search_papers(corpus, query).hits]


@pytest.fixture
def records(tmp_path: Path) -> Path:
    older = make_record("2001.00001", "same", title="Quokka estimation", abstract="About quokkas.")
    newer = make_record("2001.00001", "same", title="Wombat estimation", abstract="About wombats and quokkas.")
    older["syntology"]["read_at"], newer["syntology"]["read_at"] = "2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"
    return write_records(tmp_path / "records", [older, make_record("2001.00002", "other", title="Quokka habitats"), newer])


def test_a_shipped_record_reads_back_as_its_facts_and_its_search_document(records: Path, tmp_path: Path) -> None:
    """What crosses to the child per record (`parallel.ship`, msgpack arrays): its facts and, when admitted, its search
    document, read back field for field; a record not admitted ships no document."""
    items = list(iter_records([records], LoadReport()))
    admission = Admission(LoadReport())
    expected: list[tuple[Any, Any]] = []
    with open(tmp_path / "documents", "wb") as stream:
        for item in [*items, items[0]]:
            admitted = admission.admit(item) if len(expected) < len(items) else None
            search_build.ship(stream, item, admitted)
            expected.append((facts(item), None if admitted is None else search_document(item, admitted)))
    shipped = search_build._Documents(tmp_path / "documents")
    read = [(fact, shipped.document(where, length) if length else None) for fact, where, length in shipped.frames()]
    shipped.close()
    assert read == expected
    assert [document is None for _, document in expected] == [False] * len(items) + [True]
    assert any(document.replacing for _, document in expected if document is not None)  # the duplicate's winner


@pytest.mark.process
def test_the_search_child_process_builds_what_this_process_would(records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = Corpus.load([records])
    monkeypatch.setattr(search_build, "CHILD_PROCESS_BYTES", 0)
    started: list[int] = []
    original = search_build.ChildSearchBuild.__init__

    def counting(self: search_build.ChildSearchBuild, *args: Any) -> None:
        started.append(1)
        original(self, *args)

    monkeypatch.setattr(search_build.ChildSearchBuild, "__init__", counting)
    stages = list(build_stages([records], Limits()))
    assert started == [1]
    assert [stage.search is None for stage in stages] == [True, False]
    child = stages[-1]
    for query in ("quokka", "wombat", "estimation", ""):
        assert _hits(child, query) == _hits(here, query)
    assert twins.paper_detail(child, "2001.00001").abstract == "About wombats and quokkas."


@pytest.mark.process
def test_a_child_that_read_other_records_is_not_trusted(records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_build, "CHILD_PROCESS_BYTES", 0)
    real_result = search_build.ChildSearchBuild.result

    def records_changed(self: search_build.ChildSearchBuild, fingerprint: bytes) -> SearchEngine:
        return real_result(self, b"\0" * len(fingerprint))  # as if the child saw other records

    monkeypatch.setattr(search_build.ChildSearchBuild, "result", records_changed)
    *_, complete = build_stages([records], Limits())
    assert [hit[0] for hit in _hits(complete, "wombat")] == ["2001.00001"]
    assert complete.search is not None


def test_an_abstract_never_waits_behind_a_search(records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = Corpus.load([records])
    engine = corpus.search
    assert engine is not None
    entered, release = threading.Event(), threading.Event()
    snippet = snippets.Snippets.best

    def held(self: snippets.Snippets, paper: int) -> str | None:  # the search holds on, mid-way, until released
        entered.set()
        release.wait(10)
        return snippet(self, paper)

    monkeypatch.setattr(snippets.Snippets, "best", held)
    running = threading.Thread(target=engine.search, args=("wombat", SearchFilters(), 0, 10, paper_texts(corpus.index)))
    running.start()
    try:
        assert entered.wait(10)  # a search is running in another thread
        assert engine.abstract(0) == "About wombats and quokkas."
    finally:
        release.set()
        running.join(10)


def _everything(corpus: Corpus) -> tuple[object, ...]:
    """What every tool can read of a corpus, and its load report."""
    index, report = corpus.index, corpus.index.report
    papers = [twins.paper_detail(corpus, paper.key).model_dump() for paper in index.papers]
    samples = [twins.harvested_code(corpus, paper.key, limit=100).model_dump() for paper in index.papers]
    listing = list_samples(index, index.statuses())
    repos = [index.papers_for_repo(name) for name in index.repo_names]
    found = [queries.search_papers(corpus, query, limit=100).model_dump() for query in ("", "good", "harvest newer", "paper")]
    counters = (report.files_seen, report.files_read, report.records_read, report.records_indexed)
    return report.problems, counters, papers, samples, listing, repos, found, overview.corpus_stats(corpus).model_dump()


@pytest.mark.process
def test_a_corpus_split_between_two_processes_indexes_as_one_process_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = write_hostile_set(tmp_path)
    # Beside the hostile set: a later harvest of a paper read earlier, and a slug that is taken, near the end.
    newest = plain_record("2101.00005", title="Newest harvest", read_at="2026-01-01T00:00:00Z")
    (records / "zz_newest.json").write_bytes(orjson.dumps(newest))
    (records / "zz_slug_taken.json").write_bytes(orjson.dumps({**plain_record("2101.00077"), "url": "/paper/slug-2101.00001"}))
    # A loser (its samples are left out of the merge), then samples with their own file URLs, after it.
    (records / "zz_t_loser.json").write_bytes(orjson.dumps(plain_record("2101.00005", title="Oldest", read_at="2020-01-01T00:00:00Z")))
    elsewhere = [plain_sample(f"{i:x}" * 16, file_url=f"https://example.org/{i}.py") for i in (5, 6)]
    (records / "zz_u_urls.json").write_bytes(orjson.dumps(plain_record("2101.00078", samples=elsewhere)))
    *_, here = build_stages([records], HOSTILE_LIMITS, child=False)
    files = [found for found in find_record_files(records, LoadReport())]
    monkeypatch.setattr(search_build, "CHILD_PROCESS_BYTES", 0)
    for share in (0.05, 0.6):
        monkeypatch.setattr(search_build, "HERE_SHARE", share)
        assert 0 < search_build.split_point(files) < len(files)
        stages = list(build_stages([records], HOSTILE_LIMITS))
        assert [stage.search is None for stage in stages] == [True, False]
        assert _everything(stages[-1]) == _everything(here)


@pytest.mark.process
def test_a_child_that_dies_costs_a_build_here_and_nothing_else(records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_build, "CHILD_PROCESS_BYTES", 0)
    real_part = search_build.ChildSearchBuild.part

    def dies_first(self: search_build.ChildSearchBuild) -> Any:
        self._child.process.kill()
        self._child.process.wait()
        return real_part(self)

    monkeypatch.setattr(search_build.ChildSearchBuild, "part", dies_first)
    *_, complete = build_stages([records], Limits())
    assert [hit[0] for hit in _hits(complete, "wombat")] == ["2001.00001"]
    assert complete.index.report.records_read == 3 and complete.index.report.files_seen == 3
