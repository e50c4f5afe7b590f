"""A stdio MCP server that breaks its own output schema, so the tests can show host.mjs fails on a mismatch.

It lists one tool, `corpus_stats`, whose outputSchema says `papers` is an integer, and answers it with
`{"papers": "two"}`. Plain JSON-RPC over stdin/stdout, standard library only: it must not share any code
with papercode, whose answers it imitates wrongly on purpose.
"""

from __future__ import annotations

import json
import sys

OUTPUT_SCHEMA = {"type": "object", "properties": {"papers": {"type": "integer"}}, "required": ["papers"]}
WRONG_ANSWER = {"papers": "two"}

RESULTS = {
    "initialize": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "mismatched", "version": "0"},
    },
    "ping": {},
    "tools/list": {
        "tools": [
            {"name": "corpus_stats", "description": "Wrong on purpose.", "inputSchema": {"type": "object"}, "outputSchema": OUTPUT_SCHEMA}
        ]
    },
    "tools/call": {"content": [{"type": "text", "text": json.dumps(WRONG_ANSWER)}], "structuredContent": WRONG_ANSWER},
}


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:  # a notification
            continue
        method = message.get("method")
        reply: dict[str, object] = {"jsonrpc": "2.0", "id": message["id"]}
        if method in RESULTS:
            reply["result"] = RESULTS[method]
        else:
            reply["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
