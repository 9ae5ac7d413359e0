"""What handlers do that the engine must survive: changing their arguments or the values it hands
them in place, asking inside ``ctx.once``, returning values a later round cannot get back,
answers the replay never reaches, and invalid answers interleaved with missing ones.

The calls are the real client's (``Client.connect(server)``) but where a test sends what it
never sends: answers that fail validation or rounds that leave the answer out
(:class:`tests.helpers.RawCall`), and arguments no JSON can carry (``Server.dispatch``)."""

from __future__ import annotations

import asyncio
import copy
import datetime
from dataclasses import dataclass
from typing import Any

import pytest

from mcp_elicit import Context, InputRequired, Server
from mcp_elicit.client import Answer, Client, McpClientError
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError
from tests.helpers import RawCall, Script, accept, only_key, request, text

TAGS = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "always"]}}},
    "required": ["tags"],
}


@dataclass
class Count:
    n: int


def make_server(runs: list[str]) -> Server:
    app = Server(
        "hazards", state_keys=["handler-hazard-tests-secret-0123456789abcdef"], max_answer_attempts=2
    )

    @app.tool()
    async def deploy(spec: dict[str, Any], ctx: Context) -> str:
        spec["env"].setdefault("region", "eu")  # changes the request's own nested object
        answer = await ctx.elicit("Deploy?", None)
        return f"{answer.action} {spec['env']['region']}"

    @app.tool()
    async def asks_inside_a_step(ctx: Context) -> str:
        async def step() -> str:
            return (await ctx.elicit("Inside the step?", None)).action

        return str(await ctx.once("s", step))

    @app.tool()
    async def works_through_a_list(ctx: Context) -> str:
        todo = await ctx.once("load", lambda: ["a", "b", "c"])
        first = todo.pop(0)  # the handler's own copy: the recorded list stays whole
        runs.append(first)
        await ctx.elicit(f"Process {first}?", None)
        second = todo.pop(0)
        await ctx.elicit(f"Process {second}?", None)
        return f"{first} {second}"

    @app.tool()
    async def keeps_a_timestamp(ctx: Context) -> str:
        stamp = await ctx.once("now", datetime.datetime.now)
        await ctx.elicit("Go on?", None)
        return f"{stamp:%H:%M}"

    @app.tool()
    async def keeps_a_pair(ctx: Context) -> str:
        pair = await ctx.once("pair", lambda: (1, 2))
        runs.append(type(pair).__name__)
        await ctx.elicit("Go on?", None)
        return str(pair)

    @app.tool()
    async def tags(ctx: Context) -> str:
        first = await ctx.elicit("Tags?", TAGS, key="tags")
        first.data["tags"].append("always")  # the handler's own copy: the record stays ["a"]
        await ctx.elicit("And then?", None, key="then")
        return ",".join(first.data["tags"])

    @app.tool()
    async def delete(protected: bool, ctx: Context) -> str:
        if runs and runs[-1] == "protected":  # a fresh read that changed between rounds
            answer = await ctx.elicit("Really delete the protected repo?", None)
            if not answer.accepted:
                return "kept"
        return "deleted"

    @app.tool()
    async def low_level_bad_state(ctx: Context) -> Any:
        return InputRequired({}, state=5)  # type: ignore[arg-type]

    @app.tool()
    async def count(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", Count)
        return str(answer.data.n)

    return app


async def test_a_handler_changing_its_arguments_in_place_can_finish_its_flow() -> None:
    arguments = {"spec": {"env": {"name": "prod"}}}
    person = Script(form=lambda question: Answer("accept", {}))
    async with Client.connect(make_server([]), answerer=person) as client:
        assert (await client.call_tool("deploy", copy.deepcopy(arguments))).text == "accept eu"
    assert len(person.asked) == 1


async def test_a_question_inside_a_step_is_a_defect_reported_at_once() -> None:
    async with Client.connect(make_server([]), answerer=Script()) as client:
        with pytest.raises(McpClientError) as info:
            await asyncio.wait_for(client.call_tool("asks_inside_a_step"), 5)  # it used to hang forever
    assert info.value.code == INTERNAL_ERROR
    assert "inside ctx.once step 's'" in info.value.message


async def test_a_step_result_changed_by_the_handler_is_recorded_as_the_step_returned_it() -> None:
    runs: list[str] = []
    person = Script(form=lambda question: Answer("accept", {}))
    async with Client.connect(make_server(runs), answerer=person) as client:
        assert (await client.call_tool("works_through_a_list")).text == "a b"
    assert [question.message for question in person.asked] == ["Process a?", "Process b?"]
    assert runs == ["a", "a", "a"]  # every round starts from the whole list


async def test_a_step_result_that_would_not_come_back_as_it_went_in_is_refused() -> None:
    runs: list[str] = []
    person = Script(form=lambda question: Answer("accept", {}))
    async with Client.connect(make_server([]), answerer=Script()) as client:
        result = await client.call_tool("keeps_a_timestamp")
    assert result.is_error is True  # a datetime: the next round would get a string
    async with Client.connect(make_server(runs), answerer=person) as client:
        assert (await client.call_tool("keeps_a_pair")).text == "[1, 2]"
    assert len(person.asked) == 1
    assert runs == ["list", "list"]  # the same type on every round


async def test_a_form_answer_changed_by_the_handler_stays_recorded_as_given() -> None:
    answers = {"tags": Answer("accept", {"tags": ["a"]}), "then": Answer("accept", {})}
    person = Script(form=lambda question: answers[question.key])
    async with Client.connect(make_server([]), answerer=person) as client:
        assert (await client.call_tool("tags")).text == "a,always"
    assert [question.key for question in person.asked] == ["tags", "then"]


async def test_an_answer_the_replay_never_reaches_is_reported() -> None:
    runs = ["protected"]

    def decline_and_unprotect(question: object) -> Answer:
        runs.append("unprotected")  # the read changes: the replay returns before the question
        return Answer("decline")

    person = Script(form=decline_and_unprotect)
    async with Client.connect(make_server(runs), answerer=person) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("delete", {"protected": True})
    assert len(person.asked) == 1
    assert info.value.code == INTERNAL_ERROR
    assert "finished without asking it" in info.value.message


async def test_a_low_level_state_that_is_not_a_string_fails_in_the_handler() -> None:
    async with Client.connect(make_server([])) as client:
        result = await client.call_tool("low_level_bad_state")
    assert result.is_error is True


@pytest.mark.parametrize("leave_out_first", [True, False])
async def test_invalid_answers_count_across_rounds_that_left_the_answer_out(leave_out_first: bool) -> None:
    flow = RawCall(make_server([]), "count")
    key = only_key(await flow.send())
    if leave_out_first:
        only_key(await flow.send({}))
    only_key(await flow.send({key: accept({"n": "three"})}))  # invalid: asked again (1 of 2)
    only_key(await flow.send({}))  # left out: asked again, still 1 of 2
    result = await flow.send({key: accept({"n": "four"})})
    assert result["isError"] is True
    assert "invalid 2 times" in result["content"][0]["text"]


async def test_nested_arguments_orjson_cannot_write_still_bind_the_state() -> None:
    """An integer beyond 64 bits inside an object: no JSON snapshot, the state is bound at once.

    Only a caller in this process can hand ``Server.dispatch`` such arguments (JSON on the wire
    reads them as floats), so this test calls it directly."""
    app = make_server([])

    async def call(arguments: dict[str, Any], **more: Any) -> dict[str, Any]:
        return await app.dispatch(request("tools/call", {"name": "deploy", "arguments": arguments, **more}))

    arguments = {"spec": {"env": {"name": "prod"}, "size": 2**70}}
    first = await call(copy.deepcopy(arguments))
    key = only_key(first)
    rounds = {"inputResponses": {key: accept()}, "requestState": first["requestState"]}
    assert text(await call(copy.deepcopy(arguments), **rounds)) == "accept eu"
    with pytest.raises(McpError) as info:  # other arguments
        await call({"spec": {"env": {"name": "prod"}, "size": 2**70 + 1}}, **rounds)
    assert info.value.message == "Invalid or expired requestState"


@pytest.mark.parametrize("use", ["elicit", "once"])
async def test_a_ctx_kept_from_an_earlier_call_is_named_as_such(use: str) -> None:
    """A handler that keeps its ctx (in a global here) and a later call that uses it: the defect
    is the kept ctx, not a task left behind, nor a cancellation from nowhere."""
    app = Server("kept", state_keys=["handler-hazard-tests-secret-0123456789abcdef"])
    kept: list[Context] = []

    @app.tool()
    async def keep(ctx: Context) -> str:
        kept.append(ctx)
        return "kept"

    @app.tool()
    async def reuse() -> str:
        if use == "elicit":
            return (await kept[0].elicit("Again?", None)).action
        return str(await kept[0].once("s", lambda: "ran"))

    async with Client.connect(app, answerer=Script()) as client:
        assert (await client.call_tool("keep")).text == "kept"
        with pytest.raises(McpClientError) as info:
            await asyncio.wait_for(client.call_tool("reuse"), 5)
    assert info.value.code == INTERNAL_ERROR
    assert "through a ctx kept from a run that has ended" in info.value.message
