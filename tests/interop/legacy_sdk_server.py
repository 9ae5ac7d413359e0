"""The official Python SDK's server (``mcp==2.3.0`` ``MCPServer``) with tools that ask through the
legacy ``ctx.elicit``: on a 2025-11-25 session each question is a real ``elicitation/create``
request sent to the client (on HTTP, on the tool call's own event stream). Test-only.

    python legacy_sdk_server.py stdio
    python legacy_sdk_server.py PORT     (127.0.0.1; stateful Streamable HTTP, SSE replies)

The SDK speaks both eras and picks 2026-07-28 for a client that asks ``server/discover``, where
``ctx.elicit`` has no back channel: a client reaches these tools with ``protocol="2025-11-25"``.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import AcceptedElicitation, Context, MCPServer
from pydantic import BaseModel, Field

app = MCPServer("legacy-sdk", version="2.3.0-tests", log_level="WARNING")


class Ticket(BaseModel):
    title: str = Field(description="What is wrong")
    priority: str = Field(default="normal", json_schema_extra={"enum": ["low", "normal", "high"]})


class Name(BaseModel):
    name: str


@app.tool()
async def file_ticket(ctx: Context) -> str:
    """Asks for a ticket, then files it."""
    answer = await ctx.elicit("Describe the problem", Ticket)
    if isinstance(answer, AcceptedElicitation):
        return f"filed {answer.data.title!r} at {answer.data.priority}"
    return f"not filed ({answer.action})"


@app.tool()
async def full_name(ctx: Context) -> str:
    """Asks two questions, one after the other."""
    first = await ctx.elicit("First name?", Name)
    if not isinstance(first, AcceptedElicitation):
        return f"stopped at the first name ({first.action})"
    last = await ctx.elicit(f"Last name of {first.data.name}?", Name)
    if not isinstance(last, AcceptedElicitation):
        return f"stopped at the last name ({last.action})"
    return f"Hello, {first.data.name} {last.data.name}!"


class Note(BaseModel):
    text: str = "line one\nline two\twith a tab"
    tone: str = Field(default="calm", json_schema_extra={"enum": ["calm", "a\tb"]})


@app.tool()
async def leave_note(ctx: Context) -> str:
    """A form whose defaults and choices hold a newline and a tab, as pydantic writes them."""
    answer = await ctx.elicit("Your note?", Note)
    if isinstance(answer, AcceptedElicitation):
        return repr((answer.data.text, answer.data.tone))
    return f"no note ({answer.action})"


@app.tool()
def add(a: int, b: int) -> str:
    """No questions."""
    return str(a + b)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: legacy_sdk_server.py stdio|PORT")
    if sys.argv[1] == "stdio":
        app.run("stdio")
        return
    import uvicorn

    uvicorn.run(
        app.streamable_http_app(stateless_http=False, json_response=False),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
    )


if __name__ == "__main__":
    main()
