"""The fixtures the official MCP conformance suite expects, served by mcp-elicit.

    python examples/conformance_server.py --stdio         # pip install mcp-elicit
    python examples/conformance_server.py --port 3001     # HTTP at http://127.0.0.1:3001/mcp
                                                          # (pip install 'mcp-elicit[http]')

Names and keys follow the suite's contract: its input-required-result-* scenarios,
server-stateless, and the tools, prompts, resources and header scenarios of 2026-07-28; and, for
2025-11-25 clients (initialize, a session, questions as real ``elicitation/create`` requests),
the elicitation, sampling, logging and SSE polling scenarios of that revision. One handler serves
both eras: on 2026-07-28 its questions travel as ``InputRequiredResult`` rounds, on 2025-11-25 as
requests on the call's stream. Most fixtures use the straight-line style (``await
ctx.elicit``); the request-state fixture uses the low-level style to show that both work side by
side.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import struct
import zlib
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp_elicit import Context, InputRequired, McpError, ParamHeader, Server, ToolError
from mcp_elicit.schema import Choices, Description

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


@dataclass
class UserInfo:
    username: Annotated[str, Description("User's response")]
    email: Annotated[str, Description("User's email address")]


@dataclass
class Defaults:
    """SEP-1034: a default for every primitive type."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@dataclass
class Enums:
    """SEP-1330: the five ways to offer choices."""

    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: Annotated[
        str, Choices({"value1": "First Option", "value2": "Second Option", "value3": "Third Option"})
    ]
    legacyEnum: Annotated[
        str, Choices({"opt1": "Option One", "opt2": "Option Two", "opt3": "Option Three"}, legacy=True)
    ]
    untitledMulti: list[Literal["option1", "option2", "option3"]]
    titledMulti: Annotated[
        list[str], Choices({"value1": "First Choice", "value2": "Second Choice", "value3": "Third Choice"})
    ]


@app.tool()
async def test_elicitation(ctx: Context, message: str) -> str:
    """Asks the user for a username and an email address, with the message given."""
    answer = await ctx.elicit(message, UserInfo)
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@app.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks with a form whose every field has a default."""
    answer = await ctx.elicit("Please review your profile (the defaults are filled in).", Defaults)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@app.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks with a form that offers choices in each of the five shapes."""
    answer = await ctx.elicit("Please pick your options.", Enums)
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@app.tool()
async def test_sampling(ctx: Context, prompt: str) -> str:
    """Asks the client's model the prompt given."""
    reply = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {reply.text}"


@app.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three info messages, 50 ms apart, while it works."""
    await ctx.log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes its stream mid-call (SEP-1699): the client reconnects and gets the result."""
    await ctx.close_stream()
    await asyncio.sleep(0.1)  # the work goes on while the client is away
    return "Reconnection test completed successfully"


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


def _png_pixel() -> bytes:
    """A 1x1 red PNG, built here (signature, IHDR, IDAT, IEND chunks with their CRCs)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte, then one red pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _wav_silence(samples: int = 80) -> bytes:
    """A mono 8 kHz 16-bit PCM WAV of ``samples`` silent samples (10 ms)."""
    data = b"\x00\x00" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + len(data))
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + (b"data" + struct.pack("<I", len(data)) + data)
    )


PNG = _png_pixel()
PNG_B64 = base64.b64encode(PNG).decode("ascii")


def _image() -> dict[str, Any]:
    return {"type": "image", "data": PNG_B64, "mimeType": "image/png"}


@app.tool()
async def test_simple_text() -> str:
    """Returns one text block."""
    return "This is a simple text response for testing."


@app.tool()
async def test_image_content() -> list[dict[str, Any]]:
    """Returns a 1x1 PNG."""
    return [_image()]


@app.tool()
async def test_audio_content() -> list[dict[str, Any]]:
    """Returns 10 ms of silence as WAV."""
    return [
        {"type": "audio", "data": base64.b64encode(_wav_silence()).decode("ascii"), "mimeType": "audio/wav"}
    ]


@app.tool()
async def test_embedded_resource() -> list[dict[str, Any]]:
    """Returns an embedded text resource."""
    resource = {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }
    return [{"type": "resource", "resource": resource}]


@app.tool()
async def test_multiple_content_types() -> list[dict[str, Any]]:
    """Returns text, an image and an embedded JSON resource."""
    resource = {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": '{"test":"data","value":123}',
    }
    return [
        {"type": "text", "text": "Multiple content types test:"},
        _image(),
        {"type": "resource", "resource": resource},
    ]


@app.tool()
async def test_error_handling() -> str:
    """Always fails as a tool error (isError), not as a protocol error."""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 out of 100, 50 ms apart."""
    for step in (0, 50, 100):
        if step:
            await asyncio.sleep(0.05)
        await ctx.report_progress(step, 100)
    return "Progress test completed"


@app.tool()
async def test_custom_header(region: Annotated[str, ParamHeader("Region")], query: str) -> str:
    """Its region travels in the Mcp-Param-Region header too (SEP-2243)."""
    return f"{query} in {region}"


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


@app.prompt()
async def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt()
async def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:
    """A prompt that embeds the resource it is given."""
    resource = {
        "uri": resourceUri,
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    return [
        {"role": "user", "content": {"type": "resource", "resource": resource}},
        {"role": "user", "content": "Please process the embedded resource above."},
    ]


@app.prompt()
async def test_prompt_with_image() -> list[dict[str, Any]]:
    """A prompt that shows an image."""
    return [
        {"role": "user", "content": _image()},
        {"role": "user", "content": "Please analyze the image above."},
    ]


@app.resource("test://static-text", mime_type="text/plain")
async def static_text() -> str:
    """A plain resource."""
    return "This is the content of the static text resource."


@app.resource("test://static-binary", mime_type="image/png")
async def static_binary() -> bytes:
    """A binary resource (a PNG)."""
    return PNG


@app.resource("test://watched-resource", mime_type="text/plain")
async def watched_resource() -> str:
    """A resource 2025-11-25 clients may subscribe to (resources/subscribe)."""
    return "Watched resource content."


@app.resource("test://template/{id}/data", mime_type="application/json")
async def template_data(id: str) -> dict[str, Any]:
    """A resource template: the id comes from the URI."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


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
