"""Full-text paper search on SQLite FTS5 (in memory): tokenising, BM25 ranking and snippets.

A user's query is plain words: it is reduced to word tokens and each is quoted, so FTS5
syntax (quotes, `*`, `NEAR`, `col:`, parentheses) in the input can never raise. Filters are
SQL over small side tables, so they combine with the ranking instead of post-filtering.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from .index import PaperIndex, PaperRow, status_rank, task_key

# Column weights for bm25(): title counts most, then tasks, authors, methods, abstract.
_COLUMNS = ("title", "abstract", "authors", "tasks", "methods")
_WEIGHTS = (10.0, 1.0, 3.0, 4.0, 2.0)
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 32
SNIPPET_TOKENS = 18


def facet_value(text: str) -> str:
    """Facets match loosely: case, spaces, hyphens and underscores do not matter."""
    return re.sub(r"[\s_\-]+", "-", text.strip().lower())


@dataclass(frozen=True, slots=True)
class SearchFilters:
    task: str | None = None
    method: str | None = None
    framework: str | None = None
    has_samples: bool | None = None
    status: str | None = None
    official_code: bool | None = None
    year_from: int | None = None
    year_to: int | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    paper: int
    snippet: str | None


class SearchEngine:
    """An FTS5 table over every paper of one index, plus facet tables for the filters."""

    def __init__(self, index: PaperIndex) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        db = self._db
        db.execute(f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(_COLUMNS)}, tokenize='porter unicode61 remove_diacritics 2')")
        db.execute("CREATE TABLE meta(paper INTEGER PRIMARY KEY, date TEXT, year INTEGER, samples INTEGER, official INTEGER)")
        db.execute("CREATE TABLE facet(kind TEXT, value TEXT, paper INTEGER)")
        db.executemany("INSERT INTO docs(rowid, title, abstract, authors, tasks, methods) VALUES (?,?,?,?,?,?)", _documents(index))
        db.executemany("INSERT INTO meta VALUES (?,?,?,?,?)", _meta_rows(index))
        db.executemany("INSERT INTO facet VALUES (?,?,?)", _facet_rows(index))
        db.execute("CREATE INDEX facet_lookup ON facet(kind, value, paper)")
        db.execute("CREATE INDEX meta_date ON meta(date DESC, paper)")
        db.commit()

    def __getstate__(self) -> bytes:
        # Snapshots carry the database image; a connection and a lock cannot be pickled.
        with self._lock:
            return self._db.serialize()

    def __setstate__(self, image: bytes) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.deserialize(image)
        self._lock = threading.Lock()

    def search(self, query: str, filters: SearchFilters, offset: int, limit: int) -> tuple[int, list[SearchHit]]:
        """(total matches, one page of hits): ranked for a query, newest first for a browse."""
        terms = query_terms(query)
        where, params = _filter_sql(filters)
        with self._lock:
            if not terms:
                return self._browse(where, params, offset, limit)
            total, hits = self._match(" ".join(terms), where, params, offset, limit)
            if total == 0 and len(terms) > 1:
                # No paper has every word: fall back to any word, still ranked by BM25.
                total, hits = self._match(" OR ".join(terms), where, params, offset, limit)
            return total, hits

    def _match(self, expression: str, where: str, params: list[object], offset: int, limit: int) -> tuple[int, list[SearchHit]]:
        condition = "docs MATCH ?" + (f" AND rowid IN (SELECT paper FROM meta WHERE {where})" if where else "")
        args = [expression, *params]
        total = self._db.execute(f"SELECT count(*) FROM docs WHERE {condition}", args).fetchone()[0]
        weights = ", ".join(str(weight) for weight in _WEIGHTS)
        rows = self._db.execute(
            f"SELECT rowid, snippet(docs, -1, '**', '**', '…', {SNIPPET_TOKENS}) FROM docs WHERE {condition} "
            f"ORDER BY bm25(docs, {weights}), rowid LIMIT ? OFFSET ?",
            [*args, limit, offset],
        ).fetchall()
        return total, [SearchHit(paper, snippet) for paper, snippet in rows]

    def _browse(self, where: str, params: list[object], offset: int, limit: int) -> tuple[int, list[SearchHit]]:
        clause = f"WHERE {where}" if where else ""
        total = self._db.execute(f"SELECT count(*) FROM meta {clause}", params).fetchone()[0]
        rows = self._db.execute(
            f"SELECT paper FROM meta {clause} ORDER BY date IS NULL, date DESC, paper LIMIT ? OFFSET ?", [*params, limit, offset]
        ).fetchall()
        return total, [SearchHit(paper, None) for (paper,) in rows]

    def facet_values(self, kind: str, prefix: str, most: int = 20) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT value FROM facet WHERE kind = ? AND value >= ? AND value < ? ORDER BY value LIMIT ?",
                [kind, prefix, prefix + "\U0010ffff", most],
            ).fetchall()
        return [value for (value,) in rows]


def query_terms(query: str) -> list[str]:
    """The words of a plain-text query, each quoted as an FTS5 string."""
    return [f'"{word}"' for word in _WORD.findall(query)[:_MAX_TERMS]]


def _filter_sql(filters: SearchFilters) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for kind, value in (("task", filters.task), ("method", filters.method), ("framework", filters.framework), ("status", filters.status)):
        if value:
            clauses.append("paper IN (SELECT paper FROM facet WHERE kind = ? AND value = ?)")
            params += [kind, task_key(value) if kind == "task" else facet_value(value)]
    if filters.has_samples is not None:
        clauses.append("samples > 0" if filters.has_samples else "samples = 0")
    if filters.official_code is not None:
        clauses.append(f"official = {1 if filters.official_code else 0}")
    if filters.year_from is not None:
        clauses.append("year >= ?")
        params.append(filters.year_from)
    if filters.year_to is not None:
        clauses.append("year <= ?")
        params.append(filters.year_to)
    return " AND ".join(clauses), params


def _documents(index: PaperIndex) -> Iterable[tuple[object, ...]]:
    for ordinal, paper in enumerate(index.papers):
        yield (
            ordinal,
            paper.title,
            paper.abstract or "",
            " ; ".join(paper.authors),
            " ; ".join(name for _, name in paper.tasks),
            " ; ".join(paper.methods),
        )


def _meta_rows(index: PaperIndex) -> Iterable[tuple[object, ...]]:
    for ordinal, paper in enumerate(index.papers):
        official = any(link.is_official for link in paper.code_links)
        yield ordinal, paper.date, paper.year, len(paper.samples), int(official)


def _facet_rows(index: PaperIndex) -> Iterable[tuple[str, str, int]]:
    for ordinal, paper in enumerate(index.papers):
        for value in _paper_facets(index, paper):
            yield value[0], value[1], ordinal


def _paper_facets(index: PaperIndex, paper: PaperRow) -> set[tuple[str, str]]:
    facets: set[tuple[str, str]] = set()
    for slug, name in paper.tasks:
        facets.add(("task", task_key(slug)))
        facets.add(("task", task_key(name)))
    for name in paper.methods:
        facets.add(("method", facet_value(name)))
    for link in paper.code_links:
        if link.framework:
            facets.add(("framework", facet_value(link.framework)))
    for sample_id in paper.samples:
        facets.add(("status", index.samples[sample_id].status))
    return facets


def best_status(index: PaperIndex, paper: PaperRow) -> str | None:
    statuses = {index.samples[i].status for i in paper.samples}
    return min(statuses, key=lambda status: (status_rank(status), status)) if statuses else None
