"""Papers-with-Code archive tables for the `papercode archive` tests, written by the tests themselves.

Rows in the dump's shape (`papers-with-abstracts`, `links-between-papers-and-code`), the two bundled records
turned back into their archive rows, and writers for every form a build reads: the original JSON dumps
(optionally gzipped), the Hugging Face mirror's parquet, and a parquet copy made through pandas
(`__index_level_0__`, struct fields in alphabetical order, dates as timestamps or float epoch milliseconds,
link flags as 0/1), written with pyarrow alone.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import random
import stat
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import orjson

BUNDLED = Path(__file__).resolve().parents[2] / "records"
PWC = "https://paperswithcode.com"
# The record fields an archive row determines (the rest: syntology, about, a link's reach, come from elsewhere).
ARCHIVE_FIELDS = ("url", "title", "arxiv_id", "date", "proceeding", "authors", "abstract", "url_abs", "url_pdf", "tasks", "methods")

Row = dict[str, Any]
DateForm = Literal["string", "date", "timestamp", "float_ms"]


def bundled_records() -> list[Row]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in sorted(BUNDLED.glob("*.txt"))]


def method_row(name: str, description: str = "A method. " * 40) -> Row:
    return {
        "name": name,
        "full_name": f"{name} (full name)",
        "description": description,
        "introduced_year": 2017,
        "source_url": "https://arxiv.org/abs/1706.03762v7",
        "source_title": "Attention Is All You Need",
        "code_snippet_url": None,
        "main_collection": {"name": "Attention Mechanisms", "description": "How models attend. " * 10, "parent": None, "area": "General"},
    }


def paper_row(slug: str, title: str | None = "A paper", **fields: Any) -> Row:
    row: Row = {
        "paper_url": f"{PWC}/paper/{slug}",
        "arxiv_id": None,
        "nips_id": None,
        "openreview_id": None,
        "title": title,
        "abstract": f"The abstract of {slug}.",
        "short_abstract": None,
        "url_abs": None,
        "url_pdf": None,
        "proceeding": None,
        "authors": ["Ada Lovelace"],
        "tasks": [],
        "date": "2020-01-02",
        "methods": [],
        "conference_url_abs": None,
        "conference_url_pdf": None,
        "conference": None,
        "reproduces_paper": None,
    }
    row.update(fields)
    return row


def link_row(slug: str, repo_url: Any, title: str | None = "A paper", **fields: Any) -> Row:
    row: Row = {
        "paper_url": f"{PWC}/paper/{slug}",
        "paper_title": title,
        "paper_arxiv_id": None,
        "paper_url_abs": None,
        "paper_url_pdf": None,
        "repo_url": repo_url,
        "is_official": False,
        "mentioned_in_paper": False,
        "mentioned_in_github": False,
        "framework": "none",
    }
    row.update(fields)
    return row


def rows_of_record(record: Row) -> tuple[Row, list[Row]]:
    """A Code-with-Papers record turned back into its archive rows: one papers row and its link rows."""
    slug = record["url"].removeprefix("/paper/")
    paper = paper_row(
        slug,
        record["title"],
        arxiv_id=record["arxiv_id"],
        abstract=record["abstract"],
        url_abs=record["url_abs"],
        url_pdf=record["url_pdf"],
        proceeding=record["proceeding"],
        authors=record["authors"],
        tasks=[task["task_name"] for task in record["tasks"]],
        date=record["date"],
        methods=[method_row(method["method_name"]) for method in record["methods"]],
    )
    links = [
        link_row(
            slug,
            link["repo_url"],
            record["title"],
            paper_arxiv_id=record["arxiv_id"],
            paper_url_abs=record["url_abs"],
            paper_url_pdf=record["url_pdf"],
            is_official=bool(link["is_official"]),
            mentioned_in_paper=bool(link["mentioned_in_paper"]),
            mentioned_in_github=bool(link["mentioned_in_github"]),
            framework=link["framework"],
        )
        for link in record["code_links"]
    ]
    return paper, links


def bundled_rows(shuffle_links: bool = True) -> tuple[list[Row], list[Row]]:
    """The bundled records' archive rows; links shuffled (the build must restore the records' order)."""
    papers: list[Row] = []
    links: list[Row] = []
    for record in bundled_records():
        paper, paper_links = rows_of_record(record)
        papers.append(paper)
        links.extend(paper_links)
    if shuffle_links:
        random.Random(15).shuffle(links)
    return papers, links


# -- writers -------------------------------------------------------------------------------


def write_json(path: Path, rows: list[Row]) -> Path:
    """The original dump's form: one JSON array, gzipped when the name ends in `.gz`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = orjson.dumps(rows)
    path.write_bytes(gzip.compress(data, compresslevel=6) if path.name.endswith(".gz") else data)
    return path


