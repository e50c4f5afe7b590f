"""Hostile archive sources: files made to hang, crash or flood `papercode archive build`.

Each is refused in one line naming the file (exit 2, nothing built), or read as the valid data it is. The real
command runs in a subprocess where the defect was a hang, a traceback or a wrong exit code (a hang is a bounded
timeout there, so the test fails instead of hanging); the reader is tested in-process beside it.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from papercode.archive import build_archive
from papercode.archive.dumps import (
    EXPANSION_FLOOR,
    EXPANSION_RATIO,
    DumpError,
    Expansion,
    array_pieces,
    check_expansion,
    gunzipped_chunks,
)
from papercode.archive.rows import Vocabulary
from papercode.archive.tables import (
    PAPER_COLUMNS,
    PARQUET_ROWS_FLOOR,
    BadInput,
    TableFile,
    classify,
    find_sources,
    json_batches,
    parquet_batches,
)
from tests.support.archive_tables import PWC, generated_rows, link_row, method_row, paper_row, served_papers, write_json, write_parquet
from tests.support.build_phases import phases_left_out

DATA_DATE = "2025-07-28"
BUILD_SECONDS = 60  # far above what a refusal takes: a build still running then is the defect
ANY = msgspec.json.Decoder().decode


def build_cli(tmp_path: Path, *sources: Path) -> subprocess.CompletedProcess[str]:
    """`papercode archive build SOURCES --out tmp_path/archive` in a fresh process, bounded in time."""
    command = [sys.executable, "-m", "papercode", "archive", "build", *map(str, sources), "--out", str(tmp_path / "archive")]
    return phases_left_out(
        subprocess.run([*command, "--snapshot", DATA_DATE], capture_output=True, text=True, timeout=BUILD_SECONDS, check=False)
    )


def assert_refused(result: subprocess.CompletedProcess[str], path: Path, problem: str, archive: Path) -> None:
    """One line on stderr naming `path` and saying `problem`, exit 2, nothing on stdout, no archive written."""
    assert (result.returncode, result.stdout) == (2, ""), result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"papercode: archive build: {path}: "), result.stderr
    assert problem in result.stderr and "Traceback" not in result.stderr
    assert not archive.exists()


def rows_of(source: TableFile) -> list[tuple[Any, ...]]:
    """Every row the reader gives for `source` (a papers table's with its tasks and methods entries); a batch is
    read one row past its count, so a batch that would not end shows as one row too many."""
    vocab = Vocabulary() if source.table == "papers" else None
    batches = parquet_batches(source, vocab) if source.form == "parquet" else json_batches(source, vocab)
    return [msgspec.structs.astuple(row) for batch in batches for row in itertools.islice(batch.rows, batch.count + 1)]


def refusal(path: Path) -> str:
    """What the reader says about `path`, classified then read to the end: the `BadInput` problem, one line."""
    with pytest.raises(BadInput) as caught:
        rows_of(classify(path))
    assert caught.value.path == str(path) and "\n" not in str(caught.value)
    return caught.value.problem


def write_table(path: Path, columns: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)
    return path


def urls(count: int, prefix: str = "p") -> Any:
    return pa.array([f"{PWC}/paper/{prefix}-{i}" for i in range(count)])


# -- a column of nothing is no endless column ----------------------------------------------


def null_typed(directory: Path, table: str, rows: int = 3) -> Path:
    """A table whose required columns are typed null (every value missing), as pandas and pyarrow type them."""
    nothing = pa.array([None] * rows, pa.null())
    if table == "papers":
        return write_table(directory / "papers.parquet", {"paper_url": nothing, "title": nothing})
    return write_table(directory / "links.parquet", {"paper_url": nothing, "repo_url": nothing})


@pytest.mark.process
@pytest.mark.parametrize("table", ["papers", "links"])
def test_a_table_whose_required_columns_hold_nothing_is_refused_not_read_forever(tmp_path: Path, table: str) -> None:
    path = null_typed(tmp_path / "src", table)
    required = "'paper_url' and 'title' columns" if table == "papers" else "'paper_url' and 'repo_url' columns"
    assert_refused(build_cli(tmp_path, path), path, f"{required} hold nothing (typed null", tmp_path / "archive")


def test_every_batch_ends_at_its_row_count_whatever_its_columns_hold(tmp_path: Path) -> None:
    # Read past the classification (which refuses such a file): each batch yields exactly its rows, no more.
    path = write_table(tmp_path / "nothing.parquet", {"paper_url": pa.array([None] * 5, pa.null()), "abstract": pa.array([None] * 5)})
    source = TableFile(path, "parquet", "papers", path.stat().st_size, 0.0, ("paper_url", "abstract"), 5)
    assert rows_of(source) == [(None,) * len(PAPER_COLUMNS)] * 5
    assert refusal(path) == "looks like a papers-with-abstracts table but has no 'title' column"
    only_url = write_table(tmp_path / "only-url.parquet", {"paper_url": urls(3), "title": pa.array([None] * 3, pa.null())})
    assert refusal(only_url).endswith("its 'title' column holds nothing (typed null: no value in any row)")


def test_an_optional_column_of_nothing_is_read_as_missing(tmp_path: Path) -> None:
    nothing = pa.array([None] * 3, pa.null())
    columns = {"paper_url": urls(3), "title": pa.array(["A", "B", "C"]), "abstract": nothing, "date": nothing, "authors": nothing}
    build_archive([write_table(tmp_path / "papers.parquet", columns)], tmp_path / "archive", data_date=DATA_DATE)
    papers = served_papers(tmp_path / "archive").values()
    assert sorted(paper["title"] for paper in papers) == ["A", "B", "C"]
    assert all((paper["abstract"], paper["date"], paper["authors"]) == (None, None, []) for paper in papers)


# -- nesting deeper than a parser goes -----------------------------------------------------


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def json_row(slug: str, key: str, value: str) -> str:
    """A papers row as JSON text, `key` holding the JSON text `value`."""
    return f'{{"paper_url": "{PWC}/paper/{slug}", "title": "T", "{key}": {value}}}'


def nested_dump(directory: Path, where: str) -> tuple[Path, str]:
    """(a JSON dump nested too deep at `where`, what the one line says)."""
    plain = json_row("plain", "abstract", '"text"')
    levels = 100_000 if where in ("top", "first_row", "later_row_unread_key") else 5_000
    text = {
        "top": deep(levels),
        "first_row": f"[{json_row('deep', 'unread_key', deep(levels))}]",
        "first_row_methods": f"[{json_row('deep', 'methods', deep(levels))}]",
        "later_row_tasks": f"[{plain},{json_row('deep', 'tasks', deep(levels))}]",
        # past rows the lean decoder reads, a key it skips
        "later_row_unread_key": "[" + ",".join([plain] * 2000) + f",{json_row('deep', 'unread_key', deep(levels))}]",
    }[where]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{where}.json"
    path.write_text(text)
    if where == "top":  # the file is read whole (it is under the bigger start read), its array's own level not counted
        return path, f"its first row is nested too deep to read: {levels - 1:,} levels at byte {levels - 1:,}"
    deepest_at = text.index(deep(levels)) + levels - 1  # the row object is one level more
    if where in ("first_row", "first_row_methods"):
        return path, f"its first row is nested too deep to read: {levels + 1:,} levels at byte {deepest_at:,}"
    return path, f"a row nested {levels + 1:,} levels deep (too deep to read) at byte {deepest_at:,} of the JSON"


NESTINGS = ["top", "first_row", "first_row_methods", "later_row_tasks", "later_row_unread_key"]


@pytest.mark.process
@pytest.mark.parametrize("where", ["top", "first_row_methods", "later_row_tasks"])
def test_a_dump_nested_deeper_than_a_parser_goes_is_one_line_not_a_traceback(tmp_path: Path, where: str) -> None:
    path, problem = nested_dump(tmp_path / "src", where)
    assert_refused(build_cli(tmp_path, path), path, problem, tmp_path / "archive")


@pytest.mark.parametrize("where", NESTINGS)
def test_the_reader_names_where_a_dump_is_nested_too_deep(tmp_path: Path, where: str) -> None:
    path, problem = nested_dump(tmp_path, where)
    assert problem in refusal(path)


def test_a_gzipped_dump_nested_too_deep_is_refused_the_same_way(tmp_path: Path) -> None:
    path, problem = nested_dump(tmp_path, "later_row_tasks")
    gz = tmp_path / "later.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert problem in refusal(gz)


def test_nesting_a_parser_reads_is_read(tmp_path: Path) -> None:
    rows = [json.loads(json_row(f"p{i}", key, deep(400))) for i, key in enumerate(("tasks", "methods", "unread_key"))]
    pieces = list(array_pieces([json.dumps(rows).encode()], ANY, first_key="paper_url"))
    assert pieces == [rows]
    path = tmp_path / "papers.json"
    path.write_text(json.dumps(rows))
    assert [row[:2] for row in rows_of(classify(path))] == [(f"{PWC}/paper/p{i}", "T") for i in range(3)]


# -- text that is not UTF-8 in a parquet column --------------------------------------------


def raw_text(values: list[bytes], kind: Any = None) -> Any:
    """A string array holding `values` as they are, valid UTF-8 or not (as a writer that never checked leaves them)."""
    kind = pa.string() if kind is None else kind
    offsets = np.cumsum([0, *map(len, values)], dtype=np.int64 if kind == pa.large_string() else np.int32)
    return pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(values))])


BAD = b"Caf\xc3"  # a multi-byte sequence cut short


def not_utf8(directory: Path, column: str) -> tuple[Path, int]:
    """A table whose `column` holds invalid UTF-8 in one row: (the file, that row, 1-based)."""
    rows, bad_row = 40, 27
    texts = [f"text {i}".encode() for i in range(rows)]
    texts[bad_row - 1] = BAD
    papers: dict[str, Any] = {"paper_url": urls(rows), "title": pa.array([f"Paper {i}" for i in range(rows)])}
    links: dict[str, Any] = {"paper_url": urls(rows), "repo_url": pa.array([f"https://github.com/o/r{i}" for i in range(rows)])}
    table = links if column in ("repo_url", "framework") else papers
    if column in ("title", "abstract", "date", "framework"):
        table[column] = raw_text(texts)
    elif column == "paper_url":
        table[column] = raw_text(
            [f"{PWC}/paper/p-{i}".encode() if i != bad_row - 1 else PWC.encode() + b"/paper/" + BAD for i in range(rows)]
        )
    elif column == "repo_url":
        table[column] = raw_text(
            [f"https://github.com/o/r{i}".encode() if i != bad_row - 1 else b"https://github.com/o/" + BAD for i in range(rows)]
        )
    elif column == "large_string title":
        column, table["title"] = "title", raw_text(texts, pa.large_string())
    elif column == "dictionary title":
        column, table["title"] = "title", pa.DictionaryArray.from_arrays(pa.array(list(range(rows)), pa.int32()), raw_text(texts))
    elif column in ("tasks", "authors"):  # a list of names: one name of one row is bad
        table[column] = pa.ListArray.from_arrays(pa.array(list(range(rows + 1)), pa.int32()), raw_text(texts))
    elif column == "methods":  # the `name` of a method object
        names = pa.StructArray.from_arrays([raw_text(texts), pa.array(["long description"] * rows)], names=["name", "description"])
        table[column] = pa.ListArray.from_arrays(pa.array(list(range(rows + 1)), pa.int32()), names)
    else:
        raise AssertionError(column)
    return write_table(directory / f"{column.replace(' ', '-')}.parquet", table), bad_row


UTF8_COLUMNS = [
    "title",
    "paper_url",
    "abstract",
    "repo_url",
    "tasks",
    "methods",
    "authors",
    "date",
    "framework",
    "large_string title",
    "dictionary title",
]


@pytest.mark.process
@pytest.mark.parametrize("column", ["title", "tasks"])
def test_text_that_is_not_utf8_is_one_line_naming_the_column_and_row(tmp_path: Path, column: str) -> None:
    path, row = not_utf8(tmp_path / "src", column)
    assert_refused(build_cli(tmp_path, path), path, f"column {column!r} holds text that is not UTF-8 (row {row}: ", tmp_path / "archive")


@pytest.mark.parametrize("column", UTF8_COLUMNS)
def test_the_reader_refuses_text_that_is_not_utf8_in_any_column_it_reads(tmp_path: Path, column: str) -> None:
    path, row = not_utf8(tmp_path, column)
    assert refusal(path) == f"column {column.split()[-1]!r} holds text that is not UTF-8 (row {row}: unexpected end of data)"


def test_text_that_is_not_utf8_in_a_column_the_build_ignores_is_ignored(tmp_path: Path) -> None:
    path = write_table(
        tmp_path / "papers.parquet", {"paper_url": urls(2), "title": pa.array(["A", "B"]), "nips_id": raw_text([BAD, b"ok"])}
    )
    build_archive([path], tmp_path / "archive", data_date=DATA_DATE)
    assert sorted(paper["title"] for paper in served_papers(tmp_path / "archive").values()) == ["A", "B"]


def test_a_dump_with_text_that_is_not_utf8_is_refused_as_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "papers.json"
    path.write_bytes(orjson.dumps([paper_row("a", "A")]).replace(b'"A"', b'"' + BAD + b'"'))
    assert refusal(path) == "not valid JSON: Invalid UTF-8 encoded string"


# -- a column given twice ------------------------------------------------------------------


def twice(directory: Path, column: str) -> Path:
    """A table with `column` twice, the two copies disagreeing."""
    method = pa.list_(pa.struct([("name", pa.string())]))
    first = {
        "paper_url": urls(2),
        "title": pa.array(["A", "B"]),
        "repo_url": pa.array(["https://github.com/o/a", "https://github.com/o/b"]),
        "tasks": pa.array([["Segmentation"], []]),
        "methods": pa.array([[{"name": "Adam"}], []], method),
    }
    second = {
        "paper_url": urls(2, "other"),
        "title": pa.array(["First", "Second"]),
        "repo_url": pa.array(["https://github.com/x/a", None]),
        "tasks": pa.array([["Detection"], ["Detection"]]),
        "methods": pa.array([[], [{"name": "SGD"}]], method),
    }
    names = ["paper_url", "repo_url"] if column == "repo_url" else ["paper_url", "title"]
    names += [column] if column not in names else []
    return _write_arrays(directory / f"{column}.parquet", [first[name] for name in names] + [second[column]], [*names, column])


def _write_arrays(path: Path, arrays: list[Any], names: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_arrays(arrays, names=names), path)
    return path


@pytest.mark.process
@pytest.mark.parametrize("column", ["tasks", "title"])
def test_a_column_given_twice_is_refused_in_one_line(tmp_path: Path, column: str) -> None:
    path = twice(tmp_path / "src", column)
    assert_refused(
        build_cli(tmp_path, path), path, f"has the column {column!r} 2 times: which one to read cannot be told", tmp_path / "archive"
    )


@pytest.mark.parametrize("column", ["tasks", "title", "paper_url", "methods", "repo_url"])
def test_the_reader_refuses_a_column_given_twice(tmp_path: Path, column: str) -> None:
    assert refusal(twice(tmp_path, column)) == f"has the column {column!r} 2 times: which one to read cannot be told"


def test_a_column_the_build_ignores_may_be_given_twice(tmp_path: Path) -> None:
    path = _write_arrays(
        tmp_path / "papers.parquet",
        [urls(1), pa.array(["A"]), pa.array(["x"]), pa.array(["y"])],
        ["paper_url", "title", "nips_id", "nips_id"],
    )
    assert classify(path).table == "papers"


def test_a_method_object_with_two_names_is_refused(tmp_path: Path) -> None:
    methods = pa.StructArray.from_arrays([pa.array(["Adam"]), pa.array(["SGD"])], names=["name", "name"])
    path = write_table(
        tmp_path / "papers.parquet",
        {"paper_url": urls(1), "title": pa.array(["A"]), "methods": pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), methods)},
    )
    assert refusal(path) == "column 'methods' is a list of objects with 2 'name' fields"


def test_a_dumps_first_row_with_a_repeated_key_is_refused_and_a_later_rows_last_value_wins(tmp_path: Path) -> None:
    # A dump's columns are its first row's keys: a key repeated there is a column given twice. In later rows a
    # repeated key is read as every JSON parser reads it, the last value winning.
    first = f'[{{"paper_url": "{PWC}/paper/a", "title": "First", "title": "Second"}}]'
    path = tmp_path / "first.json"
    path.write_text(first)
    assert refusal(path) == "has the column 'title' 2 times: which one to read cannot be told"
    ignored = tmp_path / "ignored.json"
    ignored.write_text(f'[{{"paper_url": "{PWC}/paper/a", "title": "A", "nips_id": 1, "nips_id": 2}}]')
    assert classify(ignored).table == "papers"
    later = tmp_path / "later.json"
    later.write_text(f'[{{"paper_url": "{PWC}/paper/a", "title": "A"}}, {{"paper_url": "{PWC}/paper/b", "title": "B1", "title": "B2"}}]')
    build_archive([later], tmp_path / "archive", data_date=DATA_DATE)
    assert sorted(paper["title"] for paper in served_papers(tmp_path / "archive").values()) == ["A", "B2"]


# -- a gzip stream that expands without bound ----------------------------------------------

ROW = orjson.dumps(paper_row("bomb", "Bomb", authors=[], abstract=None))


def gzip_bomb(expanded: int, head: bytes = b"") -> bytes:
    """A dump of `ROW` repeated until about `expanded` bytes (after `head`: rows already in the array), gzipped as
    identical members of ~1 MiB each: about a thousandth of its expansion, made at once."""
    body = (b"," + ROW) * ((1 << 20) // (len(ROW) + 1))
    start = gzip.compress(b"[" + head + (b"," if head else b"") + ROW, mtime=0)
    return start + gzip.compress(body, 9, mtime=0) * (expanded // len(body)) + gzip.compress(b"]", mtime=0)


def write_bytes(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.mark.process
def test_a_gzip_bomb_is_refused_within_the_real_bounds_in_one_line(tmp_path: Path) -> None:
    path = write_bytes(tmp_path / "src" / "papers.json.gz", gzip_bomb(2 * EXPANSION_FLOOR))  # its build would take minutes
    assert path.stat().st_size * EXPANSION_RATIO < EXPANSION_FLOOR  # so it passes the ratio once past the floor
    result = build_cli(tmp_path, path)
    assert_refused(result, path, f"expands more than {EXPANSION_RATIO}x (", tmp_path / "archive")
    assert f"past the {EXPANSION_FLOOR:,} bytes a row may need: refused as a decompression bomb" in result.stderr


SMALL = Expansion(floor=1 << 20, ratio=30)


def real_dump(papers: int) -> bytes:
    """A dump of the real one's shape, gzipped: it expands a few times."""
    return gzip.compress(orjson.dumps(generated_rows(papers, 0)[0]))


def test_the_bound_refuses_a_bomb_and_passes_a_real_dump() -> None:
    bomb = gzip_bomb(8 << 20)
    with pytest.raises(DumpError, match=r"expands more than 30x \(.* past the 1,048,576 bytes"):
        b"".join(gunzipped_chunks(io.BytesIO(bomb), bound=SMALL))
    with pytest.raises(DumpError, match="expands more than 30x"):
        check_expansion(io.BytesIO(bomb), SMALL)
    real = real_dump(80)
    assert len(gzip.decompress(real)) > 2 * SMALL.floor
    assert b"".join(gunzipped_chunks(io.BytesIO(real), bound=SMALL)) == gzip.decompress(real)
    check_expansion(io.BytesIO(real), SMALL)


def test_a_bomb_is_refused_before_its_rows_are_read(tmp_path: Path) -> None:
    source = classify(write_bytes(tmp_path / "papers.json.gz", gzip_bomb(8 << 20)))
    batches = json_batches(source, Vocabulary(), expansion=SMALL)
    with pytest.raises(BadInput, match="expands more than 30x"):
        next(batches)


def test_a_bomb_after_a_real_start_is_refused_while_it_is_read(tmp_path: Path) -> None:
    papers = generated_rows(20, 0)[0]
    data = gzip_bomb(32 << 20, head=orjson.dumps(papers)[1:-1])
    check_expansion(io.BytesIO(data), SMALL)  # its start expands as a real dump does: the check before reading passes
    source = classify(write_bytes(tmp_path / "papers.json.gz", data))
    read = 0
    with pytest.raises(BadInput, match="expands more than 30x") as caught:
        for batch in json_batches(source, Vocabulary(), piece_bytes=1 << 18, expansion=SMALL):
            read += batch.count
    assert read >= len(papers) and caught.value.path == str(source.path)


def row_bomb(path: Path, rows: int) -> Path:
    """A parquet table of one row repeated `rows` times (dictionary- and run-length-encoded: a few bytes a 10,000 rows)."""

    def repeated(text: str) -> Any:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array([text]))

    return write_table(path, {"paper_url": repeated(f"{PWC}/paper/bomb"), "title": repeated("Bomb")})


