"""A prompts/get for an unknown prompt, without a required argument or with one the prompt does not take is the
client's mistake: invalid params, with what was wrong, before the SDK renders anything.

Works around: mcp 2.3.0's `MCPServer.get_prompt` answers all three with -32603 "Internal server error" (the render
fails inside it), which tells the client neither that the mistake is its own nor what it was.
Canary: `test_the_sdk_answers_a_prompts_mistaken_arguments_with_an_internal_error` fails the day the SDK answers
them with invalid params.
Goes when: the SDK checks a prompt's name and arguments against its listing and answers -32602 itself.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, Prompt


def check_prompt_arguments(listed: list[Prompt], name: str, arguments: dict[str, Any] | None) -> None:
    """MCPError (invalid params) unless prompts/list (`listed`) has `name` and `arguments` are what it takes."""
    prompt = next((candidate for candidate in listed if candidate.name == name), None)
    if prompt is None:
        raise MCPError(INVALID_PARAMS, f"not_found: unknown prompt {name!r}; see prompts/list")
    missing = [arg.name for arg in prompt.arguments or [] if arg.required and not (arguments or {}).get(arg.name)]
    if missing:
        raise MCPError(INVALID_PARAMS, f"invalid_argument: missing required argument(s): {', '.join(missing)}")
    known = {arg.name for arg in prompt.arguments or []}
    unknown = sorted(set(arguments or {}) - known)
    if unknown:
        listed_keys = ", ".join(repr(key[:40]) for key in unknown[:5])
        raise MCPError(INVALID_PARAMS, f"invalid_argument: unknown argument(s) {listed_keys}; {name} takes {', '.join(sorted(known))}")
