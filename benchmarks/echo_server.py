"""papercode's stdio server plus, for each tool `T`, a do-nothing `echo_T` registered only by the benchmark.

`echo_T` is a copy of `T`'s registration (same input model, same output model `Annotated[CallToolResult, Model]`,
same annotations, sync or async like `T`) whose function returns a pre-built answer: the exact `CallToolResult` that `T` gave for the same
arguments the first time it was asked. Calling `echo_T` therefore costs what the SDK costs for that answer (argument
validation, the server validating structured content against the output model, serialising it, the client
validating it against the output schema) and nothing of papercode's index work. The benchmark warms every echo once
with each argument set before it times anything.

Run: `python -m benchmarks.echo_server --records DIR [--records DIR ...]` (speaks MCP on stdin/stdout).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
from mcp.server.mcpserver import MCPServer

from papercode.corpus.stages import Corpus
from papercode.edge.app import build_server

ECHO_PREFIX = "echo_"


def _key(arguments: dict[str, Any]) -> bytes:
    return orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)


def add_echo_tools(server: MCPServer) -> list[str]:
    """Register `echo_<tool>` for every tool of `server`; returns the echo names."""
    manager = server._tool_manager
    names = []
    for tool in list(manager.list_tools()):
        if tool.name.startswith(ECHO_PREFIX):
            continue
        real = tool.fn
        answers: dict[bytes, Any] = {}

        def make(real: Any, answers: dict[bytes, Any], is_async: bool) -> Any:
            # Same kind of function as the real tool, so the echo pays the same worker-thread hop.
            async def echo_async(**arguments: Any) -> Any:
                key = _key(arguments)
                if key not in answers:  # first time: build it (untimed warm-up), then only echo it
                    answers[key] = await real(**arguments)
                return answers[key]

            def echo_sync(**arguments: Any) -> Any:
                key = _key(arguments)
                if key not in answers:
                    answers[key] = real(**arguments)
                return answers[key]

            return echo_async if is_async else echo_sync

        echo = make(real, answers, tool.is_async)
        echo_tool = tool.model_copy(update={"name": ECHO_PREFIX + tool.name, "fn": echo})
        manager._tools[echo_tool.name] = echo_tool
        names.append(echo_tool.name)
    return names


def build_echo_server(roots: list[Path]) -> MCPServer:
    corpus = Corpus.load(roots)
    server = build_server(lambda: corpus)
    add_echo_tools(server)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.echo_server")
    parser.add_argument("--records", type=Path, action="append", required=True)
    args = parser.parse_args(argv)
    server = build_echo_server(args.records)
    print("echo server ready", file=sys.stderr, flush=True)
    anyio.run(lambda: server.run_stdio_async())
    return 0


if __name__ == "__main__":
    sys.exit(main())
