"""A JSON dump read in pieces (`papercode.archive.dumps`): the rows are exactly those of parsing the whole file,
whatever the chunk and piece sizes, the layout (compact, pretty-printed, BOM) and the strings inside; and every
kind of broken dump is a `DumpError` (or a gzip error) found while reading, never a wrong row."""

from __future__ import annotations

import functools
import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papercode.archive import build as build_module
from papercode.archive import build_archive
from papercode.archive.dumps import DumpError, array_pieces, gunzipped_chunks
from papercode.archive.rows import LinksTableRow, PapersTableRow, Vocabulary
from papercode.archive.tables import LINK_COLUMNS, NOT_AN_OBJECT, PAPER_COLUMNS, BadInput, classify, json_batches
from tests.support.archive_tables import bundled_rows, current_manifest, link_row, method_row, paper_row, served_papers, write_json

ANY = msgspec.json.Decoder().decode
TRICKY = ['},{"', "}, {", '},{"paper_url":', '}, {"paper_url": "x"}', '\\"', "\\", '"', "]", "[", ",", "\n", "\u00e9\u4e2d", "{}"]


def chunked(data: bytes, size: int) -> Iterator[bytes]:
    return (data[i : i + size] for i in range(0, len(data), size))


def read_all(data: bytes, chunk: int = 7, piece_bytes: int = 16, first_key: str | None = None) -> list[Any]:
    rows: list[Any] = []
    for piece in array_pieces(chunked(data, chunk), ANY, first_key=first_key, piece_bytes=piece_bytes):
        assert piece  # no empty pieces
        rows.extend(piece)
    return rows


def sample_rows() -> list[dict[str, Any]]:
    """Paper-like rows with nested objects (methods, their main_collection) and strings full of JSON's own syntax."""
    rows: list[dict[str, Any]] = []
    for i in range(40):
        rows.append(
            {
                "paper_url": f"https://paperswithcode.com/paper/p-{i}",
                "title": TRICKY[i % len(TRICKY)] + f" {i}",
                "abstract": "".join(TRICKY[(i + j) % len(TRICKY)] for j in range(i % 9)),
                "authors": [TRICKY[i % len(TRICKY)], "B"],
                "methods": [method_row(f"M{j}", description=TRICKY[j % len(TRICKY)] * 3) for j in range(i % 4)],
                "n": i * 1.5,
                "ok": i % 2 == 0,
                "none": None,
            }
        )
    return rows


LAYOUTS = {
    "compact": lambda rows: orjson.dumps(rows),
    "spaced": lambda rows: json.dumps(rows, ensure_ascii=False).encode(),
    "pretty": lambda rows: json.dumps(rows, indent=2).encode() + b"\n",
    "pretty-crlf-bom": lambda rows: b"\xef\xbb\xbf \r\n" + json.dumps(rows, indent="\t").replace("\n", "\r\n").encode() + b"\r\n",
}


# A byte at a time, every byte rescans the row it is in, so those reads take the first 13 rows (each tricky string as a
# title, and every length of abstract and of methods; the others only repeat them), and not the "pretty" layout, which
# is "pretty-crlf-bom" less its CRs and BOM.
READS = [
    (layout, chunk, piece_bytes)
    for layout in sorted(LAYOUTS)
    for chunk, piece_bytes in [(1, 1), (3, 40), (7, 300), (64, 2000), (1 << 20, 1 << 20)]
    if not (chunk == 1 and layout == "pretty")
]


@pytest.mark.parametrize(("layout", "chunk", "piece_bytes"), READS)
@pytest.mark.parametrize("first_key", ["paper_url", None, "title"])
def test_the_rows_are_those_of_parsing_the_whole_file(layout: str, chunk: int, piece_bytes: int, first_key: str | None) -> None:
    rows = sample_rows()[: len(TRICKY)] if chunk == 1 else sample_rows()
    data = LAYOUTS[layout](rows)
    assert read_all(data, chunk, piece_bytes, first_key) == orjson.loads(data.removeprefix(b"\xef\xbb\xbf")) == rows


