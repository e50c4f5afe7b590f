"""`answers.shaping`: what it reads of the fields' declaration (`index.fields`) is checked when it is imported."""

from __future__ import annotations

import importlib.util

import pytest

from papercode.answers import shaping
from papercode.index import fields


def _import_shaping_again() -> None:
    """answers/shaping.py run again as a module of its own (its imports are those already loaded)."""
    spec = importlib.util.spec_from_file_location("papercode.answers._shaping_again", shaping.__file__)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


@pytest.mark.parametrize(
    "marked",
    [
        pytest.param((*fields.SHOWN_SAMPLE_FIELDS, "file_url"), id="one more marked shown"),
        pytest.param(fields.SHOWN_SAMPLE_FIELDS[1:], id="one no longer marked"),
        pytest.param(("entry", "code_sha256", *fields.SHOWN_SAMPLE_FIELDS[2:]), id="two swapped"),
    ],
)
def test_sample_fields_marked_shown_that_grouped_samples_does_not_unpack_are_refused_at_import(
    marked: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # grouped_samples unpacks each sample's shown fields by position: without the check, a field marked shown is
    # "too many values to unpack" at the first get_harvested_code_for_paper, and two swapped are each other's values.
    monkeypatch.setattr(fields, "SHOWN_SAMPLE_FIELDS", marked)
    with pytest.raises(ImportError, match=r"grouped_samples unpacks code_sha256, entry, .*: unpack each in its loop"):
        _import_shaping_again()


def test_the_sample_fields_marked_shown_are_those_grouped_samples_unpacks() -> None:
    assert shaping.GROUPED_SAMPLE_FIELDS == fields.SHOWN_SAMPLE_FIELDS
    _import_shaping_again()