@pytest.mark.process
def test_a_parquet_file_of_millions_of_rows_in_a_few_bytes_is_refused_in_one_line(tmp_path: Path) -> None:
    path = row_bomb(tmp_path / "src" / "papers.parquet", 2 * PARQUET_ROWS_FLOOR)  # its build would write 2M duplicates
    assert_refused(build_cli(tmp_path, path), path, "refused as a decompression bomb", tmp_path / "archive")


def test_the_reader_bounds_a_parquet_files_rows_by_its_bytes_past_a_floor(tmp_path: Path) -> None:
    bomb = row_bomb(tmp_path / "bomb.parquet", PARQUET_ROWS_FLOOR + 1)
    size = bomb.stat().st_size
    assert refusal(bomb) == (
        f"holds {PARQUET_ROWS_FLOOR + 1:,} rows in {size:,} bytes, more than 1 a byte past {PARQUET_ROWS_FLOOR:,} rows: "
        "refused as a decompression bomb (a real table holds a row in a hundred bytes or more)"
    )
    assert classify(row_bomb(tmp_path / "floor.parquet", PARQUET_ROWS_FLOOR)).rows == PARQUET_ROWS_FLOOR


def test_a_parquet_file_nested_deeper_than_arrow_reads_is_one_line(tmp_path: Path) -> None:
    authors = pa.array(["Ada"])
    for _ in range(150):
        authors = pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), authors)
    path = write_table(tmp_path / "papers.parquet", {"paper_url": urls(1), "title": pa.array(["A"]), "authors": authors})
    assert refusal(path).startswith("not a readable parquet file (truncated or corrupt?): ")


