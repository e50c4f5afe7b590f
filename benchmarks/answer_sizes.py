"""`python -m benchmarks answer-sizes`: the bytes of every default answer on the bundled records (issue #25).

What an agent pays for each answer is its text block (hosts put it in the model's context; `structuredContent` is
the same JSON): this measures it for every tool's default answer, each resource and each prompt, and what the model
reads of the tools (tools/list), through an in-memory MCP client on `build_server`, offline with no code store.
Sizes are bytes, deterministic for a given commit: the machine does not matter.

`--json FILE` writes the sizes; `--before FILE` (the same, written at another commit) adds a "before" column. To
measure another commit, export it (`git archive <commit> | tar -x -C <dir>`) and run this module with that export's
`server/` first on `PYTHONPATH` and this checkout's root after it, from a directory outside both. Calls that commit
does not understand (the lists of issue #25) show as "—".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import orjson

from papercode import bench

# (what is measured, how: "tool", "resource" or "prompt", its name or URI, its arguments)
Call = tuple[str, str, str, dict[str, Any]]

BERT_MOUTH, BERTS_ICL = "1902.04094", "2406.04823"
CALLS: list[Call] = [
    *(
        (f"get_harvested_code_for_paper {paper}", "tool", "get_harvested_code_for_paper", {"arxiv_id": paper})
        for paper in (BERTS_ICL, BERT_MOUTH)
    ),
    *(
        (f"list_samples_by_status status={status}", "tool", "list_samples_by_status", {"status": status})
        for status in ("ran", "unverified", "ran_honours", "ran_honours,ran,ran_draft_wrong,ran_violates,unverified")
    ),
    ('search_papers query=""', "tool", "search_papers", {"query": ""}),
    ('search_papers query="bert generative"', "tool", "search_papers", {"query": "bert generative"}),
    *((f"get_paper {paper}", "tool", "get_paper", {"paper": paper}) for paper in (BERT_MOUTH, BERTS_ICL)),
    *(
        (f"find_papers_for_repo {repo}", "tool", "find_papers_for_repo", {"repo": repo})
        for repo in ("nyu-dl/bert-gen", "ltgoslo/bert-in-context")
    ),
    ("get_code 2a890c3f8ff19f47 (not stored)", "tool", "get_code", {"code_sha256": "2a890c3f8ff19f47"}),
    ("get_code 013a68b0ac4716fe (pointer only)", "tool", "get_code", {"code_sha256": "013a68b0ac4716fe"}),
    ("corpus_stats", "tool", "corpus_stats", {}),
    (f"get_paper [{BERT_MOUTH}, {BERTS_ICL}]", "tool", "get_paper", {"paper": [BERT_MOUTH, BERTS_ICL]}),
    ("get_code [2a890c3f8ff19f47, 013a68b0ac4716fe]", "tool", "get_code", {"code_sha256": ["2a890c3f8ff19f47", "013a68b0ac4716fe"]}),
    *((f"resource {uri}", "resource", uri, {}) for uri in (f"paper://{BERT_MOUTH}", f"paper://{BERTS_ICL}", "code://2a890c3f8ff19f47")),
    *((f"resource {uri}", "resource", uri, {}) for uri in ("corpus://stats", "corpus://load-report")),
    *(
        (f"prompt {name} {paper}", "prompt", name, {"arxiv_id": paper})
        for name in ("implement_paper", "compare_implementations")
        for paper in (BERT_MOUTH, BERTS_ICL)
    ),
]
TOOLS_LIST = "tools/list (all of it)"
TOOLS_FOR_MODEL = "tools/list: name, title, description, input schema"


def tool_definitions(tools: list[dict[str, Any]]) -> bytes:
    """What hosts hand the model of each tool: its name, title, description and input schema (not its output schema
    or annotations)."""
    keys = ("name", "title", "description", "inputSchema")
    return orjson.dumps([{key: tool[key] for key in keys if key in tool} for tool in tools])


async def measure() -> dict[str, int | None]:
    """Bytes of each answer in `CALLS` (None: the server refused it), and of tools/list."""
    from mcp import Client, MCPError

    corpus = bench.Corpus.load([bench.bundled_records_dir()])
    sizes: dict[str, int | None] = {}
    async with Client(bench.build_server(lambda: corpus)) as client:
        tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in (await client.list_tools()).tools]
        sizes[TOOLS_LIST] = len(orjson.dumps(tools))
        sizes[TOOLS_FOR_MODEL] = len(tool_definitions(tools))
        for label, kind, name, arguments in CALLS:
            try:
                if kind == "tool":
                    result = await client.call_tool(name, arguments)
                    texts = [] if result.is_error else [block.text for block in result.content if block.type == "text"]
                elif kind == "resource":
                    texts = [getattr(content, "text", "") for content in (await client.read_resource(name)).contents]
                else:
                    prompt = await client.get_prompt(name, arguments)
                    texts = [message.content.text for message in prompt.messages if message.content.type == "text"]
            except MCPError:
                texts = []
            sizes[label] = sum(len(text.encode()) for text in texts) if texts else None
    return sizes


def table(after: dict[str, int | None], before: dict[str, int | None] | None = None) -> str:
    """The sizes as a Markdown table (with a "before" column and the change when `before` is given)."""

    def cell(value: int | None) -> str:
        return "—" if value is None else f"{value:,}"

    if before is None:
        lines = ["| answer (text block) | bytes |", "|---|---:|"]
        lines += [f"| {label} | {cell(size)} |" for label, size in after.items()]
        return "\n".join(lines)
    lines = ["| answer (text block) | before (bytes) | after (bytes) | change |", "|---|---:|---:|---:|"]
    for label, size in after.items():
        old = before.get(label)
        change = "" if size is None or old is None else f"{(size - old) / old:+.0%}"
        lines.append(f"| {label} | {cell(old)} | {cell(size)} | {change} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.answer_sizes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the sizes here")
    parser.add_argument("--before", type=Path, help="sizes written by --json at another commit: adds a before column")
    args = parser.parse_args(argv)
    sizes = asyncio.run(measure())
    if args.json:
        args.json.write_text(json.dumps(sizes, indent=2) + "\n")
    before = json.loads(args.before.read_text()) if args.before else None
    sys.stdout.write(table(sizes, before) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
