"""A server cannot push its identity off screen, nor get raw text onto the input line.

The message's blank runs are collapsed and its lines capped. The header names the server once;
whenever it has scrolled off the screen, every choice that answers the server (start, send,
decline, cancel, open a link) shows who is asking right above its options. These tests read the
screen a person would see at each decision (the harness's terminal), not only the transcript.
"""

from __future__ import annotations

import itertools
import re

import pytest

from mcp_elicit.client.answerers._view import DESCRIPTION_LINES, MESSAGE_LINES, MESSAGE_TAIL
from mcp_elicit.client.questions import Answer, ServerIdentity

from ._harness import CTRL_U, ENTER, FORBIDDEN, PAUSE, Harness, Snap, Until, form, url_question

ASKER = "  Answering: “Example Files” (name “files”) reached via https://mcp.example.com/mcp"
# What a hostile message draws after scrolling the real header away.
FAKE_HEADER = (
    "━━ A question from an MCP server ━━\n"
    "  Server:      “Your Bank” (version 1)  — as the server describes itself\n"
    "  Reached via: https://bank.example/mcp  — how this client connected\n"
)
SPOOF = (
    "Please confirm.\n"
    + "\n" * 400
    + " \t \n" * 50
    + FAKE_HEADER
    + "".join(f"line {i}\n" for i in range(300))
)
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


pytestmark = pytest.mark.usefixtures("no_network")


def message_block(transcript: str) -> list[str]:
    lines = transcript.splitlines()
    start = lines.index("  Message from the server:") + 1
    end = start
    while end < len(lines) and (lines[end].startswith("    ") or lines[end] == ""):
        end += 1
    return lines[start:end]


def above(lines: list[str], option: str) -> str:
    """The screen line right above the menu whose first option is ``option``."""
    at = next(i for i, line in enumerate(lines) if line.startswith(("  › ", "    ")) and option in line)
    return lines[at - 1]


def real_identity_last(lines: list[str]) -> bool:
    """On this screen, the last line naming a server before the menu is the real one."""
    naming = [i for i, line in enumerate(lines) if "Your Bank" in line or line == ASKER]
    return bool(naming) and lines[naming[-1]] == ASKER


async def test_blank_runs_collapse_and_the_message_is_capped_with_a_note(term: Harness) -> None:
    answer = await term.form(form(NAME, SPOOF), "d")
    assert answer == Answer("decline")
    block = message_block(term.transcript)
    # Every message line is indented under our own heading; no two blank lines in a row.
    assert all(line.startswith("    ") or line == "" for line in block)
    assert not any(a == b == "" for a, b in itertools.pairwise(block))
    # 1 + 1 blank + 3 fake header lines + 300 numbered = 305 lines; MESSAGE_LINES shown, the
    # last MESSAGE_TAIL of them after the note (a server appends a refusal's reason there).
    shown = [line for line in block if "left out here" not in line]
    assert len(shown) == MESSAGE_LINES
    assert f"    … {305 - MESSAGE_LINES} lines left out here …" in block
    assert "line 250" not in term.transcript
    assert shown[-MESSAGE_TAIL:] == [f"    line {i}" for i in range(300 - MESSAGE_TAIL, 300)]


async def test_a_long_message_a_person_answers_is_shown_whole(term: Harness) -> None:
    """Forty files to delete and the server's reason at the end: every line in sight (with 30
    lines shown, the last eleven, among them a key file, were hidden and Accept was offered)."""
    files = "".join(f"~/project/file{i}.txt\n" for i in range(39)) + "~/.ssh/id_ed25519\n"
    text = "Delete these 40 files?\n" + files + "\n(The previous answer was not accepted: name: too short)"
    await term.form(form(NAME, text), "d")
    block = message_block(term.transcript)
    assert "    ~/.ssh/id_ed25519" in block
    assert "    (The previous answer was not accepted: name: too short)" in block
    assert not any("left out" in line for line in block)


async def test_identity_is_next_to_every_form_decision(term: Harness) -> None:
    keys = (
        Until("Fill in the form"),
        Snap("start"),
        ENTER,
        "Ada",
        ENTER,
        Until("Send this"),
        Snap("send"),
        "s",
    )
    answer = await term.form(form(NAME, SPOOF), *keys)
    assert answer == Answer("accept", {"name": "Ada"})
    # However long the message, who is asking is on screen right above each decision, and it
    # is the last identity shown there (not the message's fake header).
    for snap, first in (("start", "Fill in the form"), ("send", "Send this answer")):
        assert above(term.snaps[snap], first) == ASKER
        assert real_identity_last(term.snaps[snap])
    # It belongs to the menu, which is erased once answered: the scrollback is not cluttered.
    assert "Answering:" not in term.transcript


@pytest.mark.parametrize(("key", "action"), [("d", "decline"), ("c", "cancel")])
async def test_identity_before_declining_or_cancelling_at_review(
    term: Harness, key: str, action: str
) -> None:
    answer = await term.form(form(NAME, SPOOF), ENTER, "Ada", ENTER, Until("Send this"), Snap("review"), key)
    assert answer == Answer(action)  # both are choices of that menu, under the identity
    assert above(term.snaps["review"], "Send this answer") == ASKER


