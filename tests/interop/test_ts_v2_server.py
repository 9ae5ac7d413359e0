"""Interop: our client against the official TypeScript SDK **v2** server (``@modelcontextprotocol/server``
2.4.0), which serves 2026-07-28 and 2025-11-25 from one definition (``ts_v2_server.mjs``).

Its tools ask the way that SDK documents for 2026-07-28: they return ``inputRequired(...)`` and read
the answers on re-entry, keeping what they learned in a ``requestState`` sealed with the SDK's HMAC
codec (so a state our client did not echo byte for byte would fail the call with -32602). At
2025-11-25 the SDK's legacy shim sends each embedded question as a real ``elicitation/create``.

Over stdio (the client spawns ``node ts_v2_server.mjs stdio``: the SDK's ``serveStdio`` pins the
connection to the era of its first message) and over Streamable HTTP on 127.0.0.1 (strict modern
endpoint, with 2025-11-25 traffic routed to a sessionful transport). Our client is made to speak
each era with ``protocol=``; left to ``"auto"``, it finds 2026-07-28.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any, cast

import pytest

from mcp_elicit.client import Answer, Client, Connecting, FormQuestion, MissingCapabilityError, UrlQuestion
from mcp_elicit.client.era import ProtocolChoice
from mcp_elicit.client.questions import Action
from mcp_elicit.client.urls import assess_url
from tests.helpers import Script

from .legacy_support import FLOW_TIMEOUT, HERE, answers, http_server, node24, ts_v2_env

TS_SERVER = HERE / "ts_v2_server.mjs"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
BOTH_MODES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
# The requestedSchema the SDK sends for book_table's zod form (its conversion, $schema included).
BOOKING = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "guests": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
        "time": {"type": "string", "enum": ["18:00", "19:30", "21:00"]},
    },
    "required": ["time"],
}
NAME = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


@pytest.fixture(scope="module")
def ts_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("ts-sdk-v2") / "server.log"
    with http_server([str(node24()), str(TS_SERVER)], log, ts_v2_env()) as url:
        yield url
    assert "Error" not in log.read_text(), log.read_text()


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> str | list[str]:
    if request.param == "stdio":
        return [str(node24()), str(TS_SERVER), "stdio"]
    return str(request.getfixturevalue("ts_http"))


@pytest.fixture(params=[LEGACY, MODERN])
def protocol(request: pytest.FixtureRequest) -> str:
    """The era our client is made to speak."""
    return str(request.param)


def connect(target: str | list[str], person: Script | None, protocol: str = "auto") -> Connecting:
    """Our client on ``target`` (a URL, or the command line it spawns), speaking ``protocol``."""
    era = cast(ProtocolChoice, protocol)
    if isinstance(target, list):
        return Client.connect(
            target, stderr="capture", env=ts_v2_env(), answerer=person, request_timeout=10, protocol=era
        )
    return Client.connect(target, answerer=person, request_timeout=10, protocol=era)


async def whoami(client: Client) -> dict[str, Any]:
    """What the server's tool saw: the era it served and the client's capabilities."""
    seen: dict[str, Any] = json.loads((await client.call_tool("whoami")).text)
    return seen


def booked(text: str) -> tuple[str, dict[str, Any]]:
    """book_table's text: what it booked, and the content it received, as sent."""
    done, _, received = text.partition("; received ")
    content: dict[str, Any] = json.loads(received)
    return done, content


async def test_auto_finds_2026_on_the_dual_era_server(target: str | list[str]) -> None:
    """The server speaks both eras; ``server/discover`` is answered, so our client speaks 2026-07-28."""
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, Script()) as client:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        identity = client.server_identity
        assert (identity.name, identity.version) == ("ts-v2-interop", "2.4.0-tests")
        tools = [tool["name"] for tool in await client.list_tools()]
        assert await whoami(client) == {"era": "modern", "capabilities": BOTH_MODES}
    assert tools == ["book_table", "full_name", "connect_account", "echo", "whoami"]


async def test_each_era_is_the_one_the_server_serves(target: str | list[str], protocol: str) -> None:
    """Forced either way, the server serves that era and sees the capabilities we declare (per
    request, or in ``initialize``); a tool that asks nothing asks nothing."""
    person = Script()
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person, protocol) as client:
        assert client.protocol_version == protocol
        era = "modern" if protocol == MODERN else "legacy"
        assert await whoami(client) == {"era": era, "capabilities": BOTH_MODES}
        assert (await client.call_tool("echo", {"text": "hi"})).text == "echo: hi"
    assert person.asked == []


