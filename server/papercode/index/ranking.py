"""Ranking over one tantivy searcher: what the records' own engine (`search.SearchEngine`) and the overlaid one
(`overlay.OverlaidSearch`) share.

A query ranks by BM25 (tantivy prunes to the top k with block-max WAND) in two tiers, papers with the words in the
title first; no words browse newest first. Searches share no lock: tantivy's searcher is safe across threads and
releases the GIL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import tantivy

from .search_queries import SearchFilters, all_of, filter_queries, in_any_field, in_field
from .snippets import Snippets
from .text_analysis import query_terms, query_tokens


@dataclass(frozen=True, slots=True)
class SearchHit:
    paper: int
    snippet: str | None


class Ranking:
    """Search over one tantivy searcher (`search`). A subclass sets `_searcher`, says where the abstracts are
    (`abstract`) and how a document's `paper` value becomes a paper (`_ordinals`)."""

    _searcher: tantivy.Searcher

    def abstract(self, paper: int) -> str | None:
        raise NotImplementedError

    def _ordinals(self, values: list[int]) -> list[int]:
        """The papers of these `paper` values (the records' own index: the same numbers)."""
        return values

    def search(
        self, query: str, filters: SearchFilters, offset: int, limit: int, texts: Callable[[int], dict[str, str]]
    ) -> tuple[int, list[SearchHit]]:
        """(total matches, one page of hits): ranked for a query, newest first for a browse; a hit's snippet is cut
        from its abstract or from `texts(paper)` (`search_documents.paper_texts`)."""
        conditions = filter_queries(filters)
        words = [query_tokens(word) for word in query_terms(query)]
        if not words:
            return self._browse(conditions, offset, limit)
        searchable = [tokens for tokens in words if tokens]
        if len(searchable) == len(words):  # every word can match: papers with them all
            total, hits = self._match(searchable, tantivy.Occur.Must, conditions, offset=offset, limit=limit, texts=texts)
            if total or len(words) == 1:
                return total, hits
        if not searchable:
            return 0, []
        # No paper has every word: fall back to any word, still ranked by BM25.
        return self._match(searchable, tantivy.Occur.Should, conditions, offset=offset, limit=limit, texts=texts)

    def _browse(self, conditions: list[tantivy.Query], offset: int, limit: int) -> tuple[int, list[SearchHit]]:
        query = all_of(conditions) if conditions else tantivy.Query.all_query()
        result = self._searcher.search(query, max(limit, 1), count=True, order_by_field="browse", offset=offset, order=tantivy.Order.Asc)
        papers = self._papers([address for _, address in result.hits[:limit]])
        return _count(result), [SearchHit(paper, None) for paper in papers]

    def _match(
        self,
        words: list[list[str]],
        joiner: tantivy.Occur,
        conditions: list[tantivy.Query],
        *,
        offset: int,
        limit: int,
        texts: Callable[[int], dict[str, str]],
    ) -> tuple[int, list[SearchHit]]:
        """Rank in two tiers: papers with the words in the title first, then the others, each by BM25.

        Titles weigh most in BM25 anyway, so the tiers agree with a single ranking on what comes first.
        """
        matched = tantivy.Query.boolean_query([(joiner, in_any_field(tokens)) for tokens in words])
        in_title = tantivy.Query.boolean_query([(joiner, in_field("title", tokens)) for tokens in words])
        filtered = [(tantivy.Occur.Must, condition) for condition in conditions]
        titled = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, matched), (tantivy.Occur.Must, tantivy.Query.const_score_query(in_title, 0.0)), *filtered]
        )
        rest = tantivy.Query.boolean_query([(tantivy.Occur.Must, matched), (tantivy.Occur.MustNot, in_title), *filtered])
        first = self._searcher.search(titled, max(limit, 1), count=True, offset=offset)
        addresses = [address for _, address in first.hits[:limit]]
        more = limit - len(addresses)
        second = self._searcher.search(rest, max(more, 1), count=True, offset=max(0, offset - _count(first)))
        if more > 0:
            addresses += [address for _, address in second.hits[:more]]
        papers = self._papers(addresses)
        snippets = Snippets(self._searcher, matched, len(words), self.abstract, texts)
        return _count(first) + _count(second), [SearchHit(paper, snippets.best(paper)) for paper in papers]

    def _papers(self, addresses: list[tantivy.DocAddress]) -> list[int]:
        return self._ordinals(cast(list[int], self._searcher.fast_field_values("paper", addresses))) if addresses else []

    def scored(self, query: str, limit: int) -> list[tuple[int, float]]:
        """The papers with every word of `query` in any field, best first, each with its BM25 score as ranked
        (weights included, no title tier): how the tests and the score-agreement benchmark compare the same text
        ranked in one index and in another."""
        words = [tokens for tokens in map(query_tokens, query_terms(query)) if tokens]
        if not words:
            return []
        matched = tantivy.Query.boolean_query([(tantivy.Occur.Must, in_any_field(tokens)) for tokens in words])
        hits = self._searcher.search(matched, limit).hits
        return list(zip(self._papers([address for _, address in hits]), (float(score) for score, _ in hits), strict=True))


def _count(result: tantivy.SearchResult) -> int:
    """How many documents matched (asked with `count=True`; tantivy 0.27's stub leaves it out)."""
    return cast(int, getattr(result, "count"))  # noqa: B009
