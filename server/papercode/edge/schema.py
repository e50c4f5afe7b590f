"""What the model reads of a tool in tools/list: the schemas the SDK derives from the signatures, compacted.

Compaction applies to the listed `Tool` objects only (the server's public `list_tools`); the SDK keeps
validating arguments and answers with the pydantic models the schemas came from.
"""

from __future__ import annotations

from typing import Any

from mcp.types import Tool


def compact_tool(tool: Tool) -> Tool:
    """`tool` as listed: its description on one line, its input and output schemas compacted."""
    return tool.model_copy(
        update={
            "description": " ".join((tool.description or "").split()),
            "input_schema": compact_schema(tool.input_schema),
            "output_schema": compact_schema(tool.output_schema, output=True),
        }
    )


def compact_schema(schema: Any, *, output: bool = False) -> Any:
    """What the model sees for a schema: no titles, no `null` branches for optional values, and
    for an output schema no defaults (they describe arguments, not answers).

    Answers never contain nulls (they are omitted), and optional arguments are simply left out,
    so `anyOf [T, null]` says nothing the model needs; dropping it keeps tools/list small.
    """
    if isinstance(schema, list):
        return [compact_schema(item, output=output) for item in schema]
    if not isinstance(schema, dict):
        return schema
    dropped = {"title", "default"} if output else {"title"}
    compact = {key: compact_schema(value, output=output) for key, value in schema.items() if key not in dropped or not _is_keyword(value)}
    if "properties" in schema:  # property names are data, not keywords: keep a property called "title"
        compact["properties"] = {name: compact_schema(value, output=output) for name, value in schema["properties"].items()}
    branches = compact.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        rest = [branch for branch in branches if branch != {"type": "null"}]
        compact.pop("anyOf")
        if compact.get("default", "") is None:
            compact.pop("default")
        compact = {**rest[0], **compact} if len(rest) == 1 else {"anyOf": rest, **compact}
    return compact


def _is_keyword(value: Any) -> bool:
    # `title` and `default` as schema keywords hold plain values, never a nested schema object.
    return not isinstance(value, dict) or "type" not in value
