"""Input widgets on prompt_toolkit: a one-of-many list, a many-of-many list, a text line.

Each is a small inline (not full-screen) application that erases itself when done; the
caller echoes the outcome through rich, so the transcript stays readable. Esc and Ctrl-C
raise :class:`Cancelled` from every widget, as does the end of the input (a closed pipe,
Ctrl-D on an empty line), so nothing can wait forever on input that will never come.

Labels are shown as plain text fragments: prompt_toolkit never interprets them as markup
(no ``HTML()``/``ANSI()`` here). They are cleaned by the caller before they get here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application, get_app
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style
from prompt_toolkit.validation import ValidationError, Validator

__all__ = ["Cancelled", "Option", "Terminal", "ask_text", "choose", "choose_many"]

#: How many options a list shows at once; longer lists scroll.
VISIBLE = 10

_STYLE = Style.from_dict(
    {
        "cursor": "reverse",
        "hint": "fg:ansibrightblack",
        "error": "fg:ansired bold",
        "more": "fg:ansibrightblack italic",
        "key": "bold",
        "validation-toolbar": "bg:ansired fg:ansiwhite",
    }
)


class Cancelled(Exception):
    """The person pressed Esc or Ctrl-C, or the input ended."""


@dataclass(frozen=True, slots=True)
class Option:
    """One line of a list. ``key`` (a single character) picks it directly."""

    label: str
    key: str | None = None


@dataclass(slots=True)
class Terminal:
    """Where the widgets read keys and draw."""

    input: Input
    output: Output
    escape_delay: float = 0.1  # seconds to tell a lone Esc from the start of a key sequence
    consent_delay: float = 0.3  # seconds keys are ignored once a consent choice appears


def _flush_pending(app: Application[Any]) -> None:
    """Deliver a lone Esc typed ahead of this widget.

    prompt_toolkit flushes a pending Esc only after new input arrives; one read by the
    previous widget together with other keys would otherwise wait for the next key.
    """

    async def flush() -> None:
        await asyncio.sleep(app.ttimeoutlen)
        if app.is_running and not app.is_done:
            keys = app.input.flush_keys()
            if keys:
                app.key_processor.feed_multiple(keys)
                app.key_processor.process_keys()

    app.create_background_task(flush())


def _cancel_bindings(kb: KeyBindings) -> None:
    @kb.add("escape", eager=True)
    @kb.add("c-c")
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(exception=Cancelled())


async def _run(app: Application[object]) -> object:
    try:
        return await app.run_async(
            pre_run=lambda: _flush_pending(get_app()),
            set_exception_handler=False,
            handle_sigint=False,
        )
    except (EOFError, KeyboardInterrupt) as exc:
        raise Cancelled() from exc


def _window_start(cursor: int, count: int, start: int) -> int:
    if count <= VISIBLE:
        return 0
    if cursor < start:
        return cursor
    if cursor >= start + VISIBLE:
        return cursor - VISIBLE + 1
    return min(start, count - VISIBLE)


class _ListState:
    def __init__(self, count: int, cursor: int) -> None:
        self.count = count
        self.cursor = max(0, min(cursor, count - 1))
        self.start = _window_start(self.cursor, count, 0)
        self.error = ""

    def move(self, delta: int) -> None:
        if self.count:
            self.cursor = max(0, min(self.count - 1, self.cursor + delta))
            self.start = _window_start(self.cursor, self.count, self.start)
            self.error = ""


def _list_bindings(kb: KeyBindings, state: _ListState) -> None:
    @kb.add("up")
    @kb.add("c-p")
    def _up(event: KeyPressEvent) -> None:
        state.move(-1)

    @kb.add("down")
    @kb.add("c-n")
    @kb.add("tab")
    def _down(event: KeyPressEvent) -> None:
        state.move(1)

    @kb.add("pageup")
    def _page_up(event: KeyPressEvent) -> None:
        state.move(-VISIBLE)

    @kb.add("pagedown")
    def _page_down(event: KeyPressEvent) -> None:
        state.move(VISIBLE)

    @kb.add("home")
    def _home(event: KeyPressEvent) -> None:
        state.move(-state.count)

    @kb.add("end")
    def _end(event: KeyPressEvent) -> None:
        state.move(state.count)


def _lines(
    options: Sequence[Option],
    state: _ListState,
    hint: str,
    mark: Callable[[int], str] | None = None,
) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    if state.start > 0:
        out.append(("class:more", f"    ↑ {state.start} more\n"))
    end = min(state.count, state.start + VISIBLE)
    for i in range(state.start, end):
        option = options[i]
        here = i == state.cursor
        out.append(("", "  › " if here else "    "))
        if mark is not None:
            out.append(("", mark(i)))
        style = "class:cursor" if here else ""
        out.append((style, option.label))
        if option.key:
            out.append(("class:hint", f"  ({option.key})"))
        out.append(("", "\n"))
    if end < state.count:
        out.append(("class:more", f"    ↓ {state.count - end} more\n"))
    if state.error:
        out.append(("class:error", f"  {state.error}\n"))
    out.append(("class:hint", f"  {hint}"))
    return out


def _app(
    terminal: Terminal, get_text: Callable[[], StyleAndTextTuples], kb: KeyBindings
) -> Application[object]:
    app: Application[object] = Application(
        layout=Layout(HSplit([Window(FormattedTextControl(get_text, focusable=True), wrap_lines=True)])),
        key_bindings=kb,
        style=_STYLE,
        input=terminal.input,
        output=terminal.output,
        full_screen=False,
        erase_when_done=True,
        mouse_support=False,
    )
    app.ttimeoutlen = terminal.escape_delay
    return app


async def choose(
    terminal: Terminal,
    options: Sequence[Option],
    *,
    default: int = 0,
    hint: str = "",
    consent: bool = False,
) -> int:
    """Let the person pick one option; returns its index. Enter picks the highlighted one,
    an option's key picks that option at once. ``consent``: a choice that gives consent (to
    open an address, to start or send a form): for ``terminal.consent_delay`` seconds after it
    appears, Enter and the options' keys do nothing, so keys typed before it was on screen
    cannot choose."""
    if not options:
        raise ValueError("choose() needs at least one option")
    state = _ListState(len(options), default)
    kb = KeyBindings()
    _cancel_bindings(kb)
    _list_bindings(kb, state)
    ready_at = 0.0

    def too_soon() -> bool:
        return consent and time.monotonic() < ready_at

    @kb.add("enter")
    def _pick(event: KeyPressEvent) -> None:
        if not too_soon():
            event.app.exit(result=state.cursor)

    for index, option in enumerate(options):
        if option.key:

            def _hotkey(event: KeyPressEvent, index: int = index) -> None:
                if not too_soon():
                    event.app.exit(result=index)

            kb.add(option.key)(_hotkey)

    text = hint or "↑/↓ move · Enter choose · Esc cancel"
    ready_at = time.monotonic() + terminal.consent_delay
    result = await _run(_app(terminal, lambda: _lines(options, state, text), kb))
    assert isinstance(result, int)
    return result


async def choose_many(
    terminal: Terminal,
    options: Sequence[Option],
    *,
    selected: Sequence[int] = (),
    check: Callable[[list[int]], str | None] | None = None,
    hint: str = "",
) -> list[int]:
    """Let the person tick any options; returns their indexes in option order. Space
    ticks or unticks; Enter confirms once ``check`` (given the indexes) returns ``None``."""
    if not options:
        raise ValueError("choose_many() needs at least one option")
    state = _ListState(len(options), 0)
    ticked = set(selected)
    kb = KeyBindings()
    _cancel_bindings(kb)
    _list_bindings(kb, state)

    @kb.add("space")
    @kb.add("x")
    def _toggle(event: KeyPressEvent) -> None:
        ticked.symmetric_difference_update({state.cursor})
        state.error = ""

    @kb.add("enter")
    def _done(event: KeyPressEvent) -> None:
        chosen = sorted(ticked)
        problem = check(chosen) if check is not None else None
        if problem:
            state.error = problem
        else:
            event.app.exit(result=chosen)

    def mark(i: int) -> str:
        return "[x] " if i in ticked else "[ ] "

    text = hint or "↑/↓ move · Space tick/untick · Enter done · Esc cancel"
    result = await _run(_app(terminal, lambda: _lines(options, state, text, mark), kb))
    assert isinstance(result, list)
    return result


class _CheckValidator(Validator):
    def __init__(self, check: Callable[[str], str | None]) -> None:
        self._check = check

    def validate(self, document: Document) -> None:
        problem = self._check(document.text)
        if problem:
            raise ValidationError(cursor_position=len(document.text), message=problem)


async def ask_text(
    terminal: Terminal,
    prompt: str,
    *,
    default: str = "",
    check: Callable[[str], str | None] | None = None,
) -> str:
    """Read one line. ``check`` runs while the person types (its message is shown under
    the line) and again on Enter, which is refused until it returns ``None``."""
    kb = KeyBindings()
    _cancel_bindings(kb)
    session: PromptSession[str] = PromptSession(
        input=terminal.input,
        output=terminal.output,
        key_bindings=kb,
        validator=_CheckValidator(check) if check is not None else None,
        validate_while_typing=True,
        erase_when_done=True,
        mouse_support=False,
        enable_history_search=False,
        style=_STYLE,
    )
    session.app.ttimeoutlen = terminal.escape_delay
    try:
        return await session.prompt_async(
            [("class:key", prompt)],
            default=default,
            pre_run=lambda: _flush_pending(session.app),
            set_exception_handler=False,
            handle_sigint=False,
        )
    except (EOFError, KeyboardInterrupt) as exc:
        raise Cancelled() from exc
