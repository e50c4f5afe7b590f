"""`PapercodeServer` changes the SDK's server only through its public methods: what tools/list shows (compacted
by a `list_tools` override, the registered tools untouched), how an unknown tool is told apart (by name, before
anything is called), and which tools answer on the event loop.

Each test builds its own server: some add tools to it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import INVALID_PARAMS

from papercode.corpus.stages import Corpus
from papercode.edge.app import PapercodeServer, build_server
from papercode.edge.schema import compact_schema, rooted
from tests.support.mcp import TOOL_NAMES, Connect
from tests.support.records import BERT_MOUTH

pytestmark = pytest.mark.anyio


@pytest.fixture
def own_server(corpus: Corpus) -> PapercodeServer:
    return build_server(lambda: corpus)


def _keys(schema: Any) -> set[str]:
    """Every key anywhere in a JSON schema."""
    if isinstance(schema, dict):
        return set(schema).union(*(_keys(value) for value in schema.values()))
    if isinstance(schema, list):
        return set().union(*(_keys(item) for item in schema))
    return set()


async def test_tools_list_is_compacted_by_the_override_and_the_registered_tools_are_untouched(own_server: PapercodeServer) -> None:
    listed = {tool.name: tool for tool in await own_server.list_tools()}
    registered = {tool.name: tool for tool in await MCPServer.list_tools(own_server)}  # what the SDK derived
    assert list(listed) == list(registered) == list(TOOL_NAMES)
    for name, tool in listed.items():
        sdk = registered[name]
        assert tool.input_schema == compact_schema(sdk.input_schema) | {"additionalProperties": False}
        assert tool.output_schema == compact_schema(rooted(sdk.output_schema), output=True)
        assert tool.description == " ".join((sdk.description or "").split())
        assert "title" in _keys(sdk.input_schema) and "title" not in _keys(tool.input_schema)
    assert '"null"' in str(registered["get_paper"].output_schema).replace("'", '"')  # the SDK's own schemas keep null branches


async def test_the_listing_follows_tools_added_or_removed_after_the_build(own_server: PapercodeServer) -> None:
    assert "echo_text" not in {tool.name for tool in await own_server.list_tools()}

    @own_server.tool()
    def echo_text(text: str | None = None) -> str:
        """Says   it
        back."""
        return text or ""

    (listed,) = [tool for tool in await own_server.list_tools() if tool.name == "echo_text"]
    assert listed.description == "Says it back."
    assert listed.input_schema == {"properties": {"text": {"type": "string"}}, "type": "object", "additionalProperties": False}
    async with Client(own_server) as client:
        assert (await client.call_tool("echo_text", {"text": "hi"})).structured_content == {"result": "hi"}
    own_server.remove_tool("echo_text")
    assert [tool.name for tool in await own_server.list_tools()] == list(TOOL_NAMES)


async def test_an_unknown_tool_is_refused_by_name_before_anything_runs(own_server: PapercodeServer, mode: str) -> None:
    async with Client(own_server, mode=mode) as client:
        with pytest.raises(MCPError) as error:
            await client.call_tool("get_everything", {})
    assert error.value.code == INVALID_PARAMS
    assert error.value.message == (
        f"not_found: unknown tool 'get_everything'; papercode's tools: {', '.join(TOOL_NAMES)}. "
        "Next: call the one that fits (tools/list describes each)."
    )


async def test_a_tool_whose_own_error_reads_like_the_sdks_unknown_tool_is_a_failed_call(own_server: PapercodeServer, mode: str) -> None:
    # The refusal goes by the tool's name, not by any error text: this tool exists, so its error is a failed call.
    @own_server.tool()
    def delegate(name: str) -> str:
        """Calls another tool."""
        raise ToolError(f"Unknown tool: {name}")

    async with Client(own_server, mode=mode) as client:
        result = await client.call_tool("delegate", {"name": "nope"})
    assert result.is_error
    assert result.content[0].type == "text" and result.content[0].text.startswith(
        "invalid_argument: Error executing tool delegate: Unknown tool: nope"
    )


KEYED_LOOKUPS = {
    "get_harvested_code_for_paper": {"arxiv_id": BERT_MOUTH},
    "list_samples_by_status": {"status": "ran_honours"},
    "get_paper": {"paper": BERT_MOUTH},
    "find_papers_for_repo": {"repo": "nyu-dl/bert-gen"},
    "corpus_stats": {},
}


@pytest.mark.parametrize("tool", KEYED_LOOKUPS)
async def test_keyed_lookups_answer_on_the_event_loop(corpus: Corpus, tool: str, connect: Connect) -> None:
    threads: list[str] = []

    def source() -> Corpus:
        threads.append(threading.current_thread().name)
        return corpus

    async with connect(source) as client:
        result = await client.call_tool(tool, KEYED_LOOKUPS[tool])
    assert not result.is_error
    assert threads == [threading.main_thread().name]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("search_papers", {"query": "bert"}), ("list_samples_by_status", {"status": "ran", "limit": 1, "cursor": "next"})],
)
async def test_what_can_take_longer_runs_in_a_worker_thread(corpus: Corpus, tool: str, arguments: dict[str, Any], connect: Connect) -> None:
    threads: list[str] = []

    def source() -> Corpus:
        threads.append(threading.current_thread().name)
        return corpus

    async with connect(source) as client:
        if arguments.get("cursor") == "next":  # a later page: the cursor the first page gave
            first = await client.call_tool(tool, {**arguments, "cursor": None})
            assert first.structured_content is not None
            arguments = {**arguments, "cursor": first.structured_content["next_cursor"]}
            threads.clear()
        result = await client.call_tool(tool, arguments)
    assert not result.is_error
    assert threads and threading.main_thread().name not in threads
