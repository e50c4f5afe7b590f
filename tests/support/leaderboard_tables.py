"""The archive's evaluation tables, methods and datasets for the leaderboard tests, written by the tests themselves.

Entries in the dumps' shapes (`evaluation-tables.json.gz`, `methods.json.gz`, `datasets.json.gz`), and writers for
the forms a build reads: the dumps (optionally gzipped), a parquet file as a JSON-to-parquet conversion infers it
(`metrics` one struct with a field for every metric name in the file, null where a row has none; nested lists and
structs), and a parquet copy that keeps nested fields as JSON text. Nesting too deep for any encoder is written as
text (`deep_subtasks`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from papercode.answers import leaderboards, models
from papercode.archive import build_archive
from papercode.archive.build import BuildSummary
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from tests.support.archive_tables import paper_row, write_json
from tests.support.records import make_record, make_sample, sha_for, write_records

Row = dict[str, Any]


def result(
    model: str,
    metrics: dict[str, Any],
    *,
    paper_url: str = "",
    paper_title: str | None = None,
    date: str | None = "2020-01-01",
    code: list[str] | None = None,
    extra: bool | None = False,
) -> Row:
    return {
        "model_name": model,
        "paper_title": paper_title,
        "paper_url": paper_url,
        "paper_date": date,
        "code_links": [{"title": url.rsplit("/", 1)[-1], "url": url} for url in code or []],
        "model_links": [],
        "uses_additional_data": extra,
        "metrics": metrics,
    }


def benchmark(dataset: str, metrics: list[str], rows: list[Row], subdatasets: list[Row] | None = None, description: str = "") -> Row:
    return {
        "dataset": dataset,
        "description": description,
        "dataset_citations": [],
        "dataset_links": [],
        "sota": {"metrics": metrics, "rows": rows},
        "subdatasets": subdatasets or [],
    }


def task(name: str, datasets: list[Row] | None = None, subtasks: list[Row] | None = None, **fields: Any) -> Row:
    entry: Row = {
        "task": name,
        "description": f"The task of {name}.",
        "categories": ["Computer Vision"],
        "synonyms": [],
        "source_link": None,
        "datasets": datasets or [],
        "subtasks": subtasks or [],
    }
    entry.update(fields)
    return entry


def method(name: str, **fields: Any) -> Row:
    entry: Row = {
        "url": f"https://paperswithcode.com/method/{name.lower()}",
        "name": name,
        "full_name": f"{name} in full",
        "description": f"What {name} does.",
        "paper": None,
        "introduced_year": 2017,
        "source_url": None,
        "source_title": None,
        "code_snippet_url": None,
        "num_papers": 12,
        "collections": [{"collection": "Attention Mechanisms", "area_id": "general", "area": "General"}],
    }
    entry.update(fields)
    return entry


def dataset(name: str, **fields: Any) -> Row:
    entry: Row = {
        "url": f"https://paperswithcode.com/dataset/{name.lower()}",
        "name": name,
        "full_name": f"The {name} dataset",
        "homepage": f"https://{name.lower()}.example.org",
        "description": f"About {name}.",
        "paper": None,
        "introduced_date": None,
        "warning": None,
        "modalities": ["Images"],
        "tasks": [{"task": "Semantic Segmentation", "url": "https://paperswithcode.com/task/semantic-segmentation"}],
        "languages": [],
        "variants": [],
        "num_papers": 40,
        "data_loaders": [],
    }
    entry.update(fields)
    return entry


def sample_catalogues() -> tuple[list[Row], list[Row], list[Row]]:
    """The three tables (evaluations, methods, datasets) in their smallest useful form: the bundled paper 1902.04094
    with a result on one benchmark, for the tests that serve or fetch a whole archive."""
    row = result("BERT-MRF", {"Test perplexity": "99.9"}, paper_url="https://arxiv.org/abs/1902.04094v2")
    return (
        [task("Language Modelling", [benchmark("Penn Treebank", ["Test perplexity"], [row])])],
        [method("BERT")],
        [dataset("Penn Treebank")],
    )


def serve_tables(
    directory: Path, evaluations: list[Row], *, methods: list[Row] | None = None, datasets: list[Row] | None = None
) -> tuple[BuildSummary, Corpus]:
    """The tables built into an archive beside two papers (`first` and `second`, of arXiv ids 2001.00001 and
    2001.00002) and served beneath one record (a paper of its own): the build's summary and the corpus."""
    sources = directory / "sources"
    papers = [paper_row(f"{which}", f"The {which} paper", arxiv_id=f"2001.0000{i}") for i, which in enumerate(("first", "second"), 1)]
    write_json(sources / "papers.json", papers)
    write_dump(sources / "evaluation-tables.json", evaluations)
    if methods is not None:
        write_dump(sources / "methods.json", methods)
    if datasets is not None:
        write_dump(sources / "datasets.json", datasets)
    summary = build_archive([sources], directory / "archive", data_date="2025-07-28")
    record = make_record("2102.00001", "a-record", [make_sample(sha_for("a-record", 1))], title="A record")
    corpus = Corpus.load([write_records(directory / "records", [record])], archive_dir=directory / "archive")
    assert corpus.archive_note is None
    return summary, corpus


