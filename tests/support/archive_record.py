"""What an archive build wrote and answered, kept to hold later builds to it: the sha256 of every file of its `papers/`
directory (the paper columns) and of each answer about its papers (get_paper, one and in lists, and the browsing order
of search_papers), over archive tables made here (`sources`: generated papers, the bundled records' and the small
archive's, and a few with fields missing).

`tests/archive/archive_before_fields.json` is the record of the commit before the paper's fields were declared once
(`index.fields`), c5e42ca; it was made at that commit, from an export of it, with this module (which calls only what
that commit had; `build_archive`'s `data_date` was `snapshot` then):

    PYTHONPATH=<that commit's server>:. python -m tests.support.archive_record > tests/archive/archive_before_fields.json
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from papercode.answers import queries
from papercode.archive import build_archive
from papercode.corpus.stages import Corpus

from .archive_overlay import DATA_DATE, archive_papers
from .archive_tables import bundled_rows, generated_rows, link_row, paper_row, write_json


def sources(directory: Path) -> list[Path]:
    """The archive's tables, written as dumps into `directory`."""
    papers, links = generated_rows(60, 50, seed=32, description_words=(3, 8))
    bundled_papers, bundled_links = bundled_rows()
    small_papers, small_links = archive_papers()
    bare = [
        paper_row("no-date-no-authors", "Undated, and by nobody", date=None, authors=[]),
        paper_row("only-a-title", "Only a title", date=None, authors=None, abstract=None, tasks=None, methods=None),
        paper_row("a-date-without-a-year", "A date the build leaves out", arxiv_id="2104.00104", date="soon"),
    ]
    extra = [link_row("no-date-no-authors", "https://github.com/some/where", "Undated, and by nobody", framework="pytorch")]
    rows = [*papers, *bundled_papers, *small_papers, *bare]
    return [
        write_json(directory / "papers.json.gz", rows),
        write_json(directory / "links.json.gz", [*links, *bundled_links, *small_links, *extra]),
    ]


def _digest(value: Any) -> str:
    return hashlib.sha256(value if isinstance(value, bytes) else orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def answered(corpus: Corpus) -> dict[str, str]:
    """The digest of every answer about the corpus's papers: get_paper for each, in lists of ten, and browsing."""
    keys = [paper.key for paper in corpus.index.papers]
    found: dict[str, str] = {f"get_paper {key}": _digest(queries.paper_detail_shown(corpus, key)) for key in keys}
    for start in range(0, len(keys), 10):
        found[f"get_paper list from {start}"] = _digest(queries.paper_list_shown(corpus, keys[start : start + 10]))
    browsed = queries.search_papers(corpus, "", limit=len(keys)).model_dump(mode="json", exclude_none=True)
    found["search_papers browsing"] = _digest(browsed)
    return found


def record(directory: Path) -> dict[str, Any]:
    """The archive built from `sources` in `directory`: its paper columns' digests and its answers' (over no records)."""
    build_archive(sources(directory / "tables"), directory / "archive", data_date=DATA_DATE)
    build = (directory / "archive" / "current").resolve()
    columns = {str(path.relative_to(build)): _digest(path.read_bytes()) for path in sorted((build / "papers").iterdir())}
    (directory / "records").mkdir()
    corpus = Corpus.load([directory / "records"], archive_dir=directory / "archive")
    return {"papers": columns, "answers": answered(corpus)}


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        sys.stdout.write(orjson.dumps(record(Path(scratch)), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")
