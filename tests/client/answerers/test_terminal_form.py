"""The terminal answerer on forms, driven key by key through prompt_toolkit's pipe input."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from typing import Any

import pytest

from mcp_elicit.client.answerers import TerminalAnswerer, TerminalUnavailable
from mcp_elicit.client.questions import Answer, Answerer, ServerIdentity

from ._harness import (
    BACKSPACE,
    CTRL_C,
    CTRL_U,
    DOWN,
    ENTER,
    ESC,
    FORBIDDEN,
    SPACE,
    UP,
    Harness,
    Pause,
    Snap,
    Until,
    form,
)

ALL_KINDS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Full name", "description": "As on your badge", "minLength": 2},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "age": {"type": "integer", "title": "Age", "minimum": 18, "maximum": 130},
        "score": {"type": "number", "title": "Score", "minimum": 0, "maximum": 1, "default": 0.5},
        "news": {"type": "boolean", "title": "Newsletter"},
        "color": {"type": "string", "title": "Colour", "enum": ["Red", "Green", "Blue"]},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [
                {"const": "s", "title": "Small"},
                {"const": "m", "title": "Medium"},
                {"const": "l", "title": "Large"},
            ],
        },
        "plan": {
            "type": "string",
            "title": "Plan",
            "enum": ["free", "pro"],
            "enumNames": ["Free tier", "Pro tier"],
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
        },
        "langs": {
            "type": "array",
            "title": "Languages",
            "items": {"anyOf": [{"const": "py", "title": "Python"}, {"const": "rs", "title": "Rust"}]},
        },
    },
    "required": ["name", "email", "age", "news", "color", "size", "plan", "tags"],
}

FILL_ALL = (
    ENTER,  # start: fill in the form
    "Ada Lovelace",
    ENTER,
    "ada@example.com",
    ENTER,
    "36",
    ENTER,
    CTRL_U,
    "0.75",
    ENTER,
    "y",  # newsletter: yes
    DOWN,
    DOWN,
    ENTER,  # colour: Blue
    DOWN,
    ENTER,  # size: Medium -> "m"
    DOWN,
    ENTER,  # plan: Pro tier -> "pro"
    SPACE,
    DOWN,
    SPACE,
    ENTER,  # tags: a, b
    DOWN,
    SPACE,
    ENTER,  # languages: Rust -> "rs"
)

FILLED = {
    "name": "Ada Lovelace",
    "email": "ada@example.com",
    "age": 36,
    "score": 0.75,
    "news": True,
    "color": "Blue",
    "size": "m",
    "plan": "pro",
    "tags": ["a", "b"],
    "langs": ["rs"],
}


def test_is_an_answerer(term: Harness) -> None:
    answerer = term.answerer()
    assert isinstance(answerer, Answerer)
    assert answerer.modes == frozenset({"form", "url"})
    assert term.answerer(url=False).modes == frozenset({"form"})


async def test_fill_every_kind_review_and_send(term: Harness) -> None:
    answer = await term.form(form(ALL_KINDS), *FILL_ALL, "s")
    assert answer == Answer("accept", FILLED)
    out = term.transcript
    # The header says who asks (self-reported) and how it was reached (ours).
    assert "“Example Files” (name “files”, version 1.2)" in out
    assert "as the server describes itself" in out
    assert "Reached via: https://mcp.example.com/mcp" in out
    # Field details: title, description, rules, required marker.
    assert "[1/10] Full name *  (name)" in out
    assert "As on your badge" in out
    assert "required · at least 2 characters" in out
    assert "an email address, such as name@example.com" in out
    assert "a whole number · from 18 to 130" in out
    assert "optional · a number · from 0 to 1 · default: 0.5" in out
    assert "choose 1–2 of 3" in out
    # Titles are shown, values are sent.
    assert "→ Medium" in out
    assert "→ Pro tier" in out
    assert "→ Rust" in out
    review = out[out.index("Review your answer") :]
    for shown in (
        "Ada Lovelace",
        "ada@example.com",
        "36",
        "0.75",
        "yes",
        "Blue",
        "Medium",
        "Pro tier",
        "a, b",
        "Rust",
    ):
        assert shown in review
    assert out.rstrip().endswith("Sent: the server gets this answer.")


async def test_enter_sends_from_review(term: Harness) -> None:
    answer = await term.form(form(ALL_KINDS), *FILL_ALL, ENTER)
    assert answer == Answer("accept", FILLED)


async def test_invalid_entries_are_refused_while_typing_then_corrected(term: Harness) -> None:
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 18},
            "code": {"type": "string", "minLength": 3, "maxLength": 3},
        },
        "required": ["email", "age", "code"],
    }
    answer = await term.form(
        form(schema),
        ENTER,
        "not-an-email",
        ENTER,  # refused: the prompt stays
        Until("must be an email address such as name@example.com"),
        CTRL_U,
        "ada@example.com",
        ENTER,
        "12",
        ENTER,  # below the minimum: refused
        Until("at least 18 (got 12)"),
        BACKSPACE,
        BACKSPACE,
        "forty",
        ENTER,  # not a number: refused
        Until("such as 42"),
        CTRL_U,
        "40",
        ENTER,
        "abcd",
        ENTER,  # too long: refused
        Until("characters long (got 4)"),
        BACKSPACE,
        ENTER,
        "s",
    )
    assert answer == Answer("accept", {"email": "ada@example.com", "age": 40, "code": "abc"})
    # The messages come from the schema package's rules, shown under the line while typing
    # (prompt_toolkit redraws only what changed, so look for the distinctive ends).
    screen = term.screen
    assert "must be an email address such as name@example.com" in screen
    assert "at least 18 (got 12)" in screen
    assert "such as 42" in screen
    assert "characters long (got 4)" in screen


async def test_change_a_field_on_the_review_screen(term: Harness) -> None:
    answer = await term.form(
        form(ALL_KINDS),
        *FILL_ALL,
        "e",  # change a field…
        DOWN,
        ENTER,  # … the second one: email
        CTRL_U,
        "lovelace@example.org",
        ENTER,
        "e",
        *([DOWN] * 5),
        ENTER,  # … the sixth one: colour
        UP,
        ENTER,  # Green
        "s",
    )
    assert answer == Answer("accept", {**FILLED, "email": "lovelace@example.org", "color": "Green"})
    out = term.transcript
    assert out.count("Review your answer") == 3
    last_review = out[out.rindex("Review your answer") :]
    assert "lovelace@example.org" in last_review
    assert "Green" in last_review


async def test_decline_at_the_start(term: Harness) -> None:
    assert await term.form(form(ALL_KINDS), "d") == Answer("decline")
    assert term.transcript.rstrip().endswith(
        "Declined: the server is told that you said no; none of the form's values are sent."
    )


async def test_decline_on_the_review_screen(term: Harness) -> None:
    assert await term.form(form(ALL_KINDS), *FILL_ALL, "d") == Answer("decline")


async def test_decline_by_moving_to_it(term: Harness) -> None:
    assert await term.form(form(ALL_KINDS), DOWN, ENTER) == Answer("decline")


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
async def test_cancel_at_the_start(term: Harness, key: str) -> None:
    assert await term.form(form(ALL_KINDS), key) == Answer("cancel")
    # The cancel itself is what goes back to the server (the old text said nothing was sent).
    assert term.transcript.rstrip().endswith(
        "Cancelled: the server is told that you cancelled; none of the form's values are sent."
    )


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
async def test_cancel_in_the_middle_of_a_text_field(term: Harness, key: str) -> None:
    assert await term.form(form(ALL_KINDS), ENTER, "Ada", ENTER, "ada@exa", key) == Answer("cancel")


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
async def test_cancel_in_a_list(term: Harness, key: str) -> None:
    keys = (ENTER, "Ada", ENTER, "ada@example.com", ENTER, "36", ENTER, ENTER, "y", DOWN, key)
    assert await term.form(form(ALL_KINDS), *keys) == Answer("cancel")


@pytest.mark.parametrize("key", [ESC, CTRL_C], ids=["esc", "ctrl-c"])
async def test_cancel_in_a_multi_select(term: Harness, key: str) -> None:
    keys = (*FILL_ALL[: FILL_ALL.index(SPACE)], SPACE, key)  # in the tags list
    assert await term.form(form(ALL_KINDS), *keys) == Answer("cancel")


@pytest.mark.parametrize("key", [ESC, CTRL_C, "c"], ids=["esc", "ctrl-c", "menu"])
async def test_cancel_on_the_review_screen(term: Harness, key: str) -> None:
    assert await term.form(form(ALL_KINDS), *FILL_ALL, key) == Answer("cancel")


async def test_end_of_input_cancels_instead_of_hanging(term: Harness) -> None:
    term.keys(ENTER, "Ada")
    term.pipe.close()
    answer = await asyncio.wait_for(term.answerer().answer_form(form(ALL_KINDS)), 10)
    assert answer == Answer("cancel")


DEFAULTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "Ada"},
        "count": {"type": "integer", "default": 3, "minimum": 1},
        "ratio": {"type": "number", "default": 0.25},
        "ok": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["Red", "Green"], "default": "Green"},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "S"}, {"const": "l", "title": "L"}],
            "default": "l",
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["x", "y", "z"]},
            "default": ["y", "z"],
        },
        "note": {"type": "string"},
        "flag": {"type": "boolean"},
        "pick": {"type": "string", "enum": ["p", "q"]},
    },
    "required": ["name", "count", "ok"],
}


async def test_accepting_the_defaults_with_enter_only(term: Harness) -> None:
    fields = len(DEFAULTS["properties"])
    answer = await term.form(form(DEFAULTS), *([ENTER] * (1 + fields + 1)))
    assert answer == Answer(
        "accept",
        {
            "name": "Ada",
            "count": 3,
            "ratio": 0.25,
            "ok": True,
            "color": "Green",
            "size": "l",
            "tags": ["y", "z"],
        },
    )
    review = term.transcript[term.transcript.index("Review your answer") :]
    assert "(left empty)" in review  # note, flag and pick were skipped


async def test_optional_fields_can_be_left_empty_even_with_a_default(term: Harness) -> None:
    schema = {
        "type": "object",
        "properties": {
            "nick": {"type": "string", "default": "anon"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["x"]},
        },
    }
    # Clear the nickname (the default then applies, and the review says so), untick every tag
    # (an empty list is valid here, so it is sent as []).
    answer = await term.form(form(schema), ENTER, CTRL_U, ENTER, SPACE, ENTER, "s")
    assert answer == Answer("accept", {"nick": "anon", "tags": []})
    assert "(left empty) — the default (anon) applies" in term.transcript


async def test_multi_select_limits_are_enforced(term: Harness) -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "minItems": 1,
                "maxItems": 2,
            }
        },
        "required": ["tags"],
    }
    answer = await term.form(
        form(schema),
        ENTER,
        ENTER,  # nothing ticked: refused
        Until("select at least 1 choice (got 0)"),
        SPACE,
        DOWN,
        SPACE,
        DOWN,
        SPACE,
        ENTER,  # three ticked: refused
        Until("most 2 choices"),
        SPACE,
        ENTER,  # a, b
        "s",
    )
    assert answer == Answer("accept", {"tags": ["a", "b"]})
    assert "select at least 1 choice (got 0)" in term.screen
    assert "most 2 choices" in term.screen  # (prompt_toolkit redraws only what changed)


async def test_reasked_question_shows_errors_and_prefills_the_previous_answer(term: Harness) -> None:
    question = form(
        ALL_KINDS,
        errors={
            "email": "must be an email address such as name@example.com",
            "": "and 1 more unknown fields",
        },
        previous={**FILLED, "email": "ada-at-example", "extra": 1},
    )
    # Only the field at fault is asked again, pre-filled with what was typed last time.
    answer = await term.form(question, ENTER, ENTER, CTRL_U, "ada@example.com", ENTER, "s")
    assert answer == Answer("accept", FILLED)
    out = term.transcript
    assert "Your previous answer was not accepted:" in out
    assert "✗ Email: must be an email address such as name@example.com" in out
    assert "[2/10] Email" in out
    assert "[1/10]" not in out


async def test_form_without_fields_is_a_confirmation(term: Harness) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    assert await term.form(form(schema, "Delete the branch?"), ENTER) == Answer("accept", {})
    assert "no fields" in term.transcript


async def test_form_without_fields_can_be_declined(term: Harness) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    assert await term.form(form(schema, "Delete the branch?"), "d") == Answer("decline")


async def test_form_outside_the_subset_offers_decline_and_cancel(term: Harness) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "object"}}}
    assert await term.form(form(schema), ENTER) == Answer("decline")
    assert "This form cannot be shown" in term.transcript


HOSTILE = (
    "Hi\x1b[2J\x1b[1A \x1b]0;owned\x07there \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ "
    "\x1b]52;c;ZXZpbA==\x07\x9b31mred\x9d8;;https://evil2.example\x9c \u202egnp.exe\u202c "
    "zero\u200bwidth\ufeff https://good.example\rhttps://evil3.example \u2066iso\u2069 "
    "[bold]markup[/bold] :smile:"
)


async def test_hostile_text_is_shown_cleaned(term: Harness) -> None:
    server = ServerIdentity(
        name="evil\x1b[31m\u202e", reached_via="stdio: ./server", title="Bank\x1b]8;;x\x07 ok"
    )
    schema = {
        "type": "object",
        "properties": {
            "pick": {
                "type": "string",
                "title": "Pick\u200b\u2060 one",
                "description": "line one\u2028line two",
                "oneOf": [{"const": "a", "title": "Yes"}, {"const": "b", "title": "Yes\u200b"}],
            }
        },
        "required": ["pick"],
    }
    answer = await term.form(form(schema, HOSTILE, server=server), ENTER, DOWN, ENTER, "s")
    assert answer == Answer("accept", {"pick": "b"})
    out = term.transcript
    assert FORBIDDEN.search(out) is None, repr(FORBIDDEN.search(out))
    for payload in ("evil.example", "evil2.example", "owned", "ZXZpbA", "31m"):
        assert payload not in out
    assert "Hi there click" in out
    assert "gnp.exe" in out
    assert "zerowidth" in out
    assert "https://good.examplehttps://evil3.example" in out  # CR cannot overwrite
    assert "[bold]markup[/bold] :smile:" in out  # no rich markup, no emoji codes
    assert "“Bank ok” (name “evil”)" in out
    assert "Pick one" in out
    assert "line one\n" in out
    assert "line two" in out
    # Two options that only differ by an invisible character are told apart by value.
    assert "Yes [a]" in term.screen
    assert "Yes [b]" in term.screen
    # What prompt_toolkit drew: no OSC (title, hyperlink, clipboard) and no bidi control.
    assert "\x1b]" not in term.screen
    assert re.search("[\u202a-\u202e\u2066-\u2069\u200b\ufeff\x9b\x9d]", term.screen) is None


async def test_huge_message_is_shortened(term: Harness) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    answer = await term.form(form(schema, "A" * 1_000_000), "d")
    assert answer == Answer("decline")
    assert "(shortened: the message has 1000000 characters)" in term.transcript
    assert len(term.transcript) < 20_000


async def test_concurrent_questions_are_asked_one_after_another(term: Harness) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}
    answerer = term.answerer()
    term.keys(ENTER, "first", ENTER, "s", ENTER, "second", ENTER, "s")
    one, two = await asyncio.wait_for(
        asyncio.gather(
            answerer.answer_form(form(schema, "first question", key="k1")),
            answerer.answer_form(form(schema, "second question", key="k2")),
        ),
        10,
    )
    assert one == Answer("accept", {"n": "first"})
    assert two == Answer("accept", {"n": "second"})
    out = term.transcript
    assert out.index("first question") < out.index("Sent:") < out.index("second question")


def test_no_terminal_no_terminal_answerer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert TerminalAnswerer.available() is False
    with pytest.raises(TerminalUnavailable, match="ScriptedAnswerer"):
        TerminalAnswerer()


async def test_a_cancelled_task_leaves_the_terminal_usable(term: Harness) -> None:
    # The engine cancels the other questions of a round when one of them fails.
    schema = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}
    answerer = term.answerer()
    task = asyncio.ensure_future(answerer.answer_form(form(schema)))
    term.keys(ENTER, "half")
    # Cancel only once the first form has read those keys (on a busy machine 0.3 s was not
    # always enough, and the second form then read them).
    for _ in range(500):
        if "half" in term.screen:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    answer = await term.form(form(schema), ENTER, "whole", ENTER, "s", answerer=answerer)
    assert answer == Answer("accept", {"n": "whole"})


async def test_a_form_asking_for_a_secret_is_flagged(term: Harness) -> None:
    schema = {
        "type": "object",
        "properties": {"api_key": {"type": "string", "title": "API key"}, "name": {"type": "string"}},
    }
    assert await term.form(form(schema), "d") == Answer("decline")
    out = term.transcript
    assert "⚠ This form seems to ask for a secret: API key" in out
    assert "Consider declining." in out


async def test_long_lists_scroll(term: Harness) -> None:
    options = [f"option-{i:02}" for i in range(50)]
    schema = {"type": "object", "properties": {"o": {"type": "string", "enum": options}}, "required": ["o"]}
    end, page_up = "\x1b[F", "\x1b[5~"
    # End, Enter: the last one; then change it: the list opens on it, PageUp goes 10 up. Each
    # view is awaited before the next key (keys that arrive together are drawn once).
    answer = await term.form(
        form(schema),
        ENTER,
        Until("↓ 40 more"),
        end,
        Until("↑ 40 more"),
        ENTER,
        "e",
        ENTER,
        page_up,
        ENTER,
        "s",
    )
    assert answer == Answer("accept", {"o": "option-39"})
    assert "↓ 40 more" in term.screen
    assert "↑ 40 more" in term.screen
    assert "option-49" in term.transcript  # the first choice, echoed


# -- keys typed ahead ----------------------------------------------------------------------------
DELETE_ALL = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Delete every file?", "default": True}},
}


@pytest.mark.parametrize(
    "schema", [DELETE_ALL, {"type": "object", "properties": {}}], ids=["defaults", "empty"]
)
async def test_keys_typed_before_the_form_appears_never_send_it(
    term: Harness, schema: dict[str, Any]
) -> None:
    """Enter pressed while the call was starting (or a paste) reaches the form's first menu: it
    must not start the form, accept the pre-filled defaults and send them."""
    answerer = term.answerer(consent_delay=0.3)
    term.keys(ENTER, ENTER, ENTER, "s")  # typed ahead, before the question is even asked
    await asyncio.sleep(0.2)
    answer = await term.form(form(schema), Until("Decline"), Pause(0.5), "d", answerer=answerer)
    assert answer == Answer("decline")


async def test_an_extra_enter_after_the_last_field_does_not_send(term: Harness) -> None:
    schema = {"type": "object", "properties": {"who": {"type": "string"}, **DELETE_ALL["properties"]}}
    answerer = term.answerer(consent_delay=0.3)
    keys = (
        Until("Fill in the form"),
        Pause(0.5),
        ENTER,
        "me",
        ENTER,
        Until("Delete every file?"),
        ENTER,
        ENTER,
    )
    answer = await term.form(
        form(schema), *keys, Until("Send this answer"), Pause(0.5), "d", answerer=answerer
    )
    assert answer == Answer("decline")
    assert "Sent:" not in term.transcript


# -- a yes/no in one key -----------------------------------------------------------------------
ASKS = "press y for yes or n for no"
FLAG = {
    "type": "object",
    "properties": {"news": {"type": "boolean", "title": "Newsletter"}},
    "required": ["news"],
}


@pytest.mark.parametrize(
    ("schema", "keys", "content"),
    [
        (DELETE_ALL, (ENTER,), {"confirm": True}),  # Enter takes the marked default
        (DELETE_ALL, ("n",), {"confirm": False}),
        (FLAG, ("y",), {"news": True}),
        (FLAG, ("N",), {"news": False}),
        (FLAG, (ENTER, Until(ASKS), "y"), {"news": True}),  # no default: Enter asks for y or n
    ],
    ids=["enter-default", "n", "y", "capital-n", "no-default"],
)
async def test_a_form_of_one_yes_no_is_answered_with_one_key_then_reviewed(
    term: Harness, schema: dict[str, Any], keys: tuple[str, ...], content: dict[str, Any]
) -> None:
    """No start menu and no field walk; the answer is shown for review before it is sent (the
    spec: the user reviews a form answer, and can change it, before it goes out)."""
    answer = await term.form(form(schema, "Go on?"), *keys, Until("Send this answer"), Snap("review"), ENTER)
    assert answer == Answer("accept", content)
    out = term.transcript
    assert "Fill in the form" not in out
    assert "Review your answer before it is sent" in "\n".join(term.snaps["review"])
    assert out.rstrip().endswith("Sent: the server gets this answer.")


async def test_a_yes_no_pressed_by_mistake_is_changed_on_the_review(term: Harness) -> None:
    keys = ("y", Until("Send this answer"), "e", Until("Which field?"), ENTER, Until("Yes (y)"), "n", "s")
    assert await term.form(form(FLAG), *keys) == Answer("accept", {"news": False})


async def test_a_yes_no_can_be_declined_or_cancelled_on_the_review(term: Harness) -> None:
    assert await term.form(form(FLAG), "y", Until("Send this answer"), "d") == Answer("decline")
    assert await term.form(form(FLAG), "y", Until("Send this answer"), "c") == Answer("cancel")


async def test_the_default_of_a_yes_no_is_marked(term: Harness) -> None:
    await term.form(form(DELETE_ALL), Until("Yes (y)"), Snap("asked"), "c")
    [row] = [line for line in term.snaps["asked"] if "Yes (y)" in line]
    assert row.strip() == "› Yes (y)   No (n)   Decline — answer nothing (d)   Cancel (c)"
    assert "  Enter: yes (the default) · Esc cancel" in term.snaps["asked"]
    assert "[1/1]" not in term.transcript


@pytest.mark.parametrize(
    ("key", "action", "last"),
    [
        ("d", "decline", "Declined: the server is told that you said no"),
        ("c", "cancel", "Cancelled: the server is told that you cancelled"),
        (ESC, "cancel", "Cancelled: the server is told that you cancelled"),
    ],
    ids=["decline", "cancel", "esc"],
)
async def test_a_yes_no_form_can_be_declined_or_cancelled(
    term: Harness, key: str, action: str, last: str
) -> None:
    assert await term.form(form(DELETE_ALL), key) == Answer(action)
    assert term.transcript.rstrip().endswith(f"{last}; none of the form's values are sent.")


async def test_keys_typed_before_a_yes_no_appears_never_answer_it(term: Harness) -> None:
    answerer = term.answerer(consent_delay=0.3)
    term.keys("y", ENTER)  # typed ahead, before the question is even asked
    await asyncio.sleep(0.2)
    answer = await term.form(
        form(DELETE_ALL),
        Until("Yes (y)"),
        Pause(0.5),
        "n",
        Until("Send this answer"),
        Pause(0.5),  # the review waits as long before it takes a key
        "s",
        answerer=answerer,
    )
    assert answer == Answer("accept", {"confirm": False})


async def test_a_yes_no_among_other_fields_is_one_key_too(term: Harness) -> None:
    schema = {
        "type": "object",
        "properties": {"who": {"type": "string"}, **FLAG["properties"]},
        "required": ["news"],
    }
    # start, the text field, then "n" alone answers the yes/no; the review sends.
    answer = await term.form(form(schema), ENTER, "me", ENTER, "n", "s")
    assert answer == Answer("accept", {"who": "me", "news": False})
    assert "    → no\n" in term.transcript
