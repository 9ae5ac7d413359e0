"""Interop: the official Python SDK client (``mcp==2.3.0``) in ``mode="legacy"`` against our server.

``mode="legacy"`` is what every client built for MCP 2025-11-25 does: ``initialize`` first, then
a session whose capabilities were fixed by it, and each question of a tool as a real
``elicitation/create`` (``sampling/createMessage``, ``roots/list``) request from the server,
answered through the SDK's callbacks. The server is ``tests/interop/tickets_server.py`` -- the
same handlers the 2026-07-28 interop tests (``test_sdk_client.py``) drive through
``InputRequiredResult`` rounds -- run as a real subprocess, over stdio and over Streamable HTTP
(the 2025-11-25 shape: a session, the call answered on its POST's SSE stream, the answers POSTed
back). The wire tap of ``test_sdk_client.py`` records every message each way.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext

from tests.interop.sdk_support import (
    FLOW_TIMEOUT,
    Asked,
    MakeTransport,
    Person,
    Tap,
    WireLog,
    accept,
    text_of,
)

LEGACY = "2025-11-25"


@asynccontextmanager
async def connect(make_transport: MakeTransport, **options: Any) -> AsyncIterator[tuple[Client, WireLog]]:
    """An SDK ``Client`` in legacy mode on a tapped SDK transport, checked to have done the
    2025-11-25 handshake (and nothing of 2026-07-28)."""
    tap = Tap(make_transport())
    async with Client(tap, mode="legacy", read_timeout_seconds=30, **options) as client:
        assert client.protocol_version == LEGACY
        assert client.server_info is not None
        assert client.server_info.name == "interop-tickets"
        yield client, tap.log
    sent = tap.log.sent
    assert sent[0]["method"] == "initialize"
    assert [m for m in sent if m.get("method") == "notifications/initialized"]
    assert not [m for m in sent if m.get("method") == "server/discover"]
    for message in tap.log.received:
        result = message.get("result")
        if isinstance(result, dict):
            assert "resultType" not in result, message  # a 2025 result carries none
            assert result.get("resultType") != "input_required"


def server_requests(log: WireLog, method: str) -> list[dict[str, Any]]:
    """The requests the server sent the client (``method``)."""
    return [m for m in log.received if m.get("method") == method and "id" in m]


async def test_the_handshake_answers_the_version_asked_and_what_the_server_has(
    make_transport: MakeTransport,
) -> None:
    async with asyncio.timeout(FLOW_TIMEOUT), connect(make_transport) as (client, log):
        listed = await client.list_tools()
    assert "create_ticket" in {tool.name for tool in listed.tools}
    (initialize,) = [m for m in log.sent if m.get("method") == "initialize"]
    (answer,) = [m for m in log.received if m.get("id") == initialize["id"]]
    result = answer["result"]
    assert result["protocolVersion"] == LEGACY
    assert result["serverInfo"] == {"name": "interop-tickets", "version": "1.2.3"}
    assert result["instructions"] == "Ticket fixtures for SDK interop tests."
    assert {"tools", "prompts", "resources", "logging"} <= set(result["capabilities"])
    if log.http is not None:
        assert {exchange[0] for exchange in log.http} <= {"POST", "GET", "DELETE"}


async def test_one_form_is_a_real_elicitation_request(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(priority="high", notify=True))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert text_of(result) == "created 'Printer on fire' priority=high notify=True (round 1)"
    (elicit,) = server_requests(log, "elicitation/create")
    assert elicit["params"] == {
        "mode": "form",
        "message": "Priority for 'Printer on fire'?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "priority": {"type": "string", "enum": ["low", "normal", "high"]},
                "notify": {"type": "boolean", "default": False},
            },
            "required": ["priority"],
        },
    }
    # One tools/call on the wire: the bridge asked on its stream and answered it once.
    assert len([m for m in log.sent if m.get("method") == "tools/call"]) == 1


async def test_two_questions_in_sequence_and_at_once(make_transport: MakeTransport) -> None:
    answers = {
        "Who should take 'Lamp'?": accept(assignee="ada"),
        "In how many days should ada finish 'Lamp'?": accept(days=4),
        "Assignee for 'Desk'?": accept(assignee="bob"),
        "Days until 'Desk' is due?": accept(days=2),
    }
    person = Person(lambda asked: answers[asked.message])
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        in_turn = await client.call_tool("plan_ticket", {"title": "Lamp"})
        together = await client.call_tool("triage_ticket", {"title": "Desk"})
    assert text_of(in_turn) == "'Lamp': ada in 4 days (round 2)"
    assert text_of(together) == "'Desk': bob in 2 days (round 1)"
    assert [asked.message for asked in person.asked[:2]] == list(answers)[:2]
    assert sorted(asked.message for asked in person.asked[2:]) == sorted(list(answers)[2:])
    # The gathered questions are two requests in flight at once, each with an id of its own.
    requests = server_requests(log, "elicitation/create")
    assert len({request["id"] for request in requests}) == 4


async def test_an_invalid_answer_is_asked_again_with_the_reason(make_transport: MakeTransport) -> None:
    replies = iter([accept(priority="urgent"), accept(priority="low")])
    person = Person(lambda asked: next(replies))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, _log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Chair"})
    assert text_of(result) == "created 'Chair' priority=low notify=False (round 2)"
    first, again = person.asked
    assert first.message == "Priority for 'Chair'?"
    assert again.message.startswith("Priority for 'Chair'?\n\nThe previous answer was not accepted:")
    assert "priority:" in again.message
    assert "Please correct it." in again.message


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_tool_as_values(
    make_transport: MakeTransport, action: str
) -> None:
    person = Person(lambda asked: types.ElicitResult(action=action))  # type: ignore[arg-type]
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Mug"})
    assert text_of(result) == f"not created: {action} (round 1)"
    (answer,) = [m for m in log.sent if isinstance(m.get("result"), dict) and "action" in m["result"]]
    assert answer["result"]["action"] == action


async def test_a_side_effect_in_once_runs_once_across_the_questions(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(ok=True))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, _log),
    ):
        result = await client.call_tool("open_numbered_ticket", {"title": "Legacy once"})
    number, opened, allocations, _ = text_of(result).split(" ", 3)
    assert number.startswith("T-")
    assert opened == "opened=True"
    assert allocations == "allocations=1"  # replayed twice, allocated once


async def test_url_mode_sends_an_elicitation_id_and_no_completion(make_transport: MakeTransport) -> None:
    """A URL question carries a fresh ``elicitationId``. The SDK client's accept says the user
    agreed to open the page, not that they finished there, so no
    ``notifications/elicitation/complete`` follows (the connect kit's pages, which know, send
    one: tests/connect/kit/test_kit_legacy.py)."""
    person = Person(lambda asked: types.ElicitResult(action="accept"))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("connect_tracker", {})
    assert text_of(result) == "tracker consent: accept (round 1)"
    assert person.asked == [
        Asked(key=person.asked[0].key, mode="url", message="Connect your issue tracker account.", schema=None)
    ]
    (request,) = server_requests(log, "elicitation/create")
    params = request["params"]
    assert params["url"] == "https://tracker.example.com/connect"
    assert isinstance(params["elicitationId"], str)
    assert len(params["elicitationId"]) >= 32
    assert [m for m in log.received if m.get("method") == "notifications/elicitation/complete"] == []


async def test_sampling_and_roots_are_real_requests(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept())

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        reply = types.TextContent(type="text", text="Broken printer")
        return types.CreateMessageResult(role="assistant", content=reply, model="test-model")

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/tickets", name="tickets")])

    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(
            make_transport, elicitation_callback=person, sampling_callback=sample, list_roots_callback=roots
        ) as (client, log),
    ):
        result = await client.call_tool("suggest_title", {"draft": "the printer is on fire"})
    assert text_of(result) == "title='Broken printer' roots=file:///work/tickets (round 1)"
    (sampling,) = server_requests(log, "sampling/createMessage")
    assert sampling["params"]["maxTokens"] == 40
    assert len(server_requests(log, "roots/list")) == 1


async def test_a_client_without_sampling_gets_the_missing_capability_named(
    make_transport: MakeTransport,
) -> None:
    async with asyncio.timeout(FLOW_TIMEOUT), connect(make_transport) as (client, log):
        with pytest.raises(MCPError) as refused:
            await client.call_tool("suggest_title", {"draft": "x"})
    # -32021 naming all that is missing, as the SDK's own legacy resolvers answer; refused before
    # anything was sent to the client.
    assert refused.value.error.code == -32021
    assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}, "roots": {}}}
    assert "sampling and roots" in refused.value.error.message
    assert not server_requests(log, "sampling/createMessage")
    assert not server_requests(log, "roots/list")


async def test_progress_reaches_the_client_while_the_user_answers(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(ok=True))
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, _log),
    ):
        result = await client.call_tool("import_tickets", {"count": 2}, progress_callback=on_progress)
    assert text_of(result) == "imported 2 (round 1)"
    assert seen[-2:] == [1.0, 2.0]
    assert 0.0 in seen


@pytest.mark.parametrize("level", ["info", "debug"])
async def test_logs_follow_the_session_level_each_once(
    make_transport: MakeTransport, level: Literal["info", "debug"]
) -> None:
    """``logging/setLevel`` is a session's in 2025-11-25: after it, the tool's ``ctx.log`` below the
    level is dropped, and the rest are notifications sent before the call's result (on HTTP, on
    the call's own stream). The handler runs again from the top once the question is answered
    and writes its first log again; the call is one request here, so the client gets it once."""
    person = Person(lambda asked: accept(ok=True))
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person, logging_callback=on_log) as (client, log),
    ):
        await client.set_logging_level(level)
        result = await client.call_tool("audit_ticket", {"title": "Logs"})
    assert text_of(result) == "audited 'Logs' (round 1)"
    first = [("debug", "audit", "auditing 'Logs'")] if level == "debug" else []
    assert [(m.level, m.logger, m.data) for m in logged] == [
        *first,
        ("info", "audit", {"title": "Logs", "confirmed": True}),
        ("warning", "audit", "'Logs' audited"),
    ]
    (call,) = [m for m in log.sent if m.get("method") == "tools/call"]
    order = [m.get("method") or ("result" if m.get("id") == call["id"] else "other") for m in log.received]
    assert order.index("result") > max(i for i, m in enumerate(order) if m == "notifications/message")


async def test_a_cancelled_call_stops_the_handler(
    make_transport: MakeTransport, request: pytest.FixtureRequest
) -> None:
    label = f"legacy-export-{request.node.callspec.id}"
    async with asyncio.timeout(FLOW_TIMEOUT), connect(make_transport) as (client, log):
        with pytest.raises(MCPError) as info:
            await client.call_tool("slow_export", {"label": label, "seconds": 30}, read_timeout_seconds=0.5)
        assert "timed out" in info.value.error.message
        events = ""
        for _ in range(100):
            events = text_of(await client.call_tool("export_log", {"label": label}))
            if events != "started":
                break
            await asyncio.sleep(0.02)
        assert events == "started,cancelled"
    calls = [m for m in log.sent if m.get("method") == "tools/call"]
    (abandoned,) = [m for m in calls if m["params"]["name"] == "slow_export"]
    cancels = [m for m in log.sent if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancels] == [abandoned["id"]]
    # Nothing is answered for a cancelled request.
    assert [m for m in log.received if m.get("id") == abandoned["id"] and "method" not in m] == []


async def test_a_question_left_waiting_is_withdrawn_when_its_call_is_cancelled(
    make_transport: MakeTransport,
) -> None:
    shown = asyncio.Event()
    withdrawn = asyncio.Event()

    async def never_answers(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        shown.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        raise AssertionError("not reached")

    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=never_answers) as (
            client,
            log,
        ),
    ):
        call = asyncio.ensure_future(client.call_tool("create_ticket", {"title": "Waits"}))
        await shown.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # The server withdraws its question (notifications/cancelled for its own request id).
        for _ in range(200):
            if [m for m in log.received if m.get("method") == "notifications/cancelled"]:
                break
            await asyncio.sleep(0.02)
    (question,) = server_requests(log, "elicitation/create")
    cancelled = [m for m in log.received if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [question["id"]]
