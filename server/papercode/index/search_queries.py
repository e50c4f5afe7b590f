"""A search's words and filters as tantivy queries, built field by field.

Each word of a query is cut by the index's own analyzer (`text_analysis.query_tokens`) into term or phrase queries
built here: nothing the user types is ever parsed as query syntax, so quotes, `*`, `NEAR`, `field:` or parentheses
can never raise. A filter is a term or a range of the same index that scores nothing, so it narrows the ranking and
never changes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from .search_schema import FACET_KEYS, FIELDS, HAS_SAMPLES_TERMS, OFFICIAL_CODE_TERMS, SCHEMA, WEIGHTS, facet_term


@dataclass(frozen=True, slots=True)
class SearchFilters:
    task: str | None = None
    method: str | None = None
    framework: str | None = None
    has_samples: bool | None = None
    status: tuple[str, ...] | None = None  # any of these statuses
    official_code: bool | None = None
    year_from: int | None = None
    year_to: int | None = None


def in_field(field: str, tokens: list[str]) -> tantivy.Query:
    """One word (its tokens: a phrase when it has several) in one field."""
    if len(tokens) == 1:
        return tantivy.Query.term_query(SCHEMA, field, tokens[0])
    phrase: list[str | tuple[int, str]] = list(tokens)
    return tantivy.Query.phrase_query(SCHEMA, field, phrase)


def in_any_field(tokens: list[str]) -> tantivy.Query:
    """One word in any field, each field weighted."""
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.boost_query(in_field(field, tokens), WEIGHTS[field])) for field in FIELDS]
    )


def all_of(conditions: list[tantivy.Query]) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, condition) for condition in conditions])


def filter_queries(filters: SearchFilters) -> list[tantivy.Query]:
    """One query per filter, scoring nothing (filters never change the ranking)."""
    found: list[tantivy.Query] = []

    def facet(*terms: str) -> None:
        query = (
            tantivy.Query.term_query(SCHEMA, "facet", terms[0])
            if len(terms) == 1
            else tantivy.Query.term_set_query(SCHEMA, "facet", list(terms))
        )
        found.append(tantivy.Query.const_score_query(query, 0.0))

    for kind, value in (("task", filters.task), ("method", filters.method), ("framework", filters.framework)):
        if value:
            facet(facet_term(kind, FACET_KEYS[kind](value)))
    if filters.status:  # any of them
        facet(*(facet_term("status", status) for status in filters.status))
    if filters.has_samples is not None:
        facet(HAS_SAMPLES_TERMS[filters.has_samples])
    if filters.official_code is not None:
        facet(OFFICIAL_CODE_TERMS[filters.official_code])
    if filters.year_from is not None or filters.year_to is not None:
        years = tantivy.Query.range_query(SCHEMA, "year", tantivy.FieldType.Integer, filters.year_from, filters.year_to)
        found.append(tantivy.Query.const_score_query(years, 0.0))
    return found
