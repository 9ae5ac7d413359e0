"""Interop: our client against the official Python SDK's legacy server (``mcp==2.3.0``
``MCPServer``, ``legacy_sdk_server.py``), whose tools ask with ``ctx.elicit``: on a 2025-11-25
session each question reaches the client as a real ``elicitation/create`` request (on HTTP, on
the tool call's own event stream, answered with a POST). Over stdio (spawned by the client) and
over stateful Streamable HTTP.

The SDK speaks both eras and picks 2026-07-28 for a client that asks ``server/discover`` first,
where ``ctx.elicit`` cannot ask: these tools are reached with ``protocol="2025-11-25"`` (the
CLI's ``--legacy``), and one test shows what ``auto`` picks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion
from tests.helpers import Script

from .legacy_support import FLOW_TIMEOUT, answers, http_server, py_stdio


@pytest.fixture(scope="module")
def py_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(py_stdio()[:2], tmp_path_factory.mktemp("py-sdk") / "server.log") as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> Any:
    if request.param == "stdio":
        return py_stdio()
    return request.getfixturevalue("py_http")


def legacy(target: Any, person: Script | None = None, **options: Any) -> Any:
    if isinstance(target, list):
        options.setdefault("stderr", "capture")
    return Client.connect(target, answerer=person, protocol="2025-11-25", request_timeout=10, **options)


async def test_the_handshake_and_who_is_asking(target: Any) -> None:
    async with asyncio.timeout(FLOW_TIMEOUT), legacy(target) as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        assert client.initialize_result.server_info["name"] == "legacy-sdk"
        identity = client.server_identity
        assert (identity.name, identity.version, identity.protocol_version) == (
            "legacy-sdk",
            "2.3.0-tests",
            "2025-11-25",
        )
        assert [tool["name"] for tool in await client.list_tools()] == [
            "file_ticket",
            "full_name",
            "leave_note",
            "add",
        ]
        assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"


async def test_a_form_accepted_with_its_default_applied(target: Any) -> None:
    person = Script(mode_names=("form",), form=answers({"title": "Printer on fire"}))
    async with asyncio.timeout(FLOW_TIMEOUT), legacy(target, person) as client:
        result = await client.call_tool("file_ticket")
    assert (result.text, result.is_error) == ("filed 'Printer on fire' at normal", False)
    (question,) = person.asked
    assert isinstance(question, FormQuestion)
    assert question.message == "Describe the problem"
    assert question.server.protocol_version == "2025-11-25"
    assert question.schema["properties"]["priority"]["default"] == "normal"


async def test_a_form_with_a_multi_line_default_and_a_tab_in_a_choice_is_answered(target: Any) -> None:
    """Such text is outside our strict subset, but a client reads a server's form tolerantly:
    the question reaches the person, and the values go back unchanged."""
    person = Script(
        mode_names=("form",), form=answers({"text": "line one\nline two\twith a tab", "tone": "a\tb"})
    )
    async with asyncio.timeout(FLOW_TIMEOUT), legacy(target, person) as client:
        result = await client.call_tool("leave_note")
    assert (result.text, result.is_error) == ("('line one\\nline two\\twith a tab', 'a\\tb')", False)
    (question,) = person.asked
    assert isinstance(question, FormQuestion)
    assert question.schema["properties"]["text"]["default"] == "line one\nline two\twith a tab"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_form_declined_or_cancelled(target: Any, action: str) -> None:
    person = Script(mode_names=("form",), form=lambda _q: Answer(action))  # type: ignore[arg-type]
    async with asyncio.timeout(FLOW_TIMEOUT), legacy(target, person) as client:
        result = await client.call_tool("file_ticket")
    assert result.text == f"not filed ({action})"
    assert len(person.asked) == 1


async def test_two_questions_in_sequence(target: Any) -> None:
    person = Script(mode_names=("form",), form=answers({"name": "Ada"}, {"name": "Lovelace"}))
    async with asyncio.timeout(FLOW_TIMEOUT), legacy(target, person) as client:
        result = await client.call_tool("full_name")
    assert result.text == "Hello, Ada Lovelace!"
    assert [q.message for q in person.asked] == ["First name?", "Last name of Ada?"]


async def test_a_slow_answer_does_not_time_out_the_call(target: Any) -> None:
    """request_timeout (1 s) is paused while the person answers (2 s)."""

    async def slowly(_question: FormQuestion) -> Answer:
        await asyncio.sleep(2)
        return Answer("accept", {"title": "late"})

    person = Script(mode_names=("form",), form=slowly)
    async with asyncio.timeout(FLOW_TIMEOUT), legacy(target, person) as client:
        client.request_timeout = 1.0  # after connecting: a spawned Python takes its time to start
        assert (await client.call_tool("file_ticket")).text == "filed 'late' at normal"


async def test_auto_picks_2026_on_this_dual_era_server(target: Any) -> None:
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        Client.connect(target, **({"stderr": "capture"} if isinstance(target, list) else {})) as client,
    ):
        assert (client.era, client.protocol_version) == ("modern", "2026-07-28")
        assert client.server_identity.protocol_version == "2026-07-28"
