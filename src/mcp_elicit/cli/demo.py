"""``mcp-elicit demo``: the bundled issue tracker, driven end to end on this machine.

The demo site (:mod:`mcp_elicit.demo.site`) runs as a child process on 127.0.0.1: the tracker
over Streamable HTTP with the URL-mode kit (DEMO ONLY identity and sign-in), and the DEMO ONLY
"CI service" OAuth provider on a port of its own. This command connects to it with the run's
bearer token and calls ``file_issue``.

With a terminal, the person answers in the terminal UI and completes the connection page in
their browser. Without one, or with ``--script``, a scripted walk-through answers every step,
plays the browser part over HTTP (:mod:`mcp_elicit.cli.demo_browser`), and prints the
transcript. No network beyond 127.0.0.1 is used either way. On a terminal (or with ``COLUMNS``
set) the demo's own lines are wrapped to its width the way the terminal form wraps its own:
words and addresses whole, continuations indented.

The site is a development server: it runs with ``MCP_ELICIT_DEBUG=1``, so a tool that fails
says why in its error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from collections.abc import AsyncIterator
from typing import Any, Final

from mcp_elicit.cli import EXIT_FAILURE, EXIT_OK, write_output
from mcp_elicit.client.questions import Answer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.client.text import clean

TITLE = "Login button does nothing on Safari"
_HANG: Final = 2  # continuation lines start this much further in than their line
SCRIPT: dict[str, dict[str, Any]] = {
    "details": {
        "reporter": "ada@example.com",
        "severity": "high",
        "labels": ["bug", "ux"],
        "due": "2027-01-15",
    },
    "confirm": {"ok": True},
}


def _say(text: str = "") -> None:
    """Print a line of the demo's narration, wrapped to the terminal's width (see :func:`wrap`)."""
    for line in wrap(text, _columns()):
        write_output(line)


def _columns() -> int | None:
    """The terminal's width (``COLUMNS`` first, then stdout's terminal), or ``None`` when
    stdout is not a terminal and ``COLUMNS`` is unset: a pipe or a file gets whole lines."""
    columns = shutil.get_terminal_size((0, 0)).columns
    return columns if columns > 0 else None


def wrap(text: str, width: int | None) -> list[str]:
    """``text`` as lines of at most ``width`` cells, broken by the terminal answerer's wrapper
    (:func:`mcp_elicit.client.answerers._wrap.spans`: at spaces, never inside a word; a word
    longer than a line, a URL, only at its own boundaries), each continuation two cells further
    in than its line. ``width=None``: the lines as they are."""
    if width is None:
        return text.split("\n")
    from mcp_elicit.client.answerers._wrap import MIN_WIDTH, spans

    lines: list[str] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        lead = len(line) - len(body)
        # On a narrow terminal the indents shrink: the text keeps some room.
        first = min(lead, max(0, width - MIN_WIDTH))
        later = min(lead + _HANG, max(0, width - MIN_WIDTH))
        for n, (start, end) in enumerate(spans(body, width - first, width - later)):
            lines.append(" " * (first if n == 0 else later) + body[start:end])
    return lines


class ScriptedWalkThrough:
    """Answers the demo's questions like a person would, and narrates each step."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self._forms = iter(("details", "confirm"))
        self._completed: set[str] = set()
        self.failed = False

    def _header(self, server: ServerIdentity, message: str) -> None:
        who = clean(server.title or server.name, single_line=True, max_length=120)
        _say(f"\n[{who}, reached via {clean(server.reached_via, single_line=True, max_length=200)}] asks:")
        _say(f"  {clean(message, single_line=True, max_length=500)}")

    async def answer_form(self, question: FormQuestion) -> Answer:
        self._header(question.server, question.message)
        for name, prop in question.schema.get("properties", {}).items():
            label = clean(str(prop.get("title", name)), single_line=True, max_length=80)
            _say(f"    - {label} ({name}){' *' if name in question.schema.get('required', []) else ''}")
        content = SCRIPT[next(self._forms)]
        _say(f"  answer: accept {content}")
        return Answer("accept", content)

    async def answer_url(self, question: UrlQuestion) -> Answer:
        from mcp_elicit.cli.demo_browser import BrowserStepFailed, ScriptedBrowser
        from mcp_elicit.client.urls import assess_url

        self._header(question.server, question.message)
        assessment = assess_url(question.url, allow_loopback_http=True)
        _say(f"  address: {assessment.href}  (verdict: {assessment.verdict})")
        for reason in assessment.reasons:
            _say(f"    note: {reason}")
        href = assessment.href
        if assessment.verdict == "refuse" or href is None or assessment.host != "127.0.0.1":
            _say("  answer: decline (the scripted walk-through only opens the demo's own local pages)")
            return Answer("decline")
        if href in self._completed:  # asked again while the server catches up: nothing to redo
            _say("  the page was already completed; answer: accept")
            return Answer("accept")
        _say("  consent given: playing the browser part over HTTP, on 127.0.0.1 only")
        try:
            await ScriptedBrowser(_say).complete(href)
        except BrowserStepFailed as exc:
            self.failed = True
            _say(f"  the browser part failed: {clean(str(exc), single_line=True, max_length=500)}")
            _say("  answer: cancel")
            return Answer("cancel")
        self._completed.add(href)
        _say("  the page says the connection is done; answer: accept")
        return Answer("accept")


