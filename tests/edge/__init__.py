"""Tests of `papercode.edge`: MCP over memory, stdio and HTTP."""
