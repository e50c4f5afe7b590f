"""What each tool answers, with no MCP in sight: the queries over a corpus and the lean models they return."""
