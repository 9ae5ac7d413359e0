"""Interop: our client against the official TypeScript SDK **v1** (``@modelcontextprotocol/sdk``,
pinned in scripts/node.sh), which speaks 2025-11-25 only; its tools ask with
``server.elicitInput`` (``legacy_ts_server.mjs``). Over stdio (spawned by the client) and over
stateful Streamable HTTP. The client is left in ``protocol="auto"``: it asks ``server/discover``,
gets an answer only a legacy server gives, and falls back to ``initialize``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion, UrlQuestion
from tests.helpers import Script

from .legacy_support import FLOW_TIMEOUT, answers, http_server, node24, ts_env, ts_stdio


@pytest.fixture(scope="module")
def ts_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("ts-sdk") / "server.log"
    with http_server([str(node24()), str(ts_stdio()[1])], log, ts_env()) as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> Any:
    if request.param == "stdio":
        return ts_stdio()
    return request.getfixturevalue("ts_http")


def connect(target: Any, person: Script | None = None, **options: Any) -> Any:
    if isinstance(target, list):
        options.setdefault("stderr", "capture")
        options.setdefault("env", ts_env())
    return Client.connect(target, answerer=person, request_timeout=10, **options)


async def test_auto_detects_the_legacy_server(target: Any) -> None:
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target) as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        assert client.server_identity.name == "legacy-ts"
        assert client.server_identity.era == "MCP 2025-11-25 (initialize handshake)"
        tools = [tool["name"] for tool in await client.list_tools()]
    assert tools == ["book_table", "full_name", "connect_account"]


async def test_a_form_accepted_with_a_default_filled_in(target: Any) -> None:
    person = Script(mode_names=("form",), form=answers({"time": "19:30"}))  # "guests" left to its default, 2
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person) as client:
        result = await client.call_tool("book_table")
    assert result.text == "booked 2 at 19:30"
    (question,) = person.asked
    assert isinstance(question, FormQuestion)
    assert question.message == "When, and for how many?"


async def test_an_invalid_answer_is_asked_again_never_sent(target: Any) -> None:
    tries = iter([{"time": "noon"}, {"time": "21:00", "guests": 4}])
    person = Script(mode_names=("form",), form=lambda _q: Answer("accept", next(tries)))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person) as client:
        assert (await client.call_tool("book_table")).text == "booked 4 at 21:00"
    _first, second = person.asked
    assert isinstance(second, FormQuestion)
    assert "time" in second.errors


async def test_a_form_declined(target: Any) -> None:
    person = Script(mode_names=("form",), form=lambda _q: Answer("decline"))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person) as client:
        assert (await client.call_tool("book_table")).text == "not booked (decline)"


async def test_two_questions_in_sequence(target: Any) -> None:
    person = Script(mode_names=("form",), form=answers({"name": "Grace"}, {"name": "Hopper"}))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person) as client:
        assert (await client.call_tool("full_name")).text == "Hello, Grace Hopper!"
    assert [q.message for q in person.asked] == ["First name?", "Last name of Grace?"]


async def test_a_url_question_goes_to_the_answerer_with_its_address(target: Any) -> None:
    person = Script(url=lambda _q: Answer("accept"))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person) as client:
        assert (await client.call_tool("connect_account")).text == "url answer: accept"
    (question,) = person.asked
    assert isinstance(question, UrlQuestion)
    assert question.url == "https://accounts.example.com/connect?flow=1"


async def test_a_form_only_client_declares_form_only(target: Any) -> None:
    """The capabilities in initialize are what the answerer can do: the SDK sees no URL mode and
    does not send the URL question at all."""
    person = Script(mode_names=("form",))
    async with asyncio.timeout(FLOW_TIMEOUT), connect(target, person) as client:
        assert client.capabilities == {"elicitation": {"form": {}}}
        result = await client.call_tool("connect_account")
    assert result.is_error
    assert result.text == "Client does not support url elicitation."
    assert person.asked == []
