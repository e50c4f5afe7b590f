"""The floor of the stdio latency benchmark: a bare `MCPServer` replaying what papercode answered.

For each tool `T` it serves `echo_T`: an `async` function with `T`'s signature (so the same argument model and the
same output model `Annotated[CallToolResult, Model]`) that returns the `CallToolResult` papercode gave for the same
arguments, and tools/list shows `T` exactly as papercode listed it (renamed), so a client validates the answers
against the same output schema. Both are read from a file the benchmark wrote from `papercode serve`'s answers.
A call to `echo_T` therefore costs what the SDK and the client alone cost for that answer over stdio: reading and
parsing the request, validating the arguments, validating the structured content against the output model,
serialising the answer, writing it, and the client's own parsing and schema validation. Of papercode, only the
validators its argument models declare run when it is called (papercode is imported to read the tools' signatures);
no corpus is loaded, no worker-thread hop is paid (a tool that runs in a thread pays its hop in its ratio to this
floor), and the process runs with the GC policy `papercode serve` sets at start.

Run: `python -m benchmarks.echo_server --answers FILE` (speaks MCP on stdin/stdout), FILE as `Recorded.write` writes it.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, Tool

from papercode import bench

ECHO_PREFIX = "echo_"


@dataclass
class Recorded:
    """What papercode answered: its tools/list (wire form), and per tool (arguments as sent, result in wire form)."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = field(default_factory=dict)

    def write(self, path: Path) -> None:
        rows = {tool: [{"arguments": a, "result": r} for a, r in pairs] for tool, pairs in self.answers.items()}
        path.write_bytes(orjson.dumps({"tools": self.tools, "answers": rows}))

    @classmethod
    def read(cls, path: Path) -> Recorded:
        data = orjson.loads(path.read_bytes())
        answers = {tool: [(row["arguments"], row["result"]) for row in rows] for tool, rows in data["answers"].items()}
        return cls(data["tools"], answers)


class ReplayServer(MCPServer):
    """A bare MCPServer whose tools/list is the recorded one (echo names), through the public override."""

    def __init__(self, listed: list[Tool]) -> None:
        super().__init__("echo", log_level="WARNING")
        self.listed = listed

    async def list_tools(self) -> list[Tool]:
        return list(self.listed)


def _key(arguments: Mapping[str, Any]) -> bytes:
    return orjson.dumps(dict(arguments), option=orjson.OPT_SORT_KEYS)


def _with_defaults(signature: inspect.Signature, arguments: Mapping[str, Any]) -> dict[str, Any]:
    bound = signature.bind(**arguments)
    bound.apply_defaults()
    return bound.arguments


def echo_tool(real: Callable[..., Any], answers: list[tuple[dict[str, Any], dict[str, Any]]]) -> Callable[..., Awaitable[CallToolResult]]:
    """An async `real` look-alike that returns, for each argument set, the recorded result.

    The SDK calls a tool with its validated arguments, defaults filled in; the answers are keyed the same way
    (the benchmark's arguments are plain strings, booleans and lists, which validation leaves as they are)."""
    signature = inspect.signature(real)
    replies = {_key(_with_defaults(signature, arguments)): CallToolResult.model_validate(result) for arguments, result in answers}

    @functools.wraps(real)
    async def echo(**arguments: Any) -> CallToolResult:
        return replies[_key(arguments)]

    return echo


def build_echo_server(recorded: Recorded) -> ReplayServer:
    listed = [Tool.model_validate(tool) for tool in recorded.tools if tool["name"] in recorded.answers]
    server = ReplayServer([tool.model_copy(update={"name": ECHO_PREFIX + tool.name}) for tool in listed])
    for registration in bench.tool_registrations():
        name = registration.fn.__name__
        if name in recorded.answers:
            server.add_tool(
                echo_tool(registration.fn, recorded.answers[name]), name=ECHO_PREFIX + name, annotations=registration.annotations
            )
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.echo_server")
    parser.add_argument("--answers", type=Path, required=True, help="what papercode answered, as benchmarks.run records it")
    args = parser.parse_args(argv)
    server = build_echo_server(Recorded.read(args.answers))
    bench.gc_policy()  # the process-wide GC policy `papercode serve` runs with (cli.main), so both sides collect alike
    print("echo server ready", file=sys.stderr, flush=True)
    anyio.run(server.run_stdio_async)
    return 0


if __name__ == "__main__":
    sys.exit(main())
