"""A small server for the CLI tests: ``--stdio`` or ``--port N`` (127.0.0.1)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

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
async def fails() -> str:
    """Always reports an error."""
    raise ToolError("the printer is on fire")


if __name__ == "__main__":
    if sys.argv[1] == "--stdio":
        app.run_stdio()
    else:
        app.run_http(port=int(sys.argv[2]))
