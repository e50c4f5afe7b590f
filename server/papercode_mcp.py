"""papercode for `mcp run` and `mcp dev`: a global server object named `mcp`, as the MCP CLI looks for.

    mcp run server/papercode_mcp.py                       # stdio, headless
    mcp dev server/papercode_mcp.py --with-editable .     # the Inspector's web UI (needs uv and npx)

It serves the bundled records, or those in PAPERCODE_RECORDS; every other PAPERCODE_* variable
applies as for `papercode serve`. `papercode serve` remains the way to run it otherwise.
"""

from papercode.cli.main import build_live_server
from papercode.settings import settings_for

mcp, _corpus = build_live_server(settings_for("serve", {}))
# `mcp dev` starts the server with `uv run --with mcp==<version>`, which lacks the CLI extra that
# `mcp run` needs outside a project; it adds these requirements to that command.
mcp.dependencies = ["mcp[cli]>=2.3,<3"]
