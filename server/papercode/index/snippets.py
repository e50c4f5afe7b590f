"""A search hit's snippet: the best fragment of the paper's text, its matches marked.

tantivy stores no text, so a fragment is cut from the paper's abstract and its other fields as they were indexed
(`search_documents.paper_texts`), each handed to tantivy's snippet generator in a document of its own.
"""

from __future__ import annotations

from collections.abc import Callable

import tantivy

from .search_schema import FIELDS, SCHEMA


class Snippets:
    """The best snippet of each hit of one query: from the field with the most distinct query words, title first on a
    tie."""

    def __init__(
        self,
        searcher: tantivy.Searcher,
        query: tantivy.Query,
        words: int,
        abstract: Callable[[int], str | None],
        texts: Callable[[int], dict[str, str]],
    ) -> None:
        self._searcher, self._query, self._words = searcher, query, words
        self._abstract, self._texts = abstract, texts
        self._generators: dict[str, tantivy.SnippetGenerator] = {}

    def _generator(self, field: str) -> tantivy.SnippetGenerator:
        generator = self._generators.get(field)
        if generator is None:
            generator = self._generators[field] = tantivy.SnippetGenerator.create(self._searcher, self._query, SCHEMA, field)
        return generator

    def best(self, paper: int) -> str | None:
        texts = self._texts(paper)
        best: tuple[int, str] | None = None
        for field in FIELDS:
            text = self._abstract(paper) if field == "abstract" else texts[field]
            if not text:
                continue
            document = tantivy.Document()  # the generator cuts from the text of its field in the document it is given
            document.add_text(field, text)
            snippet = self._generator(field).snippet_from_doc(document)
            found = len({snippet.fragment().encode()[span.start : span.end].lower() for span in snippet.highlighted()})
            if found and (best is None or found > best[0]):
                best = (found, _marked(snippet, text))
                if found >= self._words:  # no later field can have more
                    break
        return best[1] if best else None


def _marked(snippet: tantivy.Snippet, text: str) -> str:
    """The fragment with its matches in `**`, and `…` where it cuts the text."""
    fragment = snippet.fragment().encode()
    parts, at = [], 0
    for span in snippet.highlighted():
        parts += [fragment[at : span.start], b"**", fragment[span.start : span.end], b"**"]
        at = span.end
    parts.append(fragment[at:])
    where = snippet.fragment_range()
    head = "…" if where.start > 0 else ""
    tail = "…" if where.end < len(text.encode()) else ""
    return head + b"".join(parts).decode(errors="replace") + tail
