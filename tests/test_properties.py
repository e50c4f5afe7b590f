"""Property-based hostile input: anything at any tool gets a valid answer or a flagged, coded error.

Hypothesis throws arbitrary text and unicode, huge and negative numbers, wrong types (lists,
objects, null where strings are expected), unknown arguments and garbage cursors at every tool
through the in-memory client, in both protocol eras. An answer is either a result with
structured content or an error whose text starts with a machine code; `internal_error` (a
crash) and the SDK's bare "Error executing tool" must never appear, and no answer may go over
the 25,000-token budget.

Hypothesis drives a synchronous test; the client lives in an anyio blocking portal opened once
per module and era, so examples do not pay for a new client each.
"""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, CallToolResult

from papercode.corpus.stages import Corpus
from papercode.edge.app import build_server

REAL_RECORDS = Path(__file__).resolve().parents[1] / "records"
ERROR_CODE = re.compile(r"^(not_found|ambiguous|invalid_argument|licence_restricted|not_materialized|internal_error): ")
TOKEN_BUDGET = 25_000
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- strategies ----------------------------------------------------------------------------

NASTY_STRINGS = [
    "",
    " ",
    "\x00",
    "../../etc/passwd",
    "%00",
    "1902.04094",
    "arXiv:1902.04094v2",
    "https://arxiv.org/abs/2406.04823v1",
    "hep-th/9901001",
    "/paper/berts-are-generative-in-context-learners",
    "2a890c3f",
    "2a890c3f00000000",
    "ran,ran_honours",
    "ran_honours",
    "unverified",
    "official",
    "nyu-dl/bert-gen",
    "https://github.com/nyu-dl/bert-gen.git",
    'NEAR(a b) OR "x*" col:title (',
    "' OR 1=1 --",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ‮RTL‬ ﷽ 🧪" * 3,
    "a" * 5_000,
    "9" * 400,
]
# Lone surrogates cannot cross a real JSON wire, but the in-memory client passes them through.
surrogates = st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(), min_size=1, max_size=20)
strings = st.one_of(
    st.text(), st.text(alphabet=st.characters(codec="utf-8"), min_size=50, max_size=2_000), surrogates, st.sampled_from(NASTY_STRINGS)
)
numbers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 100, 101, 2**31, 2**63, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, strings)
anything = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6
)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


cursors = st.one_of(
    anything,
    st.binary(min_size=13, max_size=13).map(_b64),  # the right length, a forged MAC
    st.binary(max_size=40).map(_b64),
    st.just("AAAAAAAAAAAAAAAAAA"),
)


def _arg(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly plausible values (to reach deep code), often hostile ones."""
    return st.one_of(plausible, anything)


PAPER_IDS = st.sampled_from(["1902.04094", "2406.04823", "arXiv:1902.04094v2", "9999.99999", "/paper/nope"]) | strings
STATUSES = st.sampled_from(["ran", "ran_honours", "unverified", "ran,ran_violates", "RAN", "nope"]) | st.lists(strings, max_size=3)
LIMITS = st.integers(min_value=-5, max_value=120) | numbers
BOOLS = st.booleans() | anything

TOOL_ARGUMENTS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "get_harvested_code_for_paper": {
        "arxiv_id": _arg(PAPER_IDS),
        "status": _arg(STATUSES),
        "repo_kind": _arg(st.sampled_from(["official", "listed", "nope"])),
        "limit": _arg(LIMITS),
        "cursor": cursors,
    },
    "list_samples_by_status": {
        "status": _arg(STATUSES),
        "repo_kind": _arg(st.sampled_from(["official", "listed", "community"])),
        "language": _arg(st.sampled_from(["python", "PYTHON", "cobol"])),
        "licence": _arg(st.sampled_from(["MIT", "NONE", "Apache-2.0"])),
        "inline_only": _arg(BOOLS),
        "limit": _arg(LIMITS),
        "cursor": cursors,
    },
    "search_papers": {
        "query": _arg(st.sampled_from(["bert", "bert generative in-context", "markov random field"])),
        "task": _arg(st.sampled_from(["language-modelling", "Language Modeling"])),
        "method": _arg(st.sampled_from(["BERT", "Adam"])),
        "framework": _arg(st.sampled_from(["pytorch", "tf"])),
        "has_samples": _arg(BOOLS),
        "status": _arg(st.sampled_from(["ran", "ran_honours", "bogus"])),
        "official_code": _arg(BOOLS),
        "year_from": _arg(st.integers(min_value=1990, max_value=2030) | numbers),
        "year_to": _arg(st.integers(min_value=1990, max_value=2030) | numbers),
        "limit": _arg(LIMITS),
        "cursor": cursors,
    },
    "get_paper": {"paper": _arg(PAPER_IDS)},
    "find_papers_for_repo": {
        "repo": _arg(st.sampled_from(["nyu-dl/bert-gen", "https://github.com/ltgoslo/bert-in-context/tree/main/x", "a/b"])),
        "limit": _arg(LIMITS),
        "cursor": cursors,
    },
    "get_code": {"code_sha256": _arg(st.sampled_from(["2a890c3f", "0", "ffffffffffffffff", "2A890C3F", "2a890c3fzz"]))},
    "corpus_stats": {},
}


@st.composite
def tool_arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    """Some of the tool's arguments (any may be missing), sometimes an argument it does not take."""
    arguments = {name: draw(strategy) for name, strategy in TOOL_ARGUMENTS[tool].items() if draw(st.booleans())}
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(st.text(min_size=1, max_size=12))] = draw(anything)
    return arguments