def board(corpus: Corpus, *args: Any, **named: Any) -> dict[str, Any]:
    """`get_leaderboard`'s answer as shown, checked to be its model's."""
    answer = leaderboards.leaderboard_shown(corpus, *args, **named)
    assert orjson.dumps(answer) == orjson.dumps(models.Leaderboard.model_validate(answer).model_dump(mode="json", exclude_none=True))
    return answer


def describe(corpus: Corpus, kind: str, name: str) -> dict[str, Any]:
    """`describe`'s answer as shown, checked to be its model's."""
    answer = leaderboards.describe_shown(corpus, kind, name)
    assert orjson.dumps(answer) == orjson.dumps(models.Description.model_validate(answer).model_dump(mode="json", exclude_none=True))
    return answer


def refused(call: Callable[[], Any]) -> QueryError:
    """The error a call is refused with."""
    with pytest.raises(QueryError) as caught:
        call()
    return caught.value


def write_dump(path: Path, rows: list[Row]) -> Path:
    """The original dump's form (gzipped when the name ends in `.gz`)."""
    return write_json(path, rows)


def write_parquet(path: Path, rows: list[Row], *, as_text: tuple[str, ...] = ()) -> Path:
    """A table as a JSON-to-parquet conversion writes it: every nested type inferred from the rows (a struct's fields
    are every key any row has: `metrics` holds every metric name in the file, null where a row has none). The
    columns in `as_text` are written as JSON text instead."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if as_text:
        rows = [{key: orjson.dumps(value).decode() if key in as_text else value for key, value in row.items()} for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def deep_subtasks(depth: int, name: str = "Deep") -> str:
    """A `subtasks` list nested `depth` levels, as JSON text (no encoder writes it from values: it is built as text).
    Level i is the task `<name> i`, with a benchmark of one row."""
    level = (
        '{{"task": "{name} {level}", "description": null, "categories": [], "synonyms": [], "source_link": null, '
        '"datasets": [{{"dataset": "Set {level}", "description": "", "sota": {{"metrics": ["Accuracy"], "rows": []}}, "subdatasets": []}}], '
        '"subtasks": ['
    )
    opening = "".join(level.format(name=name, level=number) for number in range(1, depth + 1))
    return "[" + opening + "]}" * depth + "]"


def write_deep_dump(path: Path, rows: list[Row], deep: dict[str, str]) -> Path:
    """A dump whose rows are `rows`, each task named in `deep` with its `subtasks` replaced by that JSON text."""
    parts = []
    for row in rows:
        text = orjson.dumps(row).decode()
        subtasks = deep.get(row["task"])
        if subtasks is not None:
            text = text.replace('"subtasks":[]', f'"subtasks":{subtasks}', 1)
        parts.append(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[" + ",".join(parts) + "]", encoding="utf-8")
    return path
