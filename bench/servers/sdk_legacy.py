"""Benchmark server: the official `mcp==2.3.0` SDK on the 2025-11-25 wire, same tool as ours.py.

`create_ticket(title)` asks one form question (required boolean `ok`) with the SDK's legacy
`ctx.elicit(message, Confirm)`: an `elicitation/create` request sent to the client while the
call waits, answered by the client's `ElicitResult`.

Usage:  python bench/servers/sdk_legacy.py PORT     (HTTP at http://127.0.0.1:PORT/mcp)
        python bench/servers/sdk_legacy.py stdio    (newline-delimited JSON-RPC on stdin/stdout)

HTTP: the *stateful* `streamable_http_app()` (sessions from `initialize`, calls answered on an SSE
stream, the client's answers POSTed back) on uvicorn with the settings shared by every bench
server (`_uvicorn.py`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

app = MCPServer("bench", version="1.0.0", log_level="WARNING")


class Confirm(BaseModel):
    ok: bool


@app.tool()
async def create_ticket(title: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Create ticket {title!r}?", Confirm)
    if answer.action == "accept" and answer.data.ok:
        return f"Created {title}"
    return "Not created"


def asgi_app() -> Any:
    """What this server serves over HTTP: stateful sessions, SSE replies to calls."""
    return app.streamable_http_app(stateless_http=False, json_response=False)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: sdk_legacy.py PORT|stdio")
    if sys.argv[1] == "stdio":
        app.run("stdio")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _uvicorn import serve

    serve(asgi_app(), int(sys.argv[1]))


if __name__ == "__main__":
    main()
