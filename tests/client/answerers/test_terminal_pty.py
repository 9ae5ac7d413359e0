"""The terminal answerer with its defaults, in a real pseudo-terminal (raw mode, stderr UI).

What the child draws is replayed on the harness's terminal (:class:`._vt.Screen`), which also
answers prompt_toolkit's cursor position requests with the real position: prompt_toolkit then
reserves the rows below the cursor as it does in a real terminal (which once pushed a field's
error to the bottom of the screen, ten lines under its field).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

import pytest

from ._vt import Screen

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

# The start menu and the review's Send ignore keys for the consent delay (0.3 s by default), as
# a person takes longer than that to read them: keys typed ahead never answer the form.
READ = 0.6


class Pty:
    def __init__(self) -> None:
        self.master, slave = os.openpty()
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "40"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SCRIPT], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = ""
        self.screen = Screen(100, 40, respond=lambda answer: os.write(self.master, answer.encode()))

    def expect(self, text: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"never saw {text!r}; screen so far:\n{self.seen[-2000:]}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"terminal closed before {text!r}:\n{self.seen[-2000:]}")
                data = chunk.decode("utf-8", "replace")
                self.screen.feed(data)  # answers the cursor position requests too
                self.seen += data

    def send(self, keys: str, after: float = 0.15) -> None:
        time.sleep(after)  # let the widget start reading
        os.write(self.master, keys.encode())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        os.close(self.master)


def test_a_real_terminal_session() -> None:
    pty = Pty()
    try:
        pty.expect("Fill in the form")
        pty.send("\r", after=READ)
        pty.expect("[1/2]")
        pty.send("A\r")  # too short: refused while typing and on Enter
        pty.expect("at least 2 characters long")
        screen = pty.screen.display()
        at = screen.index("  › A")
        assert screen[at + 1] == "    ✗ must be at least 2 characters long (got 1)", screen  # right under
        pty.send("da\r")
        pty.expect("[2/2]")
        pty.send("\r")  # optional number left empty
        pty.expect("Send this answer")
        pty.send("s", after=READ)
        pty.expect('RESULT {"action": "accept", "content": {"name": "Ada"}}')
        # Second question: Esc cancels (a lone Esc, told apart from arrow keys by its delay).
        pty.expect("Fill in the form")
        pty.send("\x1b")
        pty.expect('RESULT {"action": "cancel"}')
        assert pty.proc.wait(10) == 0
    finally:
        pty.close()
