"""The leaderboards' rows joined to the archive's papers, once both are read: the columns of `index.board_columns` that
need the papers (each row's paper, or its own title and paper id when it names none; whether its paper's links name a
repository; each paper's rows; each task's paper count; each method's introducing paper).

A row's paper is found by the arXiv id its `paper_url` names (an abs or pdf URL), else by the Papers-with-Code slug it
names, else by its title when exactly one paper has it (`core.names.title_key`); a row that joins none is kept with
its own title and paper id, and counted.
"""

from __future__ import annotations

from array import array
from collections import Counter
from pathlib import Path
from typing import Final

import numpy as np

from papercode.core.ids import parse_arxiv_id, parse_slug
from papercode.core.names import name_slug, task_key, title_key
from papercode.index.board_columns import BOARDS, ROW_OWN_CODE, ROW_PAPER_CODE
from papercode.index.mapped import ColumnWriter

from .boards import BoardsSummary, Catalogued, int32s
from .rows import Tally
from .serving import AMBIGUOUS, PaperKeys


def join_results(catalogued: Catalogued, keys: PaperKeys, build: Path, *, papers: int, warnings: Tally) -> BoardsSummary:
    """Write the joined columns into `build/boards` (beside those `boards.write_catalogued` wrote); the leaderboards'
    summary, every file of theirs listed."""
    summary = BoardsSummary(catalogued.counts, cuts=catalogued.cuts)
    writer = ColumnWriter(build / BOARDS)
    try:
        _rows(catalogued, keys, writer, papers=papers, summary=summary, warnings=warnings)
        counts: Counter[str] = Counter()
        for slug, count in keys.task_papers.items():
            counts[task_key(slug)] += count
        writer.ints("task.papers", array("i", (counts.get(task_key(name_slug(name)), 0) for name in catalogued.task_names)))
        writer.ints("method.paper", array("i", (join_paper(keys, paper.url, paper.title)[0] for paper in catalogued.method_papers)))
    except BaseException:
        writer.discard()
        raise
    summary.files = {**catalogued.files, **{f"{BOARDS}/{name}": facts for name, facts in writer.close().items()}}
    return summary


def _rows(catalogued: Catalogued, keys: PaperKeys, writer: ColumnWriter, *, papers: int, summary: BoardsSummary, warnings: Tally) -> None:
    has_code = np.zeros(papers + 1, dtype=np.uint8)  # archive paper -> 1 when its code links name a repository
    has_code[np.frombuffer(array("i", keys.repo_papers), dtype=np.int32)] = 1
    title: list[str | None] = []
    ref: list[str | None] = []
    paper, code = array("i"), array("B")
    unjoined_example = None
    for row in catalogued.rows:
        a, row_ref, how = join_paper(keys, row.url, row.title)
        paper.append(a)
        title.append(row.title if a < 0 else None)
        ref.append(row_ref if a < 0 else None)
        code.append((ROW_OWN_CODE if row.own_code else 0) | (ROW_PAPER_CODE if a >= 0 and has_code[a] else 0))
        if how is None:
            summary.unjoined += 1
            if unjoined_example is None:
                unjoined_example = row
        else:
            summary.joined_by[how] += 1
    if unjoined_example is not None:
        board = catalogued.board_names[unjoined_example.board]
        warnings.add(
            "result_paper_not_found",
            f"task {catalogued.task_names[board.task]!r}, benchmark {board.dataset!r}",
            f"{summary.unjoined:,} results name no paper of the archive (served from their own fields), e.g. "
            f"{unjoined_example.title or unjoined_example.url or unjoined_example.model!r}",
            summary.unjoined,
        )
    writer.packed("row.title", title)
    writer.packed("row.ref", ref)
    writer.ints("row.paper", paper)
    writer.ints("row.code", code)
    numbers = np.frombuffer(paper, dtype=np.int32)
    joined = np.flatnonzero(numbers >= 0).astype(np.int32)
    by_paper = joined[np.argsort(numbers[joined], kind="stable")]
    writer.ints("paper.papers", int32s(numbers[by_paper]))
    writer.ints("paper.rows", int32s(by_paper))


def join_paper(keys: PaperKeys, url: str | None, title: str | None) -> tuple[int, str | None, str | None]:
    """(the archive paper a result row names, -1 for none; the paper id its URL gives; how it was found: `arxiv`, `slug`,
    `title`, or None)."""
    ref = None
    if url:
        arxiv = _arxiv_of(url)
        if arxiv is not None:
            ref = arxiv
            a = keys.by_arxiv.get(ref)
            if a is not None:
                return a, ref, "arxiv"
        elif "/paper/" in url and (slug := parse_slug(url)) is not None:
            ref = slug
            a = keys.by_slug.get(slug)
            if a is not None:
                return a, ref, "slug"
    if title:
        a = keys.by_title.get(title_key(title))
        if a is not None and a != AMBIGUOUS:
            return a, ref, "title"
    return -1, ref, None


_ARXIV_HOSTS: Final = ("http://arxiv.org/", "https://arxiv.org/")


def _arxiv_of(url: str) -> str | None:
    """The arXiv id an abs or pdf URL names (most rows' URLs: read by slicing), or another form `core.ids` reads."""
    if url.startswith(_ARXIV_HOSTS):
        rest = url.partition("arxiv.org/")[2]
        kind, _, tail = rest.partition("/")
        if kind in ("abs", "pdf"):
            tail = tail.removesuffix(".pdf").rstrip("/")
            head, v, version = tail.rpartition("v")
            number = head if v and version.isdigit() and head[-1:].isdigit() else tail
            if len(number) in (9, 10) and number[4] == "." and number[:4].isdigit() and number[5:].isdigit():
                return number
    if "://" in url and "arxiv" not in url.lower():  # another site's URL: no arXiv id in it
        return None
    parsed = parse_arxiv_id(url)
    return None if parsed is None else parsed.canonical
