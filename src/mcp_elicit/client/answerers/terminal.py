"""The interactive answerer: questions in a terminal, prompt_toolkit for keys, rich for text.

prompt_toolkit and rich are imported on the first question, not when this module (or
the package) is imported: a CLI that never asks anything does not pay for them.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from mcp_elicit._tty import isatty
from mcp_elicit.client.answerers.errors import AnswererError, TerminalUnavailable
from mcp_elicit.client.questions import Answer, FormQuestion, UrlQuestion

if TYPE_CHECKING:
    import asyncio

    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
    from rich.console import Console

    from mcp_elicit.client.answerers._session import Opener, Session

__all__ = ["TerminalAnswerer"]


class TerminalAnswerer:
    """Puts each question in front of the person at this terminal.

    Forms: a header naming the server (its self-reported name and title, and how this
    client reached it: once per session, again when another server asks), the message as
    plain text, a start menu (fill in / decline / cancel), one input per field (text and
    numbers checked while typing, their errors right under the line; a yes/no in one key;
    lists for single and multiple choice), then a review screen where any field can be
    changed before sending, declining or cancelling. A form of one yes/no field is answered
    with one key, then reviewed like any other (Enter sends it). URLs: the canonical address
    with its registrable domain highlighted and every warning, then explicit consent before
    anything is opened; refused addresses are never offered for opening. Esc or Ctrl-C
    cancels the question on every screen. Every line is wrapped to the terminal's width, words
    (and addresses) whole.

    ``input``/``output`` are prompt_toolkit objects (default: the process's terminal,
    drawing on **stderr** so that stdout stays free for results); ``console`` is the rich
    console for everything else (default: stderr, markup, emoji and highlighting off).
    Without an explicit ``input``, creating one raises :class:`TerminalUnavailable` unless
    stdin and stderr are both TTYs: use a ``ScriptedAnswerer`` or ``AutoDecline`` then.
    :meth:`available` tells in advance.

    ``allow_loopback_http`` lets ``http://localhost`` / ``127.0.0.1`` URLs through (with a
    warning), for development. ``url=False`` makes the answerer form-only (``modes`` is
    then ``{"form"}``). ``open_url`` replaces :func:`mcp_elicit.client.urls.open_in_browser`
    (it gets the assessment and returns an ``OpenResult``); it is only ever called after
    the person said yes. ``escape_delay`` is how long a lone Esc waits to be told apart
    from the start of an arrow key, then from an Alt key (seconds: it cancels after about
    twice this). ``consent_delay``: for this long after a
    choice that answers for the person appears (open an address; start a form, send it), keys
    are ignored (seconds), so that keys typed ahead (while the call or the previous round was
    in flight, a paste, an Enter meant for the last field) never count as consent.

    Questions asked concurrently are shown one after another.
    """

    def __init__(
        self,
        *,
        input: Input | None = None,
        output: Output | None = None,
        console: Console | None = None,
        allow_loopback_http: bool = False,
        url: bool = True,
        open_url: Opener | None = None,
        escape_delay: float = 0.1,
        consent_delay: float = 0.3,
    ) -> None:
        if input is None and not self.available():
            raise TerminalUnavailable(
                "no terminal to ask on: stdin and stderr must both be TTYs (use ScriptedAnswerer "
                "for scripted answers or AutoDecline to decline everything)"
            )
        self._input = input
        self._output = output
        self._console = console
        self._allow_loopback_http = allow_loopback_http
        self._modes = frozenset({"form", "url"}) if url else frozenset({"form"})
        self._open_url = open_url
        self._escape_delay = escape_delay
        self._consent_delay = consent_delay
        self._session: Session | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    @staticmethod
    def available() -> bool:
        """True when this process can ask on its terminal (stdin and stderr are TTYs)."""
        return isatty(sys.stdin) and isatty(sys.stderr)

    @property
    def modes(self) -> frozenset[str]:
        """``{"form", "url"}``, or ``{"form"}`` when made with ``url=False``."""
        return self._modes

    @property
    def allow_loopback_http(self) -> bool:
        """Whether ``http://`` URLs to a loopback host are offered for opening (with a warning)."""
        return self._allow_loopback_http

    def _get_session(self) -> Session:
        if self._session is None:
            from rich.console import Console

            from mcp_elicit.client.answerers._session import Session
            from mcp_elicit.client.answerers._widgets import Terminal

            console = self._console
            if console is None:
                console = Console(stderr=True, markup=False, emoji=False, highlight=False)
            pt_input = self._input
            if pt_input is None:
                from prompt_toolkit.input import create_input

                pt_input = create_input()
            pt_output = self._output
            if pt_output is None:
                from prompt_toolkit.output import create_output

                pt_output = create_output(stdout=sys.stderr)
            self._session = Session(
                console,
                Terminal(pt_input, pt_output, self._escape_delay, self._consent_delay),
                allow_loopback_http=self._allow_loopback_http,
                opener=self._open_url,
            )
        return self._session

    def _get_lock(self) -> asyncio.Lock:
        import asyncio  # already loaded: an answerer is only ever called from a running loop

        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock = asyncio.Lock()
            self._lock_loop = loop
        return self._lock

    async def answer_form(self, question: FormQuestion) -> Answer:
        """Show the form (once any question already on screen is answered) and return the
        person's answer."""
        async with self._get_lock():
            return await self._get_session().form(question)

    async def answer_url(self, question: UrlQuestion) -> Answer:
        """Show the checked URL and ask for consent; ``accept`` once the person opened it and said
        they are done. A refused URL is declined without asking. Raises :class:`AnswererError`
        when the answerer is form-only."""
        if "url" not in self._modes:
            raise AnswererError(
                f"input request {question.key!r} is a URL question, but this TerminalAnswerer is form-only"
            )
        async with self._get_lock():
            return await self._get_session().url(question)

    def __repr__(self) -> str:
        return f"TerminalAnswerer(modes={sorted(self._modes)!r})"
