"""Full-text paper search on tantivy: BM25 ranking with top-k pruning, snippets, and filters as terms.

A user's query is plain words: each is cut into tokens by the index's own analyzer and becomes
term (or phrase) queries built here, field by field; nothing the user types is ever parsed as
query syntax, so quotes, `*`, `NEAR`, `field:` or parentheses can never raise. Filters are terms
and ranges of the same index, so they combine with the ranking instead of post-filtering.

`SearchBuilder` collects each paper's document while the index is built and writes the tantivy
index (a directory) at the end; `SearchEngine` serves one read-only. Its files are memory-mapped
and kept open, so the directory of a fresh build can be removed at once (nothing is left behind)
and still be copied into a snapshot. tantivy stores no text: the abstracts are kept beside its files, in paper order
in one file of their own (`papercode-abstracts`), so get_paper reads one on the event loop as a slice of a memory map
(where a stored document cost a compressed block to decompress: about 7 against 40 microseconds with cold caches);
snippets are cut from that and from the paper's title, authors, tasks and methods as the index's columns hold them
(`paper_texts`), joined as they were indexed (`document_texts`). Searches and abstract lookups share no lock:
tantivy's searcher is safe across threads and releases the GIL.
`ingest.parallel` runs the builder in another process for large corpora.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import re
import shutil
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from importlib.metadata import version
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

import msgspec
import tantivy

from papercode.core.names import facet_value, task_key
from papercode.core.ordering import status_order

if TYPE_CHECKING:
    from .paper_index import PaperIndex, PaperRow

# Fields searched, with their weight in the ranking: title counts most, then tasks, authors, methods, abstract.
_FIELDS = ("title", "abstract", "authors", "tasks", "methods")
_WEIGHTS = {"title": 10.0, "abstract": 1.0, "authors": 3.0, "tasks": 4.0, "methods": 2.0}
_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_TERMS = 32
# A token this long (bytes) is not indexed: a term's bytes are capped, and nobody searches for one.
_MAX_TOKEN_BYTES = 100
# A facet value is a single term: a longer one (a hostile task name) is indexed by its hash.
_MAX_FACET_BYTES = 512
_ANALYZER = "papercode"
LIST_SEPARATOR = " ; "  # between the authors, the tasks, the methods of a paper, in the text indexed
_WRITER_HEAP = 1 << 30  # a budget, not an allocation: large enough that each indexing thread makes one segment
_TWO_THREADS_FROM = 20_000  # documents
ENGINE_VERSION = f"tantivy {version('tantivy')}"  # part of the snapshot key: another version rebuilds
LOCK_FILES = (".tantivy-meta.lock", ".tantivy-writer.lock")
# Every paper's abstract (UTF-8, in paper order; then the end offset of each, then their count, 8 bytes each),
# written beside the index as it is built, and so copied into a snapshot with the index's files and their CRCs.
ABSTRACTS = "papercode-abstracts"
_OFFSET = array("q").itemsize
_COPY_CHUNK = 1 << 22


def text_analyzer(*, indexing: bool, stems: bool = True) -> tantivy.TextAnalyzer:
    """Words of letters and digits, lower case, accents folded, English stems (the query side keeps long tokens, to
    tell them). Without `stems` only for `benchmarks/index_cost.py`, which measures what the stemmer costs."""
    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    steps = [tantivy.Filter.lowercase(), tantivy.Filter.ascii_fold()] + ([tantivy.Filter.stemmer("english")] if stems else [])
    for step in steps:
        builder = builder.filter(step)
    if indexing:
        builder = builder.filter(tantivy.Filter.remove_long(_MAX_TOKEN_BYTES))
    return builder.build()


_QUERY_ANALYZER = text_analyzer(indexing=False)


def _facet(kind: str, value: str) -> str:
    # At most 4 bytes a character: a short value needs no encoding to know it fits.
    if len(value) * 4 <= _MAX_FACET_BYTES - 16 or len(value.encode("utf-8", "surrogatepass")) <= _MAX_FACET_BYTES - 16:
        return kind + ":" + value
    return f"{kind}:#{hashlib.sha256(value.encode('utf-8', 'surrogatepass')).hexdigest()}"


class SearchDocument(msgspec.Struct, array_like=True, frozen=True, gc=False):
    """What the search engine indexes for one paper; produced while the index is built.

    Plain values only: it crosses to the cold build's child process as it is (msgpack, a bare array: no field names).
    """

    paper: int  # the `paper` value: the paper's ordinal (an archive's papers: `ARCHIVE_BASE` + its ordinal there)
    replacing: bool  # supersedes a document added before for the same paper (a duplicate's winner)
    key: str  # the paper's id (arXiv id, else slug): with the date, its place in the browsing order
    title: str
    abstract: str
    authors: str
    tasks: list[tuple[str, str]]
    methods: list[str]
    frameworks: list[str]
    statuses: list[str]
    date: str | None
    year: int | None
    samples: int
    official: bool


@dataclass(frozen=True, slots=True)
class SearchFilters:
    task: str | None = None
    method: str | None = None
    framework: str | None = None
    has_samples: bool | None = None
    status: str | None = None  # one status, or several comma-separated (any of them)
    official_code: bool | None = None
    year_from: int | None = None
    year_to: int | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    paper: int
    snippet: str | None


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in _FIELDS:  # indexed only: snippets are cut from `ABSTRACTS` and the index's columns
        builder.add_text_field(name, tokenizer_name=_ANALYZER)
    builder.add_text_field("facet", tokenizer_name="raw", index_option="basic")  # "kind:value" terms, for the filters
    builder.add_integer_field("year", indexed=True, fast=True)
    builder.add_unsigned_field("paper", indexed=True, fast=True)
    builder.add_unsigned_field("browse", fast=True)  # `browse_value`: the newest-first order
    return builder.build()


SCHEMA = _schema()


def open_index(index: tantivy.Index) -> tantivy.Index:
    index.register_tokenizer(_ANALYZER, text_analyzer(indexing=True))
    return index


class SearchBuilder:
    """Collects each paper's document (`add`, as the index is built), then writes the index (`write`)."""

    def __init__(self) -> None:
        self._documents: dict[int, SearchDocument] = {}

    def add(self, document: SearchDocument) -> None:
        """Index one paper's document (a replacing one supersedes what was added for its paper)."""
        self._documents[document.paper] = document

    def write(self, directory: Path) -> None:
        """Write the index into `directory` (created empty); the builder is then spent."""
        documents, self._documents = self._documents, {}
        write_index(directory, [documents[paper] for paper in sorted(documents)], len(documents))

    def close(self) -> None:
        self._documents.clear()


