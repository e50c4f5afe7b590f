"""`Corpus` is importable from `papercode.corpus`, and loaded only when asked for: importing the package (as `cli.main`
does, for `corpus.snapshot`, at every command's start) does not load the stages and the cold build with them."""

from __future__ import annotations

import importlib
import sys

import pytest

import papercode
from papercode.corpus import stages


def test_corpus_is_the_packages_and_the_stages_load_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == "papercode.corpus" or name.startswith("papercode.corpus.")]:
        monkeypatch.delitem(sys.modules, name)  # each put back as it was after the test
    monkeypatch.delattr(papercode, "corpus")
    package = importlib.import_module("papercode.corpus")
    assert "papercode.corpus.stages" not in sys.modules
    monkeypatch.setitem(sys.modules, "papercode.corpus.stages", stages)  # the one loaded already, not a second copy
    assert package.Corpus is stages.Corpus
    assert package.__all__ == ["Corpus"]
    with pytest.raises(AttributeError, match="has no attribute 'Stages'"):
        package.Stages  # noqa: B018 - the lookup is what is tested
