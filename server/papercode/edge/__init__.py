"""Everything that speaks MCP or HTTP: tools, resources and prompts over `answers`, stdio and HTTP serving.

Here too: what clients are told (`notices`), stderr logs, the errors the SDK raises given papercode's shape, and the
workarounds of the SDK and uvicorn, one module each (`compat`).
"""
