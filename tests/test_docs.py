"""The README is checked against the code: every flag, environment variable, command, tool, prompt and
resource it should document, and the default limits it quotes."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import pytest
from mcp import Client

from conftest import TOOL_NAMES
from papercode.cli.main import build_parser
from papercode.core.limits import Limits
from papercode.edge.app import PapercodeServer
from papercode.settings import OPTIONS, Settings, options_markdown
from papercode.verified.materialize import OUTCOMES

README_PATH = Path(__file__).parents[1] / "README.md"
README = README_PATH.read_text(encoding="utf-8")


def _mentioned(name: str) -> bool:
    """`name` appears as a whole token (so --watch is not satisfied by --watch-interval)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", README) is not None


def _parsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [("papercode", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found += [(name, sub) for name, sub in action.choices.items()]
    return found


def _flags() -> set[str]:
    return {
        option
        for _, parser in _parsers(build_parser())
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


def test_the_parser_has_flags_to_check() -> None:
    assert {"--records", "--max-file-bytes", "--transport", "--version"} <= _flags()


@pytest.mark.parametrize("flag", sorted(_flags()))
def test_every_flag_is_documented(flag: str) -> None:
    assert _mentioned(flag), f"{flag} is not in README.md"


def test_readme_settings_table_is_rendered_from_the_declared_options() -> None:
    """After changing `settings.OPTIONS`, rewrite the table with PAPERCODE_UPDATE_SNAPSHOTS=1 and review the diff."""
    table = options_markdown()
    if os.environ.get("PAPERCODE_UPDATE_SNAPSHOTS") and table not in README:
        start = README.index("| flag | environment | default | commands | meaning |")
        end = README.index("\n\n", start)
        README_PATH.write_text(README[:start] + table.rstrip("\n") + README[end:], encoding="utf-8")
        pytest.skip("README.md's settings table rewritten; run again to check it")
    assert table in README, (
        "README.md's settings table has drifted from papercode.settings.OPTIONS (PAPERCODE_UPDATE_SNAPSHOTS=1 rewrites it)"
    )


@pytest.mark.parametrize("variable", sorted({option.env for option in OPTIONS if option.env}))
def test_every_environment_variable_is_documented(variable: str) -> None:
    assert _mentioned(variable), f"{variable} is not in README.md"


@pytest.mark.parametrize("command", [name for name, _ in _parsers(build_parser())[1:]])
def test_every_command_is_documented(command: str) -> None:
    assert f"papercode {command}" in README


@pytest.mark.parametrize(
    ("flag", "default"),
    [
        ("--max-file-bytes", Limits().max_file_bytes),
        ("--max-line-bytes", Limits().max_line_bytes),
        ("--max-string-chars", Limits().max_string_chars),
        ("--watch-interval", Settings().watch_interval),
        ("--port", Settings().port),
    ],
)
def test_documented_defaults_match_the_code(flag: str, default: float) -> None:
    (row,) = [line for line in README.splitlines() if line.startswith(f"| `{flag}")]
    shown = str(int(default)) if float(default).is_integer() else str(default)
    assert f"| {shown} " in row


@pytest.mark.anyio
async def test_every_tool_prompt_and_resource_is_documented(server: PapercodeServer) -> None:
    async with Client(server) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        resources = [resource.uri for resource in (await client.list_resources()).resources]
        templates = [template.uri_template for template in (await client.list_resource_templates()).resource_templates]
    assert tools == list(TOOL_NAMES)
    missing = [name for name in tools if f"`{name}(" not in README]  # each tool has a row in the table
    missing += [name for name in [*prompts, *resources, *templates] if name not in README]
    assert not missing, f"not in README.md: {missing}"


@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
def test_every_code_outcome_is_explained(outcome: str) -> None:
    assert f"| `{outcome}` | {OUTCOMES[outcome]} |" in README  # type: ignore[index]


@pytest.mark.anyio
async def test_readme_tool_table_matches_each_tools_input_schema(server: PapercodeServer) -> None:
    """Each row's `name(arg, optional?, with_default=value)` is the tool's schema: names, order, required, defaults."""
    rows = dict(re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", README, re.MULTILINE))
    async with Client(server) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert set(rows) == set(tools)
    for name, signature in rows.items():
        schema = tools[name]
        documented = [part.strip() for part in signature.split(",") if part.strip()]
        assert [part.split("=")[0].rstrip("?") for part in documented] == list(schema.get("properties", {})), name
        for part in documented:
            argument = part.split("=")[0].rstrip("?")
            optional = part.endswith("?") or "=" in part
            assert optional is (argument not in schema.get("required", [])), (name, part)
            if "=" in part:
                assert part.split("=", 1)[1] == json.dumps(schema["properties"][argument]["default"]), (name, part)