_NO_DAY = 99_999_999  # after every YYYYMMDD: a paper without a date comes last


def browse_value(date: str | None, key: str) -> int:
    """A paper's place in the browsing order (ascending: newest first, then by a hash of its id; no date last).

    Computed from the paper alone, so the archive's index (built once) and the records' (built at each start) agree
    on it, and one search over both browses in one order."""
    day = int(date[:4] + date[5:7] + date[8:10]) if date and len(date) >= 10 and date[:4].isdigit() else None
    newest = _NO_DAY - day if day is not None and 0 <= day < _NO_DAY else _NO_DAY
    return newest << 32 | zlib.crc32(key.encode("utf-8", "surrogatepass"))


class IndexWriting:
    """An index being written: `add` each paper's document, in paper order, then `finish`.

    The abstracts go into their own file beside the index (`ABSTRACTS`), each at its paper's place. With `base`, the
    papers are those from `base` on (an archive's: `ARCHIVE_BASE`), and the file holds theirs only."""

    def __init__(self, directory: Path, *, threads: int, heap: int = _WRITER_HEAP, base: int = 0) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._directory, self._base = directory, base
        self._index = open_index(tantivy.Index(SCHEMA, path=str(directory)))
        self._writer = self._index.writer(heap_size=heap, num_threads=threads)
        self._terms = FacetTerms()
        self._ends = array("q")
        self._abstracts: BinaryIO = open(directory / ABSTRACTS, "wb", buffering=1 << 20)  # noqa: SIM115 - closed by finish()
        self._written = 0

    def add(self, document: SearchDocument) -> None:
        ends, place = self._ends, document.paper - self._base
        if place < len(ends):
            raise ValueError(f"the documents must come one per paper, in paper order: paper {document.paper} came after {len(ends) - 1}")
        self._writer.add_document(tantivy_document(document, self._terms))
        ends.extend([self._written] * (place - len(ends)))  # papers without a document have no abstract
        self._written += self._abstracts.write(document.abstract.encode("utf-8", "surrogatepass"))
        ends.append(self._written)

    def finish(self) -> None:
        """Commit, wait for merges, close the abstracts file: the index is complete."""
        self._abstracts.write(self._ends.tobytes() + len(self._ends).to_bytes(_OFFSET, "little"))
        self._abstracts.close()
        self._writer.commit()
        self._writer.wait_merging_threads()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._directory / ".tantivy-writer.lock")

    def abandon(self) -> None:
        self._abstracts.close()
        with contextlib.suppress(Exception):
            self._writer.rollback()


