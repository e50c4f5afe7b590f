"""A call to a tool that tools/list does not name is a protocol error (invalid params), as MCP specifies, not a failed
call.

Works around: mcp 2.3.0's `MCPServer.call_tool` answers an unknown tool name with a failed call (`isError: true`,
"Unknown tool: …"), which a model reads as the tool having run and failed; MCP lists an unknown tool among the
protocol errors (-32602).
Canary: `test_the_sdk_answers_an_unknown_tool_with_a_failed_call` fails the day the SDK raises a protocol error.
Goes when: the SDK answers an unknown tool with -32602 itself (papercode's message, `guesses.unknown_tool_message`,
then goes with it or is left out).

The server tells an unknown name apart by tools/list (`PapercodeServer.tools_taking`) before anything is called.
"""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS


def unknown_tool(message: str) -> MCPError:
    """The protocol error for a call to a tool tools/list does not name, saying `message`."""
    return MCPError(INVALID_PARAMS, message)
