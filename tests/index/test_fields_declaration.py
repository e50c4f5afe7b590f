"""`index.fields`: what the declaration makes is readable, and the details' wire format is part of the layout."""

from __future__ import annotations

import linecache
import traceback

import msgspec
import pytest

from papercode.index import fields


def test_a_generated_function_shows_its_source_where_tracebacks_look() -> None:
    def fail(source: object) -> list[str]:
        raise ValueError("read")

    reader = fields.generated("def read_one(source):\n    return [fail(source)]\n", {"fail": fail})
    assert reader.__source__ == "def read_one(source):\n    return [fail(source)]\n"
    with pytest.raises(ValueError) as raised:
        reader(None)
    frames = traceback.extract_tb(raised.value.__traceback__)
    generated_frame = next(frame for frame in frames if frame.filename == "<papercode generated read_one>")
    assert generated_frame.line == "return [fail(source)]"
    assert linecache.getline("<papercode generated read_one>", 1) == "def read_one(source):\n"


def test_the_layout_names_each_details_key_and_a_new_detail_needs_a_default() -> None:
    assert [(name, key) for name, key, _ in fields._details_wire()] == [
        ("authors", "a"),
        ("tasks", "t"),
        ("methods", "m"),
        ("code_links", "l"),
        ("proceeding", "p"),
        ("url_pdf", "pdf"),
    ]

    class WithRequired(msgspec.Struct):  # a detail added without a default: blobs written before it could not be read
        authors: list[str] = msgspec.field(name="a")
        tasks: list[tuple[str, str]] = msgspec.field(name="t")
        methods: list[str] = msgspec.field(name="m")
        code_links: list[fields.CodeLinkRow] = msgspec.field(name="l")
        venue: str = msgspec.field(name="v")

    with pytest.raises(TypeError, match="give a new one a default"):
        fields._details_wire(WithRequired)