def test_pieces_are_cut_between_rows_and_bounded() -> None:
    rows = sample_rows() * 5
    data = orjson.dumps(rows)
    pieces = list(array_pieces(chunked(data, 1000), ANY, first_key="paper_url", piece_bytes=4000))
    assert [row for piece in pieces for row in piece] == rows
    assert len(pieces) > 10 and max(len(orjson.dumps(piece)) for piece in pieces) < 4000 + 1000 + max(len(orjson.dumps(r)) for r in rows)


def test_strings_that_look_like_row_boundaries_do_not_cut_a_row() -> None:
    # Every row's abstract holds what the fast boundary pattern looks for: only the real boundaries are taken.
    rows = [
        {"paper_url": f"u{i}", "abstract": '"},{"paper_url": "fake"}, {"paper_url":' * (i % 3 + 1), "x": {"y": [{}]}} for i in range(30)
    ]
    for data in (orjson.dumps(rows), json.dumps(rows).encode(), json.dumps(rows, indent=1).encode()):
        for chunk in (1, 5, 50):
            assert read_all(data, chunk, 30, "paper_url") == rows


def test_rows_in_another_key_order_and_rows_that_are_not_objects() -> None:
    rows: list[Any] = [{"b": 1, "paper_url": "x"}, 5, "text", [1, {"a": "},{"}], None, {"paper_url": "y"}, True, {}, [], 2.5]
    data = orjson.dumps(rows)
    for chunk, piece_bytes in ((1, 1), (4, 10), (100, 100)):
        assert read_all(data, chunk, piece_bytes, "paper_url") == rows


@pytest.mark.parametrize("data", [b"[]", b"[ ]", b"\xef\xbb\xbf[]", b"\n\t [\r\n]\n\n", b" " * 50 + b"[" + b" " * 50 + b"]" + b" " * 50])
def test_an_empty_array_has_no_rows(data: bytes) -> None:
    for chunk in (1, 2, 3, 100):
        assert read_all(data, chunk, 1) == []


@pytest.mark.parametrize("data", [b"", b"   ", b"\xef\xbb\xbf", b'{"a": 1}', b"1", b"null", b"\xef\xbb\xbf\xef\xbb\xbf[]", b"x["])
def test_not_an_array(data: bytes) -> None:
    for chunk in (1, 100):
        with pytest.raises(DumpError, match="not a JSON array of rows"):
            read_all(data, chunk, 1)


def test_a_dump_cut_short_anywhere_is_an_error_never_fewer_rows() -> None:
    data = json.dumps(sample_rows()[:2], indent=1).encode()  # every cut: before, inside, between and after rows
    for end in range(1, len(data.rstrip())):
        for chunk, piece_bytes in ((3, 50), (len(data), len(data))):
            with pytest.raises(DumpError, match=r"not valid JSON|not a JSON array"):
                read_all(data[:end], chunk, piece_bytes, "paper_url")


@pytest.mark.parametrize(
    ("tail", "problem"),
    [(b"] x", "trailing characters"), (b"]]", "trailing characters"), (b",]", "trailing comma"), (b"", "the file ends inside the array")],
)
def test_what_follows_the_last_row_must_be_the_closing_bracket(tail: bytes, problem: str) -> None:
    data = orjson.dumps(sample_rows())[:-1] + tail
    with pytest.raises(DumpError, match=problem):
        read_all(data, 64, 500, "paper_url")


