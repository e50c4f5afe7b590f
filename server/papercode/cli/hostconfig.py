"""`papercode config HOST`: the configuration snippet each MCP host reads, for this installation.

Hosts start servers outside any checkout and without the shell's PATH or virtualenv, so the
snippet names this installation's `papercode` by absolute path (and the records, when given).
"""

from __future__ import annotations

import json
import shlex
import socket
import sys
from pathlib import Path

HOSTS = ("claude-desktop", "claude-code", "cursor", "vscode", "http")

_WHERE = {
    "claude-desktop": "claude_desktop_config.json (macOS ~/Library/Application Support/Claude/, Windows %APPDATA%\\Claude\\, "
    "Linux ~/.config/Claude/), then restart Claude Desktop",
    "cursor": "~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project)",
    "vscode": ".vscode/mcp.json in your workspace",
    "claude-code": "a terminal (add --scope user to use it in every project)",
}


def installed_command() -> list[str]:
    """How to start this installation's papercode from anywhere."""
    script = Path(sys.executable).parent / "papercode"  # the console script beside this interpreter
    return [str(script)] if script.is_file() else [sys.executable, "-m", "papercode"]


def snippet(host: str, records: list[Path], address: tuple[str, int], archive: Path | None = None) -> tuple[str, str]:
    """(what to paste, where to paste it) for `host`; `records` empty for the bundled ones; `archive` the
    archive to serve beneath them, if any (named by absolute path: a host's environment may lack
    XDG_DATA_HOME); `address` is where the HTTP server listens (for `http`)."""
    command, *args = installed_command()
    args += ["serve", *[part for root in records for part in ("--records", str(root.resolve()))]]
    if archive is not None:
        args += ["--archive", "--archive-dir", str(archive.resolve())]
    if host == "claude-code":
        return shlex.join(["claude", "mcp", "add", "papercode", "--", command, *args]), _WHERE[host]
    if host == "vscode":
        return _json({"servers": {"papercode": {"type": "stdio", "command": command, "args": args}}}), _WHERE[host]
    if host == "http":
        bind, port = address
        reachable = socket.getfqdn() if bind in ("0.0.0.0", "::") else bind  # clients connect to a name, not "any"
        shown = f"[{reachable}]" if ":" in reachable else reachable
        start = [command, *args, "--transport", "streamable-http", "--port", str(port)] + (["--host", bind] if bind != "127.0.0.1" else [])
        url = f"http://{shown}:{port}/mcp"
        return _json(
            {"mcpServers": {"papercode": {"type": "http", "url": url}}}
        ), f"your host's MCP settings; start the server with: {shlex.join(start)}"
    return _json({"mcpServers": {"papercode": {"command": command, "args": args}}}), _WHERE[host]


def _json(value: object) -> str:
    return json.dumps(value, indent=2)
