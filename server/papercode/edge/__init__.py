"""The MCP and transport edge: tools, resources and prompts over `answers`, stdio and HTTP serving, client notices,
stderr logs, and the workarounds of the SDK and uvicorn (`compat`)."""
