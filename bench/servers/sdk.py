"""Benchmark server: the official `mcp==2.3.0` SDK (`MCPServer`), same tool as ours.py.

`create_ticket(title)` elicits one form (required boolean `ok`) through a resolver
(`Annotated[Confirm, Resolve(fn)]` where `fn` returns `Elicit(msg, Confirm)`); on
2026-07-28 the SDK turns that into an `InputRequiredResult` and resumes on the retry.

Usage:  python bench/servers/sdk.py PORT     (HTTP at http://127.0.0.1:PORT/mcp)
        python bench/servers/sdk.py stdio    (newline-delimited JSON-RPC on stdin/stdout)

HTTP: `streamable_http_app(stateless_http=True, json_response=True)` on uvicorn with the
settings shared by every bench server (see `_uvicorn.py`).
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from pydantic import BaseModel

app = MCPServer("bench", version="1.0.0", log_level="WARNING")


class Confirm(BaseModel):
    ok: bool


def ask_confirm(title: str) -> Elicit[Confirm]:
    return Elicit(f"Create ticket {title!r}?", Confirm)


@app.tool()
async def create_ticket(title: str, answer: Annotated[Confirm, Resolve(ask_confirm)]) -> str:
    # `Annotated[T, Resolve(fn)]` unwraps an accepted answer; decline/cancel abort the call.
    if answer.ok:
        return f"Created {title}"
    return "Not created"


def asgi_app() -> Any:
    """What this server serves over HTTP (also timed in-process by ``bench/cold.py``)."""
    return app.streamable_http_app(stateless_http=True, json_response=True)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: sdk.py PORT|stdio")
    if sys.argv[1] == "stdio":
        app.run("stdio")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _uvicorn import serve

    serve(asgi_app(), int(sys.argv[1]))


if __name__ == "__main__":
    main()
