"""Packed sequences behave like the lists they replace in a snapshot."""

from __future__ import annotations

import pickle
import random

import pytest

from papercode.index.packed import PackedBytes, PackedStrings, SortedKeys

VALUES = ["", "a", None, "ünïcödé ✓", "x" * 10_000, None, "last"]


def test_packed_strings_equal_the_list_they_pack() -> None:
    packed = PackedStrings(VALUES)
    assert len(packed) == len(VALUES)
    assert list(packed) == VALUES
    assert [packed[i] for i in range(-len(VALUES), 0)] == VALUES
    assert packed[1:4] == VALUES[1:4]


def test_packed_strings_survive_a_pickle() -> None:
    assert list(pickle.loads(pickle.dumps(PackedStrings(VALUES), protocol=5))) == VALUES


def test_packed_bytes_equal_the_list_they_pack() -> None:
    blobs = [b"{}", b"", b'{"a":1}' * 100]
    packed = pickle.loads(pickle.dumps(PackedBytes(blobs), protocol=5))
    assert list(packed) == blobs


def test_index_past_the_end_raises() -> None:
    with pytest.raises(IndexError):
        PackedStrings(["only"])[1]


def test_packed_strings_grow_as_a_list_would() -> None:
    grown, as_list = PackedStrings(()), []
    for chunk in (["a", "bc"], ["ünï", "", "✓✓"], ["x" * 300], []):
        grown.extend(chunk)
        as_list += chunk
    assert list(grown) == as_list
    assert list(pickle.loads(pickle.dumps(grown, protocol=5))) == as_list


def test_packed_strings_take_another_packed_whole_or_in_part() -> None:
    other = PackedStrings(["one", "twö", "three"])
    whole, some = PackedStrings(["zero"]), PackedStrings(["zero"])
    whole.extend_packed(other)
    some.extend_packed(other, [0, 2])
    assert list(whole) == ["zero", "one", "twö", "three"]
    assert list(some) == ["zero", "one", "three"]


def test_sorted_keys_answer_as_the_dict_they_were_made_from() -> None:
    mapping = {"2101.00001": 3, "hep-th/9901001": 0, "ümlaut-slug": 7, "a": 1, "": 9, "2101.00001v2": 4}
    for lookup in (SortedKeys(mapping), pickle.loads(pickle.dumps(SortedKeys(mapping), protocol=5))):
        assert len(lookup) == len(mapping)
        for key, value in mapping.items():
            assert lookup.get(key) == value
        for absent in ("2101.0000", "2101.00002", "zz", "ü", "hep-th/9901001 "):
            assert lookup.get(absent) is None
    assert SortedKeys({}).get("x") is None


def test_sorted_keys_find_every_key_whatever_its_code_points() -> None:
    # The lookup bisects UTF-8 bytes, the keys sort as str: the two orders must agree, lone surrogates included.
    rng = random.Random(7)
    alphabet = ["a", "z", "0", "-", "é", "ÿ", "Ā", "✓", "\ud800", "\udfff", "\ue000", "\uffff", "😀", "\U0010ffff"]
    mapping = {"".join(rng.choices(alphabet, k=rng.randint(0, 6))): n for n in range(2_000)}
    lookup = SortedKeys(mapping)
    assert all(lookup.get(key) == value for key, value in mapping.items())
    assert all(lookup.get(key + "\x00") is None for key in mapping if key + "\x00" not in mapping)