def write_parquet(
    path: Path, rows: list[Row], *, pandas_style: bool = False, date_form: DateForm = "string", row_group_size: int | None = None
) -> Path:
    """A table as the Hub mirror writes it, or (`pandas_style`) as a copy made through pandas does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    links = bool(rows) and "repo_url" in rows[0]
    schema = _link_schema(pa, pandas_style) if links else _paper_schema(pa, pandas_style, date_form)
    columns: dict[str, list[Any]] = {name: [row.get(name) for row in rows] for name in schema.names if name != "__index_level_0__"}
    if not links:
        columns["date"] = [_date_value(value, date_form) for value in columns["date"]]
    if pandas_style and links:
        for name in ("is_official", "mentioned_in_paper", "mentioned_in_github"):
            columns[name] = [None if value is None else int(value) for value in columns[name]]
    if pandas_style:
        columns["__index_level_0__"] = list(range(len(rows)))
    table = pa.table({name: pa.array(columns[name], type=schema.field(name).type) for name in schema.names}, schema=schema)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def _date_value(value: Any, form: DateForm) -> Any:
    if value is None or form == "string":
        return value
    try:
        moment = datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:  # not a date: only a number can carry that into a typed column
        return 1e300 if form == "float_ms" else None
    if form == "date":
        return moment.date()
    if form == "timestamp":
        return moment.replace(tzinfo=None)
    return moment.timestamp() * 1000.0


def _paper_schema(pa: Any, pandas_style: bool, date_form: DateForm) -> Any:
    text = pa.string()
    collection = [("name", text), ("description", text), ("parent", text), ("area", text)]
    method = [
        ("name", text),
        ("full_name", text),
        ("description", text),
        ("introduced_year", pa.int64()),
        ("source_url", text),
        ("source_title", text),
        ("code_snippet_url", text),
        ("main_collection", pa.struct(sorted(collection) if pandas_style else collection)),
    ]
    date_type = {"string": text, "date": pa.date32(), "timestamp": pa.timestamp("ns"), "float_ms": pa.float64()}[date_form]
    fields = [
        ("paper_url", text),
        ("arxiv_id", text),
        ("nips_id", text),
        ("openreview_id", text),
        ("title", text),
        ("abstract", text),
        ("short_abstract", text),
        ("url_abs", text),
        ("url_pdf", text),
        ("proceeding", text),
        ("authors", pa.list_(text)),
        ("tasks", pa.list_(text)),
        ("date", date_type),
        ("methods", pa.list_(pa.struct(sorted(method, key=lambda f: f[0]) if pandas_style else method))),
        ("conference_url_abs", text),
        ("conference_url_pdf", text),
        ("conference", text),
        ("reproduces_paper", text),
    ]
    if pandas_style:
        fields.append(("__index_level_0__", pa.int64()))
    return pa.schema(fields)


def _link_schema(pa: Any, pandas_style: bool) -> Any:
    text = pa.string()
    flag = pa.int64() if pandas_style else pa.bool_()
    fields = [
        ("paper_url", text),
        ("paper_title", text),
        ("paper_arxiv_id", text),
        ("paper_url_abs", text),
        ("paper_url_pdf", text),
        ("repo_url", text),
        ("is_official", flag),
        ("mentioned_in_paper", flag),
        ("mentioned_in_github", flag),
        ("framework", text),
    ]
    if pandas_style:
        fields.append(("__index_level_0__", pa.int64()))
    return pa.schema(fields)


# -- a generated archive (for measuring; the tests use small ones) ---------------------------


def generated_rows(papers: int, links: int, seed: int = 7, description_words: tuple[int, int] = (80, 500)) -> tuple[list[Row], list[Row]]:
    """A synthetic archive shaped like the real one: long method descriptions repeated per paper, ~1 kB
    abstracts, a few authors and tasks; some links name papers the papers table lacks."""
    rng = random.Random(seed)
    words = ["model", "learning", "network", "graph", "attention", "deep", "neural", "vision", "language", "data", "robust"]
    method_names = [f"Method {i} {rng.choice(words).title()}" for i in range(1500)]
    methods = {name: method_row(name, " ".join(rng.choices(words, k=rng.randint(*description_words)))) for name in method_names}
    task_names = [f"Task {i} {rng.choice(words).title()}" for i in range(3000)]
    frameworks = ["pytorch", "tf", "jax", "none", "mindspore", "paddle"]
    paper_rows: list[Row] = []
    for i in range(papers):
        paper_rows.append(
            paper_row(
                f"paper-{i}-{rng.choice(words)}",
                f"{rng.choice(words).title()} {rng.choice(words)} for {rng.choice(words)} #{i}",
                arxiv_id=f"{1000 + i // 90000:04d}.{i % 90000:05d}" if i % 8 else None,
                abstract=" ".join(rng.choices(words, k=rng.randint(100, 200))),
                url_abs=f"https://arxiv.org/abs/{i}v1",
                url_pdf=f"https://arxiv.org/pdf/{i}v1.pdf",
                proceeding="NeurIPS 2018 12" if i % 5 == 0 else None,
                authors=[f"Author {rng.randint(0, 10**6)}" for _ in range(rng.randint(1, 8))],
                tasks=rng.sample(task_names, rng.randint(0, 6)),
                date=f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                methods=[methods[name] for name in rng.sample(method_names, rng.randint(0, 25))],
            )
        )
    link_rows: list[Row] = []
    for j in range(links):
        i = rng.randrange(int(papers * 1.05))  # about 5% name a paper the papers table lacks
        slug = paper_rows[i]["paper_url"].rsplit("/", 1)[1] if i < papers else f"only-linked-{i}"
        link_rows.append(
            link_row(
                slug,
                f"https://github.com/owner{rng.randint(0, 10**5)}/repo{j}",
                paper_rows[i]["title"] if i < papers else f"Only linked {i}",
                is_official=rng.random() < 0.3,
                mentioned_in_paper=rng.random() < 0.3,
                mentioned_in_github=rng.random() < 0.6,
                framework=rng.choice(frameworks),
            )
        )
    return paper_rows, link_rows


def chunks(rows: list[Row], parts: int) -> Iterable[list[Row]]:
    size = -(-len(rows) // parts)
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


NO_PROCESS = 4_194_304  # above every process id Linux (2**22 at most) and macOS hand out: its owner is dead


# -- reading an archive back ---------------------------------------------------------------


def served_papers(archive: Path) -> dict[str, Row]:
    """Every paper of the archive's current build as a server reads it (`MappedArchive`: its columns, details and
    abstract), by slug, in build order."""
    from papercode.index.mapped_archive import open_archive

    mapped = open_archive(archive)
    try:
        assert mapped.abstracts is not None
        papers: dict[str, Row] = {}
        for a in range(len(mapped)):
            row = mapped.papers[a]
            assert row.slug is not None and row.slug not in papers
            papers[row.slug] = {**_served_row(row), "abstract": mapped.abstracts.get(a)}
        return papers
    finally:
        mapped.close()


def _served_row(row: Any) -> Row:
    details = row.details()
    return {
        "arxiv_id": row.arxiv_id,
        "title": row.title,
        "date": row.date,
        "year": row.year,
        "url_abs": row.url_abs,
        "snapshot": row.snapshot,
        "proceeding": details.proceeding,
        "authors": details.authors,
        "url_pdf": details.url_pdf,
        "tasks": details.tasks,
        "methods": details.methods,
        "code_links": [(link.repo_url, link.is_official, link.mentioned_in_paper, link.framework) for link in details.code_links],
    }


@functools.cache
def _bundled_served() -> dict[str, Row]:
    """The bundled records as a server serves them from the records themselves (`served_papers`' shape)."""
    from papercode.corpus.stages import Corpus
    from papercode.settings import bundled_records_dir

    corpus = Corpus.load([bundled_records_dir()])
    assert corpus.search is not None
    return {str(row.slug): {**_served_row(row), "abstract": corpus.search.abstract(row.ordinal)} for row in corpus.index.papers}


def slug_of(record: Row) -> str:
    return str(record["url"]).removeprefix("/paper/").lower()


def assert_bundled_papers_back(papers: dict[str, Row], snapshot: str = "2025-07-28") -> None:
    """The two bundled papers' archive parts are back exactly: served from the archive as the records themselves are
    served (every archive field, the code links in the same order), but for what only a record knows (a link's reach
    and licence, which `served_papers` leaves out) and the date of the data, the archive's."""
    expected = _bundled_served()
    assert len(expected) == 2
    for slug, record in expected.items():
        assert papers[slug] == {**record, "snapshot": snapshot}, slug
    for record in bundled_records():  # and the records' own text, field by field
        got = papers[slug_of(record)]
        for name in ("title", "arxiv_id", "date", "proceeding", "authors", "abstract", "url_abs", "url_pdf"):
            assert got[name] == record[name], name
        assert got["tasks"] == [(task["task_slug"], task["task_name"]) for task in record["tasks"]]
        assert got["methods"] == [method["method_name"] for method in record["methods"]]
        assert sorted(got["code_links"]) == sorted(
            (link["repo_url"], bool(link["is_official"]), bool(link["mentioned_in_paper"]), link["framework"])
            for link in record["code_links"]
        )


def build_recording(sources: list[Path], out: Path, data_date: str) -> tuple[Any, list[Row]]:
    """`build_archive`, and every paper it wrote, in build order, as the Code-with-Papers record the build wrote of it
    before the serving form (its fields, its code links, the archive as its source): the papers of the one-index form
    that the overlaid one is compared with."""
    from papercode.archive import build as build_module
    from papercode.archive.rows import LICENCE_URL
    from papercode.archive.serving import ServingWriter

    records: list[Row] = []

    class Recording(ServingWriter):
        def add(self, *, slug: str, arxiv_id: str | None, record: Row, links: list[Any]) -> None:
            code_links = [
                {
                    "repo_url": link.repo_url,
                    "is_official": int(link.is_official),
                    "mentioned_in_paper": None if link.mentioned_in_paper is None else int(link.mentioned_in_paper),
                }
                | ({} if link.framework is None else {"framework": link.framework})
                for link in links
            ]
            source = {"archive": "pwc-archive (Hugging Face), CC BY-SA 4.0", "snapshot": data_date, "licence_url": LICENCE_URL}
            records.append({**record, "code_links": code_links, "source": source})
            super().add(slug=slug, arxiv_id=arxiv_id, record=record, links=links)

    setattr(build_module, "ServingWriter", Recording)  # noqa: B010 - for this build only
    try:
        summary = build_module.build_archive(sources, out, data_date=data_date)
    finally:
        setattr(build_module, "ServingWriter", ServingWriter)  # noqa: B010
    return summary, records


def current_manifest(archive: Path) -> Row:
    """The manifest (`archive.json`) of the archive's current build."""
    from papercode.index.mapped_archive import MANIFEST, current_build

    build = current_build(archive)
    assert build is not None, f"{archive} has no current build"
    value: Row = orjson.loads((build / MANIFEST).read_bytes())
    return value


def tree(directory: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under `directory` (itself too): its kind, mode, size, modification and change times, and its
    content (a file's sha256, a link's target)."""
    entries = {}
    for path in [directory, *sorted(directory.rglob("*"))]:
        found = os.lstat(path)
        if stat.S_ISLNK(found.st_mode):
            content: str | None = os.readlink(path)
        elif stat.S_ISREG(found.st_mode):
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            content = None
        entries[str(path.relative_to(directory))] = (
            stat.S_IFMT(found.st_mode),
            stat.S_IMODE(found.st_mode),
            found.st_size,
            found.st_mtime_ns,
            found.st_ctime_ns,
            content,
        )
    return entries


def read_only(directory: Path) -> None:
    for path in [directory, *directory.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o555 if path.is_dir() else 0o444)


def contents(directory: Path) -> dict[str, tuple[int, str | None]]:
    """Every entry under `directory` with its kind and content (`tree` but for modes and times)."""
    return {name: (entry[0], entry[-1]) for name, entry in tree(directory).items() if name != "."}
