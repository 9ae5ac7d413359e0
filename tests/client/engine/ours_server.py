"""Our server (``mcp_elicit.Server``) for the client engine tests, run as a real process.

    python ours_server.py --stdio --marker-dir DIR
    python ours_server.py --port PORT --marker-dir DIR      (Streamable HTTP on 127.0.0.1)

Markers: ``cancelled-<label>`` is written when ``slow`` is cancelled, so a test can see the
cancellation reached the handler.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

# Run as a script: the repository root, for tests.shared_tools.
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mcp_elicit import Context, Server
from mcp_elicit.schema import Email
from tests.shared_tools import Name, add_shared_tools, serve_from_argv

MARKERS = Path(".")

app = Server(
    "engine-tests",
    version="2.1.0",
    title="Engine test server",
    state_keys=["client-engine-tests-only-key-0123456789abcdefghijklmnop"],
)


class Signup(BaseModel):
    email: Email
    age: int = Field(ge=18)
    plan: Literal["free", "pro"] = "free"
    news: bool = False
    tags: list[Literal["a", "b", "c"]] = Field(default_factory=list)


@dataclass
class Confirm:
    ok: bool


add_shared_tools(app, lambda: MARKERS)


@app.tool()
async def pair(ctx: Context) -> str:
    """Two questions asked concurrently: one round with two input requests."""
    left, right = await asyncio.gather(
        ctx.elicit("Left?", Name, key="left"), ctx.elicit("Right?", Name, key="right")
    )
    return f"{left.data.name}+{right.data.name}"


@app.tool()
async def confirm(ctx: Context) -> str:
    answer = await ctx.elicit("Go ahead?", Confirm, key="go")
    return f"action={answer.action}" + (f" ok={answer.data.ok}" if answer.accepted else "")


@app.tool()
async def signup(ctx: Context) -> dict[str, Any]:
    """Returns what the server received, defaults applied; says if it ever saw an invalid answer."""
    answer = await ctx.elicit("Sign up", Signup, key="signup")
    return {"action": answer.action, "content": answer.content, "round": ctx.round}


@app.tool()
async def caps(ctx: Context) -> dict[str, Any]:
    """The client capabilities this request declared, as the server read them."""
    return {"capabilities": ctx.meta.capabilities.raw, "info": ctx.client_info}


@app.tool()
async def link(ctx: Context) -> str:
    """URL mode when declared, plain text otherwise (never a URL question to a form-only client)."""
    if not ctx.can_elicit("url"):
        return "no url mode: open http://127.0.0.1:9/connect yourself"
    answer = await ctx.elicit_url("Connect your account", "http://127.0.0.1:9/connect", key="connect")
    return f"url {answer.action}"


@app.tool()
async def needs_url(ctx: Context) -> str:
    """Needs URL mode; -32021 when the request does not declare it."""
    answer = await ctx.elicit_url("Connect", "http://127.0.0.1:9/connect", key="connect")
    return f"url {answer.action}"


@app.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model (sampling) and the client's roots in one round."""
    reply, roots = await asyncio.gather(
        ctx.sample(f"Summarize: {text}", max_tokens=20, key="llm"), ctx.list_roots(key="roots")
    )
    return f"{reply.model} says {reply.text!r} about {', '.join(r.uri for r in roots)}"


@app.prompt()
async def draft(topic: str, ctx: Context) -> str:
    tone = await ctx.elicit(f"Tone for {topic}?", Name, key="tone")
    return f"Write about {topic} in a {tone.data.name} tone."


@app.resource("note://{note_id}", mime_type="text/plain")
async def note(note_id: str, ctx: Context) -> str:
    who = await ctx.elicit(f"Who may read note {note_id}?", Name, key="reader")
    return f"note {note_id} for {who.data.name}"


def main() -> None:
    serve_from_argv(app, sys.modules[__name__])


if __name__ == "__main__":
    main()
