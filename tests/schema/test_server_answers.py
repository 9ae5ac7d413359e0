"""A hostile ``content`` through the real server path (``ctx.elicit`` with a dict schema): what the
tool receives, and what the client is told when the answer is refused (security.md §5.6).

No honest client sends such answers (ours checks them against the form first): the rounds are
written by hand (:class:`tests.helpers.RawCall`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_elicit import Context, Server
from tests.helpers import RawCall, text

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0},
        "day": {"type": "string", "format": "date"},
        "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
    },
    "required": ["name"],
}


def make_server() -> Server:
    app = Server(
        "t", version="1", state_keys=["schema-tests-secret-0123456789-abcdefghij"], max_answer_attempts=9
    )

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Who?", SCHEMA, key="q")
        return json.dumps([answer.action, answer.content])

    return app


async def answer(response: dict[str, Any]) -> tuple[str, Any]:
    """("done", what the tool got) or ("again", the message of the question asked again)."""
    flow = RawCall(make_server(), "ask")
    await flow.send()
    result = await flow.send({"q": response})
    if result.get("resultType") == "input_required":
        return "again", result["inputRequests"]["q"]["params"]["message"]
    return "done", json.loads(text(result))


@pytest.mark.parametrize("response", [{"action": "accept"}, {"action": "accept", "content": {}}])
async def test_accept_without_content_is_asked_again_for_the_required_field(response: dict[str, Any]) -> None:
    assert await answer(response) == (
        "again",
        "Who?\n\nThe previous answer was not accepted: name: this field is required. Please correct it.",
    )


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_content_on_decline_or_cancel_is_ignored_not_validated(action: str) -> None:
    assert await answer({"action": action, "content": {"name": 5, "evil": "\x1b[2J"}}) == (
        "done",
        [action, None],
    )


async def test_a_valid_answer_gets_defaults_and_whole_floats_become_integers() -> None:
    assert await answer({"action": "accept", "content": {"name": "Ada", "age": 36.0}}) == (
        "done",
        ["accept", {"name": "Ada", "age": 36, "plan": "free"}],
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ({"name": "Ada", "age": "5"}, "age: must be a whole number, got the text '5'"),
        ({"name": "Ada", "age": True}, "age: must be a whole number, got true"),
        ({"name": "Ada", "age": 2**64 - 1}, "age: must be between -9007199254740991 and 9007199254740991"),
        ({"name": None}, "name: must be text, got null"),
        ({"name": {"first": "Ada"}}, "name: must be text, got an object"),
        (
            {"name": "Ada", "day": "2026-02-30"},
            "day: must be a real calendar date (2026-02-30 does not exist)",
        ),
        ({"name": "Ada", "plan": "Pro"}, "plan: 'Pro' is not one of the choices: 'free', 'pro'"),
        ({"name": "Ada", "plan": "pro\u200b"}, "plan: 'pro\\u200b' is not one of the choices: 'free', 'pro'"),
        ({"name": "Ada", "__proto__": {}}, "__proto__: unknown field '__proto__'"),
        # A hostile key goes back to the client escaped: no escape sequence, no megabytes.
        ({"name": "Ada", "\x1b]8;;https://evil\x07x" + "k" * 10**6: 1}, "'\\x1b]8;;https://evil\\x07xkkkkk"),
    ],
)
async def test_a_refused_answer_is_asked_again_with_a_reason_per_field(
    content: dict[str, Any], reason: str
) -> None:
    status, message = await answer({"action": "accept", "content": content})
    assert status == "again"
    assert reason in message
    assert "\x1b" not in message
    assert len(message) < 500