def test_invalid_json_in_the_middle_names_its_byte() -> None:
    rows = sample_rows() * 3
    data = bytearray(orjson.dumps(rows))
    bad = data.index(b'"ok":true', len(data) // 2) + len(b'"ok":')
    data[bad] = ord("@")
    for chunk, piece_bytes, first_key in ((1, 100, "paper_url"), (1000, 3000, None), (len(data), len(data), "paper_url")):
        with pytest.raises(DumpError, match=f"not valid JSON: .* at byte {bad:,} of the JSON"):
            read_all(bytes(data), chunk, piece_bytes, first_key)


def test_a_row_larger_than_the_limit_is_refused() -> None:
    data = orjson.dumps([{"a": "x" * 1000}, {"a": "y"}])
    with pytest.raises(DumpError, match="a row over 100 bytes"):
        list(array_pieces(chunked(data, 10), ANY, piece_bytes=10, max_piece=100))


# -- any JSON ------------------------------------------------------------------------------

_KEYS = st.one_of(st.sampled_from(["paper_url", "name", "methods", *TRICKY]), st.text(max_size=6))
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TRICKY),
    st.text(max_size=12),
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=20
)
_ROWS = st.lists(st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=6), _VALUES), max_size=12)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=_ROWS,
    indent=st.sampled_from([None, 0, 1, 2, "\t"]),
    bom=st.booleans(),
    chunk=st.integers(1, 40),
    piece_bytes=st.integers(1, 200),
    first_key=st.sampled_from([None, "paper_url", "name", '},{"']),
)
def test_any_json_array_reads_as_orjson_parses_it_whole(
    *, rows: list[Any], indent: int | str | None, bom: bool, chunk: int, piece_bytes: int, first_key: str | None
) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(rows, indent=indent, ensure_ascii=bool(indent)).encode()
    expected = orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
    assert read_all(data, chunk, piece_bytes, first_key) == expected
    if data.rstrip().endswith(b"]") and len(data) > 3:  # cut short: an error, never fewer rows
        with pytest.raises(DumpError):
            read_all(data.rstrip()[:-1], chunk, piece_bytes, first_key)


# -- gzip ----------------------------------------------------------------------------------


def gunzip(data: bytes, read_bytes: int = 7) -> bytes:
    return b"".join(gunzipped_chunks(_Stream(data), read_bytes))


class _Stream:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def read(self, size: int) -> bytes:
        chunk = self.data[self.at : self.at + size]
        self.at += len(chunk)
        return chunk


def test_gunzip_in_chunks_reads_every_member_and_skips_zero_padding() -> None:
    one, two = orjson.dumps(sample_rows()), b"more bytes" * 1000
    assert gunzip(gzip.compress(one)) == one
    assert (
        gunzip(gzip.compress(one) + gzip.compress(two) + b"\0" * 10)
        == one + two
        == gzip.decompress(gzip.compress(one) + gzip.compress(two))
    )
    assert gunzip(gzip.compress(one) + b"\0" * 5 + gzip.compress(two), 100_000) == one + two
    assert gunzip(b"") == b""


