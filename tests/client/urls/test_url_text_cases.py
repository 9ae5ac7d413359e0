"""security.md §5.8 (text rendering and Unicode tricks in server strings) through the real
terminal answerer: prompt_toolkit on a pipe, rich printing to a buffer, a fake opener only.

What each case proves: server text is shown as plain, inert text (no markup, no link, no
escape sequence), capped, and never trusted over the client's own lines ("Reached via", "Site").
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from prompt_toolkit.input import create_pipe_input
from rich.console import Console
from tests.client.answerers._harness import FORBIDDEN, SERVER, Harness, url_question

from mcp_elicit.client.answerers.fields import NAME_MAX
from mcp_elicit.client.questions import Answer, ServerIdentity

GOOD = "https://accounts.example.com/connect?flow=42"
OSC8 = "\x1b]8;"


@pytest.fixture
def term() -> Iterator[Harness]:
    with create_pipe_input() as pipe:
        harness = Harness(pipe)
        # A real colour terminal, so that a hyperlink or style from server text would show as
        # escape sequences in the output.
        harness.console = Console(file=io.StringIO(), width=120, force_terminal=True, color_system="standard")
        yield harness


def _out(term: Harness) -> str:
    file = term.console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def _plain(term: Harness) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", _out(term))  # the answerer's own colours only


@pytest.mark.parametrize(
    "message",
    [
        "[Click here](https://evil.example/login) to connect",
        '<a href="https://evil.example/login">Click here</a> to connect',
        "[link=https://evil.example/login]Click here[/link] to connect",
        "[bold red]URGENT[/bold red] :lock: https://evil.example/login",
    ],
    ids=["markdown", "html", "rich-markup", "rich-style-emoji-code"],
)
async def test_markup_in_the_message_is_shown_literally_and_never_as_a_link(
    term: Harness, message: str
) -> None:
    answer = await term.url(url_question(GOOD, message), "o", "\r")
    assert answer == Answer("accept")
    out = _out(term)
    assert OSC8 not in out
    assert OSC8 not in term.screen
    assert message in _plain(term)  # every bracket and tag as sent
    assert [a.href for a in term.opener.calls] == [GOOD]  # only the url field is ever opened


@pytest.mark.parametrize(
    "name",
    ["Ехаmple Files", "Examp1e Files", "\U0001f512 Example Files (verified)", "Example\u00a0Files"],
    ids=["cyrillic-homoglyphs", "digit-one", "padlock-emoji", "nbsp"],
)
async def test_a_lookalike_server_name_is_labelled_self_described_and_the_site_line_is_ours(
    term: Harness, name: str
) -> None:
    server = ServerIdentity(name=name, reached_via="https://mcp.evil-files.com/mcp")
    await term.url(url_question("https://login.evil-files.com/x", server=server), "d")
    plain = _plain(term)
    assert f"“{name}”  — as the server describes itself" in plain
    assert "Reached via: https://mcp.evil-files.com/mcp  — how this client connected" in plain
    assert "Site: evil-files.com" in plain
    assert FORBIDDEN.search(plain) is None


async def test_a_very_long_server_name_cannot_push_the_address_away(term: Harness) -> None:
    server = ServerIdentity(
        name="Example Files " + "x" * 20000, reached_via=SERVER.reached_via, title="T" * 9000
    )
    answer = await term.url(url_question(GOOD, "m" * 100_000, server=server), "d")
    assert answer == Answer("decline")
    plain = _plain(term)
    longest = max(len(line) for line in plain.splitlines())
    assert longest <= 6000, longest
    assert plain.count("x") <= 2 * NAME_MAX  # the name is capped where it is shown (twice)
    assert f"    {GOOD}\n" in plain
    assert "Site: example.com" in plain


async def test_a_message_claiming_another_domain_does_not_change_the_site_line(term: Harness) -> None:
    message = "You will be sent to https://accounts.google.com to sign in with Google."
    await term.url(url_question("https://accounts.google.com.evil.co.uk/signin", message), "d")
    plain = _plain(term)
    assert message in plain  # shown, as the server's words
    assert "Site: evil.co.uk" in plain  # the client's own reading is the authoritative line
    assert "the site is evil.co.uk" in plain
    assert "another site than the server you connected to (mcp.example.com)" in plain


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("go to good.example\u202e/moc.live", "go to good.example/moc.live"),
        ("ab\u2066cd\u2069 \u200bzero\u200dwidth\u2060join\ufeff", "abcd zerowidthjoin"),
        ("first\u2028second", "first\n"),
        ("https://good.example\rhttps://evil.example", "https://good.examplehttps://evil.example"),
        ("bell\x07back\x08space \x1b[1Aup \x1b[2Jclear \x1b]0;title\x07done", "bellbackspace up clear done"),
        ("c1 \x9b2J\x9d0;t\x9c end", "c1  end"),
        ("osc52 \x1b]52;c;ZXZpbA==\x07copied", "osc52 copied"),
    ],
    ids=["rlo", "isolates-zero-width", "line-separator", "cr-overwrite", "c0-csi-osc", "c1", "osc52"],
)
async def test_control_bidi_and_invisible_characters_in_the_message(
    term: Harness, raw: str, shown: str
) -> None:
    await term.url(url_question(GOOD, raw), "d")
    plain = _plain(term)
    assert shown in plain
    assert FORBIDDEN.search(plain) is None
    assert "\u2028" not in plain
    assert OSC8 not in _out(term)
    assert "\x1b]" not in _out(term)
