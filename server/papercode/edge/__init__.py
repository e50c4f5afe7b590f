"""Everything that speaks MCP or HTTP: tools, resources, prompts and MCP Apps views over `answers`, stdio and HTTP serving.

Here too: the views a host can show beside two tools' answers (`views`, made from the HTML, CSS and JavaScript in
`apps/`), what clients are told (`notices`), stderr logs, the errors the SDK raises given papercode's shape, and the
workarounds of the SDK and uvicorn, one module each (`compat`).
"""
