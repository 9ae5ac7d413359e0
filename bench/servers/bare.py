"""Benchmark ceiling: a bare ASGI app that answers the elicitation flow with canned bytes.

No MCP library at all. It reads the body, parses it with orjson (any real server must),
and answers:

* a `tools/call` without `requestState` (first POST of a flow) -> a canned
  `InputRequiredResult` (one `elicitation/create` form, a fixed `requestState`);
* a `tools/call` with `requestState` (the retry) -> a canned complete result whose
  text is `Created <title>` (the title is echoed so the client's check is meaningful).

It does no validation, no state sealing, no schema work: its flows/s is the upper limit
of what any Python server on this uvicorn configuration can do, and the load client's
ceiling. HTTP only (no stdio mode).

Usage:  python bench/servers/bare.py PORT
"""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson

KEY = "confirm"
REQUEST_STATE = "bare-state-v1.b64-opaque-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
_SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bare", "version": "1.0.0"}}

_HEADERS = [(b"content-type", b"application/json")]


def _input_required(title: str) -> dict[str, Any]:
    return {
        "resultType": "input_required",
        "inputRequests": {
            KEY: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": f"Create ticket '{title}'?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"ok": {"type": "boolean"}},
                        "required": ["ok"],
                    },
                },
            }
        },
        "requestState": REQUEST_STATE,
        "_meta": _SERVER_INFO,
    }


# Canned bodies split around the id and the title (which the client checks in both answers).
_MARK = "\x00TITLE\x00"
_IR_HEAD = b'{"jsonrpc":"2.0","id":'
_IR_MID, _IR_TAIL = (b',"result":' + orjson.dumps(_input_required(_MARK)) + b"}").split(
    orjson.dumps(_MARK)[1:-1]
)
_OK_HEAD = b'{"jsonrpc":"2.0","id":'
_OK_MID = b',"result":{"resultType":"complete","isError":false,"content":[{"type":"text","text":'
_OK_TAIL = b"}]," + b'"_meta":' + orjson.dumps(_SERVER_INFO) + b"}}"


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        msg = await receive()
        body += msg.get("body", b"")
        more = msg.get("more_body", False)
    try:
        req = orjson.loads(body)
        rid = orjson.dumps(req["id"])
        params = req.get("params") or {}
        if "requestState" in params:
            title = (params.get("arguments") or {}).get("title", "")
            out = _OK_HEAD + rid + _OK_MID + orjson.dumps(f"Created {title}") + _OK_TAIL
        else:
            title = (params.get("arguments") or {}).get("title", "")
            out = _IR_HEAD + rid + _IR_MID + orjson.dumps(title)[1:-1] + _IR_TAIL
        status = 200
    except Exception:  # malformed input: not part of the measured path
        out = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
        status = 400
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*_HEADERS, (b"content-length", str(len(out)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": out})


def asgi_app() -> Any:
    """What this server serves over HTTP (also timed in-process by ``bench/cold.py``)."""
    return app


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] == "stdio":
        sys.exit("usage: bare.py PORT   (HTTP only)")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _uvicorn import serve

    serve(asgi_app(), int(sys.argv[1]))


if __name__ == "__main__":
    main()
