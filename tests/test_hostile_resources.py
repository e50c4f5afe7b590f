"""Hostile resource URIs and prompt arguments get the protocol's invalid-params error (-32602).

Never -32603 (internal error) and never the legacy era's code 0, in both protocol eras. Each
case is named after the attack. Where any input may succeed (the properties), a success must be
exactly what the queries layer answers for that input.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any
from urllib.parse import unquote

import orjson
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS

from conftest import MODES
from papercode.answers import overview, prompts, twins
from papercode.core.errors import QueryError
from papercode.corpus.stages import Corpus
from papercode.edge.app import PapercodeServer
from tool_answers import code_answer, shown

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


@pytest.fixture(scope="module", params=MODES)
def live(request: pytest.FixtureRequest, server: PapercodeServer) -> Iterator[Live]:
    """A client of the bundled records' server, open for the whole module in one era: every case here is
    driven through it from a synchronous test (hypothesis examples too), so none pays for a new client."""
    with start_blocking_portal("asyncio") as portal, portal.wrap_async_context_manager(Client(server, mode=request.param)) as client:
        yield Live(portal, client)


class Live:
    """A client and the portal that drives it from synchronous tests; a hostile case must not break the session for the next."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal, self.client = portal, client

    def refusal(self, call: Callable[..., Awaitable[Any]], *args: Any) -> MCPError:
        with pytest.raises(MCPError) as caught:
            self.portal.call(call, *args)
        return caught.value

    def outcome(self, call: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """The result, or the MCPError the call raised."""
        try:
            return self.portal.call(call, *args)
        except MCPError as error:
            return error


def _assert_invalid_params(error: MCPError) -> None:
    assert error.code == INVALID_PARAMS, (error.code, error.message)
    assert len(error.message) <= 1_000, "the error must not echo a huge input back"


@pytest.mark.parametrize("uri", HOSTILE_URIS.values(), ids=HOSTILE_URIS.keys())
def test_hostile_uri_is_invalid_params(live: Live, uri: str) -> None:
    _assert_invalid_params(live.refusal(live.client.read_resource, uri))


@pytest.mark.parametrize(("name", "arguments"), HOSTILE_PROMPTS.values(), ids=HOSTILE_PROMPTS.keys())
def test_hostile_prompt_arguments_are_invalid_params(live: Live, name: str, arguments: dict[str, str] | None) -> None:
    error = live.refusal(live.client.get_prompt, name, arguments)
    _assert_invalid_params(error)
    assert error.message.split(":")[0] in {"invalid_argument", "not_found"}, error.message


def test_the_good_forms_still_work(live: Live, corpus: Corpus) -> None:
    # The guard against hostile input must not refuse what it guards.
    paper = live.portal.call(live.client.read_resource, "paper://1902.04094")
    code = live.portal.call(live.client.read_resource, "code://2a890c3f")
    report = live.portal.call(live.client.read_resource, "corpus://load-report")
    prompt = live.portal.call(live.client.get_prompt, "implement_paper", {"arxiv_id": "arXiv:1902.04094v2"})
    assert orjson.loads(paper.contents[0].text)["arxiv_id"] == "1902.04094"
    assert orjson.loads(code.contents[0].text)["query"]["resolved"].startswith("2a890c3f")
    assert orjson.loads(report.contents[0].text)["summary"]["rejected"] == 0
    assert "BERT has a Mouth" in prompt.messages[0].content.text
    assert prompt.messages[0].content.text == prompts.implement_prompt(corpus, "arXiv:1902.04094v2")


# -- properties: any text after the scheme, any argument value -------------------------------

EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Mostly text that is not a known id (plus a few that are), so nearly every read is an error.
tails = st.one_of(st.text(max_size=300), st.sampled_from(["1902.04094", "2406.04823", "2a890c3f", "..", "%00", "%2F"]))
PROMPTS = {"implement_paper": prompts.implement_prompt, "compare_implementations": prompts.compare_prompt}


def _read(live: Live, corpus: Corpus, uri: str, scheme: str, tail: str) -> None:
    result = live.outcome(live.client.read_resource, uri)
    if isinstance(result, MCPError):
        _assert_invalid_params(result)
        return
    # A read that succeeds is the answer queries gives for the decoded id, in one JSON content (code:// adds
    # the code itself only when there is code: never here, with no code store).
    (content,) = result.contents
    assert content.mime_type == "application/json"
    got = orjson.loads(content.text)
    asked = unquote(tail)
    if scheme == "paper://":
        assert got["query"]["asked"] == asked
        assert got == shown(twins.paper_detail(corpus, asked))
        assert got["query"].get("resolved", asked) in ("1902.04094", "2406.04823")
    elif scheme == "code://":
        assert got["query"]["asked"] == asked
        assert got == live.portal.call(code_answer, corpus, asked)
        assert got["withheld"] in ("licence_restricted", "not_materialized") and "code" not in got
    else:
        assert tail in ("stats", "load-report"), uri
        assert got == (shown(overview.corpus_stats(corpus)) if tail == "stats" else overview.load_report(corpus))


@EXAMPLES
@given(scheme=st.sampled_from(["paper://", "code://", "corpus://"]), tail=tails)
def test_any_resource_uri_reads_the_queries_answer_or_is_invalid_params(live: Live, corpus: Corpus, scheme: str, tail: str) -> None:
    _read(live, corpus, scheme + tail, scheme, tail)


@pytest.mark.parametrize("tail", ["1902.04094", "%31902.04094", "1902%2E04094", "1902.04094%20", "arXiv:2406.04823v1", "2a890c3f"])
@pytest.mark.parametrize("scheme", ["paper://", "code://"])
def test_encoded_and_plain_ids_read_the_queries_answer(live: Live, corpus: Corpus, scheme: str, tail: str) -> None:
    # Successes the properties above check, always exercised: whatever the examples drawn.
    _read(live, corpus, scheme + tail, scheme, tail)


@EXAMPLES
@given(
    name=st.sampled_from(sorted(PROMPTS)),
    arguments=st.one_of(st.none(), st.dictionaries(st.sampled_from(["arxiv_id", "x"]) | st.text(max_size=10), tails, max_size=3)),
)
def test_any_prompt_arguments_render_the_queries_text_or_are_invalid_params(
    live: Live, corpus: Corpus, name: str, arguments: dict[str, str] | None
) -> None:
    result = live.outcome(live.client.get_prompt, name, arguments)
    given_id = (arguments or {}).get("arxiv_id")
    if set(arguments or {}) != {"arxiv_id"} or not given_id:  # a missing, empty or unknown argument
        assert isinstance(result, MCPError), arguments
        _assert_invalid_params(result)
        return
    try:
        expected = PROMPTS[name](corpus, given_id)
    except QueryError as refused:  # refused with the same words the queries layer uses
        assert isinstance(result, MCPError), arguments
        _assert_invalid_params(result)
        assert result.message == str(refused)
        return
    assert not isinstance(result, MCPError), result
    (message,) = result.messages
    assert message.role == "user" and message.content.text == expected
