"""A server for the end-to-end tests, run as a real process.

    python tests/e2e/e2e_server.py --stdio
    python tests/e2e/e2e_server.py --port 8123 [--marker-dir DIR]

HTTP requests may carry ``Authorization: Bearer <name>[@<client>]``; this test-only hook turns it
into the principal ``test|<name>`` (and the client) so that state binding to a user and to a
client can be checked end to end.

The event loop is uvloop, as in production (uvicorn and the stdio server take it whenever it is
installed), unless ``MCP_ELICIT_TEST_LOOP=asyncio``: then the server runs as it does where uvloop
is not installed (``tests/e2e/conftest.py`` runs every test module on both).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script: the repository root, for tests.shared_tools.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

if os.environ.get("MCP_ELICIT_TEST_LOOP") == "asyncio":
    sys.modules["uvloop"] = None  # type: ignore[assignment]  # "import uvloop" fails: not installed

from mcp_elicit import Context, McpError, Server
from tests.shared_tools import Name, add_shared_tools, bearer

MARKERS = Path(".")

app = Server("e2e", version="1.0.0", state_keys=["e2e-tests-only-secret-abcdefghijklmnopqrstuvwxyz"])


add_shared_tools(app, lambda: MARKERS)


@app.tool()
async def visit(ctx: Context) -> str:
    """Sends the person to a page (URL mode); says what they answered."""
    answer = await ctx.elicit_url("Open the start page.", "https://example.com/start", key="visit")
    return f"visit: {answer.action}"


@app.tool()
async def two_pages(ctx: Context) -> str:
    """Sends the person to two pages in turn (URL mode); says what they answered."""
    one = await ctx.elicit_url("Open the first page.", "https://example.com/one", key="one")
    two = await ctx.elicit_url("Open the second page.", "https://example.com/two", key="two")
    return f"pages: {one.action}, {two.action}"


@app.tool()
async def two_at_once(ctx: Context) -> str:
    """Two questions in one round (``asyncio.gather``): two requests to a 2025-11-25 client at
    once."""
    first, last = await asyncio.gather(
        ctx.elicit("First name?", Name, key="first"), ctx.elicit("Last name?", Name, key="last")
    )
    return f"Hello, {first.data.name} {last.data.name}!"


@app.tool()
async def endless(ctx: Context) -> str:
    """Asks a new question each round, forever: the round cap must end it."""
    number = 0
    while True:
        await ctx.elicit(f"Question {number}?", Name, key=f"q{number}")
        number += 1


@app.tool()
async def sample_with_tools(ctx: Context) -> str:
    """Offers the client's model a tool: needs the client's ``sampling.tools``."""
    tools = [{"name": "calc", "inputSchema": {"type": "object"}}]
    reply = await ctx.sample("Use a tool", max_tokens=10, tools=tools, toolChoice={"mode": "auto"})
    return reply.text


@app.tool()
async def sample_with_context(ctx: Context) -> str:
    """Asks to include context: needs the client's ``sampling.context``."""
    reply = await ctx.sample("Summarise", max_tokens=10, includeContext="thisServer")
    return reply.text


@dataclass
class Login:
    username: str
    password: str


@app.tool()
async def log_in(ctx: Context) -> str:
    """Asks for a password in a form: refused before anything is sent (secrets go by URL)."""
    await ctx.elicit("Log in", Login)
    return "unreachable"


@app.tool()
async def visit_with_token(ctx: Context) -> str:
    """A URL carrying a credential: refused before anything is sent."""
    await ctx.elicit_url("Open the page.", "https://example.com/start?access_token=abcdef0123456789")
    return "unreachable"


@app.tool()
async def event_loop() -> str:
    """The module of the event loop serving this request (``uvloop`` or ``asyncio``)."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


@app.tool()
async def noisy(ctx: Context) -> str:
    """Logs to stderr (never stdout) and to the client only if asked; its stray prints to stdout
    must land on stderr too, not in the protocol."""
    print("this goes to stderr", file=sys.stderr)
    print("a stray print to stdout", flush=True)
    os.write(1, b"a raw write to file descriptor 1\n")
    await ctx.log("warning", "a log message")
    return "quiet on stdout"


@app.tool()
async def progress_then_sampling(ctx: Context) -> str:
    """Reports progress, then needs the client's model: -32021 (HTTP 400) when not declared."""
    await ctx.report_progress(0, 1, "starting")
    reply = await ctx.sample("Suggest a name", max_tokens=5)
    return reply.text


