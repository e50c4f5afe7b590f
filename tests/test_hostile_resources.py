"""Hostile resource URIs and prompt arguments get the protocol's invalid-params error (-32602).

Never -32603 (internal error) and never the legacy era's code 0, in both protocol eras. Each
case is named after the attack.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from papercode.corpus.stages import Corpus
from papercode.edge.app import build_server

REAL_RECORDS = Path(__file__).resolve().parents[1] / "records"
MODES = ("auto", "legacy")

HOSTILE_URIS = {
    "dot_dot_traversal": "paper://../../x",
    "dot_dot_after_old_style_id": "paper://hep-th/../../etc/passwd",
    "encoded_traversal": "paper://..%2F..%2Fetc%2Fpasswd",
    "percent_encoded_nul": "paper://%00",
    "encoded_nul_after_id": "paper://1902.04094%00",
    "raw_nul": "paper://1902.04094\x00",
    "absolute_path": "paper:///etc/passwd",
    "very_long": "paper://" + "9" * 100_000,
    "very_long_slug": "paper://" + "a-" * 50_000,
    "empty_paper": "paper://",
    "whitespace_paper": "paper://%20%20",
    "query_and_fragment": "paper://1902.04094?x=1#y",
    "unknown_paper": "paper://9999.99999",
    "unknown_slug": "paper://no-such-paper",
    "code_not_hex": "code://zz",
    "code_nul": "code://\x00",
    "code_empty": "code://",
    "code_too_short": "code://2a89",
    "code_unknown": "code://ffffffffffffffff",
    "code_traversal": "code://../x",
    "code_very_long": "code://" + "f" * 100_000,
    "code_slash": "code://2a890c3f/../..",
    "unknown_corpus_resource": "corpus://../load-report",
    "unknown_scheme": "file:///etc/passwd",
    "no_scheme": "1902.04094",
    "empty_uri": "",
}

HOSTILE_PROMPTS: dict[str, tuple[str, dict[str, str] | None]] = {
    "missing_argument": ("implement_paper", {}),
    "no_arguments_at_all": ("compare_implementations", None),
    "empty_argument": ("implement_paper", {"arxiv_id": ""}),
    "whitespace_argument": ("compare_implementations", {"arxiv_id": "   "}),
    "huge_argument": ("implement_paper", {"arxiv_id": "1" * 1_000_000}),
    "garbage_argument": ("implement_paper", {"arxiv_id": "\x00../../etc/passwd"}),
    "sql_like_argument": ("compare_implementations", {"arxiv_id": "' OR 1=1 --"}),
    "unknown_paper": ("compare_implementations", {"arxiv_id": "9999.99999"}),
    "unknown_argument": ("implement_paper", {"arxiv_id": "1902.04094", "style": "long"}),
    "only_unknown_argument": ("implement_paper", {"paper": "1902.04094"}),
    "unknown_prompt": ("rm_rf", {"arxiv_id": "1902.04094"}),
    "empty_prompt_name": ("", {}),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus.load([REAL_RECORDS])


@contextlib.asynccontextmanager
async def _client(corpus: Corpus, mode: str) -> AsyncIterator[Client]:
    async with Client(build_server(lambda: corpus), mode=mode) as client:  # type: ignore[arg-type]
        yield client


def _assert_invalid_params(error: MCPError) -> None:
    assert error.code == INVALID_PARAMS, (error.code, error.message)
    assert len(error.message) <= 1_000, "the error must not echo a huge input back"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("uri", HOSTILE_URIS.values(), ids=HOSTILE_URIS.keys())
async def test_hostile_uri_is_invalid_params(corpus: Corpus, mode: str, uri: str) -> None:
    async with _client(corpus, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    _assert_invalid_params(caught.value)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "arguments"), HOSTILE_PROMPTS.values(), ids=HOSTILE_PROMPTS.keys())
async def test_hostile_prompt_arguments_are_invalid_params(corpus: Corpus, mode: str, name: str, arguments: dict[str, str] | None) -> None:
    async with _client(corpus, mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt(name, arguments)
    _assert_invalid_params(caught.value)
    assert caught.value.message.split(":")[0] in {"invalid_argument", "not_found"}, caught.value.message


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_the_good_forms_still_work(corpus: Corpus, mode: str) -> None:
    # The guard against hostile input must not refuse what it guards.
    async with _client(corpus, mode) as client:
        paper = await client.read_resource("paper://1902.04094")
        code = await client.read_resource("code://2a890c3f")
        report = await client.read_resource("corpus://load-report")
        prompt = await client.get_prompt("implement_paper", {"arxiv_id": "arXiv:1902.04094v2"})
    assert orjson.loads(paper.contents[0].text)["arxiv_id"] == "1902.04094"  # type: ignore[union-attr]
    assert orjson.loads(code.contents[0].text)["query"]["resolved"].startswith("2a890c3f")  # type: ignore[union-attr]
    assert orjson.loads(report.contents[0].text)["summary"]["rejected"] == 0  # type: ignore[union-attr]
    assert "BERT has a Mouth" in prompt.messages[0].content.text  # type: ignore[union-attr]


# -- properties: any text after the scheme, any argument value -------------------------------


@pytest.fixture(scope="module", params=MODES)
def live(request: pytest.FixtureRequest, corpus: Corpus) -> Iterator[tuple[BlockingPortal, Client]]:
    with start_blocking_portal("asyncio") as portal, portal.wrap_async_context_manager(_client(corpus, request.param)) as client:
        yield portal, client


EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Mostly text that is not a known id (plus a few that are), so nearly every read is an error.
tails = st.one_of(st.text(max_size=300), st.sampled_from(["1902.04094", "2406.04823", "2a890c3f", "..", "%00", "%2F"]))


def _outcome(live: tuple[BlockingPortal, Client], call: Any, *args: Any) -> MCPError | None:
    portal, _ = live
    try:
        portal.call(call, *args)
    except MCPError as error:
        return error
    return None


@EXAMPLES
@given(scheme=st.sampled_from(["paper://", "code://", "corpus://"]), tail=tails)
def test_any_resource_uri_reads_or_is_invalid_params(live: tuple[BlockingPortal, Client], scheme: str, tail: str) -> None:
    error = _outcome(live, live[1].read_resource, scheme + tail)
    if error is not None:
        _assert_invalid_params(error)


@EXAMPLES
@given(
    name=st.sampled_from(["implement_paper", "compare_implementations"]),
    arguments=st.one_of(st.none(), st.dictionaries(st.sampled_from(["arxiv_id", "x"]) | st.text(max_size=10), tails, max_size=3)),
)
def test_any_prompt_arguments_render_or_are_invalid_params(
    live: tuple[BlockingPortal, Client], name: str, arguments: dict[str, str] | None
) -> None:
    error = _outcome(live, live[1].get_prompt, name, arguments)
    if error is not None:
        _assert_invalid_params(error)