def write_index(directory: Path, documents: Iterable[SearchDocument], count: int) -> None:
    """Write the index of `documents` (`count` of them, one per paper, in paper order) into `directory` (created empty).

    Documents go in by paper, so equal scores rank by paper. A small corpus is indexed on one
    thread (one segment: the same order in every build); a large one on two (two segments, each
    in paper order: equal scores rank by segment, then by paper).
    """
    writing = IndexWriting(directory, threads=2 if count >= _TWO_THREADS_FROM else 1)
    try:
        for document in documents:
            writing.add(document)
    except BaseException:
        writing.abandon()
        raise
    writing.finish()


def document_texts(title: str, authors: str, tasks: Iterable[tuple[str, str]], methods: Iterable[str]) -> dict[str, str]:
    """A paper's text fields, but its abstract, as they are indexed and as snippets are cut from them (`authors`
    joined already, by `LIST_SEPARATOR`)."""
    return {
        "title": title,
        "authors": authors,
        "tasks": LIST_SEPARATOR.join(name for _, name in tasks),
        "methods": LIST_SEPARATOR.join(methods),
    }


def documents_of(index: PaperIndex, abstract: Callable[[int], str | None]) -> Iterator[SearchDocument]:
    """Every paper's document as the build indexed it, from the index's columns and its abstracts (`abstract`): what an
    overlay lays over the archive's index (`index.overlay`). Proven equal to the built documents by the tests."""
    samples = index.samples
    for paper in index.papers:
        details = paper.details()
        links = details.code_links
        yield SearchDocument(
            paper=paper.ordinal,
            replacing=False,
            key=paper.key,
            title=paper.title,
            abstract=abstract(paper.ordinal) or "",
            authors=LIST_SEPARATOR.join(details.authors),
            tasks=details.tasks,
            methods=details.methods,
            frameworks=sorted({link.framework for link in links if link.framework}),
            statuses=sorted({samples.status_of(i) for i in paper.samples}),
            date=paper.date,
            year=paper.year,
            samples=len(paper.samples),
            official=any(link.is_official for link in links),
        )


def paper_texts(index: PaperIndex) -> Callable[[int], dict[str, str]]:
    """`document_texts` of a paper of `index`, from its columns: what `SearchEngine.search` cuts snippets from."""

    def texts(paper: int) -> dict[str, str]:
        row = index.papers[paper]
        details = row.details()
        return document_texts(row.title, LIST_SEPARATOR.join(details.authors), details.tasks, details.methods)

    return texts


def tantivy_document(document: SearchDocument, terms: FacetTerms) -> tantivy.Document:
    out = tantivy.Document()
    out.add_text("abstract", document.abstract)
    for field, text in document_texts(document.title, document.authors, document.tasks, document.methods).items():
        out.add_text(field, text)
    for facet in sorted(terms.of(document)):
        out.add_text("facet", facet)
    if document.year is not None:
        out.add_integer("year", document.year)
    out.add_unsigned("paper", document.paper)
    out.add_unsigned("browse", browse_value(document.date, document.key))
    return out


class _Terms(dict[str, str]):
    """A facet's values as written -> their terms, each worked out once (a C-level lookup after)."""

    def __init__(self, kind: str, key: Callable[[str], str]) -> None:
        super().__init__()
        self._kind, self._key = kind, key

    def __missing__(self, value: str) -> str:
        term = self[value] = _facet(self._kind, self._key(value))
        return term


class FacetTerms:
    """The facet terms of documents, for one build (so what it learns goes with it)."""

    def __init__(self) -> None:
        self._task = _Terms("task", task_key).__getitem__
        self._method = _Terms("method", facet_value).__getitem__
        self._framework = _Terms("framework", facet_value).__getitem__
        self._status = _Terms("status", str).__getitem__

    def of(self, document: SearchDocument) -> set[str]:
        facets = {
            *map(self._task, chain.from_iterable(document.tasks)),
            *map(self._method, document.methods),
            *map(self._framework, document.frameworks),
            *map(self._status, document.statuses),
        }
        facets.add("samples:yes" if document.samples > 0 else "samples:no")
        facets.add("official:yes" if document.official else "official:no")
        return facets