async def test_a_form_accepted_with_a_default_filled_in(target: str | list[str], protocol: str) -> None:
    """The question our answerer sees is the one the SDK sent (its conversion of a zod form), and
    the tool receives the answer with the form's default filled in by our client."""
    person = Script(mode_names=("form",), form=answers({"time": "19:30"}))  # "guests" left to its default
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person, protocol) as client:
        result = await client.call_tool("book_table")
    assert not result.is_error
    assert booked(result.text) == ("booked 2 at 19:30", {"guests": 2, "time": "19:30"})
    (question,) = person.asked
    assert isinstance(question, FormQuestion)
    assert (question.message, question.schema) == ("When, and for how many?", BOOKING)
    if protocol == MODERN:  # the inputRequests key (at 2025-11-25 the server's request id stands in)
        assert question.key == "booking"


async def test_decline_and_cancel_reach_the_tool(target: str | list[str], protocol: str) -> None:
    """A refusal is an answer the tool reads (at the first question, and at the second of two)."""
    ada = Answer("accept", {"name": "Ada"})
    replies = iter([Answer("decline"), Answer("cancel"), ada, Answer("decline")])
    person = Script(form=lambda _q: next(replies))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person, protocol) as client:
        assert (await client.call_tool("book_table")).text == "not booked (decline)"
        assert (await client.call_tool("full_name")).text == "stopped at the first name (cancel)"
        assert (await client.call_tool("full_name")).text == "stopped at the last name (decline)"


async def test_two_questions_in_turn(target: str | list[str], protocol: str) -> None:
    """The second question names the first answer, which the server kept in its sealed
    ``requestState`` (2026-07-28) or its shim kept for it (2025-11-25)."""
    person = Script(mode_names=("form",), form=answers({"name": "Grace"}, {"name": "Hopper"}))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person, protocol) as client:
        assert (await client.call_tool("full_name")).text == "Hello, Grace Hopper!"
    assert [q.message for q in person.asked] == ["First name?", "Last name of Grace?"]
    if protocol == MODERN:
        assert [q.key for q in person.asked] == ["first", "last"]
    assert all(isinstance(q, FormQuestion) and q.schema == NAME for q in person.asked)


async def test_an_invalid_answer_is_asked_again_never_sent(target: str | list[str], protocol: str) -> None:
    """Our client checks an accepted answer against the form: the answerer is asked again with the
    reason (a question the server asked again would come without one), and the tool receives only
    the valid answer."""
    tries: Iterator[dict[str, Any]] = iter([{"time": "noon"}, {"time": "21:00", "guests": 4}])
    person = Script(mode_names=("form",), form=lambda _q: Answer("accept", next(tries)))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person, protocol) as client:
        result = await client.call_tool("book_table")
    assert booked(result.text) == ("booked 4 at 21:00", {"guests": 4, "time": "21:00"})
    first, second = person.asked
    assert isinstance(first, FormQuestion)
    assert isinstance(second, FormQuestion)
    assert not first.errors
    assert "time" in second.errors
    assert second.previous == {"time": "noon"}


async def test_a_url_question_goes_through_consent(target: str | list[str], protocol: str) -> None:
    """The URL reaches the answerer as asked; it is assessed as an answerer must before showing
    it, and the consent (or the refusal) reaches the tool."""
    consents: Iterator[Action] = iter(["accept", "decline"])

    def consent(question: UrlQuestion) -> Answer:
        assessment = assess_url(question.url)
        assert (assessment.verdict, assessment.registrable_domain) == ("ok", "example.com")
        return Answer(next(consents))

    person = Script(url=consent)
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person, protocol) as client:
        assert (await client.call_tool("connect_account")).text == "url answer: accept"
        assert (await client.call_tool("connect_account")).text == "url answer: decline"
    assert len(person.asked) == 2
    for question in person.asked:
        assert isinstance(question, UrlQuestion)
        assert question.message == "Connect your account"
        if protocol == MODERN:
            assert question.key == "account"
        assert question.url == "https://accounts.example.com/connect?flow=1"


async def test_undeclared_modes_are_never_asked(target: str | list[str], protocol: str) -> None:
    """Our client declares what its answerer can do: forms only, or nothing. The server then asks
    nothing it may not ask: at 2026-07-28 the call fails with -32021 naming the mode; at
    2025-11-25 the SDK's shim ends the tool with an error result instead."""
    form_only = Script(mode_names=("form",))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, form_only, protocol) as client:
        assert (await whoami(client))["capabilities"] == {"elicitation": {"form": {}}}
        if protocol == MODERN:
            with pytest.raises(MissingCapabilityError) as refused:
                await client.call_tool("connect_account")
            assert refused.value.required == {"elicitation": {"url": {}}}
        else:
            result = await client.call_tool("connect_account")
            assert result.is_error
            assert "did not declare the required capability" in result.text
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, None, protocol) as client:
        assert (await whoami(client))["capabilities"] == {}
        if protocol == MODERN:
            with pytest.raises(MissingCapabilityError) as refused:
                await client.call_tool("book_table")
            assert refused.value.missing == ("elicitation.form",)
        else:
            assert (await client.call_tool("book_table")).is_error
    assert form_only.asked == []
