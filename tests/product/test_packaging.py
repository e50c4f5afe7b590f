"""What the package says of itself, where registries and hosts read it: its description (the MCP Registry takes at
most 100 characters), and the server's title and icon (hosts show them beside its name)."""

from __future__ import annotations

import base64
import tomllib
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from mcp import Client

from papercode.edge.app import PapercodeServer

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"
REGISTRY_DESCRIPTION_CHARS = 100
ICON_BYTES = 1_024  # one small icon: it travels in every initialize answer


def test_the_package_description_fits_the_mcp_registry() -> None:
    description = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["description"]
    assert 0 < len(description) <= REGISTRY_DESCRIPTION_CHARS, len(description)


@pytest.mark.anyio
async def test_the_server_has_a_title_and_one_small_svg_icon(server: PapercodeServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        info = client.server_info
    assert info is not None and info.name == "papercode" and info.title == "papercode"
    (icon,) = info.icons or []
    assert icon.mime_type == "image/svg+xml" and icon.sizes == ["any"]
    scheme, _, data = icon.src.partition(",")
    assert scheme == "data:image/svg+xml;base64" and len(icon.src) <= ICON_BYTES
    svg = ElementTree.fromstring(base64.b64decode(data, validate=True))
    assert svg.tag == "{http://www.w3.org/2000/svg}svg" and svg.get("viewBox") == "0 0 32 32"
