"""The search engine is fed as the index is built: a duplicate's winner replaces what it beat."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conftest import make_record
from papercode import queries, search
from papercode.corpus import Corpus

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
