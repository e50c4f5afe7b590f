"""The search index's layout, shared by what writes it and what reads it: its fields and their weights, the terms the
filters match (facets) and the value the browsing order sorts by.

tantivy indexes the text and stores none of it: a snippet is cut from the paper's abstract (`index.abstracts`) and
its columns (`search_documents.paper_texts`). The filters are terms and ranges of the same index
(`search_queries`), so they combine with the ranking instead of post-filtering.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable
from importlib.metadata import version

import tantivy

from papercode.core.days import day_number
from papercode.core.names import facet_value, task_key

from .text_analysis import ANALYZER, text_analyzer

# Fields searched, with their weight in the ranking: title counts most, then tasks, authors, methods, abstract.
FIELDS = ("title", "abstract", "authors", "tasks", "methods")
WEIGHTS = {"title": 10.0, "abstract": 1.0, "authors": 3.0, "tasks": 4.0, "methods": 2.0}
ENGINE_VERSION = f"tantivy {version('tantivy')}"  # part of the snapshot key: another version rebuilds
LOCK_FILES = (".tantivy-meta.lock", ".tantivy-writer.lock")
# A facet value is a single term: a longer one (a hostile task name) is indexed by its hash.
_MAX_FACET_BYTES = 512
# How a facet's value, as a paper has it or a filter gives it, becomes the value in its term.
FACET_KEYS: dict[str, Callable[[str], str]] = {"task": task_key, "method": facet_value, "framework": facet_value, "status": str}
# The terms of the yes-or-no facets, by their value (False, True).
HAS_SAMPLES_TERMS = ("samples:no", "samples:yes")
OFFICIAL_CODE_TERMS = ("official:no", "official:yes")


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in FIELDS:  # indexed only: snippets are cut from the abstracts file and the index's columns
        builder.add_text_field(name, tokenizer_name=ANALYZER)
    builder.add_text_field("facet", tokenizer_name="raw", index_option="basic")  # "kind:value" terms, for the filters
    builder.add_integer_field("year", indexed=True, fast=True)
    builder.add_unsigned_field("paper", indexed=True, fast=True)
    builder.add_unsigned_field("browse", fast=True)  # `browse_value`: the newest-first order
    return builder.build()


SCHEMA = _schema()


def open_index(index: tantivy.Index) -> tantivy.Index:
    """`index`, able to cut text as its fields say (tantivy keeps a tokenizer's name, not the tokenizer)."""
    index.register_tokenizer(ANALYZER, text_analyzer(indexing=True))
    return index


def facet_term(kind: str, value: str) -> str:
    """The `facet` term of a value of a kind (`kind:value`, keyed already: see `FACET_KEYS`)."""
    # At most 4 bytes a character: a short value needs no encoding to know it fits.
    if len(value) * 4 <= _MAX_FACET_BYTES - 16 or len(value.encode("utf-8", "surrogatepass")) <= _MAX_FACET_BYTES - 16:
        return kind + ":" + value
    return f"{kind}:#{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()}"


_NO_DAY = 99_999_999  # after every YYYYMMDD: a paper without a date comes last


def browse_value(date: str | None, key: str) -> int:
    """A paper's place in the browsing order (ascending: newest first, then by a hash of its id; no date last).

    Computed from the paper alone, so the archive's index (built once) and the records' (built at each start) agree
    on it, and one search over both browses in one order."""
    day = day_number(date)
    newest = _NO_DAY - day if day is not None and 0 <= day < _NO_DAY else _NO_DAY
    return newest << 32 | zlib.crc32(key.encode("utf-8", "surrogatepass"))
