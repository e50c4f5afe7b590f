"""How text becomes the terms of the search index: one analyzer, on both sides.

The index cuts a paper's text with `text_analyzer(indexing=True)` (registered under `ANALYZER`, see
`search_schema.open_index`); a query's words are cut by the same steps (`query_tokens`), so a word matches what the
index made of it. A query is plain words (`query_terms`): nothing a user types is parsed as query syntax. A paper named
by its title is compared whole by the same steps but the stemmer (`title_words`).
"""

from __future__ import annotations

import re

import tantivy

ANALYZER = "papercode"  # the name the index's text fields give their tokenizer
# A token this long (bytes) is not indexed: a term's bytes are capped, and nobody searches for one.
MAX_TOKEN_BYTES = 100
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 32


def text_analyzer(*, indexing: bool, stems: bool = True) -> tantivy.TextAnalyzer:
    """Words of letters and digits, lower case, accents folded, English stems; the indexing side drops tokens of
    `MAX_TOKEN_BYTES` or more, the query side keeps them (`query_tokens` tells them apart).

    `stems=False` leaves the stemmer out: papercode always stems, and `benchmarks/index_cost.py` builds an analyzer
    without it to measure what the stemmer costs."""
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    steps = [tantivy.Filter.lowercase(), tantivy.Filter.ascii_fold()] + ([tantivy.Filter.stemmer("english")] if stems else [])
    for step in steps:
        builder = builder.filter(step)
    if indexing:
        builder = builder.filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
    return builder.build()


_QUERY_ANALYZER = text_analyzer(indexing=False)
_TITLE_ANALYZER = text_analyzer(indexing=False, stems=False)


def query_terms(query: str) -> list[str]:
    """The words of a plain-text query (at most 32): letters, digits and underscores, nothing else."""
    return _WORD.findall(query)[:_MAX_TERMS]


def query_tokens(word: str) -> list[str]:
    """A query word as the index cut its text; [] when it cannot match (a token too long to be indexed)."""
    tokens = _QUERY_ANALYZER.analyze(word)
    if any(len(token.encode()) >= MAX_TOKEN_BYTES for token in tokens):
        return []
    return tokens


def title_words(title: str) -> list[str]:
    """A title's words as titles are compared whole: case, accents and punctuation aside, each word as written (no
    stem: "Transformers" is not "Transformer")."""
    return _TITLE_ANALYZER.analyze(title)