# -- a symbolic link loop among the sources ------------------------------------------------


def looped(directory: Path) -> tuple[Path, Path]:
    """(a source directory with a good table and a symbolic link loop named like a source, the loop)."""
    write_parquet(directory / "papers.parquet", [paper_row("a", "A")])
    loop = directory / "links.json.gz"
    os.symlink(loop.name, loop)
    return directory, loop


@pytest.mark.process
def test_a_symbolic_link_loop_in_a_source_directory_is_a_read_problem_naming_it(tmp_path: Path) -> None:
    directory, loop = looped(tmp_path / "src")
    assert_refused(build_cli(tmp_path, directory), loop, "a symbolic link loop (too many levels of symbolic links)", tmp_path / "archive")


def test_the_walk_names_a_symbolic_link_loop_wherever_it_is(tmp_path: Path) -> None:
    directory, loop = looped(tmp_path / "src")
    for given, named in ((directory, loop), (loop, loop)):
        with pytest.raises(BadInput) as caught:
            find_sources([given])
        assert (caught.value.path, caught.value.problem) == (str(named), "a symbolic link loop (too many levels of symbolic links)")
    subdirectory_loop = tmp_path / "other" / "data"
    subdirectory_loop.parent.mkdir()
    os.symlink("data", subdirectory_loop)  # not named like a source: which kind of entry it is cannot be told either
    with pytest.raises(BadInput, match="a symbolic link loop"):
        find_sources([tmp_path / "other"])
    dangling = tmp_path / "dangling"
    dangling.mkdir()
    write_json(dangling / "links.json", [link_row("a", "https://github.com/o/r")])
    os.symlink("nowhere.json", dangling / "gone.json")  # a link to nothing is not a source, as before
    assert find_sources([dangling]) == [dangling / "links.json"]


