"""The server engine end to end in-process: rounds, replay, batching, once, gating, state.

A test that plays a normal client runs the real one (``Client.connect(app)``); one that must
send what no honest client sends, or look at the ``InputRequiredResult`` itself, writes the
requests by hand (:class:`tests.helpers.RawCall`), over the same in-process HTTP path."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from mcp_elicit import Context, InputRequired, Server, ToolError
from mcp_elicit.client import Answer, Client, McpClientError, MissingCapabilityError
from mcp_elicit.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_elicit.wire.jsonrpc import Notification
from tests.helpers import RawCall, Script, UnusedModel, accept, meta, only_key, post, text


@dataclass
class Name:
    name: str


@dataclass
class Details:
    priority: Literal["low", "normal", "high"] = "normal"
    count: int = 1


def make_server(**options: Any) -> Server:
    return Server("test", version="9.9", state_keys=["engine-tests-secret-0123456789-abcdefghij"], **options)


async def test_discover_lists_versions_capabilities_and_server_info() -> None:
    app = make_server(instructions="Be nice.")

    @app.tool()
    async def noop() -> str:
        return "ok"

    async with Client.connect(app) as client:
        result = (await client.discover(refresh=True)).raw
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {"logging": {}, "tools": {}}
    assert result["instructions"] == "Be nice."
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "public"
    assert result["ttlMs"] > 0
    listed = await post(app, "tools/list")  # the client keeps only the tools of a listing
    assert listed["cacheScope"] == "public"
    assert listed["ttlMs"] == result["ttlMs"]
    assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "test", "version": "9.9"}}


async def test_single_round_elicitation() -> None:
    app = make_server()

    @app.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", Name)
        return f"Hello, {answer.data.name}!" if answer.accepted else f"no ({answer.action})"

    flow = RawCall(app, "greet")
    first = await flow.send()
    key = only_key(first)
    asked = first["inputRequests"][key]
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["mode"] == "form"
    assert asked["params"]["message"] == "What is your name?"
    assert asked["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}
    assert isinstance(first["requestState"], str)
    assert text(await flow.send({key: accept({"name": "Ada"})})) == "Hello, Ada!"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_handler(action: str) -> None:
    app = make_server()

    @app.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Name)
        return answer.action

    flow = RawCall(app, "greet")
    key = only_key(await flow.send())
    assert text(await flow.send({key: {"action": action, "content": {"junk": 1}}})) == action


async def test_sequential_questions_take_rounds_and_replay_recorded_answers() -> None:
    app = make_server()
    calls: list[str] = []

    @app.tool()
    async def two(ctx: Context) -> str:
        calls.append("run")
        a = await ctx.elicit("First?", Name)
        b = await ctx.elicit("Second?", Name)
        return f"{a.data.name}+{b.data.name}"

    names = iter(["a", "b"])
    person = Script(form=lambda question: Answer("accept", {"name": next(names)}))
    async with Client.connect(app, answerer=person) as client:
        result = await client.call_tool("two")
    # Only the latest round is answered: the first answer travels in the sealed state.
    assert result.text == "a+b"
    k1, k2 = (question.key for question in person.asked)
    assert k2 != k1
    assert calls == ["run", "run", "run"]


async def test_concurrent_questions_go_out_in_one_round() -> None:
    app = make_server()

    @app.tool()
    async def many(ctx: Context) -> str:
        async def ask(label: str) -> str:
            await asyncio.sleep(0)
            answer = await ctx.elicit(f"{label}?", Name)
            return answer.data.name

        async with asyncio.TaskGroup() as group:
            a = group.create_task(ask("A"))
            b = group.create_task(ask("B"))
        c = await asyncio.gather(ask("C"), ctx.elicit("D?", Name))
        return a.result() + b.result() + c[0] + c[1].data.name

    flow = RawCall(app, "many")
    first = await flow.send()
    assert first["resultType"] == "input_required"
    assert sorted(r["params"]["message"] for r in first["inputRequests"].values()) == ["A?", "B?"]
    answers = {k: accept({"name": r["params"]["message"][0]}) for k, r in first["inputRequests"].items()}
    second = await flow.send(answers)
    assert sorted(r["params"]["message"] for r in second["inputRequests"].values()) == ["C?", "D?"]
    answers = {
        k: accept({"name": r["params"]["message"][0].lower()}) for k, r in second["inputRequests"].items()
    }
    assert text(await flow.send(answers)) == "ABcd"


async def test_partial_answers_reask_only_what_is_missing_and_extra_keys_are_ignored() -> None:
    app = make_server()

    @app.tool()
    async def pair(ctx: Context) -> str:
        a, b = await asyncio.gather(ctx.elicit("A?", Name, key="a"), ctx.elicit("B?", Name, key="b"))
        return a.data.name + b.data.name

    flow = RawCall(app, "pair")
    assert sorted((await flow.send())["inputRequests"]) == ["a", "b"]
    again = await flow.send({"a": accept({"name": "1"}), "zzz": {"action": "accept"}})
    assert list(again["inputRequests"]) == ["b"]
    assert text(await flow.send({"b": accept({"name": "2"})})) == "12"


async def test_stateless_answers_without_state_complete() -> None:
    """The conformance harness answers without ever having been asked (no requestState)."""
    app = make_server()

    @app.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", Name, key="user_name")
        return f"Hello, {answer.data.name}!"

    flow = RawCall(app, "greet")
    result = await flow.send({"user_name": accept({"name": "Bo"}), "unknown": {"x": 1}}, state=None)
    assert text(result) == "Hello, Bo!"


async def test_invalid_answer_is_asked_again_with_the_reason_then_gives_up() -> None:
    app = make_server(max_answer_attempts=2)

    @app.tool()
    async def details(ctx: Context) -> str:
        answer = await ctx.elicit("Details?", Details, key="d")
        return f"{answer.data.priority}/{answer.data.count}"

    flow = RawCall(app, "details")
    await flow.send()
    again = await flow.send({"d": accept({"priority": "urgent"})})
    message = again["inputRequests"]["d"]["params"]["message"]
    assert message.startswith("Details?\n\nThe previous answer was not accepted: priority:")
    final = await flow.send({"d": accept({"priority": "urgent"})})
    assert final["isError"] is True
    assert "invalid 2 times" in final["content"][0]["text"]


async def test_invalid_then_valid_answer_applies_defaults() -> None:
    app = make_server()

    @app.tool()
    async def details(ctx: Context) -> str:
        answer = await ctx.elicit("Details?", Details, key="d")
        return f"{answer.data.priority}/{answer.data.count}"

    flow = RawCall(app, "details")
    await flow.send()
    await flow.send({"d": accept({"count": "many"})})
    assert text(await flow.send({"d": accept({})})) == "normal/1"


async def test_once_runs_its_side_effect_once_per_flow_and_gets_a_stable_key() -> None:
    app = make_server()
    effects: list[str] = []

    @app.tool()
    async def create(title: str, ctx: Context) -> str:
        ticket = await ctx.once("insert", lambda key: effects.append(key) or f"T-{len(effects)}")
        confirm = await ctx.elicit(f"Notify watchers of {ticket}?", Name)
        stamp = await ctx.once("stamp", lambda: "stamped")
        return f"{ticket} {confirm.data.name} {stamp}"

    person = Script(form=lambda question: Answer("accept", {"name": "n"}))
    async with Client.connect(app, answerer=person) as client:
        assert (await client.call_tool("create", {"title": "x"})).text == "T-1 n stamped"
    assert len(person.asked) == 1
    assert len(effects) == 1
    assert effects[0].endswith(":insert")
    assert len(effects[0]) > len(":insert") + 16


async def test_once_refuses_results_that_cannot_be_recorded() -> None:
    app = make_server()

    @app.tool()
    async def bad(ctx: Context) -> str:
        await ctx.once("obj", object)
        return "unreachable"

    async with Client.connect(app) as client:
        result = await client.call_tool("bad")
    assert result.is_error is True


async def test_state_only_round_with_retry_later() -> None:
    app = make_server()
    ready = {"done": False}

    @app.tool()
    async def job(ctx: Context) -> str:
        started = await ctx.once("start", lambda: "job-1")
        if not ready["done"]:
            ctx.retry_later()
        return f"{started} finished on round {ctx.round}"

    flow = RawCall(app, "job")
    first = await flow.send()
    assert first == {
        "resultType": "input_required",
        "requestState": first["requestState"],
        "_meta": first["_meta"],
    }
    second = await flow.send()
    assert "inputRequests" not in second
    ready["done"] = True
    assert text(await flow.send()) == "job-1 finished on round 2"


async def test_low_level_handler_returns_its_own_input_required() -> None:
    app = make_server()

    @app.tool()
    async def manual(ctx: Context) -> str | InputRequired:
        if ctx.request_state == "asked" and "ok" in ctx.input_responses:
            return f"state-ok {ctx.input_responses['ok']['action']}"
        return InputRequired(
            {
                "ok": {
                    "method": "elicitation/create",
                    "params": {"message": "OK?", "requestedSchema": {"type": "object", "properties": {}}},
                }
            },
            state="asked",
        )

    flow = RawCall(app, "manual")
    first = await flow.send()
    assert list(first["inputRequests"]) == ["ok"]
    assert first["requestState"] != "asked"
    assert text(await flow.send({"ok": {"action": "accept"}})) == "state-ok accept"


async def test_low_level_requests_are_gated_too() -> None:
    app = make_server()

    @app.tool()
    async def manual(ctx: Context) -> InputRequired:
        return InputRequired(
            {
                "u": {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "message": "Go", "url": "https://example.com/x"},
                }
            }
        )

    error = await RawCall(app, "manual", capabilities={"elicitation": {}}).error()
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}


@pytest.mark.parametrize(
    ("client_has", "declared", "needs"),
    [
        ({}, {}, "form"),
        ({"answerer": Script(mode_names=["url"])}, {"elicitation": {"url": {}}}, "form"),
        ({"sampler": UnusedModel()}, {"sampling": {}}, "form"),
    ],
)
async def test_form_elicitation_needs_the_form_capability(
    client_has: dict[str, Any], declared: dict[str, Any], needs: str
) -> None:
    app = make_server()

    @app.tool()
    async def greet(ctx: Context) -> str:
        await ctx.elicit("Name?", Name)
        return "unreachable"

    async with Client.connect(app, **client_has) as client:
        assert client.capabilities == declared
        with pytest.raises(MissingCapabilityError) as info:
            await client.call_tool("greet")
    assert info.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert info.value.data == {"requiredCapabilities": {"elicitation": {needs: {}}}}


async def test_empty_elicitation_capability_means_form_only() -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        if not ctx.can_elicit("url"):
            return "fallback: please visit the settings page yourself"
        await ctx.elicit_url("Connect", "https://example.com/connect/1")
        return "unreachable"

    assert text(await RawCall(app, "connect", capabilities={"elicitation": {}}).send()).startswith("fallback")
    first = await RawCall(app, "connect", capabilities={"elicitation": {"url": {}}}).send()
    (entry,) = first["inputRequests"].values()
    assert entry["params"] == {"mode": "url", "message": "Connect", "url": "https://example.com/connect/1"}


async def test_url_mode_accept_means_consent() -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        answer = await ctx.elicit_url("Connect", "https://example.com/connect/1")
        return f"{answer.action} content={answer.content}"

    person = Script(url=lambda question: Answer("accept"))
    async with Client.connect(app, answerer=person) as client:
        assert (await client.call_tool("connect")).text == "accept content=None"
    assert [question.url for question in person.asked] == ["https://example.com/connect/1"]


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "http://example.com/x",
        "https://user:pw@example.com/",
        "ftp://example.com",
        "https://exa mple.com",
        "/relative",
    ],
)
async def test_unsafe_elicitation_urls_are_never_sent(url: str) -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        await ctx.elicit_url("Connect", url)
        return "unreachable"

    person = Script()  # never asked: the question is never sent
    async with Client.connect(app, answerer=person) as client:
        result = await client.call_tool("connect")
    assert result.is_error is True


async def test_replay_mismatch_fails_loudly() -> None:
    app = make_server(replay_grace=0.05)
    counter = {"n": 0}

    @app.tool()
    async def flaky(ctx: Context) -> str:
        counter["n"] += 1
        await ctx.elicit(f"Question number {counter['n']}?", Name)
        return "unreachable"

    person = Script(form=lambda question: Answer("accept", {"name": "x"}))
    async with Client.connect(app, answerer=person) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("flaky")
    assert len(person.asked) == 1
    error = info.value
    assert error.code == INTERNAL_ERROR
    assert "ctx.once" in error.message
    assert "must ask the same questions" in error.message


async def test_replay_mismatch_with_an_explicit_key() -> None:
    app = make_server()
    counter = {"n": 0}

    @app.tool()
    async def flaky(ctx: Context) -> str:
        counter["n"] += 1
        await ctx.elicit(f"Question {counter['n']}?", Name, key="q")
        return "unreachable"

    person = Script(form=lambda question: Answer("accept", {"name": "x"}))
    async with Client.connect(app, answerer=person) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("flaky")
    assert [question.key for question in person.asked] == ["q"]
    assert info.value.code == INTERNAL_ERROR
    assert "question 'q' changed" in info.value.message


async def test_tool_errors_and_unexpected_exceptions() -> None:
    app = make_server()

    @app.tool()
    async def refuses() -> str:
        raise ToolError("No tickets on Sundays.")

    @app.tool()
    async def crashes() -> str:
        raise RuntimeError("secret connection string postgres://u:p@h/db")

    async with Client.connect(app) as client:
        refused = (await client.call_tool("refuses")).raw
        crashed = await client.call_tool("crashes")
    assert refused == {
        **refused,
        "isError": True,
        "content": [{"type": "text", "text": "No tickets on Sundays."}],
    }
    assert crashed.is_error is True
    assert "postgres" not in crashed.content[0]["text"]


async def test_bad_arguments_are_a_tool_execution_error() -> None:
    app = make_server()

    @app.tool()
    async def add(a: int, b: int = 2) -> str:
        return str(a + b)

    async with Client.connect(app) as client:
        assert (await client.call_tool("add", {"a": 1})).text == "3"
        bad = await client.call_tool("add", {"a": "one", "c": 1})
    assert bad.is_error is True
    assert "argument 'a' must be an integer" in bad.content[0]["text"]
    assert "unknown argument 'c'" in bad.content[0]["text"]


async def test_protocol_errors() -> None:
    app = make_server()

    @app.tool()
    async def noop() -> str:
        return "ok"

    async with Client.connect(app) as client:
        with pytest.raises(McpClientError) as refused:
            await client.call_tool("nope")
        assert refused.value.code == INVALID_PARAMS
        assert "Unknown tool: 'nope'" in refused.value.message
        with pytest.raises(McpClientError) as refused:
            await client.list_prompts()
        assert refused.value.code == METHOD_NOT_FOUND
    # What the client never sends: an old version in _meta, a cursor the server never gave.
    with pytest.raises(McpError) as info:
        await post(
            app,
            "tools/list",
            {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2025-11-25",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        )
    assert info.value.code == UNSUPPORTED_PROTOCOL_VERSION
    with pytest.raises(McpError) as info:
        await post(app, "tools/list", {"cursor": "abc"})
    assert info.value.code == INVALID_PARAMS


async def test_prompts_and_resources_can_elicit() -> None:
    app = make_server()

    @app.prompt()
    async def brief(topic: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Audience for {topic}?", Name)
        return f"Write about {topic} for {answer.data.name}"

    @app.resource("tickets://{ticket_id}")
    async def ticket(ticket_id: str, ctx: Context) -> dict[str, str]:
        answer = await ctx.elicit(f"Reveal {ticket_id}?", Name)
        return {"id": ticket_id, "by": answer.data.name}

    names = iter(["devs", "me"])
    person = Script(form=lambda question: Answer("accept", {"name": next(names)}))
    async with Client.connect(app, answerer=person) as client:
        prompt = await client.get_prompt("brief", {"topic": "MRTR"})
        resource = await client.read_resource("tickets://T-9")
        templates = await client.list_resource_templates()
    assert [question.message for question in person.asked] == ["Audience for MRTR?", "Reveal T-9?"]
    assert prompt.messages == [
        {"role": "user", "content": {"type": "text", "text": "Write about MRTR for devs"}}
    ]
    assert resource.contents[0]["uri"] == "tickets://T-9"
    assert resource.contents[0]["text"] == '{"id":"T-9","by":"me"}'
    assert templates[0]["uriTemplate"] == "tickets://{ticket_id}"


async def test_links_in_form_requests_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    app = make_server()

    @app.tool()
    async def linky(ctx: Context) -> str:
        await ctx.elicit("See https://example.com/help before answering", Name)
        return "unreachable"

    person = Script(form=lambda question: Answer("decline"))
    async with Client.connect(app, answerer=person) as client:
        await client.call_tool("linky")
    (question,) = person.asked
    assert question.key
    assert any(
        "https://example.com/help" in r.getMessage() and "ctx.elicit_url" in r.getMessage()
        for r in caplog.records
    )


async def test_forms_that_ask_for_secrets_are_refused_when_built() -> None:
    app = make_server()

    @dataclass
    class Login:
        username: str
        password: str

    @app.tool()
    async def login(ctx: Context) -> str:
        await ctx.elicit("Log in", Login)
        return "unreachable"

    async with Client.connect(app, answerer=Script()) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("login")
    assert info.value.code == INTERNAL_ERROR
    assert "password" in info.value.message
    assert "URL mode" in info.value.message


async def test_a_log_sent_before_a_question_goes_out_on_every_round_unless_guarded_by_round() -> None:
    app = make_server()

    @app.tool()
    async def look_up(ctx: Context) -> str:
        await ctx.log("info", "every round")
        if ctx.round == 0:
            await ctx.log("info", "first round only")
        answer = await ctx.elicit("Name?", Name, key="n")
        return answer.data.name

    # Written by hand: the client sets no log level, and the test reads the notifications.
    sent: list[Notification] = []

    async def call(extra: dict[str, Any]) -> dict[str, Any]:
        envelope = {**meta(), "io.modelcontextprotocol/logLevel": "info"}
        params = {"name": "look_up", "arguments": {}, "_meta": envelope, **extra}
        return await post(app, "tools/call", params, notifications=sent)

    first = await call({})
    final = await call(
        {"inputResponses": {"n": accept({"name": "Ada"})}, "requestState": first["requestState"]}
    )
    assert text(final) == "Ada"
    assert [n.method for n in sent] == ["notifications/message"] * 3
    assert [n.params["data"] for n in sent] == ["every round", "first round only", "every round"]


@pytest.mark.parametrize("message", [None, 42, {"a": 1}])
async def test_a_url_question_whose_message_is_not_text_is_never_sent(
    message: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        await ctx.elicit_url(message, "https://example.com/connect/1")
        return "unreachable"

    async with Client.connect(app, answerer=Script()) as client:
        result = await client.call_tool("connect")
    assert result.is_error is True
    assert "inputRequests" not in result.raw
    logged = [str(record.exc_info[1]) for record in caplog.records if record.exc_info]
    assert logged == [f"ctx.elicit_url: message must be a str, got {type(message).__name__}"]
