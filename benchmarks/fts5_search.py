"""The SQLite FTS5 search engine papercode used until tantivy replaced it, kept for `benchmarks search-engines`.

This is `server/papercode/search.py` as of commit 62054b4 (its builder and engine, unchanged but for the
imports): the comparison that chose tantivy runs against exactly what was replaced.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from papercode.bench import SearchDocument, SearchFilters, SearchHit, facet_value, task_key

_COLUMNS = ("title", "abstract", "authors", "tasks", "methods")
_WEIGHTS = (10.0, 1.0, 3.0, 4.0, 2.0)
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 32
SNIPPET_TOKENS = 18
_BATCH = 2_000  # documents buffered before one executemany
_MMAP_BYTES = 1 << 40  # map the whole database: pages are read in place, not copied into SQLite's cache


class SearchBuilder:
    """Writes the search database: `add` each paper's document as the index is built, then `write`
    (so no list of every paper's text is ever held)."""

    def __init__(self) -> None:
        # One thread at a time, but not always the same one: `open_stages` may be resumed in another worker thread.
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._pending: dict[int, SearchDocument] = {}
        self._replaced: list[int] = []
        db = self._db
        db.execute(f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(_COLUMNS)}, tokenize='porter unicode61 remove_diacritics 2')")
        db.execute("CREATE TABLE meta(paper INTEGER PRIMARY KEY, date TEXT, year INTEGER, samples INTEGER, official INTEGER)")
        db.execute("CREATE TABLE facet(kind TEXT, value TEXT, paper INTEGER)")

    def add(self, document: SearchDocument) -> None:
        """Index one paper's document (a replacing one supersedes what was added for its paper)."""
        if document.replacing and document.paper not in self._pending:
            self._replaced.append(document.paper)
        self._pending[document.paper] = document
        if len(self._pending) >= _BATCH:
            self._flush()

    def write(self, path: Path) -> None:
        """Build the lookup indexes and write the whole database to `path`; the builder is then spent."""
        self._flush()
        db = self._db
        db.execute("CREATE INDEX facet_lookup ON facet(kind, value, paper)")
        db.execute("CREATE INDEX meta_date ON meta(date DESC, paper)")
        db.commit()
        target = sqlite3.connect(path)
        try:
            db.backup(target)
        finally:
            target.close()
            db.close()

    def close(self) -> None:
        self._db.close()

    def _flush(self) -> None:
        db, documents = self._db, list(self._pending.values())
        for table, column in (("docs", "rowid"), ("meta", "paper"), ("facet", "paper")):
            db.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(paper,) for paper in self._replaced])
        db.executemany("INSERT INTO docs(rowid, title, abstract, authors, tasks, methods) VALUES (?,?,?,?,?,?)", _fts_rows(documents))
        db.executemany("INSERT INTO meta VALUES (?,?,?,?,?)", _meta_rows(documents))
        db.executemany("INSERT INTO facet VALUES (?,?,?)", _facet_rows(documents))
        self._pending.clear()
        self._replaced.clear()


class SearchEngine:
    """Serves one search database read-only: an FTS5 table over every paper, plus facet tables for the filters."""

    def __init__(self, path: Path, *, unlink: bool = False) -> None:
        """Open the database in `path` (never modified). With `unlink`, the file is removed once
        open: the engine keeps reading it, and nothing is left behind when it goes."""
        self._search_db, self._abstract_db = _open_read_only(path), _open_read_only(path)
        self._search_lock, self._abstract_lock = threading.Lock(), threading.Lock()
        if unlink:
            with contextlib.suppress(OSError):
                path.unlink()
                os.rmdir(path.parent)

    def close(self) -> None:
        self._search_db.close()
        self._abstract_db.close()

    def save_image(self, path: Path) -> None:
        """Write the whole database to `path` (for warm starts)."""
        target = sqlite3.connect(path)
        try:
            with self._abstract_lock:
                self._abstract_db.backup(target)
        finally:
            target.close()

    def abstract(self, paper: int) -> str | None:
        """A paper's abstract: the full text lives here once, not also in the index. Never waits on a search."""
        with self._abstract_lock:
            row = self._abstract_db.execute("SELECT abstract FROM docs WHERE rowid = ?", [paper]).fetchone()
        return row[0] or None if row else None

    def search(self, query: str, filters: SearchFilters, offset: int, limit: int) -> tuple[int, list[SearchHit]]:
        """(total matches, one page of hits): ranked for a query, newest first for a browse."""
        terms = query_terms(query)
        where, params = _filter_sql(filters)
        with self._search_lock:
            db = self._search_db
            if not terms:
                return _browse(db, where, params, offset, limit)
            total, hits = _match(db, terms, " ", where, params, offset=offset, limit=limit)
            if total == 0 and len(terms) > 1:
                # No paper has every word: fall back to any word, still ranked by BM25.
                total, hits = _match(db, terms, " OR ", where, params, offset=offset, limit=limit)
            return total, hits


