"""The server engine end to end in-process: rounds, replay, batching, once, gating, state."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

import pytest

from mcp_elicit import Context, InputRequired, Server, ToolError
from mcp_elicit.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from tests.helpers import Flow, accept, only_key, request, text


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

    result = await app.dispatch(request("server/discover"))
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {"logging": {}, "tools": {}}
    assert result["instructions"] == "Be nice."
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "public"
    assert result["ttlMs"] > 0
    listed = await app.dispatch(request("tools/list"))
    assert listed["cacheScope"] == "public"
    assert listed["ttlMs"] == result["ttlMs"]
    assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "test", "version": "9.9"}}


async def test_single_round_elicitation() -> None:
    app = make_server()

    @app.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("What is your name?", Name)
        return f"Hello, {answer.data.name}!" if answer.accepted else f"no ({answer.action})"

    flow = Flow(app, "greet")
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

    flow = Flow(app, "greet")
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

    flow = Flow(app, "two")
    k1 = only_key(await flow.send())
    second = await flow.send({k1: accept({"name": "a"})})
    k2 = only_key(second)
    assert k2 != k1
    # Only the latest round is answered: the first answer travels in the sealed state.
    assert text(await flow.send({k2: accept({"name": "b"})})) == "a+b"
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

    flow = Flow(app, "many")
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

    flow = Flow(app, "pair")
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

    flow = Flow(app, "greet")
    result = await flow.send({"user_name": accept({"name": "Bo"}), "unknown": {"x": 1}}, state=None)
    assert text(result) == "Hello, Bo!"


async def test_invalid_answer_is_asked_again_with_the_reason_then_gives_up() -> None:
    app = make_server(max_answer_attempts=2)

    @app.tool()
    async def details(ctx: Context) -> str:
        answer = await ctx.elicit("Details?", Details, key="d")
        return f"{answer.data.priority}/{answer.data.count}"

    flow = Flow(app, "details")
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

    flow = Flow(app, "details")
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

    flow = Flow(app, "create", {"title": "x"})
    key = only_key(await flow.send())
    assert text(await flow.send({key: accept({"name": "n"})})) == "T-1 n stamped"
    assert len(effects) == 1
    assert effects[0].endswith(":insert")
    assert len(effects[0]) > len(":insert") + 16


async def test_once_refuses_results_that_cannot_be_recorded() -> None:
    app = make_server()

    @app.tool()
    async def bad(ctx: Context) -> str:
        await ctx.once("obj", object)
        return "unreachable"

    result = await Flow(app, "bad").send()
    assert result["isError"] is True


async def test_state_only_round_with_retry_later() -> None:
    app = make_server()
    ready = {"done": False}

    @app.tool()
    async def job(ctx: Context) -> str:
        started = await ctx.once("start", lambda: "job-1")
        if not ready["done"]:
            ctx.retry_later()
        return f"{started} finished on round {ctx.round}"

    flow = Flow(app, "job")
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

    flow = Flow(app, "manual")
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

    error = await Flow(app, "manual", capabilities={"elicitation": {}}).error()
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"elicitation": {"url": {}}}}


@pytest.mark.parametrize(
    ("capabilities", "needs"),
    [({}, "form"), ({"elicitation": {"url": {}}}, "form"), ({"sampling": {}}, "form")],
)
async def test_form_elicitation_needs_the_form_capability(capabilities: dict[str, Any], needs: str) -> None:
    app = make_server()

    @app.tool()
    async def greet(ctx: Context) -> str:
        await ctx.elicit("Name?", Name)
        return "unreachable"

    error = await Flow(app, "greet", capabilities=capabilities).error()
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"elicitation": {needs: {}}}}


async def test_empty_elicitation_capability_means_form_only() -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        if not ctx.can_elicit("url"):
            return "fallback: please visit the settings page yourself"
        await ctx.elicit_url("Connect", "https://example.com/connect/1")
        return "unreachable"

    assert text(await Flow(app, "connect", capabilities={"elicitation": {}}).send()).startswith("fallback")
    first = await Flow(app, "connect", capabilities={"elicitation": {"url": {}}}).send()
    (entry,) = first["inputRequests"].values()
    assert entry["params"] == {"mode": "url", "message": "Connect", "url": "https://example.com/connect/1"}


async def test_url_mode_accept_means_consent() -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        answer = await ctx.elicit_url("Connect", "https://example.com/connect/1")
        return f"{answer.action} content={answer.content}"

    flow = Flow(app, "connect")
    key = only_key(await flow.send())
    assert text(await flow.send({key: {"action": "accept"}})) == "accept content=None"


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

    result = await Flow(app, "connect").send()
    assert result["isError"] is True


async def test_replay_mismatch_fails_loudly() -> None:
    app = make_server(replay_grace=0.05)
    counter = {"n": 0}

    @app.tool()
    async def flaky(ctx: Context) -> str:
        counter["n"] += 1
        await ctx.elicit(f"Question number {counter['n']}?", Name)
        return "unreachable"

    flow = Flow(app, "flaky")
    key = only_key(await flow.send())
    error = await flow.error({key: accept({"name": "x"})})
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

    flow = Flow(app, "flaky")
    await flow.send()
    error = await flow.error({"q": accept({"name": "x"})})
    assert error.code == INTERNAL_ERROR
    assert "question 'q' changed" in error.message


async def test_tool_errors_and_unexpected_exceptions() -> None:
    app = make_server()

    @app.tool()
    async def refuses() -> str:
        raise ToolError("No tickets on Sundays.")

    @app.tool()
    async def crashes() -> str:
        raise RuntimeError("secret connection string postgres://u:p@h/db")

    refused = await Flow(app, "refuses").send()
    assert refused == {
        **refused,
        "isError": True,
        "content": [{"type": "text", "text": "No tickets on Sundays."}],
    }
    crashed = await Flow(app, "crashes").send()
    assert crashed["isError"] is True
    assert "postgres" not in crashed["content"][0]["text"]


async def test_bad_arguments_are_a_tool_execution_error() -> None:
    app = make_server()

    @app.tool()
    async def add(a: int, b: int = 2) -> str:
        return str(a + b)

    assert text(await Flow(app, "add", {"a": 1}).send()) == "3"
    bad = await Flow(app, "add", {"a": "one", "c": 1}).send()
    assert bad["isError"] is True
    assert "argument 'a' must be an integer" in bad["content"][0]["text"]
    assert "unknown argument 'c'" in bad["content"][0]["text"]


async def test_protocol_errors() -> None:
    app = make_server()

    @app.tool()
    async def noop() -> str:
        return "ok"

    with pytest.raises(McpError) as info:
        await app.dispatch(request("tools/call", {"name": "nope", "arguments": {}}))
    assert info.value.code == INVALID_PARAMS
    assert "Unknown tool: 'nope'" in info.value.message
    with pytest.raises(McpError) as info:
        await app.dispatch(request("prompts/list"))
    assert info.value.code == METHOD_NOT_FOUND
    with pytest.raises(McpError) as info:
        await app.dispatch(
            request(
                "tools/list",
                {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2025-11-25",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            )
        )
    assert info.value.code == UNSUPPORTED_PROTOCOL_VERSION
    with pytest.raises(McpError) as info:
        await app.dispatch(request("tools/list", {"cursor": "abc"}))
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

    prompt = Flow(app, "brief", {"topic": "MRTR"}, method="prompts/get")
    key = only_key(await prompt.send())
    done = await prompt.send({key: accept({"name": "devs"})})
    assert done["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Write about MRTR for devs"}}
    ]

    resource = Flow(app, "tickets://T-9", method="resources/read")
    key = only_key(await resource.send())
    done = await resource.send({key: accept({"name": "me"})})
    assert done["contents"][0]["uri"] == "tickets://T-9"
    assert done["contents"][0]["text"] == '{"id":"T-9","by":"me"}'

    listed = await app.dispatch(request("resources/templates/list"))
    assert listed["resourceTemplates"][0]["uriTemplate"] == "tickets://{ticket_id}"


async def test_links_in_form_requests_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    app = make_server()

    @app.tool()
    async def linky(ctx: Context) -> str:
        await ctx.elicit("See https://example.com/help before answering", Name)
        return "unreachable"

    key = only_key(await Flow(app, "linky").send())
    assert key
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

    error = await Flow(app, "login").error()
    assert error.code == INTERNAL_ERROR
    assert "password" in error.message
    assert "URL mode" in error.message


async def test_a_log_sent_before_a_question_goes_out_on_every_round_unless_guarded_by_round() -> None:
    app = make_server()

    @app.tool()
    async def look_up(ctx: Context) -> str:
        await ctx.log("info", "every round")
        if ctx.round == 0:
            await ctx.log("info", "first round only")
        answer = await ctx.elicit("Name?", Name, key="n")
        return answer.data.name

    sent: list[Any] = []

    async def notify(method: str, params: dict[str, Any]) -> None:
        sent.append(params["data"])

    async def call(extra: dict[str, Any]) -> dict[str, Any]:
        message = request("tools/call", {"name": "look_up", "arguments": {}, **extra})
        message.params["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
        return await app.dispatch(message, notify=notify)

    first = await call({})
    final = await call(
        {"inputResponses": {"n": accept({"name": "Ada"})}, "requestState": first["requestState"]}
    )
    assert text(final) == "Ada"
    assert sent == ["every round", "first round only", "every round"]


@pytest.mark.parametrize("message", [None, 42, {"a": 1}])
async def test_a_url_question_whose_message_is_not_text_is_never_sent(
    message: Any, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_server()

    @app.tool()
    async def connect(ctx: Context) -> str:
        await ctx.elicit_url(message, "https://example.com/connect/1")
        return "unreachable"

    result = await Flow(app, "connect").send()
    assert result["isError"] is True
    assert "inputRequests" not in result
    logged = [str(record.exc_info[1]) for record in caplog.records if record.exc_info]
    assert logged == [f"ctx.elicit_url: message must be a str, got {type(message).__name__}"]
