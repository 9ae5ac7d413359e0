"""Arguments that arrive as text (prompt arguments, resource template fields), how prompts list
theirs, and whole numbers a float cannot hold exactly."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from mcp_elicit import Server
from mcp_elicit.schema.markers import Description
from mcp_elicit.wire.errors import INVALID_PARAMS, McpError
from tests.helpers import request


def make_server() -> Server:
    app = Server("text", state_keys=["text-arguments-tests-secret-0123456789-ab"])

    @app.prompt()
    async def plan(
        days: int, budget: float, urgent: bool = False, tone: Literal["dry", "warm"] = "dry"
    ) -> str:
        return f"{days!r} {budget!r} {urgent!r} {tone}"

    @app.prompt()
    async def described(topic: Annotated[str, Field(description="The topic")], level: str = "low") -> str:
        return f"{topic} {level}"

    @app.prompt()
    async def marked(topic: Annotated[str, Description("What to write about")]) -> str:
        return topic

    @app.resource("tickets://{ticket_id}")
    async def ticket(ticket_id: int) -> str:
        return f"ticket {ticket_id!r}"

    @app.tool()
    async def count(n: int) -> str:
        return repr(n)

    # One pydantic-typed parameter takes the whole signature through pydantic: it must read the
    # others as the plain path does.
    @app.prompt()
    async def typed_plan(
        topic: Annotated[str, Field(description="The topic")], days: int, urgent: bool = False
    ) -> str:
        return f"{topic} {days!r} {urgent!r}"

    @app.tool()
    async def typed_count(
        label: Annotated[str, Field(description="A label")], n: int, flag: bool = False, ratio: float = 0.5
    ) -> str:
        return f"{label} {n!r} {flag!r} {ratio!r}"

    return app


async def get_prompt(app: Server, name: str, arguments: dict[str, Any]) -> str:
    result = await app.dispatch(request("prompts/get", {"name": name, "arguments": arguments}))
    return str(result["messages"][0]["content"]["text"])


async def test_numbers_and_booleans_are_read_from_prompt_argument_text() -> None:
    app = make_server()
    text = await get_prompt(app, "plan", {"days": "3", "budget": "2.5", "urgent": "true", "tone": "warm"})
    assert text == "3 2.5 True warm"
    assert await get_prompt(app, "plan", {"days": "-2", "budget": "7"}) == "-2 7.0 False dry"


@pytest.mark.parametrize(
    ("arguments", "complaint"),
    [
        ({"days": "three", "budget": "1"}, "'days' must be a whole number, not 'three'"),
        ({"days": "1.5", "budget": "1"}, "'days' must be a whole number"),
        ({"days": "1", "budget": "nan"}, "'budget' must be a number, not 'nan'"),
        ({"days": "1", "budget": "1", "urgent": "yes"}, "'urgent' must be true or false, not 'yes'"),
        ({"days": "1", "budget": "1", "tone": "loud"}, "'tone' must be one of 'dry', 'warm'"),
    ],
)
async def test_unreadable_prompt_argument_text_is_invalid_params(
    arguments: dict[str, Any], complaint: str
) -> None:
    with pytest.raises(McpError) as info:
        await get_prompt(make_server(), "plan", arguments)
    assert info.value.code == INVALID_PARAMS
    assert complaint in info.value.message


async def test_resource_template_fields_are_read_as_their_type() -> None:
    app = make_server()
    result = await app.dispatch(request("resources/read", {"uri": "tickets://42"}))
    assert result["contents"][0]["text"] == "ticket 42"
    with pytest.raises(McpError) as info:
        await app.dispatch(request("resources/read", {"uri": "tickets://forty-two"}))
    assert info.value.code == INVALID_PARAMS


def test_a_list_argument_of_a_prompt_is_refused_at_registration() -> None:
    app = make_server()
    with pytest.raises(TypeError, match="arrives as text"):

        @app.prompt()
        async def tags(names: list[str]) -> str:
            return ",".join(names)

    with pytest.raises(TypeError, match="'names' arrives as text"):  # through pydantic too

        @app.prompt()
        async def described_tags(names: Annotated[list[str], Field(min_length=1)]) -> str:
            return ",".join(names)


async def test_prompts_list_every_argument_with_its_description() -> None:
    listed = await make_server().dispatch(request("prompts/list"))
    by_name = {prompt["name"]: prompt.get("arguments") for prompt in listed["prompts"]}
    assert by_name["described"] == [
        {"name": "topic", "required": True, "description": "The topic"},
        {"name": "level", "required": False},
    ]
    assert by_name["marked"] == [{"name": "topic", "required": True, "description": "What to write about"}]
    assert [arg["name"] for arg in by_name["plan"]] == ["days", "budget", "urgent", "tone"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, "3"), (3.0, "3"), (1e3, "1000"), (2**63, repr(2**63)), (-(2**53), repr(-(2**53)))],
)
async def test_whole_numbers_are_taken_exactly(value: Any, expected: str) -> None:
    result = await make_server().dispatch(request("tools/call", {"name": "count", "arguments": {"n": value}}))
    assert result["isError"] is False
    assert result["content"][0]["text"] == expected


@pytest.mark.parametrize("value", [2.0**64 + 2**12, 1e30, -(2.0**60)])
async def test_whole_numbers_a_float_cannot_hold_exactly_are_refused(value: float) -> None:
    """orjson reads an integer beyond 64 bits as a float: the handler must never get another number."""
    result = await make_server().dispatch(request("tools/call", {"name": "count", "arguments": {"n": value}}))
    assert result["isError"] is True
    assert "too large to read exactly" in result["content"][0]["text"]


async def test_the_pydantic_path_reads_text_arguments_as_the_plain_path_does() -> None:
    app = make_server()
    assert await get_prompt(app, "typed_plan", {"topic": "t", "days": "3", "urgent": "true"}) == "t 3 True"
    for days, urgent in (("3", "yes"), ("3", "off"), ("3", "1"), ("3.0", "true"), ("three", "false")):
        with pytest.raises(McpError) as info:
            await get_prompt(app, "typed_plan", {"topic": "t", "days": days, "urgent": urgent})
        assert info.value.code == INVALID_PARAMS


async def call_tool(app: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return await app.dispatch(request("tools/call", {"name": name, "arguments": arguments}))


async def test_the_pydantic_path_takes_json_arguments_as_they_are() -> None:
    app = make_server()
    result = await call_tool(app, "typed_count", {"label": "x", "n": 5.0, "flag": True, "ratio": 2})
    assert result["content"][0]["text"] == "x 5 True 2.0"  # a whole float is an integer, as on the plain path
    wrongs = ({"n": "5"}, {"n": 5, "flag": "yes"}, {"n": 5, "flag": 1}, {"n": 5.5}, {"n": 5, "ratio": "1.5"})
    for wrong in wrongs:
        result = await call_tool(app, "typed_count", {"label": "x", **wrong})
        assert result["isError"] is True, wrong
        assert "Invalid arguments" in result["content"][0]["text"]


async def test_a_resource_not_found_names_its_uri_in_the_error_data() -> None:
    """SEP-2164: the -32602 for an unknown resource carries ``data.uri``."""
    app = make_server()
    for uri in ("notes://nothing", "tickets://not-a-number"):
        with pytest.raises(McpError) as info:
            await app.dispatch(request("resources/read", {"uri": uri}))
        assert info.value.code == INVALID_PARAMS
        assert info.value.data == {"uri": uri}


async def test_a_pydantic_typed_tool_refuses_deep_arguments_with_its_own_message() -> None:
    app = Server("nesting", state_keys=["text-arguments-tests-secret-0123456789-ab"])

    @app.tool()
    async def takes_anything(x: object = None) -> str:
        return "ok"

    def nested(levels: int) -> object:  # the arguments object is one level
        value: object = 1
        for _ in range(levels - 1):
            value = [value]
        return value

    assert (await call_tool(app, "takes_anything", {"x": nested(200)}))["content"][0]["text"] == "ok"
    refused = await call_tool(app, "takes_anything", {"x": nested(201)})
    assert refused["isError"] is True
    assert "nested at most 200 levels deep" in refused["content"][0]["text"]