def test_a_hub_cache_folder_whose_refs_main_cannot_be_read_is_a_read_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "datasets--pwc-archive--papers-with-abstracts"
    (repo / "refs").mkdir(parents=True)
    (repo / "snapshots").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    real_read_text = Path.read_text

    def unreadable(self: Path, *args: Any, **kwargs: Any) -> str:
        if self.name == "main":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", unreadable)
    with pytest.raises(BadInput) as caught:
        find_sources([repo])
    assert (caught.value.path, caught.value.problem) == (str(repo / "refs" / "main"), "cannot read: Permission denied")


# -- lists that are all empty --------------------------------------------------------------


def all_empty(directory: Path, column: str, large: bool = False) -> Path:
    lists = pa.array([[], [], None], (pa.large_list if large else pa.list_)(pa.null()))
    return write_table(directory / f"{column}.parquet", {"paper_url": urls(3), "title": pa.array(["A", "B", "C"]), column: lists})


@pytest.mark.process
def test_a_column_of_empty_lists_is_read_as_empty(tmp_path: Path) -> None:
    path = all_empty(tmp_path / "src", "methods")
    result = build_cli(tmp_path, path)
    assert (result.returncode, result.stderr) == (0, "")
    papers = served_papers(tmp_path / "archive").values()
    assert sorted(paper["title"] for paper in papers) == ["A", "B", "C"] and not any(paper["methods"] for paper in papers)


