"""Property-based hostile input: anything at any tool gets a valid answer or a flagged, coded error.

At the queries layer, hypothesis throws arbitrary text and unicode (lone surrogates too), huge and
negative numbers and garbage cursors, typed as each function takes them, at every tool, prompt and
completion: each answers, within the 25,000-token budget, or raises a `QueryError` whose text starts
with its code and ends with the next step. Through the in-memory client, in both protocol eras, fewer
examples add what only the edge sees: wrong types (lists, objects, null where strings are expected),
unknown arguments and unknown tools. `internal_error` (a crash) and the SDK's bare "Error executing
tool" must never appear.

Hypothesis drives synchronous tests; the client lives in an anyio blocking portal opened once per
module and era, so examples do not pay for a new client each.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, CallToolResult

from papercode.answers import completions, prompts, twins
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from papercode.edge.app import PapercodeServer
from tests.support.mcp import TOOL_NAMES
from tests.support.tool_answers import ask, ask_code, shown

ERROR_CODE = re.compile(r"^(not_found|ambiguous|invalid_argument|licence_restricted|not_materialized|internal_error): ")
QUERY_ERROR = re.compile(r"^(not_found|ambiguous|invalid_argument|loading): .+\. Next: .+\.$", re.DOTALL)
TOKEN_BUDGET = 25_000
QUERY_EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Per tool and era through MCP: 60 a tool in all, beside QUERY_EXAMPLES of the same tool at the queries layer.
MCP_EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

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


# -- typed arguments, as the queries functions take them -------------------------------------

maybe_strings = st.none() | strings
typed_cursors = st.none() | strings | st.binary(min_size=13, max_size=13).map(_b64) | st.binary(max_size=40).map(_b64)
typed_limits = st.integers(min_value=-5, max_value=120) | st.integers()
typed_statuses = (
    st.sampled_from(["ran", "ran_honours", "unverified", "ran,ran_violates", "RAN", "nope"]) | strings | st.lists(strings, max_size=25)
)
typed_years = st.none() | st.integers(min_value=1990, max_value=2030) | st.integers()
typed_paper_ids = PAPER_IDS

TYPED_ARGUMENTS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "get_harvested_code_for_paper": {
        "arxiv_id": typed_paper_ids,
        "status": st.none() | typed_statuses,
        "repo_kind": st.none() | st.sampled_from(["official", "listed", "nope"]) | strings,
        "limit": typed_limits,
        "cursor": typed_cursors,
    },
    "list_samples_by_status": {
        "status": typed_statuses,
        "repo_kind": st.none() | st.sampled_from(["official", "listed", "community"]) | strings,
        "language": st.none() | st.sampled_from(["python", "PYTHON", "cobol"]) | strings,
        "licence": st.none() | st.sampled_from(["MIT", "NONE", "Apache-2.0"]) | strings,
        "inline_only": st.booleans(),
        "limit": typed_limits,
        "cursor": typed_cursors,
    },
    "search_papers": {
        "query": st.sampled_from(["bert", "bert generative in-context", "markov random field", ""]) | strings,
        "task": st.none() | st.sampled_from(["language-modelling", "Language Modeling"]) | strings,
        "method": st.none() | st.sampled_from(["BERT", "Adam"]) | strings,
        "framework": st.none() | st.sampled_from(["pytorch", "tf"]) | strings,
        "has_samples": st.none() | st.booleans(),
        "status": st.none() | st.sampled_from(["ran", "ran_honours", "bogus", "ran,unverified"]) | strings,
        "official_code": st.none() | st.booleans(),
        "year_from": typed_years,
        "year_to": typed_years,
        "limit": typed_limits,
        "cursor": typed_cursors,
    },
    "get_paper": {"paper": typed_paper_ids},
    "find_papers_for_repo": {
        "repo": st.sampled_from(["nyu-dl/bert-gen", "https://github.com/ltgoslo/bert-in-context/tree/main/x", "a/b"]) | strings,
        "limit": typed_limits,
        "cursor": typed_cursors,
    },
    "get_code": {"code_sha256": st.sampled_from(["2a890c3f", "0", "ffffffffffffffff", "2A890C3F", "2a890c3fzz", "1e"]) | strings},
}
REQUIRED = {
    "get_harvested_code_for_paper": {"arxiv_id"},
    "list_samples_by_status": {"status"},
    "get_paper": {"paper"},
    "find_papers_for_repo": {"repo"},
    "get_code": {"code_sha256"},
}


@st.composite
def typed_arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    """The tool's required arguments and some of its others, each of the type the queries function takes."""
    return {
        name: draw(strategy) for name, strategy in TYPED_ARGUMENTS[tool].items() if name in REQUIRED.get(tool, ()) or draw(st.booleans())
    }


def assert_answer_or_query_error(call: Any, *args: Any, **kwargs: Any) -> Any:
    """The call answers within the budget, or refuses with a coded QueryError that says what to do next."""
    try:
        result = call(*args, **kwargs)
    except QueryError as refused:
        assert QUERY_ERROR.match(str(refused)), str(refused)
        return None
    size = len(orjson.dumps(shown(result) if not isinstance(result, (str, list, type(None))) else result))
    assert size / 4 <= TOKEN_BUDGET, f"answer of {size:,} bytes"
    return result


