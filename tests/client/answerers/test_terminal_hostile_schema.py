"""The terminal answerer on forms a hostile server can send inside the subset (security.md §5.5,
§5.8): blank choices, links and markup in every text, a colour terminal that could emit them."""

from __future__ import annotations

import io
import re
from typing import Any

from rich.console import Console

from mcp_elicit.client.questions import Answer

from ._harness import DOWN, ENTER, FORBIDDEN, Harness, form

# Any escape sequence that is not a colour (SGR) or cursor/erase sequence: OSC (titles,
# hyperlinks, clipboard), DCS, APC, PM, SOS. A colour console may style text, never link it.
NON_SGR = re.compile("\x1b[\\]P_^X]|[\x90\x98\x9d\x9e\x9f]")


async def test_an_empty_choice_is_listed_as_such_and_sent_as_is(term: Harness) -> None:
    schema = {
        "type": "object",
        "properties": {"suffix": {"type": "string", "title": "Suffix", "enum": ["", " ", "Jr."]}},
        "required": ["suffix"],
    }
    answer = await term.form(form(schema), ENTER, ENTER, "s")
    assert answer == Answer("accept", {"suffix": ""})
    assert '"" (empty text)' in term.screen  # a visible line in the list, not a blank one
    assert "(blank: U+0020)" in term.screen
    assert '→ "" (empty text)' in term.transcript
    review = term.transcript[term.transcript.index("Review your answer") :]
    assert '"" (empty text)' in review


LINKS = (
    "[Click](https://evil.example/md) <a href='https://evil.example/html'>here</a> "
    "[link=https://evil.example/rich]rich[/link] https://evil.example/bare"
)


async def test_server_text_is_never_a_link_even_on_a_colour_terminal(term: Harness) -> None:
    """Descriptions, titles and choices with Markdown, HTML, rich markup or a bare URL are shown
    literally; on a terminal with colours and hyperlinks, no OSC 8 (or any OSC) is written."""
    out = io.StringIO()
    console = Console(file=out, width=200, color_system="truecolor", force_terminal=True)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pick": {
                "type": "string",
                "title": "Pick " + LINKS[:40],
                "description": LINKS,
                "oneOf": [
                    {"const": "a", "title": "[Open](https://evil.example/a)"},
                    {"const": "b", "title": "<a href='https://evil.example/b'>b</a>"},
                ],
            },
            "note": {"type": "string", "description": LINKS, "default": "https://evil.example/default"},
        },
        "required": ["pick"],
    }
    term.console = console
    answerer = term.answerer()
    answer = await term.form(form(schema, LINKS), ENTER, DOWN, ENTER, ENTER, "s", answerer=answerer)
    assert answer == Answer("accept", {"pick": "b", "note": "https://evil.example/default"})
    printed = out.getvalue()
    assert "\x1b[" in printed  # the console did write colours: the check below is not vacuous
    assert NON_SGR.search(printed) is None, repr(NON_SGR.search(printed))
    assert NON_SGR.search(term.screen) is None
    plain = re.sub("\x1b\\[[0-9;]*m", "", printed)
    assert FORBIDDEN.search(plain) is None
    assert plain.count(LINKS) >= 3  # the message and both descriptions, word for word
    assert "→ <a href='https://evil.example/b'>b</a>" in plain
    assert "[Open](https://evil.example/a)" in term.screen