async def test_identity_before_declining_a_form_that_cannot_be_shown(term: Harness) -> None:
    bad = {"type": "object", "properties": {"n": {"type": "object"}}}
    answer = await term.form(form(bad, SPOOF), Until("Decline — answer no"), Snap("menu"), "d")
    assert answer == Answer("decline")
    assert above(term.snaps["menu"], "Decline — answer no") == ASKER


async def test_identity_is_next_to_url_consent_and_done(term: Harness) -> None:
    keys = (Until("Open in browser"), Snap("consent"), "o", Until("Done — continue"), Snap("done"), ENTER)
    answer = await term.url(url_question("https://accounts.example.com/connect", SPOOF), *keys)
    assert answer == Answer("accept")
    assert above(term.snaps["consent"], "Open in browser") == ASKER
    assert above(term.snaps["done"], "Done — continue") == ASKER
    assert real_identity_last(term.snaps["consent"])
    assert len(term.opener.calls) == 1


async def test_identity_is_next_to_the_warning_confirmation(term: Harness) -> None:
    # An unusual port is a "warn" verdict: one more confirmation before opening.
    keys = ("o", Until("Yes, open it"), Snap("sure"), "n")
    answer = await term.url(url_question("https://example.com:8443/x", SPOOF), *keys)
    assert answer == Answer("decline")
    assert above(term.snaps["sure"], "Yes, open it") == ASKER


async def test_a_title_without_a_distinct_name_is_shown_once(term: Harness) -> None:
    server = ServerIdentity(name="files", reached_via="stdio: files-server --x")
    await term.form(form(NAME, SPOOF, server=server), Until("Decline — answer no"), Snap("start"), "d")
    assert (
        above(term.snaps["start"], "Fill in the form")
        == "  Answering: “files” reached via stdio: files-server --x"
    )


async def test_while_the_header_is_on_screen_it_is_not_repeated(term: Harness) -> None:
    await term.form(form(NAME, "Hi"), Until("Fill in the form"), Snap("start"), "d")
    screen = term.snaps["start"]
    assert (
        "  Server:      “Example Files” (name “files”, version 1.2)  — as the server describes itself"
        in screen
    )
    assert "  Reached via: https://mcp.example.com/mcp  — how this client connected" in screen
    assert not any("Answering:" in line for line in screen)


async def test_descriptions_collapse_blank_runs_and_are_capped(term: Harness) -> None:
    description = "first\n\n\n\n" + "".join(f"d{i}\n" for i in range(40))
    schema = {"type": "object", "properties": {"n": {"type": "string", "description": description}}}
    await term.form(form(schema, "Hi"), ENTER, ENTER, "d")
    out = term.transcript
    assert "first\n\n\n" not in out.replace(" ", "")  # one blank line at most
    hidden = 40 + 2 - DESCRIPTION_LINES  # first, one blank, d0..d39
    assert f"… {hidden} more lines not shown" in out
    assert "d39" not in out


# -- defaults and previous answers pre-filled into the input line --------------------------------
async def test_a_default_with_bidi_or_escapes_is_refused_before_display(term: Harness) -> None:
    for default in ("pay\u202eusd", "\x1b]52;c;cm0gLXJmIH4=\x07x", "zero\u200bwidth"):
        schema = {"type": "object", "properties": {"s": {"type": "string", "default": default}}}
        answer = await term.form(form(schema, "Hi"), "d")
        assert answer == Answer("decline")
    assert "This form cannot be shown" in term.transcript
    assert "/properties/s/default" in term.transcript
    assert FORBIDDEN.search(term.transcript) is None
    assert "\x1b]" not in term.screen
    assert re.search("[\u202a-\u202e\u2066-\u2069\u200b\ufeff\x9b\x9d]", term.screen) is None


async def test_a_prefilled_previous_answer_is_cleaned(term: Harness) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "minLength": 8}}}
    question = form(
        schema,
        "Hi",
        previous={"s": "ab\u202ecd\x1b]52;c;eA==\x07ef\u2066"},
        errors={"s": "must be at least 8 characters long (got 7)"},
    )
    answer = await term.form(question, ENTER, PAUSE, "gh", ENTER, "s")
    assert answer == Answer("accept", {"s": "abcdefgh"})
    screen = term.screen
    assert "\u202e" not in screen
    assert "\u2066" not in screen
    assert "\x1b]52" not in screen


# -- numbers the encoder could not send ---------------------------------------------------------
async def test_a_huge_number_cannot_be_entered_and_nothing_is_sent(term: Harness) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    keys = (
        *(ENTER, str(2**64), PAUSE, ENTER, Until("must be between")),  # refused: Enter does nothing
        *(CTRL_U, "9" * 5000, PAUSE, ENTER, Until("is too long for a number")),  # past int()'s digit limit
        *(CTRL_U, "12", ENTER, "s"),
    )
    answer = await term.form(form(schema, "How many?"), *keys)
    assert answer == Answer("accept", {"n": 12})
    screen = term.screen
    assert "must be between -9007199254740991 and 9007199254740991" in screen
    assert "is too long for a number (5000 characters; at most 100)" in screen
