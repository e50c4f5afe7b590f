"""The documentation is checked against the code and against itself.

- Everything a user can pass or call is documented somewhere in the README or `docs/`: every flag, environment
  variable, command, tool, prompt and resource; each tool's signature (in the README's table and in docs/tools.md) is
  its input schema, and the defaults the settings page quotes are the code's.
- Generated sections (`<!-- generated: NAME -->` … `<!-- end generated: NAME -->`) are what their generator writes;
  `PAPERCODE_UPDATE_SNAPSHOTS=1` rewrites them. BENCHMARKS.md is what `python -m benchmarks report` writes from the
  runs committed under `benchmarks/results/`.
- Every relative link leads to a file, and a heading when it names one; every page of `docs/` is reachable from the
  README; the README and BENCHMARKS.md stay under 15,000 bytes; no file names a path of a developer's machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp import Client

from benchmarks import report
from papercode.cli.main import build_parser
from papercode.core.limits import Limits
from papercode.edge.app import PapercodeServer
from papercode.settings import OPTIONS, Settings, options_markdown
from papercode.verified.materialize import OUTCOMES
from tests.support import generated
from tests.support.mcp import TOOL_NAMES

REPO = Path(__file__).resolve().parents[2]
README_PATH = REPO / "README.md"
DOCS = REPO / "docs"
USER_PAGES = [README_PATH, *sorted(DOCS.rglob("*.md"))]  # what a user reads
# Every Markdown file whose links are checked: the user's pages, and those beside the code.
LINKED_PAGES = [
    *USER_PAGES,
    REPO / "ARCHITECTURE.md",
    REPO / "BENCHMARKS.md",
    *sorted(path for path in REPO.glob("*/README.md") if not path.parent.name.startswith(".")),  # not a tool's cache
    REPO / "benchmarks/results/README.md",
]
MAX_PAGE_BYTES = 15_000  # the README and BENCHMARKS.md: a front page each, not a manual or a log


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


DOCUMENTED = "\n".join(_text(page) for page in USER_PAGES)
README = _text(README_PATH)
TOOLS_PAGE = _text(DOCS / "tools.md")


def _mentioned(name: str, text: str = DOCUMENTED) -> bool:
    """`name` appears as a whole token (so --watch is not satisfied by --watch-interval)."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


# -- everything a user can pass or call ------------------------------------------------------------------------------


