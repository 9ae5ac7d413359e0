"""Drive the terminal answerer with prompt_toolkit's pipe input and capture both outputs.

``Harness.keys`` queues keystrokes (all at once: prompt_toolkit keeps type-ahead between
widgets); ``Harness.form``/``Harness.url`` ask a question with a time limit, so a UI that
waits for input it will never get fails the test instead of hanging it. ``transcript`` is
what rich printed (no colours), ``screen`` what prompt_toolkit drew (VT100 escapes and all).
Both also go to ``vt``, a terminal of the harness's size (:class:`._vt.Screen`): what a person
would see, at any moment (a :class:`Snap` in a key sequence keeps a copy) and at the end.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import Awaitable
from typing import Any

from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from mcp_elicit.client.answerers import TerminalAnswerer
from mcp_elicit.client.questions import Answer, FormQuestion, ServerIdentity, UrlQuestion
from mcp_elicit.client.urls import OpenResult, UrlAssessment

from ._vt import Screen

ENTER = "\r"
ESC = "\x1b"
CTRL_C = "\x03"
CTRL_U = "\x15"  # clear the line before the cursor
BACKSPACE = "\x7f"
UP = "\x1b[A"
DOWN = "\x1b[B"
SPACE = " "

# What must never reach the screen from a server string: C0 controls but tab and newline, DEL,
# C1, bidi controls, zero-width characters, BOM.
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")

SERVER = ServerIdentity(
    name="files", reached_via="https://mcp.example.com/mcp", title="Example Files", version="1.2"
)


class Pause(float):
    """In a key sequence: wait this long (seconds) before sending the rest, so that
    prompt_toolkit draws the screen in between (keys sent together are drawn once)."""


PAUSE = Pause(0.25)


class Until(str):
    """In a key sequence: wait (at most 5 s) until the screen shows this text before sending the
    rest; steadier than a :class:`Pause` on a busy machine."""


class Snap(str):
    """In a key sequence: keep a copy of the screen as it is now, under this name."""


class _Tee(io.StringIO):
    """A text stream that also draws what is written on a :class:`Screen`."""

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self._vt = screen

    def write(self, text: str) -> int:
        self._vt.feed(text)
        return super().write(text)


class FakeOpener:
    """Stands in for open_in_browser: records what it was asked to open, opens nothing."""

    def __init__(self, result: OpenResult | None = None) -> None:
        self.calls: list[UrlAssessment] = []
        self.result = result or OpenResult(opened=True, reason="opened in the default browser")

    def __call__(self, assessment: UrlAssessment) -> OpenResult:
        self.calls.append(assessment)
        return self.result


class Harness:
    def __init__(self, pipe: PipeInput, width: int = 120, rows: int = 40) -> None:
        self.pipe = pipe
        self.width = width
        self.vt = Screen(width, rows)
        self._rich = _Tee(self.vt)
        self._screen = _Tee(self.vt)
        # rich's defaults (markup, emoji codes, highlighting on): the answerer must be safe
        # with any console it is given.
        self.console = Console(file=self._rich, width=width, color_system=None)
        self.output = Vt100_Output(self._screen, lambda: Size(rows=rows, columns=width), term="xterm")
        self.opener = FakeOpener()
        self.snaps: dict[str, list[str]] = {}

    def answerer(self, **options: Any) -> TerminalAnswerer:
        options.setdefault("open_url", self.opener)
        # Keys are typed at once here: the consent delay has its own test.
        options.setdefault("consent_delay", 0.0)
        return TerminalAnswerer(input=self.pipe, output=self.output, console=self.console, **options)

    def keys(self, *keys: str) -> None:
        self.pipe.send_text("".join(keys))

    async def _type(self, keys: tuple[str, ...]) -> None:
        chunk: list[str] = []
        for key in keys:
            if isinstance(key, Pause):
                self.keys(*chunk)
                chunk = []
                await asyncio.sleep(key)
            elif isinstance(key, Until):
                self.keys(*chunk)
                chunk = []
                for _ in range(500):
                    if key in self.screen:
                        break
                    await asyncio.sleep(0.01)
            elif isinstance(key, Snap):
                self.keys(*chunk)
                chunk = []
                self.snaps[key] = self.vt.display()
            else:
                chunk.append(key)
        self.keys(*chunk)

    async def _ask(self, asking: Awaitable[Answer], keys: tuple[str, ...]) -> Answer:
        typing = asyncio.ensure_future(self._type(keys))
        try:
            return await asyncio.wait_for(asking, 10)
        finally:
            typing.cancel()

    async def form(
        self, question: FormQuestion, *keys: str, answerer: TerminalAnswerer | None = None
    ) -> Answer:
        return await self._ask((answerer or self.answerer()).answer_form(question), keys)

    async def url(
        self, question: UrlQuestion, *keys: str, answerer: TerminalAnswerer | None = None
    ) -> Answer:
        return await self._ask((answerer or self.answerer()).answer_url(question), keys)

    @property
    def transcript(self) -> str:
        return self._rich.getvalue()

    @property
    def screen(self) -> str:
        return self._screen.getvalue()


def form(schema: dict[str, Any], message: str = "Please fill in the form.", **kw: Any) -> FormQuestion:
    return FormQuestion(
        server=kw.pop("server", SERVER), key=kw.pop("key", "q1"), message=message, schema=schema, **kw
    )


def url_question(url: str, message: str = "Connect your account.", **kw: Any) -> UrlQuestion:
    return UrlQuestion(server=kw.pop("server", SERVER), key=kw.pop("key", "u1"), message=message, url=url)
