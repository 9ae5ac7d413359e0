"""The server the any-input property tests send their requests to: a tool that asks two forms
(every kind of field), one that asks nothing, and a prompt. ``python any_input_server.py`` serves
it over stdio (with the test's event loop: see ``tests/server_process.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from mcp_elicit import Context, Server

STATE_KEY = "any-input-tests-only-key-0123456789abcdef0123"


@dataclass
class Ticket:
    title: str
    priority: int
    urgent: bool
    team: Literal["ops", "dev"]
    contact: str | None = None


def build(**settings: Any) -> Server:
    """The server; ``settings`` are more ``Server`` options (a short ``legacy_leg_timeout``, say)."""
    server = Server("any-input", version="1", state_keys=[STATE_KEY], **settings)

    @server.tool()
    async def file_ticket(summary: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"File {summary}?", Ticket)
        if not answer.accepted:
            return answer.action
        again = await ctx.elicit("Sure?", Ticket)
        return f"{answer.data.title} {again.action}"

    @server.tool()
    async def add(a: int, b: int = 2) -> int:
        return a + b

    @server.prompt()
    async def greet(name: str) -> str:
        return f"Hello {name}"

    return server


if __name__ == "__main__":
    build().run_stdio()
