"""The MCP Apps views at the edge (issue #33): the extension declared in both protocol eras, the two `ui://` resources,
the `_meta.ui` entry of get_leaderboard and get_paper, the same answers as without views, `--no-views`, and how a view's
document is made from its files (the vendored library's last statement turned into a binding; nothing inlined that
would end its element early; values inserted as text). The views in a browser: tests/product/test_app_views.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.types import TextResourceContents

from papercode.core.records import KNOWN_STATUSES, STATUS_MEANINGS
from papercode.corpus.stages import Corpus
from papercode.edge import views
from papercode.edge.app import build_server
from papercode.settings import settings_for
from tests.support.records import BERT_MOUTH, BERTS_ICL

pytestmark = pytest.mark.anyio

VIEW_BYTES = 700_000  # a view's resource at most (issue #33)
VIEWS_OF_TOOLS = {"get_leaderboard": "ui://papercode/leaderboard", "get_paper": "ui://papercode/paper"}
APPS_DIR = views.APPS_DIR
OWN_FILES = sorted(path for path in APPS_DIR.glob("*.*") if path.suffix in (".html", ".css", ".js"))


async def test_the_server_declares_the_apps_extension_in_both_eras(corpus: Corpus, mode: str) -> None:
    async with Client(build_server(lambda: corpus), mode=mode) as client:
        capabilities = client.server_capabilities
    assert capabilities is not None and capabilities.extensions == {EXTENSION_ID: {}}


async def test_get_leaderboard_and_get_paper_name_their_views_and_no_other_tool_names_one(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert {tool.name: tool.meta for tool in tools if tool.meta} == {
        name: {"ui": {"resourceUri": uri}} for name, uri in VIEWS_OF_TOOLS.items()
    }


async def test_each_view_is_an_app_resource_under_its_bound(client: Client) -> None:
    listed = {resource.uri: resource for resource in (await client.list_resources()).resources if str(resource.uri).startswith("ui://")}
    assert sorted(listed) == sorted(VIEWS_OF_TOOLS.values())
    for uri, resource in listed.items():
        assert resource.mime_type == APP_MIME_TYPE and resource.title and resource.description
        (content,) = (await client.read_resource(uri)).contents
        assert isinstance(content, TextResourceContents) and content.mime_type == APP_MIME_TYPE
        assert content.meta == {"ui": {"prefersBorder": True}}  # no `csp`: the host's restrictive default applies
        assert content.text.startswith("<!doctype html>") and len(content.text.encode()) < VIEW_BYTES, (uri, len(content.text.encode()))


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_paper", {"paper": BERT_MOUTH}),
    ("get_paper", {"paper": [BERTS_ICL, BERT_MOUTH]}),
    ("get_harvested_code_for_paper", {"arxiv_id": BERT_MOUTH}),
    ("search_papers", {"query": "bert"}),
    ("get_code", {"code_sha256": "2a890c3f8ff19f47"}),
    ("get_leaderboard", {"task": "semantic segmentation"}),  # no archive: the same error either way
]


async def test_every_client_gets_the_same_answers_with_views_as_without(corpus: Corpus, mode: str) -> None:
    async with (
        Client(build_server(lambda: corpus), mode=mode) as with_views,
        Client(build_server(lambda: corpus, views=False), mode=mode) as plain,
    ):
        for tool, arguments in CALLS:
            shown, bare = await with_views.call_tool(tool, arguments), await plain.call_tool(tool, arguments)
            assert shown.model_dump() == bare.model_dump(), tool
        listed, bare_listed = (await with_views.list_tools()).tools, (await plain.list_tools()).tools
        assert [tool.model_copy(update={"meta": None}) for tool in listed] == bare_listed


async def test_with_no_views_nothing_names_or_serves_a_view(corpus: Corpus, mode: str) -> None:
    async with Client(build_server(lambda: corpus, views=False), mode=mode) as client:
        assert client.server_capabilities is not None and not client.server_capabilities.extensions
        assert all(tool.meta is None for tool in (await client.list_tools()).tools)
        assert not [resource for resource in (await client.list_resources()).resources if str(resource.uri).startswith("ui://")]


def test_the_no_views_setting_reads_its_flag_and_variable() -> None:
    assert settings_for("serve", {}, {}).no_views is False
    assert settings_for("serve", {"--no-views": True}, {}).no_views is True
    assert settings_for("serve", {}, {"PAPERCODE_NO_VIEWS": "1"}).no_views is True


# -- a view's document ----------------------------------------------------------------------------------------------


def test_the_library_ends_in_one_binding_of_the_names_the_views_use() -> None:
    library = views.LIBRARY.read_text(encoding="utf-8")
    script = views.library_script(library)
    assert library.rstrip().endswith("as App};") and "export{" not in script[-2_000:]
    binding = script.rstrip().splitlines()[-1]
    assert re.fullmatch(r"const ExtApps = Object\.freeze\(\{App: \w+, applyDocumentTheme: \w+, applyHostStyleVariables: \w+\}\);", binding)
    assert script.startswith(library[: library.rindex("export{")])  # the rest of the library, unchanged


@pytest.mark.parametrize(
    ("library", "problem"),
    [
        ("var a=1;", "does not end with an export statement"),
        ("var a=1;export{a as App};\nconsole.log(1);", "does not end with an export statement"),
        ("var a=1,b=2;export{a as App,b as applyDocumentTheme};", "does not export applyHostStyleVariables"),
    ],
)
def test_a_library_of_another_shape_is_refused(library: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        views.library_script(library)


def test_a_script_that_would_end_its_inline_element_early_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in OWN_FILES:
        (tmp_path / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "paper.js").write_text('const closing = "</script><script>alert(1)</script>";\n', encoding="utf-8")
    monkeypatch.setattr(views, "APPS_DIR", tmp_path)
    views.view_html.cache_clear()
    try:
        with pytest.raises(ValueError, match="would end its inline element early"):
            views.view_html("paper")
    finally:
        views.view_html.cache_clear()


@pytest.mark.parametrize("view", views.VIEWS, ids=lambda view: view.name)
def test_a_view_is_one_self_contained_document(view: views.View) -> None:
    html = views.view_html(view.name)
    assert html.count("<script") == 1 and html.count("<style") == 1
    assert views.STYLE_SLOT not in html and views.SCRIPT_SLOT not in html
    # Nothing to fetch: no external script, stylesheet, image, font, frame or import.
    assert not re.search(
        r"<(?:link|img|iframe|object|embed)\b|\bsrc=|@import|url\(",
        html.replace(views.library_script(views.LIBRARY.read_text(encoding="utf-8")), ""),
    )


@pytest.mark.parametrize("path", OWN_FILES, ids=lambda path: path.name)
def test_the_views_insert_values_as_text_never_as_html(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert not re.search(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|\beval\(|new Function", source
    )


@pytest.mark.parametrize("view", views.VIEWS, ids=lambda view: view.name)
def test_a_views_statuses_and_their_meanings_are_the_records_own(view: views.View) -> None:
    declared = re.findall(r"^const STATUSES = Object\.freeze\((.*)\);$", views.view_html(view.name), re.MULTILINE)
    assert [json.loads(pairs) for pairs in declared] == [[[status, meaning] for status, meaning in STATUS_MEANINGS.items()]]
    assert list(STATUS_MEANINGS) == list(KNOWN_STATUSES) and all(STATUS_MEANINGS.values())
    for path in OWN_FILES:  # declared once, from Python: no file of the views' keeps a copy of the words
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"\bSTATUSES\s*=", source), path.name
        assert not [meaning for meaning in STATUS_MEANINGS.values() if meaning in source], path.name


def test_the_vendored_library_is_pinned_with_its_licences() -> None:
    vendor = views.LIBRARY.parent
    assert vendor.name == f"ext-apps-{_pinned_ext_apps()}"
    assert {path.name for path in vendor.iterdir()} == {"app-with-deps.js", "LICENSE", "LICENSE.zod", "NOTICE"}
    assert "MIT License" in (vendor / "LICENSE").read_text(encoding="utf-8")


def _pinned_ext_apps() -> str:
    """The version of @modelcontextprotocol/ext-apps the test host's lockfile pins."""
    lock = orjson.loads((Path(__file__).resolve().parents[1] / "product" / "apps" / "package-lock.json").read_bytes())
    return str(lock["packages"]["node_modules/@modelcontextprotocol/ext-apps"]["version"])
