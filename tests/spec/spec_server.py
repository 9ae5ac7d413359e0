"""A stdio server for the spec-traceability tests, run as a real process:

    python spec_server.py

Its tools each exercise one statement of the elicitation page (revision 2026-07-28): a form, a
URL-mode question, a handler that falls back when URL mode is not declared, and a low-level
handler that writes a 2025-11-25 style URL entry (``elicitationId``, ``jsonrpc``, ``id``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_elicit import Context, InputRequired, Server

app = Server("spec-tests", version="1.0.0", state_keys=["spec-traceability-tests-only-key-0123456789abcdef"])


@dataclass
class Name:
    name: str


@app.tool()
async def ask_name(ctx: Context) -> str:
    """One form; the answer's action reaches the handler as a value."""
    answer = await ctx.elicit("What is your name?", Name, key="name")
    return f"accept:{answer.data.name}" if answer.accepted else answer.action


@app.tool()
async def connect_account(ctx: Context) -> str:
    """One URL-mode question; ``accept`` only means the person agreed to open it."""
    url = "https://mcp.example.com/connect/3f9a2c7e1b"
    answer = await ctx.elicit_url("Connect your account", url, key="link")
    return f"{answer.action} content={answer.content}"


@app.tool()
async def connect_or_fallback(ctx: Context) -> str:
    """Asks in URL mode only when this request declared it."""
    if not ctx.can_elicit("url"):
        return "fallback: no URL mode declared"
    await ctx.elicit_url("Connect", "https://mcp.example.com/connect/1", key="link")
    return "connected"


@app.tool()
async def legacy_url_entry(ctx: Context) -> str | InputRequired:
    """A low-level handler written the 2025-11-25 way: the entry carries the removed
    ``elicitationId`` and JSON-RPC envelope members."""
    if ctx.input_responses:
        return "answered"
    entry = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Connect",
            "url": "https://mcp.example.com/connect/1",
            "elicitationId": "el-1",
        },
    }
    return InputRequired({"link": entry})


if __name__ == "__main__":
    app.run_stdio()
