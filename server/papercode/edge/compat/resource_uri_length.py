"""A resources/read for a URI over `MAX_URI_CHARS` characters is refused (invalid params) before any template is
matched, in a message of bounded length.

Works around: mcp 2.3.0's `MCPServer.read_resource` answers a URI no resource or template matches with an error
that echoes the whole URI, so a client sending a URI of megabytes gets (and makes the server write) megabytes back.
Canary: `test_the_sdks_unknown_resource_error_echoes_the_whole_uri` fails the day the SDK bounds what it echoes.
Goes when: the SDK's unknown-resource error quotes the URI cut to a bounded length (or not at all).
"""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

MAX_URI_CHARS = 1_000


def check_uri_length(uri: object) -> None:
    """MCPError (invalid params) when `uri` is over `MAX_URI_CHARS` characters."""
    if len(str(uri)) > MAX_URI_CHARS:
        raise MCPError(INVALID_PARAMS, f"invalid_argument: resource URI is over {MAX_URI_CHARS:,} characters; see resources/templates/list")
