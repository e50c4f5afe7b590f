"""papercode's own JSON-RPC error codes; every other code it answers with is JSON-RPC's or MCP's."""

from __future__ import annotations

LOADING = -32010
"""A protocol request (reading a resource, getting a prompt) that needs records still being loaded, once its wait
ran out; the message says how far loading is and when to ask again. From the band MCP leaves to implementations
(-32000 to -32019; the SDK uses -32000 and -32001, and -32002 is retired, never to be reused)."""

EXITING = -32011
"""A request still running when a stdio server exits: its input ended and the answer did not come within the bound
(`compat.stdio_eof`), or the server was stopped (SIGINT, SIGTERM). From the same band."""
