"""What each tool, resource and prompt answers, with no MCP in sight: arguments checked, the corpus asked, answers shaped."""
