"""Keys a terminal sends that are not plain typing: Alt/Option combinations, Ctrl-Space, pastes,
stray escape sequences. None of them may lose the question or send what the screen does not show."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_elicit.client.questions import Answer

from ._harness import BACKSPACE, CTRL_U, DOWN, ENTER, ESC, PAUSE, Harness, Until, form

NOTE: dict[str, Any] = {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}

NOTE_AND_PICK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": "string"},
        "pick": {"type": "string", "enum": ["one", "two", "three"]},
    },
    "required": ["note", "pick"],
}


@pytest.mark.parametrize(
    ("key", "sent"),
    [
        ("\x1b[1;3D", "hello Xworld"),  # Alt+Left (xterm, GNOME Terminal, Konsole): a word left
        ("\x1bb", "hello Xworld"),  # Option+Left (macOS Terminal), Alt+b: a word left
        ("\x1b\x7f", "hello X"),  # Alt+Backspace: delete the word before the cursor
        ("\x1b[1;3B", "hello worldX"),  # Alt+Down: nothing to do in a line
        ("\x1bz", "hello worldX"),  # Alt+z: nothing either
    ],
    ids=["alt-left", "option-left", "alt-backspace", "alt-down", "alt-z"],
)
async def test_alt_keys_in_a_text_field_edit_instead_of_cancelling(
    term: Harness, key: str, sent: str
) -> None:
    answer = await term.form(form(NOTE), ENTER, "hello world", key, "X", ENTER, ENTER)
    assert answer == Answer("accept", {"note": sent})


async def test_alt_down_in_a_list_does_not_cancel(term: Harness) -> None:
    answer = await term.form(form(NOTE_AND_PICK), ENTER, "hi", ENTER, DOWN, "\x1b[1;3B", ENTER, ENTER)
    assert answer == Answer("accept", {"note": "hi", "pick": "two"})


@pytest.mark.parametrize(
    "keys",
    [(ESC,), (ESC, ESC), ("hello", ESC), (PAUSE, ESC, "\x1b[5;1R")],
    ids=["esc", "esc-esc", "typed-then-esc", "esc-then-the-terminal-answers-a-position-request"],
)
async def test_a_lone_esc_still_cancels_at_once(term: Harness, keys: tuple[str, ...]) -> None:
    # (The pause: the position answer must reach the text field, not the menu before it.)
    started = time.monotonic()
    assert await term.form(form(NOTE), ENTER, *keys) == Answer("cancel")
    # prompt_toolkit waits a second for the rest of a key sequence unless told otherwise.
    assert time.monotonic() - started < 0.8 + (0.25 if PAUSE in keys else 0)


CTRL_SPACE = "\x00"
SHIFT_LEFT = "\x1b[1;2D"


@pytest.mark.parametrize(
    ("keys", "sent"),
    [
        (("abc", CTRL_SPACE, "xyz", BACKSPACE, ENTER), "abcxy"),  # no selection: typing works on
        (("abc", SHIFT_LEFT, ENTER), "abc"),  # a selection: Enter still takes the line
        (("abc", SHIFT_LEFT, "x", ENTER), "abx"),  # typing replaces the selection
    ],
    ids=["ctrl-space", "shift-left-enter", "shift-left-type"],
)
async def test_nothing_freezes_a_text_field_in_a_selection(
    term: Harness, keys: tuple[str, ...], sent: str
) -> None:
    answer = await term.form(form(NOTE), ENTER, *keys, ENTER)
    assert answer == Answer("accept", {"note": sent})


async def test_ctrl_space_does_nothing_in_a_list(term: Harness) -> None:
    answer = await term.form(
        form(NOTE_AND_PICK), ENTER, "hi", ENTER, CTRL_SPACE, DOWN, ENTER, CTRL_SPACE, ENTER
    )
    assert answer == Answer("accept", {"note": "hi", "pick": "two"})


def paste(text: str) -> str:
    return f"\x1b[200~{text}\x1b[201~"


async def test_a_pasted_line_loses_its_last_line_break(term: Harness) -> None:
    answer = await term.form(form(NOTE), ENTER, paste("Lisbon\r\n"), ENTER, ENTER)
    assert answer == Answer("accept", {"note": "Lisbon"})


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ((paste("line one\nline two"),), "this field is one line: remove the line break"),
        (("a\x1ab",), "remove the control character (^Z): it cannot be sent"),
        ((paste("a\tb"),), "remove the control character (^I): it cannot be sent"),
    ],
    ids=["pasted-line-break", "ctrl-z", "pasted-tab"],
)
async def test_a_line_break_or_control_character_is_refused_under_the_line(
    term: Harness, keys: tuple[str, ...], message: str
) -> None:
    clear = (CTRL_U, BACKSPACE, CTRL_U)  # the line, the line break, the line before it
    answer = await term.form(form(NOTE), ENTER, *keys, ENTER, Until(message), *clear, "fixed", ENTER, ENTER)
    assert answer == Answer("accept", {"note": "fixed"})
    assert f"✗ {message}" in term.screen


async def test_a_typed_colour_sequence_is_dropped_without_a_traceback(
    term: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    # ESC [31m (a coloured paste without bracketed paste) looks like a mouse report to
    # prompt_toolkit, whose handler raised: asyncio printed a traceback over the form.
    answer = await term.form(form(NOTE), ENTER, "a\x1b[31mb", PAUSE, ENTER, ENTER)
    assert answer == Answer("accept", {"note": "ab"})
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
