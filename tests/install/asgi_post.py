"""Call the booking server's ``Server.asgi()`` app as an ASGI server would, with no server
package installed: one POST of the JSON-RPC message given as the argument; prints the status and
the reply as one JSON line.

    python asgi_post.py '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {...}}'
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from booking_server import app  # next to this file: the first entry of sys.path when run


async def post(message: dict[str, Any]) -> tuple[int, Any]:
    body = json.dumps(message).encode()
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", message["method"].encode()),
        (b"mcp-name", message["params"]["name"].encode()),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    request = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if request:
            return request.pop()
        await asyncio.Event().wait()  # the client stays connected
        raise AssertionError("unreachable")

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await app.asgi()(scope, receive, send)
    reply = b"".join(event.get("body", b"") for event in sent if event["type"] == "http.response.body")
    return sent[0]["status"], json.loads(reply)


if __name__ == "__main__":
    status, reply = asyncio.run(post(json.loads(sys.argv[1])))
    print(json.dumps({"status": status, "reply": reply}))