# -- the client ----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _client(corpus: Corpus, mode: str) -> AsyncIterator[Client]:
    async with Client(build_server(lambda: corpus), mode=mode) as client:  # type: ignore[arg-type]
        yield client


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus.load([REAL_RECORDS])


@pytest.fixture(scope="module", params=["auto", "legacy"])
def live(request: pytest.FixtureRequest, corpus: Corpus) -> Iterator[tuple[BlockingPortal, Client]]:
    """A client open for the whole module, driven from synchronous hypothesis tests."""
    with start_blocking_portal("asyncio") as portal, portal.wrap_async_context_manager(_client(corpus, request.param)) as client:
        yield portal, client


def _call(live: tuple[BlockingPortal, Client], tool: str, arguments: dict[str, Any]) -> CallToolResult:
    portal, client = live
    return portal.call(client.call_tool, tool, arguments)


def assert_well_formed(result: CallToolResult) -> None:
    text = "".join(block.text for block in result.content if block.type == "text")
    assert len(text.encode()) / 4 <= TOKEN_BUDGET, f"answer of {len(text.encode()):,} bytes"
    assert not text.startswith("Error executing tool"), text
    if result.is_error:
        assert ERROR_CODE.match(text), text
        assert not text.startswith("internal_error:"), text
        assert "Next: " in text, text
    else:
        assert result.structured_content is not None, text


# -- the properties ------------------------------------------------------------------------


@pytest.mark.parametrize("tool", sorted(TOOL_ARGUMENTS))
def test_any_arguments_get_an_answer_or_a_coded_error(live: tuple[BlockingPortal, Client], tool: str) -> None:
    @EXAMPLES
    @given(arguments=tool_arguments(tool))
    def check(arguments: dict[str, Any]) -> None:
        assert_well_formed(_call(live, tool, arguments))

    check()


@EXAMPLES
@given(name=st.text(max_size=40), arguments=st.dictionaries(st.text(max_size=8), anything, max_size=3))
def test_unknown_tool_names_are_not_found(live: tuple[BlockingPortal, Client], name: str, arguments: dict[str, Any]) -> None:
    if name in TOOL_ARGUMENTS:
        assert_well_formed(_call(live, name, arguments))
        return
    with pytest.raises(MCPError) as error:  # an unknown tool is a protocol error (-32602), as the spec lists it
        _call(live, name, arguments)
    assert error.value.code == INVALID_PARAMS and error.value.message.startswith("not_found: unknown tool ")
    assert len(error.value.message) < 200  # the name is cut, however long


def test_a_cursor_from_another_query_is_refused(live: tuple[BlockingPortal, Client]) -> None:
    first = _call(live, "list_samples_by_status", {"status": "ran", "limit": 2})
    assert first.structured_content is not None
    cursor = first.structured_content["next_cursor"]
    assert _call(live, "list_samples_by_status", {"status": "ran", "limit": 2, "cursor": cursor}).is_error is False
    other = _call(live, "list_samples_by_status", {"status": "unverified", "limit": 2, "cursor": cursor})
    assert other.is_error and other.content[0].text.startswith("invalid_argument: cursor")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"query": "bert", "year_from": 10**30}, "invalid_argument"),
        ({"query": "bert", "year_to": -(2**70)}, "invalid_argument"),
        ({"query": "bert", "year_from": 2**63}, "invalid_argument"),
        ({"query": "bert", "limit": 10**30}, "invalid_argument"),
        ({"query": ["bert"]}, "invalid_argument"),
        ({"query": None}, "invalid_argument"),
        ({"query": {"$ne": 1}}, "invalid_argument"),
        ({"query": "bert \udcff"}, "invalid_argument"),
        ({"query": "bert", "task": "x\ud800"}, "invalid_argument"),
    ],
)
def test_regressions_huge_years_and_wrong_types(live: tuple[BlockingPortal, Client], arguments: dict[str, Any], code: str) -> None:
    result = _call(live, "search_papers", arguments)
    assert_well_formed(result)
    assert result.is_error and result.content[0].text.startswith(f"{code}: ")  # type: ignore[union-attr]


