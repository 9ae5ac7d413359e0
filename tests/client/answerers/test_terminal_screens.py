"""The terminal answerer as a person sees it, at 80 and 120 columns.

One session of the real answerer (prompt_toolkit on a pipe, rich, the harness's terminal
rebuilding the screen from both): a form from one server (an invalid entry on the way, untitled
fields, a long message with an address and an e-mail address in it), a yes/no confirmation and
a link from the same server, then a form from another server. The screens at chosen moments and
the whole scrollback at the end are compared with the golden files in ``screens/``; after a
change to the layout, rewrite them with ``MCP_ELICIT_UPDATE_SCREENS=1`` and review the diff.

The layout rules are checked on top, whatever the golden files say: no line wider than the
terminal, no word or address cut in two, the error right under its field, the server named once.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from rich.cells import cell_len

from mcp_elicit.client.answerers._wrap import BREAK_AFTER
from mcp_elicit.client.questions import Answer, ServerIdentity

from ._harness import BACKSPACE, ENTER, Harness, Snap, Until, form, url_question

SCREENS = Path(__file__).with_name("screens")
UPDATE = os.environ.get("MCP_ELICIT_UPDATE_SCREENS") == "1"

OTHER = ServerIdentity(
    name="calendar", reached_via="stdio: calendar-server --team", title="Team Calendar", version="3.0"
)
ADDRESS = "http://127.0.0.1:60197/trips/summer-2027?view=full&lang=en"
MESSAGE = (
    f"Book the trip described at {ADDRESS} for your team. Confirmations go to ana@example.com; "
    "if the dates do not suit you, decline and we will ask again next week.\n\n"
    "\tNote: the hotel holds the rooms until Friday."
)
TRIP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "departure_date": {"type": "string", "format": "date"},
        "numGuests": {"type": "integer", "minimum": 1, "maximum": 12},
        "contact": {
            "type": "string",
            "title": "Contact e-mail",
            "format": "email",
            "description": "Where the booking confirmation and the invoice are sent; we never share it "
            "with the hotel or anybody else.",
        },
        "newsletter": {"type": "boolean", "title": "Send me the travel newsletter"},
    },
    "required": ["departure_date", "numGuests", "contact", "newsletter"],
}
CONFIRM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Book it now?", "default": True}},
}
LINK = (
    "https://accounts.example.com/oauth/authorize?client_id=mcp-elicit-trips&redirect_uri="
    "https%3A%2F%2Fmcp.example.com%2Fconnect%2Fcallback&state=3q2-8Hh1zKk0Lw4xYz&scope=read+write"
)
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture(scope="module", params=[80, 120], ids=["80", "120"])
def term(request: pytest.FixtureRequest) -> Iterator[Harness]:
    """The session, played once per width; the tests read what it showed."""
    with create_pipe_input() as pipe:
        harness = Harness(pipe, width=request.param)
        harness.answers = asyncio.run(session(harness))  # type: ignore[attr-defined]
        yield harness


async def session(term: Harness) -> list[Answer]:
    """The whole session; the harness keeps the screens."""
    answerer = term.answerer()
    keys = (
        *(ENTER, "2027-07-01", ENTER),
        *("0", Until("must be at least 1"), Snap("invalid entry"), BACKSPACE, "2", ENTER),
        *("ana@example.com", ENTER, "y", Until("Send this answer"), Snap("review"), "s"),
    )
    answers = [await term.form(form(TRIP, MESSAGE), *keys, answerer=answerer)]
    confirm = form(CONFIRM, "Book the trip for 2 people leaving on 2027-07-01?")
    answers.append(
        await term.form(
            confirm,
            *(Until("answer nothing"), Snap("yes or no"), "y"),
            *(Until("Change a field"), "s"),
            answerer=answerer,
        )
    )
    link = url_question(LINK, "Sign in to your travel account so that we can book in your name.")
    answers.append(await term.url(link, Until("Open in browser"), Snap("link"), "c", answerer=answerer))
    answers.append(
        await term.form(
            form(NAME, "Who should the invitation come from?", server=OTHER), "d", answerer=answerer
        )
    )
    return answers


def golden(term: Harness) -> str:
    parts = [f"# {term.width} columns, 40 rows: the screen at each moment, then the whole scrollback\n"]
    for name, lines in term.snaps.items():
        parts.append(f"\n=== screen: {name} ===\n" + "".join(line + "\n" for line in lines))
    parts.append("\n=== scrollback at the end ===\n" + "".join(line + "\n" for line in term.vt.history()))
    return "".join(parts)


def compare(name: str, text: str) -> None:
    path = SCREENS / f"{name}.txt"
    if UPDATE:
        SCREENS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}: run with MCP_ELICIT_UPDATE_SCREENS=1 and review it"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(path), "now")
        pytest.fail(
            f"the screens differ from {path} (MCP_ELICIT_UPDATE_SCREENS=1 rewrites it):\n{''.join(diff)}"
        )


def test_the_session_looks_as_reviewed(term: Harness) -> None:
    assert term.answers == [  # type: ignore[attr-defined]
        Answer(
            "accept",
            {
                "departure_date": "2027-07-01",
                "numGuests": 2,
                "contact": "ana@example.com",
                "newsletter": True,
            },
        ),
        Answer("accept", {"ok": True}),
        Answer("cancel"),
        Answer("decline"),
    ]
    compare(f"session-{term.width}", golden(term))


def test_no_line_is_wider_than_the_terminal(term: Harness) -> None:
    assert term.vt.folds == 0  # the terminal never had to fold a line
    assert max(cell_len(line) for line in term.transcript.splitlines()) <= term.width


def words(text: str) -> list[str]:
    return text.split()


def test_no_word_is_cut_in_two(term: Harness) -> None:
    shown = [word for line in term.vt.history() for word in words(line)]
    for word in [*words(MESSAGE), "ana@example.com"]:
        assert word in shown, word
    # Nor in the live widgets: each option stays whole with its key.
    assert any("Decline — answer nothing (d)" in line for line in term.snaps["yes or no"])


def test_a_long_address_wraps_at_its_own_boundaries_and_is_shown_whole(term: Harness) -> None:
    lines = term.vt.history()
    start = lines.index("  The server asks you to open this address in your browser:") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("Site:"))
    pieces = [line.strip() for line in lines[start:end]]
    assert "".join(pieces) == LINK  # whole: nothing elided
    assert all(line.startswith("    ") for line in lines[start:end])  # a hanging indent
    for piece in pieces[:-1]:
        assert piece[-1] in BREAK_AFTER, piece  # broken after "/", "?", "&", "=", "."…
    assert (len(pieces) > 1) == (len(LINK) + 4 > term.width)


def test_the_error_is_right_under_its_field(term: Harness) -> None:
    screen = term.snaps["invalid entry"]
    at = screen.index("  › 0")
    assert screen[at - 1].strip().startswith("required · a whole number")  # the field's rules above
    assert screen[at + 1].startswith("    ✗ must be at least 1")  # its error right below


def test_each_server_is_named_once_and_again_only_when_it_changes(term: Harness) -> None:
    history = "\n".join(term.vt.history())
    assert history.count("  Server:      ") == 2
    assert history.count("Reached via: ") == 2
    assert history.count("━━ A question from an MCP server ━━") == 1
    assert history.count("━━ A question from the same server ━━") == 1
    assert history.count("━━ A link from the same server ━━") == 1
    assert history.count("━━ A question from another MCP server ━━") == 1
    assert "“Team Calendar” (name “calendar”, version 3.0)" in history
    # Whatever scrolled away, the choices said who was asking (the widgets, not the scrollback).
    assert "Answering:" not in history
    for snap in ("review", "yes or no", "link"):
        assert any(line.startswith("  Answering: “Example Files”") for line in term.snaps[snap]), snap


def test_untitled_fields_are_named_readably(term: Harness) -> None:
    history = "\n".join(term.vt.history())
    assert "[1/4] Departure date *" in history
    assert "[2/4] Num guests *" in history
    assert "departure_date" not in history
    assert "numGuests" not in history
    assert "[3/4] Contact e-mail *  (contact)" in history  # a title: the name is shown beside it


def test_wrapped_lines_keep_their_indent(term: Harness) -> None:
    lines = term.vt.history()
    # The description of "Contact e-mail" is longer than a line at 80 columns: every line of it
    # starts under the field's title.
    first = next(i for i, line in enumerate(lines) if "Where the booking confirmation" in line)
    rules = next(i for i in range(first, len(lines)) if "an email address, such as" in lines[i])
    assert all(re.match(r" {8}\S", line) for line in lines[first : rules + 1])
    if term.width == 80:
        assert rules - first >= 2
    # The message's own indentation (a tab) is kept, and its continuations stay under it.
    note = next(i for i, line in enumerate(lines) if "Note: the hotel" in line)
    assert lines[note].startswith("        Note:")