@app.tool()
async def progress_then_wait(label: str, ctx: Context) -> str:
    """Reports progress, then waits for the test to write ``go-<label>`` (which it does once it
    has read that progress from the stream): the stream must start before the handler ends."""
    await ctx.report_progress(1, 2, "waiting")
    go = MARKERS / f"go-{label}"
    for _ in range(500):
        if go.exists():
            return "went on"
        await asyncio.sleep(0.02)
    return "nobody said go"


@app.tool()
async def stubborn(label: str, ctx: Context) -> str:
    """Catches its cancellation and answers anyway (and reports progress): the transport must
    send nothing more for a cancelled request."""
    (MARKERS / f"started-{label}").write_text("started")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        (MARKERS / f"swallowed-{label}").write_text("swallowed")
        await ctx.report_progress(1, 1, "after the cancellation")
        return "answered after the cancellation"
    return "finished"


@app.tool()
async def exits(ctx: Context) -> str:
    """A library inside a handler calls sys.exit() (argparse does, on bad arguments)."""
    sys.exit(2)


@app.tool()
async def awaits_cancelled(ctx: Context) -> str:
    """Awaits a future something else cancelled: CancelledError without the request being
    cancelled (a shared task torn down elsewhere does this)."""
    future = asyncio.get_running_loop().create_future()
    future.cancel()
    await future
    return "unreachable"


@app.tool()
async def unsendable_error(ctx: Context) -> str:
    """Raises an McpError whose data is not JSON."""
    raise McpError(-32602, "Invalid params: the ticket is locked", {"holders": {"alice", "bob"}})


@app.tool()
async def in_a_thread(seconds: float) -> str:
    """Blocks a worker thread: at EOF the process must still end without waiting for it."""
    await asyncio.to_thread(time.sleep, seconds)
    return "thread done"


@app.tool()
async def big(size: int) -> str:
    return "x" * size


_late: set[asyncio.Task[None]] = set()


@app.tool()
async def progress_after_result(label: str, early: bool, ctx: Context) -> str:
    """Leaves a task behind that reports progress once the result has gone out (and, when
    ``early``, reports progress first, long enough before returning that the SSE stream starts).
    Writes ``late-<label>`` with what that late report raised, or ``none``."""
    if early:
        await ctx.report_progress(0, 1, "before the result")
        await asyncio.sleep(0.3)

    async def later() -> None:
        await asyncio.sleep(0.3)
        try:
            await ctx.report_progress(1, 1, "after the result")
            outcome = "none"
        except Exception as exc:
            outcome = repr(exc)
        await asyncio.sleep(0.3)  # what the transport may have started for it has run by now
        (MARKERS / f"late-{label}").write_text(outcome)

    task = asyncio.get_running_loop().create_task(later())
    _late.add(task)
    task.add_done_callback(_late.discard)
    return "returned"


def _said(answer: Any) -> str:
    return f"accept:{answer.data.name}" if answer.accepted else str(answer.action)


@app.tool()
async def ask_forms(label: str, count: int, ctx: Context) -> str:
    """Asks ``count`` forms one after the other, each message starting with ``label`` (so that a
    client running several such calls at once can tell their questions apart); says what each
    answer was, whatever it was."""
    said = []
    for number in range(count):
        said.append(_said(await ctx.elicit(f"{label} form {number}?", Name, key=f"form{number}")))
    return " ".join(said)


@app.tool()
async def ask_pair(label: str, ctx: Context) -> str:
    """Asks two forms in one round (``asyncio.gather``), each message starting with ``label``;
    says what each answer was."""
    answers = await asyncio.gather(
        ctx.elicit(f"{label} form 0?", Name, key="form0"), ctx.elicit(f"{label} form 1?", Name, key="form1")
    )
    return " ".join(_said(answer) for answer in answers)


