"""Capability gating beyond the basics, and the checks a low-level handler's own requests get.

* sampling that offers the model tools needs ``sampling.tools``; one that asks to include
  context needs ``sampling.context`` (the spec: never send what the client did not declare);
* a -32021 names every capability the round found missing, not only the first one;
* a low-level ``InputRequired`` is gated the same way, and its elicitations are checked like
  ``ctx.elicit``'s (schema subset, no secret fields) and ``ctx.elicit_url``'s (a safe URL);
* a legacy ``initialize`` is told which versions this server speaks.

A test that plays a normal client runs the real one (``Client.connect(app)``); one that declares
what this client cannot (``sampling.tools``, a bare ``elicitation``) or sends answers no honest
client sends writes its requests by hand (:class:`tests.helpers.RawCall`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
from pydantic import Field

from mcp_elicit import Context, InputRequired, Server
from mcp_elicit.client import Answer, Client, McpClientError, MissingCapabilityError
from mcp_elicit.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from tests.helpers import RawCall, Script, UnusedModel, accept, request

TOOLS = [{"name": "calc", "inputSchema": {"type": "object"}}]


@dataclass
class Name:
    name: str


def make_server(**options: Any) -> Server:
    return Server("gating", version="1", state_keys=["gating-tests-secret-0123456789-abcdefghij"], **options)


def sampling_server() -> Server:
    app = make_server()

    @app.tool()
    async def with_tools(ctx: Context) -> str:
        reply = await ctx.sample(
            "Use a tool", max_tokens=10, key="s", tools=TOOLS, toolChoice={"mode": "auto"}
        )
        return reply.text

    @app.tool()
    async def with_context(ctx: Context) -> str:
        reply = await ctx.sample("Summarise", max_tokens=10, key="s", includeContext="thisServer")
        return reply.text

    @app.tool()
    async def no_context(ctx: Context) -> str:
        reply = await ctx.sample("Plain", max_tokens=10, key="s", includeContext="none")
        return reply.text

    return app


@pytest.mark.parametrize(
    ("tool", "sampler", "declared", "required"),
    [
        ("with_tools", UnusedModel(), {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("with_context", UnusedModel(), {"sampling": {}}, {"sampling": {"context": {}}}),
        ("with_tools", None, {}, {"sampling": {"tools": {}}}),
    ],
)
async def test_sampling_with_tools_or_context_needs_those_capabilities(
    tool: str, sampler: UnusedModel | None, declared: dict[str, Any], required: dict[str, Any]
) -> None:
    async with Client.connect(sampling_server(), sampler=sampler) as client:
        assert client.capabilities == declared
        with pytest.raises(MissingCapabilityError) as info:
            await client.call_tool(tool)
    assert info.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert info.value.data == {"requiredCapabilities": required}


@pytest.mark.parametrize(
    ("tool", "declared"),
    [
        ("with_tools", {"sampling": {"tools": {}}}),
        ("with_context", {"sampling": {"context": {}}}),
        ("no_context", {"sampling": {}}),
    ],
)
async def test_sampling_goes_out_when_declared(tool: str, declared: dict[str, Any]) -> None:
    result = await RawCall(sampling_server(), tool, capabilities=declared).send()
    assert result["inputRequests"]["s"]["method"] == "sampling/createMessage"


async def test_one_error_names_everything_the_round_lacks() -> None:
    app = make_server()

    @app.tool()
    async def everything(ctx: Context) -> str:
        await asyncio.gather(
            ctx.elicit("Name?", Name, key="n"),
            ctx.sample("Greet", max_tokens=5, key="s"),
            ctx.list_roots(key="r"),
        )
        return "done"

    error = await RawCall(app, "everything", capabilities={"elicitation": {}}).error()
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"sampling": {}, "roots": {}}}
    assert "sampling" in error.message
    assert "roots" in error.message

    error = await RawCall(app, "everything", capabilities={}).error()
    assert error.data == {"requiredCapabilities": {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}}


def lowlevel_server(requests: dict[str, Any], **fields: Any) -> Server:
    app = make_server()

    @app.tool()
    async def manual(ctx: Context) -> str | InputRequired:
        if ctx.input_responses:
            return "answered"
        return InputRequired(requests, **fields)

    return app


SAMPLE_WITH_TOOLS = {
    "method": "sampling/createMessage",
    "params": {"messages": [], "maxTokens": 5, "tools": TOOLS},
}
ROOTS = {"method": "roots/list"}


async def test_low_level_requests_name_everything_missing() -> None:
    app = lowlevel_server({"s": SAMPLE_WITH_TOOLS, "r": ROOTS})
    error = await RawCall(app, "manual", capabilities={"sampling": {}}).error()
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"sampling": {"tools": {}}, "roots": {}}}
    result = await RawCall(app, "manual", capabilities={"sampling": {"tools": {}}, "roots": {}}).send()
    assert set(result["inputRequests"]) == {"s", "r"}


def url_request(url: str) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"mode": "url", "message": "Go", "url": url}}


def form_request(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"message": "Fill in", "requestedSchema": {"type": "object", "properties": properties}},
    }


@pytest.mark.parametrize(
    ("question", "needle"),
    [
        (url_request("http://evil.example/login"), "must use https"),
        (url_request("https://user:pw@example.com/"), "credentials"),
        (form_request({"password": {"type": "string"}}), "password"),
        (form_request({"address": {"type": "object", "properties": {}}}), "address"),
        ({"method": "elicitation/create", "params": {"message": "No schema"}}, "requestedSchema"),
    ],
)
async def test_low_level_elicitations_are_checked_like_ctx_elicit(
    question: dict[str, Any], needle: str
) -> None:
    app = lowlevel_server({"q": question})
    async with Client.connect(app, answerer=Script()) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("manual")
    assert info.value.code == INTERNAL_ERROR
    assert "'q'" in info.value.message
    assert needle in info.value.message


async def test_low_level_allow_secrets_overrides_the_lint_for_named_fields() -> None:
    # A false positive of the lint: a word to look for, not a credential.
    question = form_request({"search_token": {"type": "string", "title": "Token to search for in the logs"}})
    async with Client.connect(lowlevel_server({"q": question}), answerer=Script()) as client:
        with pytest.raises(McpClientError):
            await client.call_tool("manual")
    person = Script(form=lambda question: Answer("decline"))
    allowed = lowlevel_server({"q": question}, allow_secrets=("search_token",))
    async with Client.connect(allowed, answerer=person) as client:
        assert (await client.call_tool("manual")).text == "answered"
    assert [question.key for question in person.asked] == ["q"]


async def test_a_prompt_given_invalid_answers_too_often_is_invalid_params() -> None:
    app = make_server(max_answer_attempts=2)

    @app.prompt()
    async def brief(ctx: Context) -> str:
        answer = await ctx.elicit("Audience?", Name, key="a")
        return f"for {answer.data.name}"

    flow = RawCall(app, "brief", method="prompts/get")
    await flow.send()
    await flow.send({"a": accept({"name": 5})})
    error = await flow.error({"a": accept({"name": 6})})
    assert error.code == INVALID_PARAMS
    assert "invalid 2 times" in error.message


async def test_deeply_nested_sampling_answers_are_refused_with_the_real_limit() -> None:
    app = make_server()

    @app.tool()
    async def sample_then_ask(ctx: Context) -> str:
        await ctx.sample("Hi", max_tokens=5, key="s")
        await ctx.elicit("Name?", Name, key="n")
        return "done"

    nested: Any = "leaf"
    for _ in range(201):
        nested = [nested]
    reply = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "x", "extra": nested}}
    flow = RawCall(app, "sample_then_ask", capabilities={"sampling": {}, "elicitation": {}})
    await flow.send()
    error = await flow.error({"s": reply})
    assert error.code == INVALID_PARAMS
    assert "at most 200 levels" in error.message


async def test_initialize_is_told_the_supported_versions() -> None:
    # From an older client (no _meta): -32022 with the version it asked for.
    legacy = request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    del legacy.params["_meta"]
    with pytest.raises(McpError) as info:
        await make_server().dispatch(legacy)
    assert info.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert info.value.data == {"supported": ["2026-07-28"], "requested": "2025-06-18"}
    # From a 2026-07-28 client: a removed method (-32601), still naming the versions.
    with pytest.raises(McpError) as info:
        await make_server().dispatch(request("initialize", {}))
    assert info.value.code == METHOD_NOT_FOUND
    assert info.value.data == {"supported": ["2026-07-28"]}


def test_a_bad_x_mcp_header_annotation_is_refused_at_registration() -> None:
    app = make_server()
    with pytest.raises(ValueError, match=r"tool 'bad'.*not an HTTP token"):

        @app.tool()
        async def bad(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Bad Name"})]) -> str:
            return region


async def test_unasked_input_responses_are_ignored_whatever_they_hold() -> None:
    """The issue: extra keys are ignored; a malformed answer to an asked question is -32602."""
    app = make_server()

    @app.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Name, key="n")
        return f"hi {answer.data.name}"

    flow = RawCall(app, "ask", capabilities={"elicitation": {}})
    await flow.send()
    state = flow.state
    done = await flow.send({"n": accept({"name": "Ada"}), "telemetry": 5, "other": [1, 2]})
    assert done["content"][0]["text"] == "hi Ada"
    error = await flow.error({"n": "accept"}, state=state)
    assert error.code == INVALID_PARAMS
    assert "inputResponses['n'] must be an object" in error.message
