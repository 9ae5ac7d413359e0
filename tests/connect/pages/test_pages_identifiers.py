"""An OAuth subject on the pages: shown whole, with its invisible characters written out, so a
bidi override cannot turn the text around and two subjects never look alike."""

from __future__ import annotations

from mcp_elicit.connect.flows.model import visible_identifier
from mcp_elicit.connect.pages.templates import Identity, who_block


def test_invisible_characters_of_a_subject_are_written_out() -> None:
    assert visible_identifier("alice") == "alice"
    assert visible_identifier("alice\u200b") == "alice\\u{200b}"  # not "alice": another user
    assert visible_identifier("\u202eecila") == "\\u{202e}ecila"
    assert visible_identifier("Zoë 用户") == "Zoë 用户"  # visible letters stay as they are
    # Never the same text for two identifiers: the backslash is escaped, the code point delimited.
    assert visible_identifier("alice\\u{200b}") == "alice\\\\u{200b}"
    assert visible_identifier("\U000e0001") != visible_identifier("\ue000" + "1")


def test_the_signed_in_block_shows_the_subject_written_out() -> None:
    block = who_block(
        Identity("Alice", "alice\u202e)gnihtemos(", "https://idp.example"),
        logout_action="/logout",
        logout_token="t",
        next_path="/done",
    )
    assert "\u202e" not in block
    assert "(alice\\u{202e})gnihtemos()" in block