class Abstracts:
    """An abstracts file (`ABSTRACTS`), mapped: every paper's abstract, in paper order; then each one's end offset,
    then their count (8 bytes each). `ValueError` when it is missing or cut short (a snapshot then rebuilds)."""

    def __init__(self, handle: BinaryIO | None) -> None:
        if handle is None:
            raise ValueError(f"{ABSTRACTS} is missing")
        size = os.fstat(handle.fileno()).st_size
        if size < _OFFSET:
            raise ValueError(f"{ABSTRACTS} is cut short or damaged")
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        count = int.from_bytes(mapped[size - _OFFSET :], "little")
        data = size - _OFFSET * (count + 1)
        ends = memoryview(mapped)[max(data, 0) : size - _OFFSET].cast("q") if data >= 0 else None
        if ends is None or (ends[-1] if count else 0) != data:
            if ends is not None:
                ends.release()
            mapped.close()
            raise ValueError(f"{ABSTRACTS} is cut short or damaged")
        self._mapped, self._ends = mapped, ends

    @classmethod
    def open(cls, path: Path) -> Abstracts:
        with open(path, "rb") as handle:
            return cls(handle)

    def __len__(self) -> int:
        return len(self._ends)

    def get(self, paper: int) -> str | None:
        """Paper `paper`'s abstract (None: it has none, or there is no such paper)."""
        ends = self._ends
        if not 0 <= paper < len(ends):
            return None
        return self._mapped[ends[paper - 1] if paper else 0 : ends[paper]].decode("utf-8", "surrogatepass") or None

    def close(self) -> None:
        self._ends.release()
        self._mapped.close()


class Ranking:
    """Search over one tantivy searcher (`search`): what the records' own engine and the layered one share. A subclass
    sets `_searcher`, says where the abstracts are (`abstract`) and how a document's `paper` value becomes a paper."""

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
        from its abstract or from `texts(paper)` (`paper_texts`)."""
        conditions = _filter_queries(filters)
        words = [_tokens(word) for word in query_terms(query)]
        if not words:
            return self._browse(conditions, offset, limit)
        searchable = [tokens for tokens in words if tokens]
        if len(searchable) == len(words):  # every word can match: papers with them all
            total, hits = self._match(searchable, tantivy.Occur.Must, conditions, offset, limit, texts)
            if total or len(words) == 1:
                return total, hits
        if not searchable:
            return 0, []
        # No paper has every word: fall back to any word, still ranked by BM25.
        return self._match(searchable, tantivy.Occur.Should, conditions, offset, limit, texts)

    def _browse(self, conditions: list[tantivy.Query], offset: int, limit: int) -> tuple[int, list[SearchHit]]:
        query = _all_of(conditions) if conditions else tantivy.Query.all_query()
        result = self._searcher.search(query, max(limit, 1), count=True, order_by_field="browse", offset=offset, order=tantivy.Order.Asc)
        papers = self._papers([address for _, address in result.hits[:limit]])
        return _count(result), [SearchHit(paper, None) for paper in papers]

    def _match(
        self,
        words: list[list[str]],
        joiner: tantivy.Occur,
        conditions: list[tantivy.Query],
        offset: int,
        limit: int,
        texts: Callable[[int], dict[str, str]],
    ) -> tuple[int, list[SearchHit]]:
        """Rank in two tiers: papers with the words in the title first, then the others, each by BM25.

        Titles weigh most in BM25 anyway, so the tiers agree with a single ranking on what comes first.
        """
        matched = tantivy.Query.boolean_query([(joiner, _any_field(tokens)) for tokens in words])
        in_title = tantivy.Query.boolean_query([(joiner, _in_field("title", tokens)) for tokens in words])
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
        snippets = _Snippets(self._searcher, matched, len(words), self.abstract, texts)
        return _count(first) + _count(second), [SearchHit(paper, snippets.best(paper)) for paper in papers]

    def _papers(self, addresses: list[tantivy.DocAddress]) -> list[int]:
        return self._ordinals(cast(list[int], self._searcher.fast_field_values("paper", addresses))) if addresses else []

    def scored(self, query: str, limit: int) -> list[tuple[int, float]]:
        """The papers with every word of `query` in any field, best first, each with its BM25 score as ranked
        (weights included, no title tier): how the tests and the score-agreement benchmark compare the same text
        ranked in one index and in another."""
        words = [tokens for tokens in map(_tokens, query_terms(query)) if tokens]
        if not words:
            return []
        matched = tantivy.Query.boolean_query([(tantivy.Occur.Must, _any_field(tokens)) for tokens in words])
        hits = self._searcher.search(matched, limit).hits
        return list(zip(self._papers([address for _, address in hits]), (float(score) for score, _ in hits), strict=True))


class SearchEngine(Ranking):
    """Serves one tantivy index read-only: every paper's title, abstract, authors, tasks and methods, with facets for the filters."""

    def __init__(self, directory: Path, *, remove: bool = False) -> None:
        """Open the index in `directory` (never modified). With `remove`, the directory is removed
        once open: the engine keeps reading its files, and nothing is left behind when it goes."""
        self._files: dict[str, BinaryIO] = {}
        try:
            for entry in sorted(os.scandir(directory), key=lambda entry: entry.name):
                if entry.is_file() and entry.name not in LOCK_FILES:
                    self._files[entry.name] = open(entry.path, "rb")  # noqa: SIM115 - closed by close()
            index = open_index(tantivy.Index.open(str(directory)))
            index.config_reader(reload_policy="Manual")
            self._searcher = index.searcher()
            self.abstracts = Abstracts(self._files.get(ABSTRACTS))
        except BaseException:
            self.close()
            raise
        if remove:
            shutil.rmtree(directory, ignore_errors=True)

    def close(self) -> None:
        files, self._files = self._files, {}
        for handle in files.values():
            handle.close()
        if (abstracts := getattr(self, "abstracts", None)) is not None:
            abstracts.close()
            del self.abstracts

    def __del__(self) -> None:
        self.close()

    def save_image(self, directory: Path) -> Iterator[tuple[str, int, int]]:
        """Copy the index's files into `directory` (for warm starts); yields each file's (name, bytes, CRC-32)."""
        for name, handle in self._files.items():
            crc = size = 0
            handle.seek(0)
            with open(directory / name, "wb") as out:
                while chunk := handle.read(_COPY_CHUNK):
                    out.write(chunk)
                    crc = zlib.crc32(chunk, crc)
                    size += len(chunk)
            yield name, size, crc

    def abstract(self, paper: int) -> str | None:
        """A paper's abstract: the full text lives here once, not also in the index (a slice of `ABSTRACTS`)."""
        return self.abstracts.get(paper)