@contextlib.asynccontextmanager
async def _debug_for_children() -> AsyncIterator[None]:
    """``MCP_ELICIT_DEBUG=1`` in the environment the demo site starts with; as before after."""
    from mcp_elicit.server.app import DEBUG_ENV_VAR

    before = os.environ.get(DEBUG_ENV_VAR)
    os.environ[DEBUG_ENV_VAR] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[DEBUG_ENV_VAR]
        else:
            os.environ[DEBUG_ENV_VAR] = before


async def _walk(answerer: Any, *, scripted: bool) -> int:
    from mcp_elicit.cli.demo_site import demo_site
    from mcp_elicit.client import Client

    async with _debug_for_children(), demo_site() as site:
        _say("Started the demo on 127.0.0.1 (everything in memory; it stops with this command):")
        _say(f"  the issue tracker (MCP over Streamable HTTP, and its connection pages): {site.pages}")
        _say(f"  the demo CI service (a DEMO ONLY third-party OAuth provider): {site.ci}")
        _say(f"  you are {site.principal} (DEMO ONLY development identity, with this run's bearer token)")
        headers = {"Authorization": f"Bearer {site.bearer}"}
        async with Client.connect(site.mcp, answerer=answerer, headers=headers) as client:
            identity = client.server_identity
            name = f"{identity.title or identity.name} {identity.version or ''}".strip()
            _say(f"Connected to {name} at {site.mcp} (MCP {client.protocol_version}).")
            for tool in await client.list_tools():
                _say(f"  tool {tool['name']}: {tool.get('description', '')}")
            _say(f"\nCalling file_issue(title={TITLE!r}) ...")
            result = await client.call_tool("file_issue", {"title": TITLE})
    _say(f"\nResult{' (error)' if result.is_error else ''}: {clean(result.text, max_length=2000)}")
    if scripted:
        _say("\nThat was the scripted walk-through. Run `mcp-elicit demo` in a terminal to answer yourself.")
    failed = result.is_error or getattr(answerer, "failed", False)
    return EXIT_FAILURE if failed else EXIT_OK


def run_demo(*, script: bool) -> int:
    from mcp_elicit.cli.demo_site import DemoSiteError
    from mcp_elicit.client import ClientError

    if script:
        answerer: Any = ScriptedWalkThrough()
    else:
        from mcp_elicit.client.answerers import TerminalAnswerer

        answerer = TerminalAnswerer(allow_loopback_http=True)
    try:
        return asyncio.run(_walk(answerer, scripted=script))
    except KeyboardInterrupt:
        print("mcp-elicit: demo interrupted", file=sys.stderr)
        return 130
    except (ClientError, DemoSiteError) as exc:
        print(f"mcp-elicit: the demo failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
