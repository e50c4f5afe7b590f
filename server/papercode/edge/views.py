"""The MCP Apps views (`io.modelcontextprotocol/ui`): a leaderboard chart beside get_leaderboard's answer and a paper
card beside get_paper's, for the person next to the agent. The answers do not change: a host that renders views reads
the `ui://` resource a tool names in `_meta.ui.resourceUri` and hands the view the same answer the model reads.

A view is one HTML document, built at its first read from the files in `apps/` and kept: the page (`view.html`), the
shared stylesheet, and one inline module script, made of the vendored view side of `@modelcontextprotocol/ext-apps`
(`apps/vendor/`, pinned), the constants the views share with papercode's Python (`constants_script`: the statuses and
their meanings, from `core.records`), papercode's shared view code (`apps/view.js`) and the view's own
(`apps/<name>.js`). The library is an ES module that ends by exporting its names under minified local ones;
`library_script` turns that last statement into one binding, `ExtApps`, so the code after it can use them
(docs/decisions/views.md says why this, rather than a bundler). Nothing in a view loads from the network: it runs under
the restrictive policy a host gives a view that declares no origin. Reading a view never waits for the corpus
(`PapercodeServer.read_resource`).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mcp.server.apps import APP_MIME_TYPE, Apps
from mcp.server.mcpserver.resources import FunctionResource

from papercode.core.records import STATUS_MEANINGS

APPS_DIR: Final = Path(__file__).parent / "apps"
LIBRARY: Final = APPS_DIR / "vendor" / "ext-apps-2.0.4" / "app-with-deps.js"
# What the views take from the library, bound as `ExtApps.<name>`.
LIBRARY_NAMES: Final = ("App", "applyDocumentTheme", "applyHostStyleVariables")
TITLE_SLOT: Final = "<!-- papercode: title -->"
WAITING_SLOT: Final = "<!-- papercode: waiting -->"
STYLE_SLOT: Final = "<!-- papercode: style -->"
SCRIPT_SLOT: Final = "<!-- papercode: script -->"
_FINAL_EXPORT = re.compile(r"export\s*\{(?P<names>[^{}]*)\}\s*;?\s*$")
# An inline script ends at the first `</script`, and `<!--` changes how the HTML parser reads what follows.
_CLOSES_INLINE = re.compile(r"</(?:script|style)|<!--", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class View:
    uri: str
    name: str  # its script: apps/<name>.js
    tool: str  # the tool whose answer it shows
    title: str
    description: str
    waiting: str  # what it says until the host sends the answer


VIEWS: Final = (
    View(
        "ui://papercode/leaderboard",
        "leaderboard",
        "get_leaderboard",
        "Leaderboard chart",
        "A benchmark's results over time with the state of the art, or a task's benchmarks",
        "Waiting for the leaderboard…",
    ),
    View(
        "ui://papercode/paper",
        "paper",
        "get_paper",
        "Paper card",
        "A paper, its repositories and its harvested code",
        "Waiting for the paper…",
    ),
)
_BY_NAME: Final = {view.name: view for view in VIEWS}


def tool_meta() -> dict[str, dict[str, Any]]:
    """Each tool with a view, and the `_meta` entry that names it (the same for every client: one without the
    extension ignores it)."""
    return {view.tool: {"ui": {"resourceUri": view.uri}} for view in VIEWS}


def views_extension() -> Apps:
    """The MCP Apps extension with the views as its resources; the server advertises it in its capabilities."""
    apps = Apps()
    for view in VIEWS:
        apps.add_resource(
            FunctionResource(
                uri=view.uri,
                name=view.name,
                title=view.title,
                description=view.description,
                mime_type=APP_MIME_TYPE,
                meta={"ui": {"prefersBorder": True}},
                fn=functools.partial(view_html, view.name),  # a plain function: the SDK reads it in a worker thread
            )
        )
    return apps


@functools.cache
def view_html(name: str) -> str:
    """The view's document: the page with its title, the stylesheet and one module script inlined."""
    view, page = _BY_NAME[name], _read("view.html")
    style, own = _read("view.css"), "\n".join((constants_script(), _read("view.js"), _read(f"{name}.js")))
    for part, text in (("stylesheet", style), ("script", own)):
        _check_inline(text, f"the {name} view's {part}")
    filled = {
        TITLE_SLOT: view.title,
        WAITING_SLOT: view.waiting,
        STYLE_SLOT: f"<style>\n{style}</style>",
        SCRIPT_SLOT: f'<script type="module">\n{_library()}\n{own}</script>',
    }
    for slot, text in filled.items():
        if page.count(slot) != 1:
            raise ValueError(f"apps/view.html must hold {slot} once")
        page = page.replace(slot, text)
    return page


@functools.cache
def _library() -> str:
    script = library_script(LIBRARY.read_text(encoding="utf-8"))
    _check_inline(script, "the library")
    return script


def constants_script() -> str:
    """The constants the views share with papercode's Python, declared in JavaScript ahead of `view.js`: `STATUSES`, the
    samples' statuses best first, each with what it means (one home for those words: `core.records.STATUS_MEANINGS`)."""
    return f"const STATUSES = Object.freeze({json.dumps(list(STATUS_MEANINGS.items()))});"


def _check_inline(text: str, what: str) -> None:
    if _CLOSES_INLINE.search(text):
        raise ValueError(f"{what} would end its inline element early: {_CLOSES_INLINE.pattern}")


def library_script(library: str) -> str:
    """The library's module text with its final `export{local as Name, …}` replaced by `const ExtApps = {Name: local,
    …}` for the names the views use (`LIBRARY_NAMES`), so it can share one inline script with the code after it."""
    found = _FINAL_EXPORT.search(library)
    if found is None:
        raise ValueError("the library does not end with an export statement: is it the pinned app-with-deps.js?")
    exported: dict[str, str] = {}
    for specifier in found["names"].split(","):
        local, _, name = (part.strip() for part in specifier.partition(" as "))
        exported[name or local] = local
    missing = [name for name in LIBRARY_NAMES if name not in exported]
    if missing:
        raise ValueError(f"the library does not export {', '.join(missing)}")
    binding = ", ".join(f"{name}: {exported[name]}" for name in LIBRARY_NAMES)
    return f"{library[: found.start()]}\nconst ExtApps = Object.freeze({{{binding}}});\n"


def _read(name: str) -> str:
    return (APPS_DIR / name).read_text(encoding="utf-8")