def _count(result: tantivy.SearchResult) -> int:
    """How many documents matched (asked with `count=True`; tantivy 0.27's stub leaves it out)."""
    return cast(int, getattr(result, "count"))  # noqa: B009


class _Snippets:
    """The best snippet of a hit: from the field with the most distinct query words, title first on a tie."""

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
        for field in _FIELDS:
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


def _tokens(word: str) -> list[str]:
    """A query word as the index cut its text; [] when it cannot match (a token too long to be indexed)."""
    tokens = _QUERY_ANALYZER.analyze(word)
    if any(len(token.encode()) >= _MAX_TOKEN_BYTES for token in tokens):
        return []
    return tokens


def _in_field(field: str, tokens: list[str]) -> tantivy.Query:
    if len(tokens) == 1:
        return tantivy.Query.term_query(SCHEMA, field, tokens[0])
    phrase: list[str | tuple[int, str]] = list(tokens)
    return tantivy.Query.phrase_query(SCHEMA, field, phrase)


def _any_field(tokens: list[str]) -> tantivy.Query:
    """One word in any field, each field weighted."""
    return tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.boost_query(_in_field(field, tokens), _WEIGHTS[field])) for field in _FIELDS]
    )


def _all_of(conditions: list[tantivy.Query]) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, condition) for condition in conditions])


def query_terms(query: str) -> list[str]:
    """The words of a plain-text query (at most 32): letters, digits and underscores, nothing else."""
    return _WORD.findall(query)[:_MAX_TERMS]


# How a filter value becomes the stored facet value.
_FACET_KEY = {"task": task_key, "method": facet_value, "framework": facet_value}


def _filter_queries(filters: SearchFilters) -> list[tantivy.Query]:
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
            facet(_facet(kind, _FACET_KEY[kind](value)))
    if filters.status:  # any of the comma-separated statuses
        facet(*(_facet("status", status) for status in filters.status.split(",")))
    if filters.has_samples is not None:
        facet("samples:yes" if filters.has_samples else "samples:no")
    if filters.official_code is not None:
        facet("official:yes" if filters.official_code else "official:no")
    if filters.year_from is not None or filters.year_to is not None:
        years = tantivy.Query.range_query(SCHEMA, "year", tantivy.FieldType.Integer, filters.year_from, filters.year_to)
        found.append(tantivy.Query.const_score_query(years, 0.0))
    return found


def best_status(index: PaperIndex, paper: PaperRow) -> str | None:
    statuses = index.statuses_of(paper)
    return min(statuses, key=status_order) if statuses else None