@pytest.mark.parametrize("column", ["methods", "tasks", "authors"])
@pytest.mark.parametrize("large", [False, True])
def test_the_reader_reads_a_column_of_empty_lists_in_any_list_form(tmp_path: Path, column: str, large: bool) -> None:
    source = classify(all_empty(tmp_path, column, large))
    column_of_rows = [row[PAPER_COLUMNS.index(column)] for row in rows_of(source)]
    assert column_of_rows == ([[], [], []] if column != "authors" else [[], [], None])


def test_names_in_every_arrow_text_form_are_read(tmp_path: Path) -> None:
    # a list of dictionary-encoded, large or view strings: the same names as plain strings
    forms = [pa.dictionary(pa.int32(), pa.string()), pa.large_string(), pa.string_view()]
    expected = [{"task_slug": "detection", "task_name": "Detection"}, {"task_slug": "segmentation", "task_name": "Segmentation"}]
    for i, kind in enumerate(forms):
        tasks = pa.array([["Segmentation", "Detection", "Segmentation"], []], pa.list_(kind))
        path = write_table(tmp_path / f"tasks-{i}.parquet", {"paper_url": urls(2), "title": pa.array(["A", "B"]), "tasks": tasks})
        assert [row[-2] for row in rows_of(classify(path))] == [expected, []], kind


def test_a_paper_methods_column_of_method_rows_still_reads_after_the_list_checks(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "papers.parquet", [paper_row("a", "A", methods=[method_row("Adam")], tasks=["Detection"])])
    assert rows_of(classify(path))[0][-2:] == (
        [{"task_slug": "detection", "task_name": "Detection"}],
        [{"method_slug": "adam", "method_name": "Adam"}],
    )
