"""A snapshot of everything the model sees: tools (names, descriptions, schemas, annotations), server
instructions, prompts, resources and resource templates. A change to any of it is a reviewed diff.

Regenerate after an intended change: `PAPERCODE_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/product/test_snapshot.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from papercode.edge.app import PapercodeServer

pytestmark = pytest.mark.anyio

SNAPSHOT = Path(__file__).parent / "snapshots" / "model_surface.json"
UPDATE = os.environ.get("PAPERCODE_UPDATE_SNAPSHOTS") == "1"
INSTRUCTIONS_LIMIT = 600


def _dump(items: list[Any]) -> list[Any]:
    return [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in items]


async def model_surface(client: Client) -> dict[str, Any]:
    return {
        "server": {"name": client.server_info.name if client.server_info else None, "instructions": client.instructions},
        "tools": _dump((await client.list_tools()).tools),
        "prompts": _dump((await client.list_prompts()).prompts),
        "resources": _dump((await client.list_resources()).resources),
        "resource_templates": _dump((await client.list_resource_templates()).resource_templates),
    }


def render(surface: dict[str, Any]) -> str:
    return json.dumps(surface, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


async def test_model_surface_matches_snapshot(server: PapercodeServer) -> None:
    async with Client(server) as client:
        current = render(await model_surface(client))
    if UPDATE:
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert SNAPSHOT.read_text(encoding="utf-8") == current, (
        "what the model sees changed; review the diff and rerun with PAPERCODE_UPDATE_SNAPSHOTS=1 to accept it"
    )


async def test_both_protocol_eras_show_the_same_surface(server: PapercodeServer) -> None:
    async with Client(server, mode="legacy") as legacy, Client(server) as modern:
        assert legacy.protocol_version != modern.protocol_version
        assert await model_surface(legacy) == await model_surface(modern)


async def test_instructions_are_short_and_give_the_usual_path(client: Client) -> None:
    instructions = client.instructions
    assert instructions is not None
    assert len(instructions) <= INSTRUCTIONS_LIMIT
    path = [instructions.index(tool) for tool in ("search_papers", "get_harvested_code_for_paper", "get_code")]
    assert path == sorted(path)
    assert "inline_ok" in instructions and "CC BY-SA 4.0" in instructions


def test_snapshot_is_sorted_and_indented() -> None:
    text = SNAPSHOT.read_text(encoding="utf-8")
    assert text == render(json.loads(text))
