"""The MCP and transport edge: tools, resources and prompts over `answers`, HTTP serving, client notices, logs."""
