"""``mcp-elicit demo``: the bundled issue tracker, driven end to end on this machine.

With a terminal, the person answers in the terminal UI (and opens the local "CI service" page
in a browser, or wherever the printed address can be opened). Without one, or with
``--script``, a scripted walk-through plays every step, completes the page over HTTP on
127.0.0.1, and prints the transcript. No network beyond 127.0.0.1 is used either way.
"""

from __future__ import annotations

import asyncio
import sys
import urllib.request
from typing import Any

from mcp_elicit.cli import EXIT_FAILURE, EXIT_OK
from mcp_elicit.client.questions import Answer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.client.text import clean

TITLE = "Login button does nothing on Safari"
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
    print(text, flush=True)


class ScriptedWalkThrough:
    """Answers the demo's questions like a person would, and narrates each step."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self._forms = iter(("details", "confirm"))

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
        from mcp_elicit.client.urls import assess_url

        self._header(question.server, question.message)
        assessment = assess_url(question.url, allow_loopback_http=True)
        _say(f"  address: {assessment.href}  (verdict: {assessment.verdict})")
        for reason in assessment.reasons:
            _say(f"    note: {reason}")
        if assessment.verdict == "refuse" or assessment.href is None or assessment.host != "127.0.0.1":
            _say("  answer: decline (the scripted walk-through only opens the demo's own local page)")
            return Answer("decline")
        _say("  consent given: opening the page and pressing Connect (over HTTP on 127.0.0.1)")
        status = await asyncio.to_thread(_press_connect, assessment.href)
        _say(f"  the page answered HTTP {status}; answer: accept")
        return Answer("accept")


def _press_connect(href: str) -> int:
    # The caller checked the address: the demo's own page, http://127.0.0.1 only.
    request = urllib.request.Request(href, data=b"", method="POST")  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
        return int(response.status)


async def _walk(answerer: Any, *, scripted: bool) -> int:
    from mcp_elicit.client import Client

    command = [sys.executable, "-m", "mcp_elicit.demo.server"]
    async with Client.connect(command, answerer=answerer, stderr="capture") as client:
        identity = client.server_identity
        name = f"{identity.title or identity.name} {identity.version or ''}".strip()
        _say(f"Connected to {name} over stdio (MCP {client.protocol_version}).")
        for tool in await client.list_tools():
            _say(f"  tool {tool['name']}: {tool.get('description', '')}")
        _say(f"\nCalling file_issue(title={TITLE!r}) ...")
        result = await client.call_tool("file_issue", {"title": TITLE})
    _say(f"\nResult{' (error)' if result.is_error else ''}: {clean(result.text, max_length=2000)}")
    if scripted:
        _say("\nThat was the scripted walk-through. Run `mcp-elicit demo` in a terminal to answer yourself.")
    return EXIT_OK if not result.is_error else EXIT_FAILURE


def run_demo(*, script: bool) -> int:
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
    except ClientError as exc:
        print(f"mcp-elicit: the demo failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
