"""A small server for the CLI tests: ``--stdio`` or ``--port N`` (127.0.0.1)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_elicit import Context, Server, ToolError

app = Server("cli-tests", version="2.0.0", state_keys=["cli-tests-secret-0123456789-abcdefghij"])


@dataclass
class Name:
    name: str


@app.tool()
async def greet(ctx: Context) -> str:
    """Asks for a name."""
    answer = await ctx.elicit("What is your name?", Name, key="name")
    return f"Hello, {answer.data.name}!" if answer.accepted else f"No greeting ({answer.action})."


@app.tool()
async def open_page(url: str, ctx: Context) -> str:
    """Sends the person to ``url``."""
    answer = await ctx.elicit_url("Connect your account", url, key="page")
    return f"page {answer.action}"


@app.tool()
async def fails() -> str:
    """Always reports an error."""
    raise ToolError("the printer is on fire")


@app.tool()
async def chart() -> list[dict[str, Any]]:
    """Draws a chart: an image, its data and its caption; no text."""
    return [
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "resource_link", "uri": "file:///charts/q3.csv", "name": "q3.csv", "mimeType": "text/csv"},
        {"type": "resource", "resource": {"uri": "file:///charts/q3.txt", "text": "Q3: up 4%"}},
    ]


def _guarded(token: str) -> Any:
    """The HTTP app behind a bearer check: ``cli_server.py --port N TOKEN``."""
    from mcp_elicit.server.auth import Unauthorized

    async def authenticate(headers: Mapping[str, str]) -> str:
        if headers.get("authorization") != f"Bearer {token}":
            raise Unauthorized('Bearer error="invalid_token"')
        return "cli|tester"

    return app.asgi(authenticate=authenticate)


if __name__ == "__main__":
    if sys.argv[1] == "--stdio":
        app.run_stdio()
    elif len(sys.argv) > 3:
        from mcp_elicit.transport.uvicorn_runner import serve

        serve(_guarded(sys.argv[3]), port=int(sys.argv[2]))
    else:
        app.run_http(port=int(sys.argv[2]))
