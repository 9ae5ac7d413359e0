"""The terminal answerer on URL questions: assessment, consent, opening (faked), after."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from mcp_elicit.client.questions import Answer, ServerIdentity
from mcp_elicit.client.urls import OpenResult

from ._harness import CTRL_C, DOWN, ENTER, ESC, FORBIDDEN, FakeOpener, Harness, Pause, Until, url_question

GOOD = "https://accounts.example.com/connect?flow=42"


pytestmark = pytest.mark.usefixtures("no_network")


async def test_shows_the_full_canonical_address_and_the_site(term: Harness) -> None:
    answer = await term.url(url_question(GOOD), "d")
    assert answer == Answer("decline")
    out = term.transcript
    assert "“Example Files” (name “files”, version 1.2)" in out
    assert "Reached via: https://mcp.example.com/mcp" in out
    assert "Connect your account." in out
    assert f"    {GOOD}\n" in out
    assert "Site: example.com" in out
    assert term.opener.calls == []


async def test_registrable_domain_is_highlighted_and_no_hyperlink_is_emitted(term: Harness) -> None:
    buffer = io.StringIO()
    term.console = Console(file=buffer, width=120, force_terminal=True, color_system="standard")
    await term.url(url_question(GOOD), "d")
    out = buffer.getvalue()
    # Subdomain dimmed, registrable domain in reverse video, no OSC 8 anywhere.
    assert "\x1b[2maccounts.\x1b[0m\x1b[1;7mexample.com\x1b[0m" in out
    assert "\x1b]8;" not in out
    assert "\x1b]8;" not in term.screen


async def test_consent_then_done_accepts(term: Harness) -> None:
    answer = await term.url(url_question(GOOD), "o", ENTER)
    assert answer == Answer("accept")
    [opened] = term.opener.calls
    assert opened.href == GOOD  # the very string that was shown
    assert "Opened in your browser" in term.transcript


async def test_consent_then_cancel(term: Harness) -> None:
    answer = await term.url(url_question(GOOD), "o", "c")
    assert answer == Answer("cancel")
    assert len(term.opener.calls) == 1


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
async def test_consent_then_esc_or_ctrl_c_cancels(term: Harness, key: str) -> None:
    assert await term.url(url_question(GOOD), "o", key) == Answer("cancel")


async def test_not_yet_keeps_waiting_until_done(term: Harness) -> None:
    answer = await term.url(url_question(GOOD), "o", "w", "w", ENTER)
    assert answer == Answer("accept")
    assert term.transcript.count("Waiting. Finish in the browser") == 2
    assert len(term.opener.calls) == 1


async def test_enter_alone_declines(term: Harness) -> None:
    assert await term.url(url_question(GOOD), ENTER) == Answer("decline")
    assert term.opener.calls == []


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
async def test_cancel_before_consent(term: Harness, key: str) -> None:
    assert await term.url(url_question(GOOD), key) == Answer("cancel")
    assert term.opener.calls == []


async def test_cancel_by_moving_to_it(term: Harness) -> None:
    assert await term.url(url_question(GOOD), DOWN, DOWN, ENTER) == Answer("cancel")
    assert term.opener.calls == []


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(document.cookie)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "https://user:pass@example.com/",
        "https://good.example\\@evil.example/",
        "https://10.0.0.1/",
        "https://xn--80ak6aa92e.com/",
        "-https://example.com/",
        "",
    ],
)
async def test_refused_url_is_never_offered(term: Harness, url: str) -> None:
    # No keys at all: a refused URL must not wait for any choice.
    answer = await term.url(url_question(url))
    assert answer == Answer("decline")
    assert term.opener.calls == []
    out = term.transcript
    assert "This address will not be opened" in out
    assert "Open in browser" not in term.screen
    assert out.rstrip().endswith(
        "The question was declined: the server is told that you said no; the address was not opened."
    )
    # The refused address is shown only altered so that no terminal can make it a link.
    for line in out.splitlines():
        if "The server sent" in line:
            assert "://" not in line


async def test_refused_url_shows_reasons(term: Harness) -> None:
    await term.url(url_question("javascript:alert(1)"))
    assert "only https links can be opened, not 'javascript:' links" in term.transcript


async def test_warning_needs_a_second_confirmation(term: Harness) -> None:
    url = "https://example.com:8443/x"
    answer = await term.url(url_question(url), "o", "y", ENTER)
    assert answer == Answer("accept")
    assert [a.href for a in term.opener.calls] == [url]
    out = term.transcript
    assert "⚠ Check before opening:" in out
    assert "unusual port (8443)" in out
    assert "Open it anyway?" in out


async def test_warning_second_confirmation_defaults_to_no(term: Harness) -> None:
    answer = await term.url(url_question("https://example.com:8443/x"), "o", ENTER)
    assert answer == Answer("decline")
    assert term.opener.calls == []


async def test_idn_shows_the_unicode_form_as_information(term: Harness) -> None:
    answer = await term.url(url_question("https://bücher.de/"), "d")
    assert answer == Answer("decline")
    out = term.transcript
    assert "https://xn--bcher-kva.de/" in out
    assert "the host reads “bücher.de”" in out


async def test_loopback_http_only_in_development_mode(term: Harness) -> None:
    url = "http://127.0.0.1:8000/callback"
    assert await term.url(url_question(url)) == Answer("decline")
    dev = term.answerer(allow_loopback_http=True)
    assert await term.url(url_question(url), "o", "y", ENTER, answerer=dev) == Answer("accept")
    assert [a.href for a in term.opener.calls] == [url]


async def test_no_browser_prints_the_address_to_open_elsewhere(term: Harness) -> None:
    term.opener.result = OpenResult(opened=False, reason="no desktop session (SSH)", print_url=True)
    answer = await term.url(url_question(GOOD), "o", ENTER)
    assert answer == Answer("accept")
    out = term.transcript
    assert "Not opened from here (no desktop session (SSH)). Open this address yourself:" in out
    assert f"\n{GOOD}\n" in out  # on a line of its own, nothing around it, ready to copy


async def test_failure_to_open_cancels(term: Harness) -> None:
    term.opener.result = OpenResult(opened=False, reason="refused", print_url=False)
    assert await term.url(url_question(GOOD), "o") == Answer("cancel")
    assert "could not be opened: refused" in term.transcript


async def test_opener_crash_cancels(term: Harness) -> None:
    def broken(assessment: Any) -> OpenResult:
        raise OSError("no such file")

    answerer = term.answerer(open_url=broken)
    assert await term.url(url_question(GOOD), "o", answerer=answerer) == Answer("cancel")
    assert "The browser could not be started (OSError)" in term.transcript


async def test_hostile_message_and_server_name_are_cleaned(term: Harness) -> None:
    server = ServerIdentity(name="bank\u202e", reached_via="https://mcp.example.com/mcp", title="\x1b[2JBank")
    message = (
        "Go to \x1b]8;;https://evil.example/\x1b\\https://bank.example\x1b]8;;\x1b\\ now\r"
        "OVERWRITE \x9d0;title\x07 \u2066x\u2069"
    )
    answer = await term.url(url_question(GOOD, message, server=server), "d")
    assert answer == Answer("decline")
    out = term.transcript
    assert FORBIDDEN.search(out) is None
    assert "evil.example" not in out
    assert "title" not in out
    assert "Go to https://bank.example nowOVERWRITE  x" in out
    assert "“Bank” (name “bank”)" in out
    assert "\x1b]" not in term.screen


async def test_address_on_another_site_than_the_server_is_pointed_out(term: Harness) -> None:
    await term.url(url_question("https://login.example.org/x"), "d")
    assert "another site than the server you connected to (mcp.example.com)" in term.transcript
    await term.url(url_question("https://mcp.example.com/connect"), "d")
    assert term.transcript.count("another site") == 1


async def test_the_real_opener_is_used_by_default(term: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp_elicit.client.urls as urls

    fake = FakeOpener(OpenResult(opened=True, reason="fake"))
    monkeypatch.setattr(urls, "open_in_browser", fake)
    answerer = term.answerer(open_url=None)
    assert await term.url(url_question(GOOD), "o", ENTER, answerer=answerer) == Answer("accept")
    assert [a.href for a in fake.calls] == [GOOD]


async def test_keys_typed_before_the_consent_choice_appears_never_open_the_address(term: Harness) -> None:
    """Keys typed while the previous round was in flight (or a paste) reach the consent menu
    first: for a moment after it appears, keys do nothing, so they cannot say yes."""
    import asyncio

    answerer = term.answerer(consent_delay=0.3)
    term.keys("o", ENTER, "y", ENTER)  # typed ahead, before the question is even asked
    await asyncio.sleep(0.2)
    answer = await term.url(url_question(GOOD), Until("Open in browser"), Pause(0.5), "d", answerer=answerer)
    assert answer == Answer("decline")
    assert term.opener.calls == []


async def test_keys_waiting_when_the_consent_choice_is_drawn_never_count_however_late_read(
    term: Harness,
) -> None:
    """A busy machine can read keys long after the menu was drawn; keys that were already
    waiting when it was drawn were typed before it was on screen, and must not open.

    CI caught this: the delay ran from the first draw, and a stall longer than the delay
    between that draw and the first read let a typed-ahead "o" open the address."""
    import asyncio
    import time

    answerer = term.answerer(consent_delay=0.3)
    read_keys = term.pipe.read_keys
    stalled: list[bool] = []

    def stall_then_read() -> Any:
        if not stalled:  # the first read after the draw comes late, as on a stalled machine
            stalled.append(True)
            time.sleep(0.5)
        return read_keys()

    term.pipe.read_keys = stall_then_read  # type: ignore[method-assign]
    term.keys("o", ENTER)  # typed ahead, before the question is even asked
    await asyncio.sleep(0.1)
    answer = await term.url(url_question(GOOD), Until("Open in browser"), Pause(0.5), "d", answerer=answerer)
    assert answer == Answer("decline")
    assert term.opener.calls == []


async def test_keys_typed_after_opening_never_say_done(term: Harness) -> None:
    """An Enter pressed twice at "Open" reaches the "Done — continue" menu that follows: for a
    moment after it appears keys do nothing, so the person has to come back from the browser."""
    answerer = term.answerer(consent_delay=0.3)
    keys = (Until("Open in browser"), Pause(0.5), "o", ENTER, ENTER, Until("Done"), Pause(0.5), "c")
    answer = await term.url(url_question(GOOD), *keys, answerer=answerer)
    assert answer == Answer("cancel")
    assert [a.href for a in term.opener.calls] == [GOOD]
