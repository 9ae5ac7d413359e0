"""Interop: the official Python SDK client (``mcp==2.3.0``) against our server, with its own MRTR loop.

The server is ``tests/interop/tickets_server.py`` running as a real subprocess:

* stdio: spawned by the SDK's own ``mcp.client.stdio.stdio_client`` (``python tickets_server.py --stdio``);
* HTTP: spawned once per module with ``--port <free port>`` on 127.0.0.1, driven by the SDK's
  ``mcp.client.streamable_http.streamable_http_client`` at ``http://127.0.0.1:<port>/mcp``.

Every test runs over both transports. ``mcp.Client`` is left in its default ``mode="auto"``: it probes
``server/discover`` and adopts 2026-07-28 (stateless, per-request ``_meta``) when the server answers it;
it would fall back to the legacy ``initialize`` handshake otherwise, so each test checks it did not.
``Client.call_tool`` / ``get_prompt`` / ``read_resource`` run the SDK's SEP-2322 driver
(``mcp.client._input_required.run_input_required_driver``): each ``InputRequiredResult`` is answered
through the client's callbacks (all input requests of one round concurrently) and the request is retried
with ``inputResponses`` and the echoed ``requestState``, up to ``input_required_max_rounds`` rounds.

The transport handed to ``Client`` is the SDK's own (on HTTP, on an ``httpx2`` client whose response
hook records each status), wrapped in :class:`Tap`, which only records the JSON-RPC messages going each
way, so that the tests can assert the exchange on the wire as well as what the SDK returned.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client import InputRequiredRoundsExceededError
from mcp.client.context import ClientRequestContext

from tests.interop.sdk_support import (
    ELICITING_CLIENT_CAPABILITIES,
    FLOW_TIMEOUT,
    FULL_CLIENT_CAPABILITIES,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    MODERN,
    Asked,
    MakeTransport,
    Person,
    Tap,
    WireLog,
    accept,
    text_of,
)


@asynccontextmanager
async def connect(make_transport: MakeTransport, **options: Any) -> AsyncIterator[tuple[Client, WireLog]]:
    """An SDK ``Client`` (default ``mode="auto"``) on a tapped SDK transport, checked to be in 2026 mode."""
    tap = Tap(make_transport())
    async with Client(tap, read_timeout_seconds=10, **options) as client:
        assert client.protocol_version == MODERN
        assert client.server_info is not None
        assert client.server_info.name == "interop-tickets"
        yield client, tap.log
    # The SDK chose the stateless 2026-07-28 mode: it probed discover and never sent a handshake.
    assert tap.log.sent[0]["method"] == "server/discover"
    assert not [m for m in tap.log.sent if m.get("method") in ("initialize", "notifications/initialized")]
    if tap.log.http is not None:
        # Only POSTs: no GET stream and no DELETE (2026-07-28 has neither, and no sessions).
        assert {exchange[0] for exchange in tap.log.http} == {"POST"}


def tool_calls(log: WireLog) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return log.exchange("tools/call")


def check_retries(log: WireLog, method: str = "tools/call") -> None:
    """The SDK's retries of ``method`` follow wire §3.4, and the last one completed.

    Each retry has a new JSON-RPC id, repeats the original params unchanged, echoes the previous
    round's requestState byte for byte, and answers exactly the keys of the previous round's
    inputRequests (only the latest round: earlier answers travel in the state)."""
    calls = log.requests(method)
    exchange = log.exchange(method)
    assert len({call["id"] for call in calls}) == len(calls)
    per_request = {"_meta", "inputResponses", "requestState"}
    original = {k: v for k, v in exchange[0][0].items() if k not in per_request}
    assert "requestState" not in exchange[0][0]
    for (_, prev_result), (params, _) in itertools.pairwise(exchange):
        assert prev_result["resultType"] == "input_required"
        assert {k: v for k, v in params.items() if k not in per_request} == original
        assert params["requestState"] == prev_result["requestState"]
        assert sorted(params["inputResponses"]) == sorted(prev_result["inputRequests"])
    assert exchange[-1][1]["resultType"] == "complete"


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------
async def test_tools_list_shows_tools_with_input_schemas(make_transport: MakeTransport) -> None:
    async with asyncio.timeout(FLOW_TIMEOUT), connect(make_transport) as (client, _log):
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}

    def arguments(properties: dict[str, Any], *required: str) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = list(required)
        schema["additionalProperties"] = False  # unknown arguments are refused: the schema says so
        return schema

    title_only = arguments({"title": {"type": "string"}}, "title")
    assert {name: tool.input_schema for name, tool in tools.items()} == {
        "create_ticket": title_only,
        "plan_ticket": title_only,
        "triage_ticket": title_only,
        "open_numbered_ticket": title_only,
        "suggest_title": arguments({"draft": {"type": "string"}}, "draft"),
        "escalate_ticket": title_only,
        "connect_tracker": arguments({}),
        "slow_export": arguments(
            {"label": {"type": "string"}, "seconds": {"type": "number"}}, "label", "seconds"
        ),
        "export_log": arguments({"label": {"type": "string"}}, "label"),
        "import_tickets": arguments({"count": {"type": "integer"}}, "count"),
        "audit_ticket": title_only,
        "client_capabilities": arguments({}),
    }
    assert tools["create_ticket"].description == "Creates a ticket after asking for its priority (one round)."


async def test_capabilities_the_sdk_declares_per_request(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept())

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        raise AssertionError("not asked")

    async def roots(context: ClientRequestContext) -> types.ListRootsResult:
        raise AssertionError("not asked")

    async with asyncio.timeout(FLOW_TIMEOUT):
        async with connect(make_transport) as (client, log):
            declared_by_bare = json.loads(text_of(await client.call_tool("client_capabilities", {})))
        async with connect(make_transport, elicitation_callback=person) as (client, log):
            declared_by_eliciting = json.loads(text_of(await client.call_tool("client_capabilities", {})))
        ((params, _),) = tool_calls(log)
        async with connect(
            make_transport, elicitation_callback=person, sampling_callback=sample, list_roots_callback=roots
        ) as (client, _log):
            declared_by_full = json.loads(text_of(await client.call_tool("client_capabilities", {})))
    assert declared_by_bare == {}
    assert declared_by_eliciting == ELICITING_CLIENT_CAPABILITIES
    assert declared_by_full == FULL_CLIENT_CAPABILITIES
    # The server saw exactly what was on the wire in _meta.
    meta = params["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert meta["io.modelcontextprotocol/clientCapabilities"] == ELICITING_CLIENT_CAPABILITIES
    assert person.asked == []


async def test_single_round_form_elicitation(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(priority="high", notify=True))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert text_of(result) == "created 'Printer on fire' priority=high notify=True (round 1)"
    assert person.asked == [
        Asked(
            key="priority",
            mode="form",
            message="Priority for 'Printer on fire'?",
            schema={
                "type": "object",
                "properties": {
                    "priority": {"type": "string", "enum": ["low", "normal", "high"]},
                    "notify": {"type": "boolean", "default": False},
                },
                "required": ["priority"],
            },
        )
    ]
    exchange = tool_calls(log)
    assert len(exchange) == 2
    check_retries(log)
    assert exchange[1][0]["inputResponses"] == {
        "priority": {"action": "accept", "content": {"priority": "high", "notify": True}}
    }
    if log.http is not None:
        # Both rounds are ordinary 200 results (the InputRequiredResult is a result, not an error).
        assert [exchange for exchange in log.http if exchange[1] == "tools/call"] == [
            ("POST", "tools/call", "create_ticket", 200),
            ("POST", "tools/call", "create_ticket", 200),
        ]


async def test_null_for_an_optional_field_counts_as_left_out(make_transport: MakeTransport) -> None:
    """The SDK's content type allows null, and a client built on a model with None defaults sends
    it for a field left empty: the server reads it as absent and applies the default."""
    person = Person(lambda asked: accept(priority="low", notify=None))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Desk lamp"})
    assert text_of(result) == "created 'Desk lamp' priority=low notify=False (round 1)"
    sent = tool_calls(log)[1][0]["inputResponses"]["priority"]["content"]
    assert sent == {"priority": "low", "notify": None}
    assert len(person.asked) == 1  # taken the first time, not asked again


async def test_every_field_kind_round_trips_as_typed_data(make_transport: MakeTransport) -> None:
    content = {
        "reporter": "ada@example.com",
        "severity": 4,
        "due": "2026-09-01",
        "team": "db",
        "channels": ["chat", "pager"],
        "watchers": ["bob"],
        "size": "l",
        "budget": 3,
        "public": True,
    }
    person = Person(lambda asked: accept(**content))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("escalate_ticket", {"title": "Outage"})
    # The server got typed values: a date object, an int, a float for the number field.
    assert text_of(result) == (
        "reporter=ada@example.com severity=4 due=datetime.date(2026, 9, 1) team=db "
        "channels=['chat', 'pager'] watchers=['bob'] size=l budget=3.0 public=True (round 1)"
    )
    ((asked),) = person.asked
    assert asked.schema == {
        "type": "object",
        "properties": {
            "reporter": {
                "type": "string",
                "title": "Reporter",
                "description": "Your e-mail address",
                "format": "email",
            },
            "severity": {"type": "integer", "minimum": 1, "maximum": 5},
            "due": {"type": "string", "format": "date"},
            "team": {
                "type": "string",
                "oneOf": [{"const": "net", "title": "Network"}, {"const": "db", "title": "Database"}],
            },
            "channels": {"type": "array", "items": {"type": "string", "enum": ["email", "chat", "pager"]}},
            "watchers": {
                "type": "array",
                "items": {"anyOf": [{"const": "ada", "title": "Ada"}, {"const": "bob", "title": "Bob"}]},
            },
            "size": {"type": "string", "enum": ["s", "l"], "enumNames": ["Small", "Large"]},
            "budget": {"type": "number", "default": 0.5},
            "public": {"type": "boolean", "default": False},
        },
        "required": ["reporter", "severity", "due", "team", "channels", "watchers", "size"],
    }
    exchange = tool_calls(log)
    assert len(exchange) == 2
    assert exchange[1][0]["inputResponses"] == {"escalation": {"action": "accept", "content": content}}
    check_retries(log)


async def test_url_mode_elicitation_consent(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: types.ElicitResult(action="accept"))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("connect_tracker", {})
    assert text_of(result) == "tracker consent: accept (round 1)"
    assert person.asked == [
        Asked(key="tracker", mode="url", message="Connect your issue tracker account.", schema=None)
    ]
    exchange = tool_calls(log)
    assert len(exchange) == 2
    assert exchange[0][1]["inputRequests"] == {
        "tracker": {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Connect your issue tracker account.",
                "url": "https://tracker.example.com/connect",
            },
        }
    }
    assert exchange[1][0]["inputResponses"] == {"tracker": {"action": "accept"}}
    check_retries(log)


async def test_two_sequential_questions_take_two_rounds(make_transport: MakeTransport) -> None:
    def answer(asked: Asked) -> types.ElicitResult:
        return accept(assignee="ada") if asked.key == "assignee" else accept(days=3)

    person = Person(answer)
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person, input_required_max_rounds=2) as (client, log),
    ):
        result = await client.call_tool("plan_ticket", {"title": "Fix VPN"})
    assert text_of(result) == "'Fix VPN': ada in 3 days (round 2)"
    # Second question was built from the first answer: the server had it back from the sealed state.
    assert [(a.key, a.message) for a in person.asked] == [
        ("assignee", "Who should take 'Fix VPN'?"),
        ("due", "In how many days should ada finish 'Fix VPN'?"),
    ]
    exchange = tool_calls(log)
    assert len(exchange) == 3
    check_retries(log)
    assert [sorted(params.get("inputResponses", {})) for params, _ in exchange] == [[], ["assignee"], ["due"]]


async def test_one_round_fewer_than_needed_exceeds_the_sdk_round_cap(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(assignee="ada") if asked.key == "assignee" else accept(days=3))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person, input_required_max_rounds=1) as (client, log),
    ):
        with pytest.raises(InputRequiredRoundsExceededError):
            await client.call_tool("plan_ticket", {"title": "Fix VPN"})
    assert [a.key for a in person.asked] == ["assignee"]
    assert len(log.requests("tools/call")) == 2


async def test_two_concurrent_questions_arrive_in_one_round(make_transport: MakeTransport) -> None:
    both_seen = asyncio.Event()

    async def callback(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        result = await recorder(context, params)
        if len(recorder.asked) == 2:
            both_seen.set()
        # Holds each answer until both questions are open at once: if the server had asked them in
        # two rounds, the first one would wait here alone and time out.
        await asyncio.wait_for(both_seen.wait(), timeout=5)
        return result

    recorder = Person(lambda asked: accept(assignee="bob") if asked.key == "assignee" else accept(days=5))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=callback) as (client, log),
    ):
        result = await client.call_tool("triage_ticket", {"title": "Rotate keys"})
    assert text_of(result) == "'Rotate keys': bob in 5 days (round 1)"
    assert sorted((a.key, a.message) for a in recorder.asked) == [
        ("assignee", "Assignee for 'Rotate keys'?"),
        ("due", "Days until 'Rotate keys' is due?"),
    ]
    exchange = tool_calls(log)
    assert len(exchange) == 2
    assert sorted(exchange[0][1]["inputRequests"]) == ["assignee", "due"]
    check_retries(log)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_tool_as_values(
    make_transport: MakeTransport, action: str
) -> None:
    person = Person(lambda asked: types.ElicitResult(action=action))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert text_of(result) == f"not created: {action} (round 1)"
    assert len(person.asked) == 1
    exchange = tool_calls(log)
    assert len(exchange) == 2
    assert exchange[1][0]["inputResponses"] == {"priority": {"action": action}}
    check_retries(log)


async def test_invalid_answer_is_asked_again_with_the_reason(make_transport: MakeTransport) -> None:
    def answer(asked: Asked) -> types.ElicitResult:
        return accept(priority="low") if "not accepted" in asked.message else accept(priority="urgent")

    person = Person(answer)
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert text_of(result) == "created 'Printer on fire' priority=low notify=False (round 2)"
    assert [a.key for a in person.asked] == ["priority", "priority"]
    first, second = person.asked
    assert first.message == "Priority for 'Printer on fire'?"
    assert second.message == (
        "Priority for 'Printer on fire'?\n\nThe previous answer was not accepted: "
        "priority: 'urgent' is not one of the choices: 'low', 'normal', 'high'. Please correct it."
    )
    assert second.schema == first.schema
    exchange = tool_calls(log)
    assert len(exchange) == 3
    check_retries(log)


async def test_answers_that_stay_invalid_end_in_a_tool_error(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(priority="urgent"))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert result.is_error is True
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    assert block.text == (
        "The answer to \"Priority for 'Printer on fire'?\" was invalid 3 times "
        "(last: priority: 'urgent' is not one of the choices: 'low', 'normal', 'high'); giving up"
    )
    assert len(person.asked) == 3  # the server's default max_answer_attempts
    assert len(tool_calls(log)) == 4


async def test_once_result_round_trips_in_the_sealed_state(make_transport: MakeTransport) -> None:
    person = Person(lambda asked: accept(ok=True))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("open_numbered_ticket", {"title": "Sealed state"})
    ((asked),) = person.asked
    match = re.fullmatch(r"Open (T-\d+) for 'Sealed state'\?", asked.message)
    assert match is not None, asked.message
    number = match.group(1)
    # Round 1 ran the handler again: the number came back from round 0 via requestState, and the
    # allocation (the side effect) did not run a second time.
    assert text_of(result) == f"{number} opened=True allocations=1 (round 1)"
    exchange = tool_calls(log)
    assert len(exchange) == 2
    check_retries(log)
    state = exchange[0][1]["requestState"]
    assert state.startswith("v1.")
    sealed = base64.urlsafe_b64decode(state[3:] + "=" * (-len(state[3:]) % 4))
    # Encrypted, not just encoded: neither the recorded value nor the step name shows.
    assert number.encode() not in sealed
    assert b"allocate" not in sealed


async def test_tampered_state_is_rejected_through_the_sdk_manual_loop(make_transport: MakeTransport) -> None:
    # The SDK's manual loop (session.call_tool(..., allow_input_required=True)) hands us the
    # InputRequiredResult; the client still declares elicitation because it has a callback.
    person = Person(lambda asked: accept(ok=True))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, _log),
    ):
        first = await client.session.call_tool(
            "open_numbered_ticket", {"title": "Tamper"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        assert list(first.input_requests) == ["confirm"]
        state = first.request_state
        assert state is not None
        answers = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}
        flipped = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
        with pytest.raises(MCPError) as info:
            await client.session.call_tool(
                "open_numbered_ticket",
                {"title": "Tamper"},
                input_responses=answers,
                request_state=flipped,
                allow_input_required=True,
            )
        assert info.value.code == INVALID_PARAMS
        # Bound to the request: the genuine state with other arguments is refused as well.
        with pytest.raises(MCPError) as info:
            await client.session.call_tool(
                "open_numbered_ticket",
                {"title": "Other"},
                input_responses=answers,
                request_state=state,
                allow_input_required=True,
            )
        assert info.value.code == INVALID_PARAMS
        done = await client.session.call_tool(
            "open_numbered_ticket",
            {"title": "Tamper"},
            input_responses=answers,
            request_state=state,
            allow_input_required=True,
        )
    assert isinstance(done, types.CallToolResult)
    assert re.fullmatch(r"T-\d+ opened=True allocations=1 \(round 1\)", text_of(done))
    assert person.asked == []  # the manual loop never goes through the callback


async def test_missing_elicitation_capability_is_error_32021(make_transport: MakeTransport) -> None:
    async with asyncio.timeout(FLOW_TIMEOUT), connect(make_transport) as (client, log):
        with pytest.raises(MCPError) as info:
            await client.call_tool("create_ticket", {"title": "Printer on fire"})
    assert info.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert info.value.error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    ((params, error),) = tool_calls(log)
    assert params["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
    assert error["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
    if log.http is not None:
        # wire §4.6: on HTTP the status MUST be 400.
        assert log.http[-1] == ("POST", "tools/call", "create_ticket", 400)


async def test_sampling_and_roots_through_the_sdk_callbacks(make_transport: MakeTransport) -> None:
    sampled: list[types.CreateMessageRequestParams] = []
    roots_asked: list[str] = []

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Printer is on fire"),
            model="scripted-model",
            stop_reason="endTurn",
        )

    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        roots_asked.append(str(context.request_id))
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/tickets", name="tickets")])

    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, sampling_callback=sample, list_roots_callback=list_roots) as (client, log),
    ):
        result = await client.call_tool("suggest_title", {"draft": "the printer burns"})
    assert text_of(result) == "title='Printer is on fire' roots=file:///srv/tickets (round 1)"
    (params,) = sampled
    assert params.max_tokens == 40
    ((message),) = params.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Suggest a short ticket title for: the printer burns"
    assert roots_asked == ["roots"]
    exchange = tool_calls(log)
    assert len(exchange) == 2
    assert exchange[0][0]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {
        "sampling": {},
        "roots": {"listChanged": True},
    }
    assert exchange[0][1]["inputRequests"] == {
        "model": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [
                    {
                        "role": "user",
                        "content": {
                            "type": "text",
                            "text": "Suggest a short ticket title for: the printer burns",
                        },
                    }
                ],
                "maxTokens": 40,
            },
        },
        # SCHEMA ListRootsRequest: params is optional; an empty object is valid.
        "roots": {"method": "roots/list", "params": {}},
    }
    check_retries(log)


async def test_prompt_and_resource_elicit_through_the_sdk_loop(make_transport: MakeTransport) -> None:
    def answer(asked: Asked) -> types.ElicitResult:
        return accept(assignee="ops") if asked.key == "audience" else accept(ok=True)

    person = Person(answer)
    # A non-ASCII URI: on HTTP its Mcp-Name header must travel in the =?base64?...?= form.
    uri = "tickets://Ü-7"
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        prompt = await client.get_prompt("ticket_brief", {"topic": "VPN für alle"})
        resource = await client.read_resource(uri)
    (message,) = prompt.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Write a ticket brief about VPN für alle for ops."
    (contents,) = resource.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.uri == uri
    assert json.loads(contents.text) == {"id": "Ü-7", "shown": "yes"}
    assert [(a.key, a.message) for a in person.asked] == [
        ("audience", "Who is the brief about 'VPN für alle' for?"),
        ("show", "Show ticket Ü-7?"),
    ]
    for method in ("prompts/get", "resources/read"):
        assert len(log.requests(method)) == 2
        check_retries(log, method)
    if log.http is not None:
        sentinel = "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
        assert [e for e in log.http if e[1] == "resources/read"] == [
            ("POST", "resources/read", sentinel, 200)
        ] * 2


async def test_progress_reaches_the_sdk_on_every_round(make_transport: MakeTransport) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    person = Person(lambda asked: accept(ok=True))
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=person) as (client, log),
    ):
        result = await client.call_tool("import_tickets", {"count": 2}, progress_callback=on_progress)
    assert text_of(result) == "imported 2 (round 1)"
    # Round 0 reports "checking" then asks; round 1 replays the handler from the top ("checking"
    # again, on the retry's own progress token), gets the answer and imports.
    assert progress == [
        (0, 2, "checking"),
        (0, 2, "checking"),
        (1, 2, "imported 1"),
        (2, 2, "imported 2"),
    ]
    calls = log.requests("tools/call")
    assert len(calls) == 2
    tokens = [call["params"]["_meta"]["progressToken"] for call in calls]
    notified = [
        m["params"]["progressToken"] for m in log.received if m.get("method") == "notifications/progress"
    ]
    assert notified == [tokens[0], tokens[1], tokens[1], tokens[1]]


async def test_interleaved_flows_on_one_connection(make_transport: MakeTransport) -> None:
    """Several MRTR flows at once on one SDK client: each retry finds its own flow's state."""

    async def answer_slowly(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        await asyncio.sleep(0.02)
        return await person(context, params)

    def answer(asked: Asked) -> types.ElicitResult:
        title = re.search(r"'(t\d)'", asked.message)
        assert title is not None, asked.message
        if asked.key == "priority":
            return accept(priority="low" if title.group(1) == "t0" else "high")
        if asked.key == "assignee":
            return accept(assignee=f"dev-{title.group(1)}")
        return accept(days=int(title.group(1)[1]) + 10)

    person = Person(answer)
    async with (
        asyncio.timeout(FLOW_TIMEOUT),
        connect(make_transport, elicitation_callback=answer_slowly) as (client, log),
    ):
        results = await asyncio.gather(
            client.call_tool("create_ticket", {"title": "t0"}),
            client.call_tool("plan_ticket", {"title": "t1"}),
            client.call_tool("create_ticket", {"title": "t2"}),
            client.call_tool("plan_ticket", {"title": "t3"}),
        )
    assert [text_of(r) for r in results] == [
        "created 't0' priority=low notify=False (round 1)",
        "'t1': dev-t1 in 11 days (round 2)",
        "created 't2' priority=high notify=False (round 1)",
        "'t3': dev-t3 in 13 days (round 2)",
    ]
    assert len(person.asked) == 6
    calls = log.requests("tools/call")
    assert len(calls) == 10
    assert len({call["id"] for call in calls}) == 10


async def test_a_call_the_sdk_abandons_is_cancelled_on_the_server(
    make_transport: MakeTransport, request: pytest.FixtureRequest
) -> None:
    label = f"export-{request.node.callspec.id}"
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
    (abandoned,) = [call for call in log.requests("tools/call") if call["params"]["name"] == "slow_export"]
    # The SDK session emits notifications/cancelled for the abandoned id on both transports.
    cancels = [m for m in log.sent if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancels] == [abandoned["id"]]
    if log.http is not None:
        # On HTTP at 2026-07-28 the SDK transport does not POST it: it closes the request's response
        # stream, which is the cancellation (wire §2.2). The server stopped the handler on that alone,
        # and never answered the abandoned POST.
        assert [e for e in log.http if e[1] == "notifications/cancelled" or e[2] == "slow_export"] == []
        assert ("POST", "tools/call", "export_log", 200) in log.http
    # The server sent nothing further for the cancelled request.
    assert [m for m in log.received if m.get("id") == abandoned["id"]] == []


async def test_a_flow_resumes_on_a_new_connection_from_persisted_state(
    make_transport: MakeTransport, request: pytest.FixtureRequest
) -> None:
    """Stateless MRTR: the client persists the InputRequiredResult, reconnects and finishes.

    Over stdio the second connection is a new server process (same MCP_ELICIT_STATE_KEYS): the
    number allocated by ctx.once in the first process comes back from the sealed state alone, and
    the allocation does not run again in the new process (its counter for the title stays 0)."""
    title = f"Resume {request.node.callspec.id}"
    async with asyncio.timeout(FLOW_TIMEOUT):
        async with connect(make_transport, elicitation_callback=Person(lambda asked: accept(ok=True))) as (
            client,
            _log,
        ):
            first = await client.session.call_tool(
                "open_numbered_ticket", {"title": title}, allow_input_required=True
            )
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None
        (asked,) = first.input_requests.values()
        assert isinstance(asked, types.ElicitRequest)
        match = re.fullmatch(rf"Open (T-\d+) for '{title}'\?", asked.params.message)
        assert match is not None, asked.params.message
        person = Person(lambda asked: accept(ok=True))
        async with connect(make_transport, elicitation_callback=person) as (client, log):
            result = await client.call_tool(
                "open_numbered_ticket",
                {"title": title},
                input_responses={"confirm": accept(ok=True)},
                request_state=first.request_state,
            )
    allocations_here = 0 if request.node.callspec.id == "stdio" else 1
    assert text_of(result) == f"{match.group(1)} opened=True allocations={allocations_here} (round 1)"
    assert person.asked == []
    ((params, _),) = tool_calls(log)
    assert params["requestState"] == first.request_state
