"""Workarounds: where papercode changes what the MCP SDK or uvicorn does, one module each.

Each module's docstring says what it works around (the library, the version it was written against and what that
version does), the canary that asserts that behaviour of the library itself, so it fails the day the library
changes it (in `tests/edge/test_compat_canaries.py`, which also checks these docstrings), and what would let the
workaround go. Nothing here knows papercode's corpus or tools: the rest of the edge puts these in place
(`edge.stdio`, `edge.http`, `edge.server`).
"""
