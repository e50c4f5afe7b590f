"""Cursors: opaque, bound to one query on one index, and no character can be changed unnoticed."""

from __future__ import annotations

import string

import pytest

from papercode.core.errors import QueryError
from papercode.core.paging import Pager

QUERY = {"tool": "harvested", "paper": "2406.04823", "limit": 3}


@pytest.mark.parametrize("fingerprint", [b"one index", b"another index", bytes(32)])
def test_every_single_character_change_is_rejected(fingerprint: bytes) -> None:
    pager = Pager(fingerprint)
    cursor = pager.encode(QUERY, 3)
    assert pager.decode(QUERY, cursor) == 3
    for position in range(len(cursor)):
        for replacement in string.ascii_letters + string.digits + "-_":
            if replacement == cursor[position]:
                continue
            tampered = cursor[:position] + replacement + cursor[position + 1 :]
            with pytest.raises(QueryError):
                pager.decode(QUERY, tampered)


def test_cursor_is_stable_for_the_same_index_and_query() -> None:
    assert Pager(b"index").encode(QUERY, 6) == Pager(b"index").encode(QUERY, 6)
    assert Pager(b"index").encode(QUERY, 6) != Pager(b"other").encode(QUERY, 6)


def test_cursor_from_another_query_or_index_is_rejected() -> None:
    cursor = Pager(b"index").encode(QUERY, 3)
    with pytest.raises(QueryError):
        Pager(b"index").decode({**QUERY, "paper": "1902.04094"}, cursor)
    with pytest.raises(QueryError):
        Pager(b"other").decode(QUERY, cursor)
