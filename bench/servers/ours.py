"""Benchmark server: our library (`mcp_elicit`), same tool as sdk.py.

`create_ticket(title)` elicits one form (required boolean `ok`) with `ctx.elicit`; on
2026-07-28 that becomes an `InputRequiredResult`, resumed when the client retries with
`inputResponses` and the echoed `requestState`.

Usage:  python bench/servers/ours.py PORT     (HTTP at http://127.0.0.1:PORT/mcp)
        python bench/servers/ours.py stdio    (newline-delimited JSON-RPC on stdin/stdout)

HTTP: `app.asgi()` on uvicorn with the settings shared by every bench server (`_uvicorn.py`).
"""

import os
import sys
from dataclasses import dataclass
from typing import Any

from mcp_elicit import Context, Server

app = Server("bench", version="1.0.0")


@dataclass
class Confirm:
    ok: bool


@app.tool()
async def create_ticket(title: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Create ticket {title!r}?", Confirm)
    if answer.accepted and answer.data.ok:
        return f"Created {title}"
    return "Not created"


def asgi_app() -> Any:
    """What this server serves over HTTP (also timed in-process by ``bench/cold.py``)."""
    return app.asgi()


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: ours.py PORT|stdio")
    if sys.argv[1] == "stdio":
        app.run_stdio()
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _uvicorn import serve

    serve(asgi_app(), int(sys.argv[1]))


if __name__ == "__main__":
    main()
