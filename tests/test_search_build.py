"""The search database is built beside the index (here or in a child process) and agrees with it: a duplicate's
winner replaces what it beat, and a child that read other records is not trusted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import make_record, write_records
from papercode import queries, search, search_build
from papercode.corpus import Corpus, build_stages
from papercode.loading import Limits
from papercode.search import SearchEngine

LoadCorpus = Callable[[list[dict[str, Any]]], Corpus]


@pytest.mark.parametrize("batch", [1, 2_000])  # 1: the loser was already written when the winner came
def test_duplicate_winner_replaces_the_loser_in_search(load_corpus: LoadCorpus, monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    monkeypatch.setattr(search, "_BATCH", batch)
    older = make_record("2001.00001", "same", title="Quokka estimation", abstract="About quokkas.")
    newer = make_record("2001.00001", "same", title="Wombat estimation", abstract="About wombats.")
    older["syntology"]["read_at"], newer["syntology"]["read_at"] = "2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"
    corpus = load_corpus([older, make_record("2001.00002", "other", title="Unrelated"), newer])
    assert queries.search_papers(corpus, "quokka").total == 0
    found = queries.search_papers(corpus, "wombat")
    assert [hit.arxiv_id for hit in found.hits] == ["2001.00001"] and found.hits[0].title == "Wombat estimation"
    assert queries.paper_detail(corpus, "2001.00001").abstract == "About wombats."
    assert queries.search_papers(corpus, "").total == 2  # browsing counts each paper once


def _hits(corpus: Corpus, query: str) -> list[tuple[str | None, str | None]]:
    return [(hit.arxiv_id, hit.snippet) for hit in queries.search_papers(corpus, query).hits]


@pytest.fixture
def records(tmp_path: Path) -> Path:
    older = make_record("2001.00001", "same", title="Quokka estimation", abstract="About quokkas.")
    newer = make_record("2001.00001", "same", title="Wombat estimation", abstract="About wombats and quokkas.")
    older["syntology"]["read_at"], newer["syntology"]["read_at"] = "2026-01-01T00:00:00+00:00", "2026-06-01T00:00:00+00:00"
    return write_records(tmp_path / "records", [older, make_record("2001.00002", "other", title="Quokka habitats"), newer])


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
    assert queries.paper_detail(child, "2001.00001").abstract == "About wombats and quokkas."


def test_a_child_that_read_other_records_is_not_trusted(records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_build, "CHILD_PROCESS_BYTES", 0)
    real_result = search_build.ChildSearchBuild.result

    def records_changed(self: search_build.ChildSearchBuild, fingerprint: bytes) -> SearchEngine:
        return real_result(self, b"\0" * len(fingerprint))  # as if the child saw other records

    monkeypatch.setattr(search_build.ChildSearchBuild, "result", records_changed)
    *_, complete = build_stages([records], Limits())
    assert [hit[0] for hit in _hits(complete, "wombat")] == ["2001.00001"]
    assert complete.search is not None


def test_an_abstract_never_waits_behind_a_search(records: Path) -> None:
    corpus = Corpus.load([records])
    engine = corpus.search
    assert engine is not None
    with engine._search_lock:  # a search is running in another thread
        assert engine.abstract(0) == "About wombats and quokkas."
