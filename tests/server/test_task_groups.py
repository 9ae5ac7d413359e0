"""Handlers that ask through ``asyncio.TaskGroup``: its exception groups end a round the way
``asyncio.gather`` does, and no cancellation is left owed on the task afterwards.

The client is the real one, answering forms only (``Client.connect(server)``), except where a test
sends malformed or invalid answers or looks at a round itself (:class:`tests.helpers.RawCall`),
and where a test is about ``Server.dispatch`` in one task."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import pytest

from mcp_elicit import Context, Server, ToolError
from mcp_elicit.client import Client, MissingCapabilityError, ToolResult
from mcp_elicit.wire.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, McpError
from tests.helpers import RawCall, Script, accept, only_key, request, text

FORM_ONLY = {"elicitation": {}}


@dataclass
class Name:
    name: str


def make_server() -> Server:
    app = Server("groups", state_keys=["task-group-tests-secret-0123456789-abcdefgh"], max_answer_attempts=2)

    @app.tool()
    async def with_sampling(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            name = group.create_task(ctx.elicit("Name?", Name, key="n"))
            group.create_task(ctx.sample("Suggest a name", max_tokens=5, key="s"))
        return name.result().data.name

    @app.tool()
    async def one_question(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            name = group.create_task(ctx.elicit("Name?", Name, key="n"))
        return f"Hello, {name.result().data.name}!"

    @app.prompt()
    async def greeting(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:
            name = group.create_task(ctx.elicit("Name?", Name, key="n"))
        return f"Hello, {name.result().data.name}!"

    def branch_raising(name: str, error: Exception) -> None:
        async def branch() -> None:
            await asyncio.sleep(0)
            raise error

        @app.tool(name=name)
        async def tool() -> str:
            async with asyncio.TaskGroup() as group:
                group.create_task(branch())
            return "unreachable"

    branch_raising("refuses", ToolError("the ticket system is closed today"))
    branch_raising("crashes", KeyError("a bug"))

    @app.tool()
    async def later(ctx: Context) -> str:
        async def branch() -> None:
            if ctx.round == 0:
                ctx.retry_later()

        async with asyncio.TaskGroup() as group:
            group.create_task(branch())
        return f"done in round {ctx.round}"

    @app.tool()
    async def plain(ctx: Context) -> str:
        return (await ctx.elicit("Name?", Name, key="n")).data.name

    return app


async def call(tool: str) -> ToolResult:
    """``tool`` called by a client that answers forms only (its person is never asked here)."""
    async with Client.connect(make_server(), answerer=Script(mode_names=["form"])) as client:
        return await client.call_tool(tool)


async def test_a_missing_capability_in_a_branch_is_32021_as_with_gather() -> None:
    with pytest.raises(MissingCapabilityError) as info:
        await call("with_sampling")
    error = info.value
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"sampling": {}}}


async def test_a_malformed_answer_in_a_branch_is_invalid_params() -> None:
    flow = RawCall(make_server(), "greeting", method="prompts/get", capabilities=FORM_ONLY)
    first = await flow.send()
    error = await flow.error({only_key(first): {"action": "maybe"}})
    assert error.code == INVALID_PARAMS
    assert "action must be one of accept, decline, cancel" in error.message


async def test_too_many_invalid_answers_in_a_branch_give_the_readable_message() -> None:
    flow = RawCall(make_server(), "one_question", capabilities=FORM_ONLY)
    key = only_key(await flow.send())
    again = await flow.send({key: accept({"name": 5})})
    assert "The previous answer was not accepted" in again["inputRequests"][key]["params"]["message"]
    result = await flow.send({key: accept({"name": 6})})
    assert result["isError"] is True
    assert "was invalid 2 times" in text({**result, "resultType": "complete"})


async def test_a_tool_error_in_a_branch_reaches_the_client() -> None:
    result = await call("refuses")
    assert result.is_error is True
    assert result.content[0]["text"] == "the ticket system is closed today"


async def test_retry_later_in_a_branch_ends_the_round_without_questions() -> None:
    flow = RawCall(make_server(), "later", capabilities=FORM_ONLY)
    first = await flow.send()
    assert first["resultType"] == "input_required"
    assert "inputRequests" not in first or not first["inputRequests"]
    assert text(await flow.send()) == "done in round 1"


async def test_any_other_failure_in_a_branch_stays_an_unexpected_error() -> None:
    result = await call("crashes")
    assert result.is_error is True
    assert "failed with an unexpected error" in result.content[0]["text"]


@pytest.mark.parametrize("failing", ["with_sampling", "refuses", "crashes"])
async def test_a_failed_task_group_leaves_later_requests_in_the_same_task_working(failing: str) -> None:
    """Python 3.11's TaskGroup leaves a cancellation owed on the task when a branch fails; a
    transport that dispatches one request after another in one task must not be hurt by it."""
    app = make_server()
    params = {"name": failing, "arguments": {}}
    with contextlib.suppress(McpError):  # the -32021 of with_sampling
        await app.dispatch(request("tools/call", params, capabilities=FORM_ONLY))
    result = await app.dispatch(request("tools/call", {"name": "plain", "arguments": {}}))
    assert only_key(result) == "n"
