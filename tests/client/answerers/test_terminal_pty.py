"""The terminal answerer with its defaults, in a real pseudo-terminal (raw mode, stderr UI).

What the child draws is replayed on the harness's terminal (:class:`._vt.Screen`), which also
answers prompt_toolkit's cursor position requests with the real position: prompt_toolkit then
reserves the rows below the cursor as it does in a real terminal (which once pushed a field's
error to the bottom of the screen, ten lines under its field).
"""

from __future__ import annotations

import sys

import pytest

from ._pty import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")

SCRIPT = r"""
import asyncio, json, sys
from mcp_elicit.client.answerers import TerminalAnswerer
from mcp_elicit.client.questions import FormQuestion, ServerIdentity

async def main():
    answerer = TerminalAnswerer()
    schema = {"type": "object", "properties": {"name": {"type": "string", "minLength": 2},
              "age": {"type": "integer", "minimum": 18}}, "required": ["name"]}
    question = FormQuestion(ServerIdentity("demo", "stdio: demo-server"), "k", "Who are you?", schema)
    answer = await answerer.answer_form(question)
    print("RESULT " + json.dumps(answer.to_wire()), flush=True)
    answer = await answerer.answer_form(question)
    print("RESULT " + json.dumps(answer.to_wire()), flush=True)

asyncio.run(main())
"""

# Keys typed within a form wait this long only: the widget has started reading by then.
TYPING = 0.15


def test_a_real_terminal_session() -> None:
    pty = Terminal([sys.executable, "-c", SCRIPT])
    try:
        pty.expect("Fill in the form")
        pty.type("\r")
        pty.expect("[1/2]")
        pty.type("A\r", after=TYPING)  # too short: refused while typing and on Enter
        pty.expect("at least 2 characters long")
        screen = pty.screen.display()
        at = screen.index("  › A")
        assert screen[at + 1] == "    ✗ must be at least 2 characters long (got 1)", screen  # right under
        pty.type("da\r", after=TYPING)
        pty.expect("[2/2]")
        pty.type("\r", after=TYPING)  # optional number left empty
        pty.expect("Send this answer")
        pty.type("s")
        pty.expect('RESULT {"action": "accept", "content": {"name": "Ada"}}')
        # Second question: Esc cancels (a lone Esc, told apart from arrow keys by its delay).
        pty.expect("Fill in the form")
        pty.type("\x1b", after=TYPING)
        pty.expect('RESULT {"action": "cancel"}')
    finally:
        status = pty.close(within=10)
    assert status == 0