def _open_read_only(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    db.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")
    return db


def _match(
    db: sqlite3.Connection, terms: list[str], joiner: str, where: str, params: list[object], *, offset: int, limit: int
) -> tuple[int, list[SearchHit]]:
    """Rank in two tiers: papers with the words in the title first, then the others, each by BM25.

    FTS5 scores every match to rank them, and common words match much of a corpus; the title
    tier is usually small, so a first page rarely scores more than it. Titles weigh most in
    BM25 anyway, so the tiers agree with a single ranking on what comes first.
    """
    words = joiner.join(terms)
    in_title = f"{{title}} : ({words})"
    total = _count(db, words, where, params)
    titled = _count(db, in_title, where, params)
    ids = _ranked(db, in_title, where, params, offset=offset, limit=min(limit, max(0, titled - offset)))
    if len(ids) < limit and total > titled:
        rest = f"({words}) NOT ({in_title})"
        ids += _ranked(db, rest, where, params, offset=max(0, offset - titled), limit=limit - len(ids))
    return total, [SearchHit(paper, _snippet(db, words, paper)) for paper in ids]


def _matches(where: str, *, scored: bool) -> str:
    """SQL for the papers matching the expression (the first parameter) and the filters."""
    score = f"bm25(docs, {', '.join(str(weight) for weight in _WEIGHTS)})" if scored else "0"
    # Materialised once, then joined to the filters: a filter inside the MATCH query would
    # re-run the match for every candidate row.
    matched = f"WITH hit(paper, score) AS MATERIALIZED (SELECT rowid, {score} FROM docs WHERE docs MATCH ?) "
    if not where:
        return matched + "SELECT hit.paper, hit.score FROM hit"
    return matched + f"SELECT hit.paper, hit.score FROM hit JOIN meta USING (paper) WHERE {where}"


def _count(db: sqlite3.Connection, expression: str, where: str, params: list[object]) -> int:
    if not where:
        return int(db.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", [expression]).fetchone()[0])
    sql = f"SELECT count(*) FROM ({_matches(where, scored=False)})"
    return int(db.execute(sql, [expression, *params]).fetchone()[0])


def _ranked(db: sqlite3.Connection, expression: str, where: str, params: list[object], *, offset: int, limit: int) -> list[int]:
    if limit <= 0:
        return []
    rows = db.execute(f"{_matches(where, scored=True)} ORDER BY 2, 1 LIMIT ? OFFSET ?", [expression, *params, limit, offset]).fetchall()
    return [paper for paper, _ in rows]


def _snippet(db: sqlite3.Connection, expression: str, paper: int) -> str | None:
    row = db.execute(
        f"SELECT snippet(docs, -1, '**', '**', '…', {SNIPPET_TOKENS}) FROM docs WHERE docs MATCH ? AND rowid = ?", [expression, paper]
    ).fetchone()
    return row[0] if row else None


def _browse(db: sqlite3.Connection, where: str, params: list[object], offset: int, limit: int) -> tuple[int, list[SearchHit]]:
    clause = f"WHERE {where}" if where else ""
    total = db.execute(f"SELECT count(*) FROM meta {clause}", params).fetchone()[0]
    rows = db.execute(
        f"SELECT paper FROM meta {clause} ORDER BY date IS NULL, date DESC, paper LIMIT ? OFFSET ?", [*params, limit, offset]
    ).fetchall()
    return total, [SearchHit(paper, None) for (paper,) in rows]


def query_terms(query: str) -> list[str]:
    """The words of a plain-text query, each quoted as an FTS5 string."""
    return [f'"{word}"' for word in _WORD.findall(query)[:_MAX_TERMS]]


# How a filter value becomes the stored facet value.
_FACET_KEY = {"task": task_key, "method": facet_value, "framework": facet_value}


def _filter_sql(filters: SearchFilters) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for kind, value in (("task", filters.task), ("method", filters.method), ("framework", filters.framework)):
        if value:
            clauses.append("paper IN (SELECT paper FROM facet WHERE kind = ? AND value = ?)")
            params += [kind, _FACET_KEY[kind](value)]
    if filters.status:  # any of them
        statuses = list(filters.status)
        clauses.append(f"paper IN (SELECT paper FROM facet WHERE kind = 'status' AND value IN ({', '.join('?' * len(statuses))}))")
        params += statuses
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


def _fts_rows(documents: Iterable[SearchDocument]) -> Iterable[tuple[object, ...]]:
    for doc in documents:
        tasks = " ; ".join(name for _, name in doc.tasks)
        yield doc.paper, doc.title, doc.abstract, doc.authors, tasks, " ; ".join(doc.methods)


def _meta_rows(documents: Iterable[SearchDocument]) -> Iterable[tuple[object, ...]]:
    for doc in documents:
        yield doc.paper, doc.date, doc.year, doc.samples, int(doc.official)


def _facet_rows(documents: Iterable[SearchDocument]) -> Iterable[tuple[str, str, int]]:
    for doc in documents:
        facets: set[tuple[str, str]] = set()
        for slug, name in doc.tasks:
            facets.add(("task", task_key(slug)))
            facets.add(("task", task_key(name)))
        facets.update(("method", facet_value(name)) for name in doc.methods)
        facets.update(("framework", facet_value(name)) for name in doc.frameworks)
        facets.update(("status", status) for status in doc.statuses)
        for kind, value in facets:
            yield kind, value, doc.paper