# Every field kind a 2025-11-25 form may hold that a 2025-06-18 one may not, but the multi-select.
ORDER = {
    "type": "object",
    "properties": {
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "note": {"type": "string", "default": "none"},
        "count": {"type": "integer", "minimum": 1, "default": 1},
        "gift": {"type": "boolean", "default": False},
    },
    "required": ["size"],
}
EXTRAS = {
    "type": "object",
    "properties": {"extras": {"type": "array", "items": {"type": "string", "enum": ["milk", "sugar"]}}},
}


@app.tool()
async def order(ctx: Context) -> str:
    """Asks for an order (titled choices and defaults); says what came back."""
    answer = await ctx.elicit("Your order?", ORDER, key="order")
    return f"order: {answer.action} {sorted(answer.data.items()) if answer.accepted else ''}"


@app.tool()
async def order_extras(ctx: Context) -> str:
    """Asks a multi-select."""
    answer = await ctx.elicit("Extras?", EXTRAS, key="extras")
    return f"extras: {answer.action}"


@app.tool()
async def nap(seconds: float, ctx: Context) -> str:
    """Runs ``seconds`` asking nothing: reports progress before and after."""
    await ctx.report_progress(0, 1, "napping")
    await asyncio.sleep(seconds)
    await ctx.report_progress(1, 1, "awake")
    return "napped"


def main() -> None:
    global MARKERS
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--marker-dir", default=".")
    parser.add_argument("--max-message-bytes", type=int)
    parser.add_argument("--body-timeout", type=float, default=30.0)
    parser.add_argument("--head-timeout", type=float, default=None)
    parser.add_argument("--h11", action="store_true", help="uvicorn's h11 protocol, not httptools")
    parser.add_argument("--graceful", type=float, default=None, help="uvicorn's timeout_graceful_shutdown")
    parser.add_argument("--max-sessions", type=int, default=None, help="2025-11-25 sessions in all")
    parser.add_argument("--sessions-per-user", type=int, default=None)
    parser.add_argument("--idle-timeout", type=float, default=None, help="seconds a session may sit idle")
    parser.add_argument("--leg-timeout", type=float, default=None, help="seconds a 2025 client may take")
    parser.add_argument("--max-rounds", type=int, default=None, help="rounds of questions of a 2025 call")
    parser.add_argument("--max-calls", type=int, default=None, help="calls running at once in a session")
    parser.add_argument("--resume-grace", type=float, default=None, help="seconds to pick a stream up again")
    parser.add_argument("--url-mode", choices=["request", "error"], default="request", help="legacy_url_mode")
    args = parser.parse_args()
    app.legacy_url_mode = args.url_mode
    MARKERS = Path(args.marker_dir)
    if args.max_message_bytes:
        app.max_message_bytes = args.max_message_bytes
    for option, value in (
        ("legacy_max_sessions", args.max_sessions),
        ("legacy_max_sessions_per_user", args.sessions_per_user),
        ("legacy_idle_timeout", args.idle_timeout),
        ("legacy_leg_timeout", args.leg_timeout),
        ("legacy_max_rounds", args.max_rounds),
    ):
        if value is not None:
            setattr(app, option, value)
    if args.stdio:
        app.run_stdio()
    else:
        from mcp_elicit.transport.uvicorn_runner import serve

        # uvicorn's h11 protocol (what runs without httptools), with the same head timeout.
        options: dict[str, Any] = {"http": "h11"} if args.h11 else {}
        if args.graceful is not None:
            options["timeout_graceful_shutdown"] = args.graceful
        from mcp_elicit.transport.http_app import HttpApp

        sessions = {
            name: value
            for name, value in (("max_calls", args.max_calls), ("resume_grace", args.resume_grace))
            if value is not None
        }
        serve(
            HttpApp(app, authenticate=bearer, body_timeout=args.body_timeout, sessions=sessions),
            host="127.0.0.1",
            port=args.port,
            head_timeout=args.head_timeout,
            **options,
        )


if __name__ == "__main__":
    main()