def test_largest_real_answers_fit_the_budget(live: tuple[BlockingPortal, Client]) -> None:
    for tool, arguments in [
        ("get_harvested_code_for_paper", {"arxiv_id": "2406.04823", "limit": 100}),
        ("list_samples_by_status", {"status": "ran_honours,ran,ran_draft_wrong,ran_violates,unverified", "limit": 100}),
        ("search_papers", {"query": "", "limit": 100}),
        ("corpus_stats", {}),
    ]:
        result = _call(live, tool, arguments)
        assert result.is_error is False
        assert_well_formed(result)


# -- the loader: any bytes, any JSON, any field replaced ------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
RECORD_PATHS = [
    ("title",),
    ("arxiv_id",),
    ("url",),
    ("date",),
    ("authors",),
    ("abstract",),
    ("code_links",),
    ("code_links", 0),
    ("code_links", 0, "is_official"),
    ("code_links", 0, "reach"),
    ("tasks",),
    ("methods",),
    ("syntology",),
    ("syntology", "read_at"),
    ("syntology", "summary"),
    ("syntology", "by_repo_kind"),
    ("syntology", "n_pointer_only_for_licence"),
    ("syntology", "samples"),
    ("syntology", "samples", 0),
    ("syntology", "samples", 0, "code_sha256_prefix"),
    ("syntology", "samples", 0, "status"),
    ("syntology", "samples", 0, "repo"),
    ("syntology", "samples", 0, "repo_kind"),
    ("syntology", "samples", 0, "inline_ok"),
    ("syntology", "samples", 0, "licence"),
    ("syntology", "samples", 0, "verification_level"),
]


def _base_record() -> dict[str, Any]:
    sample = {
        "code_sha256_prefix": "0123456789abcdef",
        "entry": "train",
        "repo": "owner/repo",
        "repo_kind": "official",
        "path": "train.py",
        "language": "python",
        "status": "ran",
        "licence": "MIT",
        "inline_ok": True,
    }
    return {
        "url": "/paper/a-paper",
        "title": "A paper",
        "arxiv_id": "2101.00001",
        "date": "2021-01-01",
        "authors": ["Ann"],
        "abstract": "About it.",
        "code_links": [{"repo_url": "https://github.com/owner/repo", "is_official": 1, "reach": {"status": "ok", "spdx": "MIT"}}],
        "tasks": [{"task_slug": "t", "task_name": "T"}],
        "methods": [{"method_name": "M"}],
        "syntology": {
            "read_at": "2025-01-01T00:00:00Z",
            "summary": {"ran": 1},
            "samples": [sample, {**sample, "code_sha256_prefix": "f" * 16}],
        },
    }


def _assert_loads_without_raising(directory: Path, name: str, data: bytes) -> None:
    path = directory / name
    path.write_bytes(data)
    try:
        corpus = Corpus.load([path])
    finally:
        path.unlink()
    report = corpus.index.report
    assert report.records_indexed + report.rejected >= 1 or data.strip() in (b"", b"\xef\xbb\xbf")


@EXAMPLES
@given(data=st.binary(max_size=300) | json_values.map(lambda value: orjson.dumps(value)))
def test_any_bytes_load_without_raising(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    directory = tmp_path_factory.getbasetemp()
    _assert_loads_without_raising(directory, "any.json", data)
    _assert_loads_without_raising(directory, "any.jsonl", data + b"\n" + data)


def _can_step(target: Any, step: Any) -> bool:
    """Whether `target[step]` exists (an earlier replacement may have changed the shape)."""
    if isinstance(target, dict):
        return isinstance(step, str) and step in target
    return isinstance(target, list) and isinstance(step, int) and step < len(target)


@EXAMPLES
@given(replacements=st.lists(st.tuples(st.sampled_from(RECORD_PATHS), json_values), min_size=1, max_size=3))
def test_any_field_replaced_loads_without_raising(
    tmp_path_factory: pytest.TempPathFactory, replacements: list[tuple[tuple[Any, ...], Any]]
) -> None:
    record = _base_record()
    for path, value in replacements:
        target: Any = record
        for step in path[:-1]:
            if not _can_step(target, step):
                break
            target = target[step]
        else:
            last = path[-1]
            if _can_step(target, last) or (isinstance(target, dict) and isinstance(last, str)):
                target[last] = value
    _assert_loads_without_raising(tmp_path_factory.getbasetemp(), "mutated.json", orjson.dumps(record))