def _parsers(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser, by its name (`serve`, `archive build`), and the top-level parser as `papercode`."""
    found = [(prefix or "papercode", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _parsers(sub, f"{prefix} {name}".strip())
    return found


def _flags() -> set[str]:
    return {
        option
        for _, parser in _parsers(build_parser())
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    }


def test_the_parser_has_flags_and_commands_to_check() -> None:
    assert {"--records", "--max-file-bytes", "--transport", "--version", "--out", "--snapshot"} <= _flags()
    assert {"serve", "archive build", "archive verify"} <= {name for name, _ in _parsers(build_parser())}


@pytest.mark.parametrize("command", ["archive build", "archive fetch", "archive verify"])
def test_the_archive_commands_take_their_flags_from_the_settings_table(command: str) -> None:
    """`papercode archive`'s flags are declared in `settings.OPTIONS`, so docs/settings.md lists them."""
    (parser,) = [parser for name, parser in _parsers(build_parser()) if name == command]
    flags = {option for action in parser._actions for option in action.option_strings if option.startswith("--") and option != "--help"}
    declared = {option.flag for option in OPTIONS if command in option.commands}
    assert flags and flags == declared
    listed = [line for line in _text(DOCS / "settings.md").splitlines() if line.startswith("| `--")]
    assert all(any(line.startswith(f"| `{flag}") and command in line for line in listed) for flag in flags)


@pytest.mark.parametrize("flag", sorted(_flags()))
def test_every_flag_is_documented(flag: str) -> None:
    assert _mentioned(flag), f"{flag} is not in the README or docs/"


@pytest.mark.parametrize("variable", sorted({option.env for option in OPTIONS if option.env}))
def test_every_environment_variable_is_documented(variable: str) -> None:
    assert _mentioned(variable), f"{variable} is not in the README or docs/"


@pytest.mark.parametrize("command", [name for name, _ in _parsers(build_parser())[1:]])
def test_every_command_is_documented(command: str) -> None:
    assert f"papercode {command}" in DOCUMENTED, f"papercode {command} is not in the README or docs/"


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
    (row,) = [line for line in _text(DOCS / "settings.md").splitlines() if line.startswith(f"| `{flag}")]
    shown = str(int(default)) if float(default).is_integer() else str(default)
    assert f"| {shown} " in row


async def _surface(server: PapercodeServer) -> tuple[dict[str, dict[str, object]], list[str]]:
    """Each tool's input schema, by name; and every prompt, resource and resource template's name."""
    async with Client(server) as client:
        tools = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        named = [prompt.name for prompt in (await client.list_prompts()).prompts]
        named += [resource.uri for resource in (await client.list_resources()).resources]
        named += [template.uri_template for template in (await client.list_resource_templates()).resource_templates]
    return tools, named


@pytest.mark.anyio
async def test_every_tool_prompt_and_resource_is_documented(server: PapercodeServer) -> None:
    tools, named = await _surface(server)
    assert list(tools) == list(TOOL_NAMES)
    missing = [f"README.md's table: {name}" for name in tools if f"| `{name}(" not in README]
    missing += [f"docs/tools.md's headings: {name}" for name in tools if f"### `{name}(" not in TOOLS_PAGE]
    missing += [f"docs/tools.md: {name}" for name in named if name not in TOOLS_PAGE]
    assert not missing, f"not documented: {missing}"


def _signatures(text: str) -> dict[str, str]:
    """Each tool's documented signature: a README table row `| \\`name(args)\\` |` or a heading `### \\`name(args)\\``."""
    found = re.findall(r"^(?:\| |### )`(\w+)\(([^)]*)\)`", text, re.MULTILINE)
    names = [name for name, _ in found]
    assert len(names) == len(set(names)), f"a tool is documented twice: {names}"
    return dict(found)


@pytest.mark.anyio
@pytest.mark.parametrize("page", ["README.md", "docs/tools.md"])
async def test_each_documented_signature_is_the_tools_input_schema(server: PapercodeServer, page: str) -> None:
    """`name(arg, optional?, with_default=value)` is the tool's schema: names, order, required, defaults."""
    signatures = _signatures(_text(REPO / page))
    tools, _ = await _surface(server)
    assert set(signatures) == set(tools), page
    for name, signature in signatures.items():
        schema = tools[name]
        properties = schema.get("properties", {})
        assert isinstance(properties, dict)
        required = schema.get("required", [])
        assert isinstance(required, list)
        documented = [part.strip() for part in signature.split(",") if part.strip()]
        assert [part.split("=")[0].rstrip("?") for part in documented] == list(properties), (page, name)
        for part in documented:
            argument = part.split("=")[0].rstrip("?")
            optional = part.endswith("?") or "=" in part
            assert optional is (argument not in required), (page, name, part)
            if "=" in part:
                assert part.split("=", 1)[1] == json.dumps(properties[argument]["default"]), (page, name, part)


# -- generated sections ----------------------------------------------------------------------------------------------


def _outcomes_markdown() -> str:
    rows = ["| outcome | meaning |", "|---|---|"]
    return "\n".join([*rows, *(f"| `{outcome}` | {meaning} |" for outcome, meaning in OUTCOMES.items())]) + "\n"


# name -> what writes it (`generated.SECTIONS` names the page of each)
GENERATED: dict[str, Callable[[], str]] = {
    "settings": options_markdown,
    "outcomes": _outcomes_markdown,
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_each_generated_section_is_what_its_generator_writes(name: str) -> None:
    """After changing what a section is generated from, rewrite it with PAPERCODE_UPDATE_SNAPSHOTS=1 and review the diff."""
    generated.hold(name, GENERATED[name]())


@pytest.mark.parametrize("path", LINKED_PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_every_generated_section_is_known_and_closed(path: Path) -> None:
    text = _prose(_text(path))  # a marker in a code span is prose about markers
    opened = re.findall(r"<!-- generated: ([\w-]+) -->", text)
    closed = re.findall(r"<!-- end generated: ([\w-]+) -->", text)
    assert sorted(opened) == sorted(closed) == sorted(generated.sections(text)), f"{path.name}: a generated section is not closed"
    where = str(path.relative_to(REPO))
    unknown = [name for name in opened if generated.SECTIONS.get(name, ("",))[0] != where]
    assert not unknown, f"{where}: no generator writes the sections {unknown} there (tests/support/generated.py SECTIONS)"


def test_benchmarks_md_is_what_the_report_writes_from_the_saved_runs() -> None:
    written = report.report(report.load_runs(report.RESULTS))
    assert _text(REPO / "BENCHMARKS.md") == written, "BENCHMARKS.md is not what the saved runs give: run python -m benchmarks report"


def test_every_saved_run_is_cited() -> None:
    """A run no figure comes from any more is history: git keeps it, benchmarks/results does not."""
    text = _text(REPO / "BENCHMARKS.md")
    uncited = [path.name for path in sorted(report.RESULTS.glob("*.json")) if f"`{path.name}`" not in text]
    assert not uncited, f"benchmarks/results holds runs BENCHMARKS.md does not cite (remove them): {uncited}"


# -- links, reachability, sizes ----------------------------------------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """`text` without fenced code blocks and code spans, where brackets are code, not links."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE))


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", _text(path), flags=re.DOTALL | re.MULTILINE), re.MULTILINE):
        anchor = _anchor(heading)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def _links(path: Path) -> Iterator[tuple[str, Path, str]]:
    """(link as written, the file it names, the anchor it names) for each relative link of `path`."""
    for target in _LINK.findall(_prose(_text(path))):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: not checked (no network in tests)
            continue
        file, _, anchor = target.partition("#")
        yield target, (path.parent / file).resolve() if file else path, anchor


@pytest.mark.parametrize("path", LINKED_PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file_and_heading(path: Path) -> None:
    broken = []
    for written, target, anchor in _links(path):
        if not target.exists():
            broken.append(f"{written}: no such file")
        elif anchor and (target.suffix != ".md" or anchor not in _anchors(target)):
            broken.append(f"{written}: no heading #{anchor} in {target.relative_to(REPO)}")
    assert not broken, f"{path.relative_to(REPO)}: {broken}"


def test_every_page_of_docs_is_reachable_from_the_readme() -> None:
    reached, todo = {README_PATH}, [README_PATH]
    while todo:
        for _, target, _ in _links(todo.pop()):
            if target.suffix == ".md" and target.is_relative_to(REPO) and target.exists() and target not in reached:
                reached.add(target)
                todo.append(target)
    unreached = [str(page.relative_to(REPO)) for page in USER_PAGES if page not in reached]
    assert not unreached, f"no chain of links from README.md reaches {unreached}"


@pytest.mark.parametrize("name", ["README.md", "BENCHMARKS.md"])
def test_the_front_pages_stay_small(name: str) -> None:
    size = len((REPO / name).read_bytes())
    assert size <= MAX_PAGE_BYTES, f"{name} is {size:,} bytes, over {MAX_PAGE_BYTES:,}: move the detail to a page of docs/"


# A time next to a test command ("about a minute", "30 s", "two minutes more").
_A_DURATION = re.compile(r"\b(?:\d+(?:\.\d+)?\s*(?:s|min|minutes?|seconds?)|(?:a|one|two|three) minutes?)\b")


def test_the_test_suites_times_are_given_once_in_development_md() -> None:
    """Times written beside the commands in several pages drift apart: the commands carry none, and docs/development.md
    gives the measured ones in one paragraph."""
    beside = [
        f"{page.relative_to(REPO)}: {line.strip()}"
        for page in USER_PAGES
        for line in _text(page).splitlines()
        if "pytest" in line and _A_DURATION.search(line.partition("#")[2])
    ]
    assert not beside, f"a test command with a time beside it: {beside}"
    development = _text(DOCS / "development.md")
    assert development.count("How long they take") == 1 and "/usr/bin/time" in development


# -- no path of a developer's machine --------------------------------------------------------------------------------

# A developer's home or work tree (the docs write `/path/to/papercode` for a checkout).
_MACHINE_PATH = re.compile(r"/(?:work|Users|root|home)/")
_NOT_OURS = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "dist"}
_NOT_OURS |= {".wheel-venv", ".tools-venv", "out"}


def _repository_files() -> Iterator[Path]:
    """Every file of the checkout but git's, installed or generated ones, and this file (it holds the examples the
    check is tested on)."""
    for directory, subdirectories, files in os.walk(REPO):
        subdirectories[:] = [name for name in subdirectories if name not in _NOT_OURS and not name.endswith(".egg-info")]
        paths = (Path(directory) / name for name in files if name not in _NOT_OURS)
        yield from (path for path in paths if path != Path(__file__).resolve())


def test_no_file_names_a_path_of_a_developers_machine() -> None:
    found = []
    for path in _repository_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # an image
            continue
        found += [f"{path.relative_to(REPO)}: {match.group()}" for match in _MACHINE_PATH.finditer(text)]
    assert not found, f"paths of a machine nobody else has: {found}"


def test_the_machine_path_check_finds_one() -> None:
    assert _MACHINE_PATH.search("see /home/dev/papercode/x") and _MACHINE_PATH.search("--data /Users/me/bench")
    assert not _MACHINE_PATH.search('"command": "/path/to/papercode/.venv/bin/papercode"')
