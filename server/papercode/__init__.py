"""papercode: an MCP server from research papers to the code that implements them."""

__version__ = "0.1.0"
