"""What the model reads of a tool in tools/list: the schemas the SDK derives from the signatures, compacted.

Compaction applies to the listed `Tool` objects only (the server's public `list_tools`); the SDK keeps
validating arguments and answers with the pydantic models the schemas came from.
"""

from __future__ import annotations

from typing import Any

from mcp.types import Tool


def compact_tool(tool: Tool) -> Tool:
    """`tool` as listed: its description on one line, its input and output schemas compacted; the input schema closed
    (`additionalProperties: false`: a call with an argument the tool does not take is refused, `guesses`), so a host
    that validates catches a misnamed argument first."""
    return tool.model_copy(
        update={
            "description": " ".join((tool.description or "").split()),
            "input_schema": compact_schema(tool.input_schema) | {"additionalProperties": False},
            "output_schema": compact_schema(rooted(tool.output_schema), output=True),
        }
    )


def rooted(schema: Any) -> Any:
    """`schema` without a second copy of its root. The schema of a recursive answer model (a list answer whose
    entries have its own shape) has the model's definition twice: the SDK copies it onto the root (an output schema
    needs an object root) and keeps it in `$defs`, where the entries refer to it; here they refer to the root (`#`)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
        return schema
    root = {key: value for key, value in schema.items() if key != "$defs"}
    for name, definition in schema["$defs"].items():
        if definition == root:
            rest = {other: value for other, value in schema["$defs"].items() if other != name}
            return _refer(({"$defs": rest} if rest else {}) | root, f"#/$defs/{name}", "#")
    return schema


def _refer(schema: Any, old: str, new: str) -> Any:
    """`schema` with every `$ref` to `old` made one to `new`."""
    if isinstance(schema, list):
        return [_refer(item, old, new) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: new if key == "$ref" and value == old else _refer(value, old, new) for key, value in schema.items()}


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
