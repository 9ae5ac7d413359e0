"""The fixtures the official MCP conformance suite expects, served by mcp-elicit.

    python examples/conformance_server.py --port 3001     # HTTP at http://127.0.0.1:3001/mcp
    python examples/conformance_server.py --stdio

Names and keys follow the suite's contract (its input-required-result-* scenarios and
server-stateless). Most fixtures use the straight-line style (``await ctx.elicit``); the
request-state fixture uses the low-level style to show that both work side by side.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass

from mcp_elicit import Context, InputRequired, McpError, Server

app = Server("mcp-elicit-conformance", version="0.1.0", instructions="Conformance fixtures for mcp-elicit.")


@dataclass
class Name:
    name: str


@dataclass
class Confirm:
    ok: bool


@dataclass
class Color:
    color: str


@dataclass
class UserContext:
    context: str


@app.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name, then greets them."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    if not answer.accepted:
        return f"No name given ({answer.action})."
    return f"Hello, {answer.data.name}!"


@app.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    reply = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model answered: {reply.text}"


@app.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Lists the client's roots."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(root.uri for root in roots)


@app.tool()
async def test_input_required_result_request_state(ctx: Context) -> str | InputRequired:
    """Low-level style: returns its own InputRequired and reads its state back."""
    confirm = ctx.input_responses.get("confirm")
    if ctx.request_state == "awaiting-confirm" and isinstance(confirm, dict):
        # Raw answers: this style checks them itself (ctx.elicit would validate them).
        action, content = confirm.get("action"), confirm.get("content")
        if action == "accept" and isinstance(content, dict) and isinstance(content.get("ok"), bool):
            return f"state-ok: confirmed={content['ok']}"
        if action in ("decline", "cancel"):
            return f"state-ok: the person chose {action}"
        raise McpError(-32602, "Invalid params: answer 'confirm' with accept {ok: bool}, decline or cancel")
    return InputRequired(
        input_requests={
            "confirm": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Please confirm",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"ok": {"type": "boolean"}},
                        "required": ["ok"],
                    },
                },
            }
        },
        state="awaiting-confirm",
    )


@app.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three things at once: a form, a sample and the roots (one round)."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", Name, key="user_name"),
        ctx.sample("Write a short greeting.", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    who = name.data.name if name.accepted else "(declined)"
    return f"name={who}; greeting={greeting.text}; roots={len(roots)}"


@app.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two questions, one after the other (two rounds)."""
    first = await ctx.elicit("Step 1: what is your name?", Name, key="step1")
    second = await ctx.elicit("Step 2: what is your favourite color?", Color, key="step2")
    name = first.data.name if first.accepted else "?"
    color = second.data.color if second.accepted else "?"
    return f"{name} likes {color}"


@app.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks for confirmation; its sealed state must not survive tampering."""
    answer = await ctx.elicit("Confirm to continue", Confirm, key="confirm")
    return "confirmed" if answer.accepted and answer.data.ok else "not confirmed"


@app.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Uses a form when the client can show one, otherwise asks the client's model."""
    if ctx.can_elicit("form"):
        answer = await ctx.elicit("What is your name?", Name, key="elicit_input")
        return f"Hello, {answer.data.name}!" if answer.accepted else "No name."
    if ctx.can_sample():
        reply = await ctx.sample("Suggest a name.", max_tokens=20, key="sample_input")
        return f"Model suggests: {reply.text}"
    return "This client can neither show forms nor sample."


@app.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Elicits on a request that may stream: the question must come back as a result."""
    answer = await ctx.elicit("Continue?", Confirm)
    return "continued" if answer.accepted and answer.data.ok else "stopped"


@app.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling; without the capability the server answers -32021."""
    reply = await ctx.sample("Say hi.", max_tokens=10)
    return reply.text


@app.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info; a request without a logLevel must receive no log messages."""
    await ctx.log("info", "test_logging_tool ran")
    return "logged"


@app.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks for context before it is rendered."""
    answer = await ctx.elicit("What context should the prompt use?", UserContext, key="user_context")
    context = answer.data.context if answer.accepted else "none"
    return f"Use this context: {context}"


@app.prompt()
async def test_simple_prompt() -> str:
    """A plain prompt."""
    return "This is a simple prompt."


@app.resource("test://static-text", mime_type="text/plain")
async def static_text() -> str:
    """A plain resource."""
    return "This is the content of the static text resource."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--stdio", action="store_true", help="serve stdio instead of HTTP")
    args = parser.parse_args()
    if args.stdio:
        app.run_stdio()
    else:
        app.run_http(host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
