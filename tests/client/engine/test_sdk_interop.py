"""Interop: our client drives the official SDK's server (``mcp==2.3.0`` ``MCPServer``,
``sdk_server.py``) over stdio and over Streamable HTTP (stateless, JSON replies).

The SDK seals ``requestState`` with AES-256-GCM and binds it to the request: every multi-round
flow that completes proves the state went back byte for byte and each retry repeated the call.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion, MissingCapabilityError

from .conftest import Target
from .support import Script, accept


def connect(target: Target, answerer: Any = None, **options: Any) -> Any:
    if target.transport == "stdio":
        options.setdefault("stderr", "capture")
    return Client.connect(target.target, answerer=answerer, **options)


def by_message(question: FormQuestion) -> Answer:
    names = {"First name?": "Ada", "Left?": "L", "Right?": "R"}
    if "ok" in question.schema["properties"]:
        return Answer("accept", {"ok": True})
    return Answer("accept", {"name": names.get(question.message, "Lovelace")})


async def test_discover_and_list(sdk: Target) -> None:
    async with connect(sdk) as client:
        assert client.server_identity.name == "sdk-interop"
        assert client.server_identity.version == "9.9.9"
        assert client.discovery.supported_versions == ("2026-07-28",)
        tools = [tool["name"] for tool in await client.list_tools()]
    assert tools == ["create_ticket", "greet", "pair", "maybe", "details", "order", "terms"]


async def test_a_single_elicitation(sdk: Target) -> None:
    person = Script(form=by_message, mode_names=("form",))
    async with connect(sdk, person) as client:
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert (result.text, result.is_error) == ("Created Printer on fire", False)
    (question,) = person.asked
    assert isinstance(question, FormQuestion)
    assert question.message == "Create ticket 'Printer on fire'?"
    assert question.schema == {
        "type": "object",
        "properties": {"ok": {"title": "Ok", "type": "boolean"}},
        "required": ["ok"],
    }


async def test_dependent_questions_take_two_rounds(sdk: Target) -> None:
    person = Script(form=by_message)
    async with connect(sdk, person) as client:
        result = await client.call_tool("greet")
    assert result.text == "Hello, Ada Lovelace!"
    assert [q.message for q in person.asked] == ["First name?", "Last name of Ada?"]


async def test_independent_questions_share_a_round_and_are_answered_concurrently(sdk: Target) -> None:
    arrived: list[str] = []
    both = asyncio.Event()

    async def answer(question: FormQuestion) -> Answer:
        arrived.append(question.message)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)
        return by_message(question)

    async with connect(sdk, Script(form=answer)) as client:
        result = await client.call_tool("pair")
    assert result.text == "L+R"
    assert sorted(arrived) == ["Left?", "Right?"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel(sdk: Target, action: str) -> None:
    async with connect(sdk, Script(form=lambda q: Answer(action))) as client:  # type: ignore[arg-type]
        branched = await client.call_tool("maybe", {"title": "t"})
        aborted = await client.call_tool("create_ticket", {"title": "t"})
    assert branched.text == f"outcome {action}"
    assert aborted.is_error is True  # Annotated[T, Resolve(...)] aborts the call on decline/cancel
    assert action in aborted.text


async def test_defaults_are_applied_before_sending(sdk: Target) -> None:
    async with connect(sdk, Script(form=accept())) as client:
        result = await client.call_tool("details")
    assert result.text == "priority=normal count=1"


async def test_invalid_answers_never_reach_the_sdk(sdk: Target) -> None:
    answers = iter([Answer("accept", {"count": 99}), Answer("accept", {"count": 3, "priority": "high"})])
    person = Script(form=lambda q: next(answers))
    async with connect(sdk, person) as client:
        result = await client.call_tool("details")
    assert result.text == "priority=high count=3"
    second = person.asked[1]
    assert isinstance(second, FormQuestion)
    assert list(second.errors) == ["count"]
    assert second.previous == {"count": 99}


async def test_without_an_answerer_the_sdk_says_which_capability_is_missing(sdk: Target) -> None:
    async with connect(sdk) as client:
        assert client.capabilities == {}
        with pytest.raises(MissingCapabilityError) as caught:
            await client.call_tool("create_ticket", {"title": "t"})
    assert caught.value.code == -32021
    assert caught.value.missing == ("elicitation.form",)
    assert caught.value.required == {"elicitation": {"form": {}}}


async def test_a_form_with_constraints_beyond_the_subset_is_answered(sdk: Target) -> None:
    # pydantic's gt, multiple_of, pattern and Literal[1, 2, 3]: the client checks the bounds it
    # can, leaves the pattern to the server, and sends the numeric choice as a number.
    answers = iter(
        [
            {"quantity": 0, "pack": 7, "code": "abc", "size": "4"},  # refused here, asked again
            {"quantity": 2, "code": "ABC", "size": "3"},
        ]
    )
    person = Script(form=lambda _q: Answer("accept", next(answers)))
    async with connect(sdk, person) as client:
        result = await client.call_tool("order")
    assert (result.text, result.is_error) == ("quantity=2 pack=6 code=ABC size=3", False)
    first, second = person.asked
    assert isinstance(first, FormQuestion)
    assert isinstance(second, FormQuestion)
    assert first.errors == {}
    assert second.errors == {
        "quantity": "must be more than 0 (got 0)",
        "pack": "must be a multiple of 6 (got 7)",
        "size": "'4' is not one of the choices: '1', '2', '3'",
    }


async def test_const_and_unique_items_from_the_sdk_are_answered(sdk: Target) -> None:
    """What pydantic writes for ``Literal[True]``, ``Literal[5]`` and ``set[Literal[...]]``
    goes beyond the subset; tolerant reading turns it into a form a person can answer."""
    person = Script(form=lambda _q: Answer("accept", {"agree": True, "toppings": ["ham", "cheese"]}))
    async with connect(sdk, person) as client:
        result = await client.call_tool("terms")
    assert (result.text, result.is_error) == ("agree=True toppings=['cheese', 'ham'] level=5", False)