@pytest.mark.parametrize("tool", sorted(TYPED_ARGUMENTS))
def test_any_typed_arguments_get_an_answer_or_a_query_error(corpus: Corpus, tool: str) -> None:
    @QUERY_EXAMPLES
    @given(arguments=typed_arguments(tool))
    def check(arguments: dict[str, Any]) -> None:
        if tool == "get_code":
            assert_answer_or_query_error(anyio.run, ask_code, corpus, arguments["code_sha256"])
        else:
            assert_answer_or_query_error(ask, corpus, tool, **arguments)

    check()


@QUERY_EXAMPLES
@given(arxiv_id=typed_paper_ids)
def test_any_id_renders_both_prompts_or_is_a_query_error(corpus: Corpus, arxiv_id: str) -> None:
    for render in (prompts.implement_prompt, prompts.compare_prompt):
        text = assert_answer_or_query_error(render, corpus, arxiv_id)
        assert text is None or (text and len(text.encode()) / 4 < 4_000)


@QUERY_EXAMPLES
@given(argument=st.sampled_from(["arxiv_id", "paper", "status", "code_sha256", "style"]) | strings, value=strings)
def test_any_value_completes_to_at_most_20_values(corpus: Corpus, argument: str, value: str) -> None:
    values = completions.complete(corpus, argument, value)
    assert values is None or (isinstance(values, list) and len(values) <= completions.COMPLETIONS)


# -- through the client, in both eras -------------------------------------------------------


@pytest.fixture(scope="module", params=["auto", "legacy"])
def live(request: pytest.FixtureRequest, server: PapercodeServer) -> Iterator[tuple[BlockingPortal, Client]]:
    """A client of the bundled records' server, open for the whole module, driven from synchronous hypothesis tests."""
    with start_blocking_portal("asyncio") as portal, portal.wrap_async_context_manager(Client(server, mode=request.param)) as client:
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
    @MCP_EXAMPLES
    @given(arguments=tool_arguments(tool))
    def check(arguments: dict[str, Any]) -> None:
        assert_well_formed(_call(live, tool, arguments))

    check()


@EXAMPLES
@given(name=st.text(max_size=40), arguments=st.dictionaries(st.text(max_size=8), anything, max_size=3))
def test_unknown_tool_names_are_not_found(live: tuple[BlockingPortal, Client], name: str, arguments: dict[str, Any]) -> None:
    if name in TOOL_NAMES:  # Hypothesis draws the names the code spells too: a tool's own name is a tool
        assert_well_formed(_call(live, name, arguments))
        return
    with pytest.raises(MCPError) as error:  # an unknown tool is a protocol error (-32602), as the spec lists it
        _call(live, name, arguments)
    assert error.value.code == INVALID_PARAMS and error.value.message.startswith("not_found: unknown tool ")
    assert len(error.value.message) < 500  # the name and each value shown are cut, however long


def test_a_cursor_from_another_query_is_refused(corpus: Corpus) -> None:
    first = twins.samples_by_status(corpus, "ran", limit=2)
    assert first.next_cursor is not None
    assert twins.samples_by_status(corpus, "ran", limit=2, cursor=first.next_cursor).papers
    with pytest.raises(QueryError) as other:
        twins.samples_by_status(corpus, "unverified", limit=2, cursor=first.next_cursor)
    assert str(other.value).startswith("invalid_argument: cursor")


REGRESSIONS = [
    ({"query": "bert", "year_from": 10**30}, "invalid_argument"),
    ({"query": "bert", "year_to": -(2**70)}, "invalid_argument"),
    ({"query": "bert", "year_from": 2**63}, "invalid_argument"),
    ({"query": "bert", "limit": 10**30}, "invalid_argument"),
    ({"query": "bert \udcff"}, "invalid_argument"),
    ({"query": "bert", "task": "x\ud800"}, "invalid_argument"),
]


@pytest.mark.parametrize(("arguments", "code"), REGRESSIONS)
def test_regressions_huge_years_and_lone_surrogates(corpus: Corpus, arguments: dict[str, Any], code: str) -> None:
    with pytest.raises(QueryError) as refused:
        ask(corpus, "search_papers", **arguments)
    assert str(refused.value).startswith(f"{code}: ") and QUERY_ERROR.match(str(refused.value))


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        *REGRESSIONS,
        ({"query": ["bert"]}, "invalid_argument"),
        ({"query": None}, "invalid_argument"),
        ({"query": {"$ne": 1}}, "invalid_argument"),
    ],
)
def test_regressions_huge_years_and_wrong_types(live: tuple[BlockingPortal, Client], arguments: dict[str, Any], code: str) -> None:
    result = _call(live, "search_papers", arguments)
    assert_well_formed(result)
    assert result.is_error and result.content[0].text.startswith(f"{code}: ")  # type: ignore[union-attr]


def test_largest_real_answers_fit_the_budget(corpus: Corpus) -> None:
    for tool, arguments in [
        ("get_harvested_code_for_paper", {"arxiv_id": "2406.04823", "limit": 100}),
        ("list_samples_by_status", {"status": "ran_honours,ran,ran_draft_wrong,ran_violates,unverified", "limit": 100}),
        ("search_papers", {"query": "", "limit": 100}),
        ("corpus_stats", {}),
    ]:
        assert assert_answer_or_query_error(ask, corpus, tool, **arguments) is not None, tool


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
