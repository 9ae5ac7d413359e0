"""A raw stdio MCP 2026-07-28 server that sends whatever a test tells it to (no library code).

``python raw_server.py`` reads its script from the ``RAW_SERVER`` environment variable, a JSON
object: ``{"rounds": [result, ...], "final": result, "error": {...}}``. The n-th ``tools/call``
gets ``rounds[n]``, then ``final``; with ``error`` every ``tools/call`` gets that JSON-RPC error.
"""

from __future__ import annotations

import json
import os
import sys

SCRIPT = json.loads(os.environ.get("RAW_SERVER", "{}"))
FINAL = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}


def result(method: str, calls: int) -> dict[str, object]:
    if method == "server/discover":
        return {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "0"}},
        }
    if method == "tools/list":
        return {"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    rounds = SCRIPT.get("rounds", [])
    return rounds[calls] if calls < len(rounds) else SCRIPT.get("final", FINAL)


def main() -> None:
    calls = 0
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        reply: dict[str, object] = {"jsonrpc": "2.0", "id": message["id"]}
        method = message["method"]
        if method == "tools/call" and "error" in SCRIPT:
            reply["error"] = SCRIPT["error"]
        elif method in ("server/discover", "tools/list", "tools/call"):
            reply["result"] = result(method, calls)
            calls += method == "tools/call"
        else:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
