"""Ranking over one tantivy searcher: what the records' own engine (`search.SearchEngine`) and the overlaid one
(`overlay.OverlaidSearch`) share.

A query ranks by BM25 (tantivy prunes to the top k with block-max WAND) in two tiers, papers with the words in the
title first; when no paper has every word, papers with any of them, and the page says so and which words no paper
has (when papers have every word and the filters leave them all out, there is nothing to fall back to: no hits, which
the filters caused). No words browse newest first. Searches share no lock: tantivy's searcher is safe across threads
and releases the GIL.
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


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of a search: how many papers matched, the page's hits, and how the words matched."""

    total: int
    hits: list[SearchHit]
    any_word: bool = False  # no paper has every word of the query: papers with any of them
    unmatched: tuple[str, ...] = ()  # the query's words no paper has, in any field (filters aside)


def _no_texts(paper: int) -> dict[str, str]:
    return {}


class Ranking:
    """Search over one tantivy searcher (`search`). A subclass sets `_searcher`, says where the abstracts are
    (`abstract`) and how a document's `paper` value becomes a paper (`_ordinals`)."""

    _searcher: tantivy.Searcher

    def abstract(self, paper: int) -> str | None:
        raise NotImplementedError

    def _ordinals(self, values: list[int]) -> list[int]:
        """The papers of these `paper` values (the records' own index: the same numbers)."""
        return values

    def search(self, query: str, filters: SearchFilters, offset: int, limit: int, texts: Callable[[int], dict[str, str]]) -> SearchPage:
        """One page: ranked for a query, newest first for a browse; a hit's snippet is cut from its abstract or from
        `texts(paper)` (`search_documents.paper_texts`)."""
        conditions = filter_queries(filters)
        terms = query_terms(query)
        words = [query_tokens(term) for term in terms]
        if not words:
            return SearchPage(*self._browse(conditions, offset, limit))
        searchable = [tokens for tokens in words if tokens]
        if len(searchable) == len(words):  # every word can match: papers with them all
            total, hits = self._match(searchable, tantivy.Occur.Must, conditions, offset=offset, limit=limit, texts=texts)
            if total:
                return SearchPage(total, hits)
            if len(words) == 1:
                return SearchPage(0, [], unmatched=self._unmatched(terms, words))
            if conditions and self._has_all(searchable):  # papers have every word, and the filters leave them out
                return SearchPage(0, [])
        unmatched = self._unmatched(terms, words)
        if len(unmatched) == len(set(terms)):  # no word matches anything: nor can any of them
            return SearchPage(0, [], any_word=len(words) > 1, unmatched=unmatched)
        # No paper has every word: fall back to any word, still ranked by BM25.
        total, hits = self._match(searchable, tantivy.Occur.Should, conditions, offset=offset, limit=limit, texts=texts)
        return SearchPage(total, hits, any_word=True, unmatched=unmatched)

    def count(self, query: str, filters: SearchFilters) -> int:
        """How many papers `search` finds for this query and these filters (its `total`)."""
        return self.search(query, filters, 0, 0, _no_texts).total

    def _has_all(self, words: list[list[str]]) -> bool:
        """Whether some paper has every word, filters aside (asked only of a filtered search that found nothing)."""
        return bool(self._searcher.search(_every_word(words), 1, count=False).hits)

    def _unmatched(self, terms: list[str], words: list[list[str]]) -> tuple[str, ...]:
        """The terms (as typed, each once) that no paper has in any field; `words`: each term's tokens."""
        found: dict[str, bool] = {}
        for term, tokens in zip(terms, words, strict=True):
            if term not in found:
                found[term] = bool(tokens) and bool(self._searcher.search(in_any_field(tokens), 1, count=False).hits)
        return tuple(term for term, matched in found.items() if not matched)

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

    def titled(self, title: str, most: int) -> list[int]:
        """Up to `most` papers whose title holds the words of `title` in its order, best first (BM25 on the title
        alone, so a title of just these words comes before longer ones): the candidates for a paper named by its
        title, which the caller compares whole."""
        tokens = query_tokens(title)
        if not tokens:
            return []
        return self._papers([address for _, address in self._searcher.search(in_field("title", tokens), most, count=False).hits])

    def scored(self, query: str, limit: int) -> list[tuple[int, float]]:
        """The papers with every word of `query` in any field, best first, each with its BM25 score as ranked
        (weights included, no title tier): how the tests and the score-agreement benchmark compare the same text
        ranked in one index and in another."""
        words = [tokens for tokens in map(query_tokens, query_terms(query)) if tokens]
        if not words:
            return []
        hits = self._searcher.search(_every_word(words), limit).hits
        return list(zip(self._papers([address for _, address in hits]), (float(score) for score, _ in hits), strict=True))


def _every_word(words: list[list[str]]) -> tantivy.Query:
    """Papers with every word (each word's tokens) in any field."""
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, in_any_field(tokens)) for tokens in words])


def _count(result: tantivy.SearchResult) -> int:
    """How many documents matched (asked with `count=True`; tantivy 0.27's stub leaves it out)."""
    return cast(int, getattr(result, "count"))  # noqa: B009
