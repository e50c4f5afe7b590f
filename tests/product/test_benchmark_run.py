"""The names `python -m benchmarks run`'s worker calls, found wherever the papercode measured declares them (a commit
before issue #24 kept every answer in `answers.queries`)."""

from __future__ import annotations

import sys
import types

import pytest

from benchmarks import run
from benchmarks.answer_names import answer_name


def test_the_answers_are_found_where_this_papercode_declares_them() -> None:
    from papercode.answers import overview, queries, resolving

    assert answer_name("corpus_stats") is overview.corpus_stats and answer_name("find_code") is resolving.find_code
    assert answer_name("harvested_code_shown") is queries.harvested_code_shown
    assert set(run.direct_tools()) == set(run.TOOLS)


def test_the_answers_are_found_in_queries_alone_as_before_issue_24(monkeypatch: pytest.MonkeyPatch) -> None:
    """96fd14f had no `answers.resolving` or `answers.overview`: `queries` declared `find_code` and `corpus_stats`."""
    queries = types.ModuleType("papercode.answers.queries")
    queries.find_code, queries.corpus_stats = object(), object()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "papercode.answers.resolving", None)  # None in sys.modules: the import fails
    monkeypatch.setitem(sys.modules, "papercode.answers.overview", None)
    monkeypatch.setitem(sys.modules, "papercode.answers.queries", queries)
    assert answer_name("find_code") is queries.find_code and answer_name("corpus_stats") is queries.corpus_stats
    with pytest.raises(ImportError, match=r"^this papercode's answers has no resolve_anything$"):
        answer_name("resolve_anything")