def test_gunzip_in_chunks_finds_a_cut_short_or_corrupt_file() -> None:
    data = gzip.compress(orjson.dumps(sample_rows()))
    for end in (10, len(data) // 2, len(data) - 4, len(data) - 1):
        with pytest.raises(EOFError):
            gunzip(data[:end])
    corrupt = bytearray(data)
    corrupt[-8] ^= 0xFF  # the CRC
    with pytest.raises(zlib.error):
        gunzip(bytes(corrupt))
    with pytest.raises(zlib.error):
        gunzip(data + b"garbage")


# -- the build's rows ----------------------------------------------------------------------


def odd_papers() -> list[Any]:
    """Papers rows in every shape the lean decoder meets: methods as objects (nested), as names, mixed, without a
    name, not a list; tasks odd too; rows that are not objects; keys in another order."""
    rows: list[Any] = [paper_row(f"p{i}", f"Paper {i}", methods=[method_row(f"M{i % 5}"), method_row("Adam")]) for i in range(20)]
    rows += [
        paper_row("names", methods=["BPE", "Adam", "BPE"], tasks=["B", "A", "B"]),
        paper_row("mixed", methods=[method_row("Adam"), "BPE", None, {"full_name": "no name"}, {"name": 5}], tasks=[{"name": "T"}, 5]),
        paper_row("null-methods", methods=None, tasks=None),
        paper_row("string-methods", methods="Adam", tasks="Task"),
        paper_row("numbers", methods=[1, 2], authors="One Author", date=1_600_000_000_000),
        {"title": "reordered", "paper_url": "https://paperswithcode.com/paper/reordered", "methods": [method_row("Z")]},
        7,
        ["not", "an", "object"],
        paper_row("last", methods=[method_row('},{"paper_url":')]),
    ]
    return rows


def expected_rows(rows: list[Any], columns: tuple[str, ...], vocab: Vocabulary | None) -> list[PapersTableRow | LinksTableRow]:
    """What the build must get: each row's `columns` as a whole-file parse gives them."""
    named = PapersTableRow if vocab is not None else LinksTableRow
    out: list[PapersTableRow | LinksTableRow] = []
    for row in rows:
        if type(row) is not dict:
            out.append(named(NOT_AN_OBJECT))
        elif vocab is None:
            out.append(LinksTableRow(**{name: row.get(name) for name in columns}))
        else:
            given = {name: row.get(name) for name in columns[:-2]}
            out.append(PapersTableRow(**given, tasks=vocab.tasks_of(row.get("tasks")), methods=vocab.methods_of(row.get("methods"))))
    return out


@pytest.mark.parametrize("piece_bytes", [1, 500, 1 << 24])
@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_the_lean_rows_are_the_whole_parse_rows(tmp_path: Path, piece_bytes: int, suffix: str) -> None:
    papers = odd_papers()
    links = [link_row(f"p{i}", f"https://github.com/o/r{i}", is_official=i % 2 == 0, framework=None) for i in range(30)]
    links += [5, {"repo_url": "x", "paper_url": "https://paperswithcode.com/paper/z", "extra": {"nested": [1]}}]
    for rows, vocab, columns in ((papers, Vocabulary(), PAPER_COLUMNS), (links, None, LINK_COLUMNS)):
        source = classify(write_json(tmp_path / f"table-{columns[1]}{suffix}", rows))
        batches = list(json_batches(source, vocab, piece_bytes=piece_bytes))
        got = [row for batch in batches for row in batch.rows]
        assert got == expected_rows(orjson.loads(orjson.dumps(rows)), columns, Vocabulary() if vocab is not None else None)
        assert source.rows == len(rows) and [batch.first for batch in batches] == [0, *list(_cumulative(b.count for b in batches))[:-1]]
        assert batches[-1].share == 1.0 and all(0 < batch.share <= 1 for batch in batches)


def _cumulative(counts: Iterator[int]) -> Iterator[int]:
    total = 0
    for count in counts:
        total += count
        yield total


def test_a_bad_dump_found_while_reading_is_bad_input_naming_the_file(tmp_path: Path) -> None:
    papers = [paper_row(f"p{i}", abstract=f"text {i} " * 50) for i in range(200)]
    cut = tmp_path / "papers.json"
    cut.write_bytes(orjson.dumps(papers)[:-500])
    broken = tmp_path / "broken.json.gz"
    data = orjson.dumps(papers)
    bad = data.index(b'"authors":[', len(data) // 2) + len(b'"authors":')
    broken.write_bytes(gzip.compress(data[:bad] + b"@" + data[bad + 1 :]))
    for path, problem in ((cut, "the file ends inside the array"), (broken, f"invalid character at byte {bad:,} of the JSON")):
        source = classify(path)
        with pytest.raises(BadInput, match=problem) as caught:
            list(json_batches(source, Vocabulary(), piece_bytes=1000))
        assert caught.value.path == str(path) and "\n" not in str(caught.value)


def test_a_build_from_tiny_pieces_writes_what_one_piece_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    papers, links = bundled_rows()
    papers = papers + odd_papers()
    sources = [write_json(tmp_path / "src/papers.json.gz", papers), write_json(tmp_path / "src/links.json", links)]
    build_archive(sources, tmp_path / "whole", data_date="2025-07-28")
    monkeypatch.setattr(build_module, "json_batches", functools.partial(build_module.json_batches, piece_bytes=64))
    build_archive(sources, tmp_path / "tiny", data_date="2025-07-28")
    assert list(served_papers(tmp_path / "tiny").items()) == list(served_papers(tmp_path / "whole").items())
    whole, tiny = (current_manifest(tmp_path / name) for name in ("whole", "tiny"))
    assert tiny["rejected"] == whole["rejected"] and tiny["sources"] == whole["sources"]
    # The paper columns are the same bytes; the search index's split between its two indexing threads is not
    # (so neither is its size, nor the bytes the counts add up).
    assert {name: facts for name, facts in tiny["files"].items() if name.startswith("papers/")} == {
        name: facts for name, facts in whole["files"].items() if name.startswith("papers/")
    }
    assert {**tiny["counts"], "bytes": 0} == {**whole["counts"], "bytes": 0}
