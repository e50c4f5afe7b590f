"""The command line: `papercode serve | call | check | materialize | config`, its progress line and host snippets."""
