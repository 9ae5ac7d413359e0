"""Input widgets on prompt_toolkit: a one-of-many list, a many-of-many list, a yes/no key, a
text line.

Each is a small inline (not full-screen) application that erases itself when done; the
caller echoes the outcome through rich, so the transcript stays readable. Esc and Ctrl-C
raise :class:`Cancelled` from every widget, as does the end of the input (a closed pipe,
Ctrl-D on an empty line), so nothing can wait forever on input that will never come.

Labels are shown as plain text fragments: prompt_toolkit never interprets them as markup
(no ``HTML()``/``ANSI()`` here). They are cleaned by the caller before they get here. Lines
are wrapped here to the terminal's width (:mod:`._wrap`: words whole, continuations under the
text), as the rich side does, and laid out top-down: whatever space prompt_toolkit reserves
below the cursor stays under the widget, so a text line's error is right under the line.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition, has_selection
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    BufferControl,
    ConditionalContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    Window,
)
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style
from prompt_toolkit.validation import ValidationError, Validator

from mcp_elicit.client.answerers._wrap import MIN_WIDTH, spans

__all__ = ["Cancelled", "Option", "Terminal", "YesNo", "ask_text", "ask_yes_no", "choose", "choose_many"]

#: How many options a list shows at once; longer lists scroll.
VISIBLE = 10

_STYLE = Style.from_dict(
    {
        "cursor": "reverse",
        "hint": "fg:ansibrightblack",
        "error": "fg:ansired bold",
        "more": "fg:ansibrightblack italic",
        "key": "bold",
        "asker": "bold",
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


def _handle_waiting_keys(app: Application[Any]) -> None:
    """Read the keys waiting in the input now, and handle them: Esc or Ctrl-C still cancel.
    Reading never blocks; the bound keeps a paste that never ends from holding the loop."""
    for _ in range(64):
        keys = app.input.read_keys()
        if not keys:
            break
        app.key_processor.feed_multiple(keys)
    app.key_processor.process_keys()


#: Keys no one types with Alt: what the terminal sends of itself, and signals.
_NOT_TYPED = frozenset(
    {
        Keys.CPRResponse,
        Keys.Vt100MouseEvent,
        Keys.WindowsMouseEvent,
        Keys.BracketedPaste,
        Keys.ScrollUp,
        Keys.ScrollDown,
        Keys.SIGINT,
        Keys.Ignore,
    }
)


def _cancel_bindings(kb: KeyBindings) -> None:
    """A lone Esc, or Ctrl-C, cancels. Not any key that starts with Esc: Alt/Option+key and
    Alt+arrows come as Esc then a key, and must not throw away the question."""

    @kb.add("escape")
    @kb.add("c-c")
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(exception=Cancelled())

    # Esc then a key: prompt_toolkit's own editing keys (Alt+Left/Right and Alt+b/f: a word
    # left/right, Alt+Backspace and Alt+d: delete a word) are more specific and win; anything
    # else does nothing. Without this, a sequence with no binding would fall back to the
    # binding of its first key, and cancel. Esc Esc and Esc Ctrl-C still cancel, and so does an
    # Esc followed by what the terminal sends of itself (its answer to a cursor position
    # request, a paste): that Esc was alone, and what follows it is handled as usual.
    @kb.add("escape", Keys.Any)
    def _meta(event: KeyPressEvent) -> None:
        then = event.key_sequence[-1]
        if then.key in _NOT_TYPED:
            event.app.key_processor.feed(then, first=True)
        if then.key in _NOT_TYPED or then.key in (Keys.Escape, Keys.ControlC):
            event.app.exit(exception=Cancelled())

    # Ctrl-Space (NUL) would start prompt_toolkit's (emacs) selection, in which typing,
    # Backspace and Enter do nothing: the field looks frozen. It does nothing here. Nor does a
    # mouse report: mouse support is off, so one is typed text that looks like it (ESC [31m,
    # a coloured paste), which prompt_toolkit's own handler fails on (a traceback over the
    # form, and the keys after it lost).
    @kb.add("c-@")
    @kb.add(Keys.Vt100MouseEvent)
    def _nothing(event: KeyPressEvent) -> None:
        pass


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


#: In a fragment's style: its spaces never break a line (an option and its key stay together).
_GLUED = " class:glued"


def _width() -> int:
    return max(1, get_app().output.get_size().columns)


def _wrapped(fragments: StyleAndTextTuples, width: int, hang: int) -> StyleAndTextTuples:
    """One line of fragments (its leading spaces are its indent) wrapped to ``width``, each
    continuation ``hang`` cells in; every line ends with a newline."""
    # Spaces inside a glued fragment ("Decline (d)") do not break: measure them as no-break ones.
    plain = "".join(
        fragment[1].replace(" ", "\u00a0") if _GLUED in fragment[0] else fragment[1] for fragment in fragments
    )
    lead = len(plain) - len(plain.lstrip(" "))
    first = min(lead, max(0, width - MIN_WIDTH))
    later = min(hang, max(0, width - MIN_WIDTH))
    out: StyleAndTextTuples = []
    for n, (start, end) in enumerate(spans(plain[lead:], width - first, width - later)):
        out.append(("", " " * (first if n == 0 else later)))
        at = 0
        for fragment in fragments:
            style, text = fragment[0].replace(_GLUED, ""), fragment[1]
            lo, hi = max(start + lead, at), min(end + lead, at + len(text))
            if lo < hi:
                out.append((style, text[lo - at : hi - at]))
            at += len(text)
        out.append(("", "\n"))
    return out


def _asker(above: str | None, width: int) -> StyleAndTextTuples:
    return _wrapped([("class:asker", "  " + above)], width, 4) if above else []


def _lines(
    options: Sequence[Option],
    state: _ListState,
    hint: str,
    mark: Callable[[int], str] | None = None,
    above: str | None = None,
) -> StyleAndTextTuples:
    width = _width()
    out = _asker(above, width)
    if state.start > 0:
        out.append(("class:more", f"    ↑ {state.start} more\n"))
    end = min(state.count, state.start + VISIBLE)
    for i in range(state.start, end):
        option = options[i]
        here = i == state.cursor
        line: StyleAndTextTuples = [("", "  › " if here else "    ")]
        tick = mark(i) if mark is not None else ""
        if tick:
            line.append(("", tick))
        line.append(("class:cursor" if here else "", option.label))
        if option.key:
            line.append(("class:hint" + _GLUED, f"  ({option.key})"))  # never on a line of its own
        out += _wrapped(line, width, 4 + len(tick))
    if end < state.count:
        out.append(("class:more", f"    ↓ {state.count - end} more\n"))
    if state.error:
        out += _wrapped([("class:error", f"  {state.error}")], width, 2)
    out += _wrapped([("class:hint", f"  {hint}")], width, 2)
    out.pop()  # the last newline
    return out


def _window(get_text: Callable[[], StyleAndTextTuples], *, focusable: bool = True) -> Window:
    # Lines are wrapped already (wrap_lines only guards against a width change mid-draw); the
    # window never grows past its text, so what follows it stays right under it.
    control = FormattedTextControl(get_text, focusable=focusable)
    return Window(control, wrap_lines=True, dont_extend_height=True)


def _app(
    terminal: Terminal, get_text: Callable[[], StyleAndTextTuples], kb: KeyBindings
) -> Application[object]:
    return _application(terminal, HSplit([_window(get_text)]), kb)


def _application(terminal: Terminal, container: HSplit, kb: KeyBindings) -> Application[object]:
    app: Application[object] = Application(
        layout=Layout(container),
        key_bindings=kb,
        style=_STYLE,
        input=terminal.input,
        output=terminal.output,
        full_screen=False,
        erase_when_done=True,
        mouse_support=False,
    )
    app.ttimeoutlen = terminal.escape_delay
    # Esc starts longer key sequences too (Alt+key), so a lone Esc waits this long for the
    # rest before it cancels: as long as the input waits to tell it from a terminal's sequence.
    app.timeoutlen = terminal.escape_delay
    return app


def _exit_with(result: object) -> Callable[[KeyPressEvent], None]:
    return lambda event: event.app.exit(result=result)


class _Gate:
    """For a choice that gives consent: its keys do nothing until ``consent_delay`` seconds after
    it was first drawn. The clock starts at the first draw, not when the widget is made: on a
    busy machine, starting can take longer than the delay, and keys typed ahead would count.

    Keys already waiting at the first draw are read and handled then, while the gate is still
    shut: the event loop may read them only after the delay (a stall, a slow machine), and
    they were typed before the choice was on screen whenever they are read."""

    def __init__(self, terminal: Terminal, consent: bool) -> None:
        self._delay = terminal.consent_delay
        self._ready_at = math.inf if consent and self._delay > 0 else 0.0  # 0: no delay at all

    def drawn(self, app: Application[object]) -> None:
        if self._ready_at == math.inf:
            _handle_waiting_keys(app)
            self._ready_at = time.monotonic() + self._delay

    def too_soon(self) -> bool:
        return time.monotonic() < self._ready_at

    def bind(self, kb: KeyBindings, keys: dict[str, Callable[[KeyPressEvent], None]]) -> None:
        """Bind each of ``keys`` to its action, which waits for the gate."""
        for key, act in keys.items():

            def _pressed(event: KeyPressEvent, act: Callable[[KeyPressEvent], None] = act) -> None:
                if not self.too_soon():
                    act(event)

            kb.add(key)(_pressed)

    def app(self, app: Application[object]) -> Application[object]:
        app.after_render += self.drawn
        return app


async def choose(
    terminal: Terminal,
    options: Sequence[Option],
    *,
    default: int = 0,
    hint: str = "",
    consent: bool = False,
    above: str | None = None,
) -> int:
    """Let the person pick one option; returns its index. Enter picks the highlighted one,
    an option's key picks that option at once. ``consent``: a choice that gives consent (to
    open an address, to start or send a form): for ``terminal.consent_delay`` seconds after it
    appears, Enter and the options' keys do nothing, so keys typed before it was on screen
    cannot choose. ``above``: a line shown over the options (who is asking)."""
    if not options:
        raise ValueError("choose() needs at least one option")
    state = _ListState(len(options), default)
    kb = KeyBindings()
    _cancel_bindings(kb)
    _list_bindings(kb, state)
    keys = {option.key: _exit_with(index) for index, option in enumerate(options) if option.key}
    keys["enter"] = lambda event: event.app.exit(result=state.cursor)
    text = hint or "↑/↓ move · Enter choose · Esc cancel"
    gate = _Gate(terminal, consent)
    gate.bind(kb, keys)
    result = await _run(gate.app(_app(terminal, lambda: _lines(options, state, text, above=above), kb)))
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


@dataclass(frozen=True, slots=True)
class YesNo:
    """What :func:`ask_yes_no` got: ``value`` (``True``, ``False``, or ``None`` for "left
    empty"), or ``other``, the index of one of the other options."""

    value: bool | None = None
    other: int | None = None


async def ask_yes_no(
    terminal: Terminal,
    *,
    default: bool | None,
    empty: bool,
    others: Sequence[Option] = (),
    consent: bool = False,
    above: str | None = None,
) -> YesNo:
    """A yes or no in one key: ``y`` or ``n`` (``-`` leaves it empty when ``empty``), or the
    key of one of ``others``. Enter takes the default, which is marked: ``default``, else
    "empty" when allowed; with neither, Enter asks for ``y`` or ``n``. ``consent`` and
    ``above`` as for :func:`choose`."""
    choices: list[tuple[str, Option, YesNo]] = [
        ("yes", Option("Yes", "y"), YesNo(True)),
        ("no", Option("No", "n"), YesNo(False)),
    ]
    if empty:
        choices.append(("empty", Option("Leave empty", "-"), YesNo(None)))
    choices += [(f"other{i}", option, YesNo(other=i)) for i, option in enumerate(others)]
    marked = "yes" if default is True else "no" if default is False else "empty" if empty else None
    kb = KeyBindings()
    _cancel_bindings(kb)
    error = ""

    keys = {option.key: _exit_with(answer) for _, option, answer in choices if option.key}
    keys.update({"Y": keys["y"], "N": keys["n"]})

    def enter(event: KeyPressEvent) -> None:
        nonlocal error
        if marked is None:
            error = "press y for yes or n for no"
        else:
            event.app.exit(result=next(answer for name, _, answer in choices if name == marked))

    keys["enter"] = enter
    gate = _Gate(terminal, consent)
    gate.bind(kb, keys)
    if marked is None:
        hint = "y or n · Esc cancel"
    else:
        default_label = next(option.label for name, option, _ in choices if name == marked)
        hint = f"Enter: {default_label.lower()} (the default) · Esc cancel"

    def lines() -> StyleAndTextTuples:
        width = _width()
        row: StyleAndTextTuples = [("", "  › ")]
        for n, (name, option, _) in enumerate(choices):
            if n:
                row.append(("", "   "))
            row.append(
                (("class:cursor" if name == marked else "") + _GLUED, f"{option.label} ({option.key})")
            )
        out = _asker(above, width) + _wrapped(row, width, 4)
        if error:
            out += _wrapped([("class:error", f"  {error}")], width, 2)
        out += _wrapped([("class:hint", f"  {hint}")], width, 2)
        out.pop()
        return out

    result = await _run(gate.app(_app(terminal, lines, kb)))
    assert isinstance(result, YesNo)
    return result


class _CheckValidator(Validator):
    def __init__(self, check: Callable[[str], str | None]) -> None:
        self._check = check

    def validate(self, document: Document) -> None:
        problem = self._check(document.text)
        if problem:
            raise ValidationError(cursor_position=len(document.text), message=problem)


#: Line breaks, and the controls a terminal shows as ^X (or not at all): none can be sent
#: from a one-line field, as neither the line nor the review can show them as they are.
_LINE_BREAKS = re.compile("[\n\r\x0b\x0c\x85\u2028\u2029]")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def _one_line_problem(text: str) -> str | None:
    if _LINE_BREAKS.search(text):
        return "this field is one line: remove the line break"
    found = _CONTROLS.search(text)
    if found is None:
        return None
    code = ord(found.group())
    shown = f"^{chr(code + 64)}" if code < 0x20 else "^?" if code == 0x7F else f"U+{code:04X}"
    return f"remove the control character ({shown}): it cannot be sent"


def _paste(text: str) -> str:
    """A paste into one line: its line breaks as newlines (refused by the check, so the person
    sees why), but not the last ones, which copying a line brings along."""
    return text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")


async def ask_text(
    terminal: Terminal,
    prompt: str,
    *,
    default: str = "",
    check: Callable[[str], str | None] | None = None,
) -> str:
    """Read one line. ``check`` runs while the person types (its message is shown right under
    the line) and again on Enter, which is refused until it returns ``None``. So is a line
    break or a control character (typed, or pasted: a paste's last line breaks are dropped),
    unless the line is ``default`` as given: what is sent is what the line shows."""
    kb = KeyBindings()
    _cancel_bindings(kb)

    def checked(text: str) -> str | None:
        problem = _one_line_problem(text) if text != default else None
        return problem or (check(text) if check is not None else None)

    def accept(buffer: Buffer) -> bool:
        get_app().exit(result=buffer.text)
        return True  # keep the text: the line is erased with the widget anyway

    buffer = Buffer(
        document=Document(default, len(default)),
        multiline=False,
        validator=_CheckValidator(checked),
        validate_while_typing=True,
        accept_handler=accept,
    )

    @kb.add(Keys.BracketedPaste)
    def _pasted(event: KeyPressEvent) -> None:
        buffer.insert_text(_paste(event.data))

    @kb.add("c-d", filter=Condition(lambda: not buffer.text))
    def _end(event: KeyPressEvent) -> None:  # Ctrl-D on an empty line: the end of the input
        event.app.exit(exception=Cancelled())

    # Text selected with Shift+arrows: prompt_toolkit's Enter does nothing then (it is for
    # multi-line text); here it ends the selection and takes the line, as without one.
    @kb.add("enter", filter=has_selection)
    def _enter(event: KeyPressEvent) -> None:
        buffer.exit_selection()
        buffer.validate_and_handle()

    def problem() -> StyleAndTextTuples:
        error = buffer.validation_error
        if error is None:
            return []
        out = _wrapped([("class:error", "    ✗ " + error.message)], _width(), 6)
        out.pop()
        return out

    pad = " " * len(prompt)
    line = Window(
        BufferControl(buffer, input_processors=[BeforeInput([("class:key", prompt)])]),
        wrap_lines=True,
        dont_extend_height=True,
        get_line_prefix=lambda number, wrapped: pad if wrapped else "",  # typed text: a hanging indent too
    )
    shown = Condition(lambda: buffer.validation_error is not None)
    layout = HSplit([line, ConditionalContainer(_window(problem, focusable=False), filter=shown)])
    result = await _run(_application(terminal, layout, kb))
    assert isinstance(result, str)
    return result
