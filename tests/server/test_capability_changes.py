"""A retry that declares other client capabilities than the round that asked: the handler may
rightly take another branch, and the answers to the old questions are left unused, at once.

No honest client changes what it declares between the rounds of a call: that test sends its rounds
by hand (:class:`tests.helpers.RawCall`); the others run the real client."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Answer, Client, McpClientError
from mcp_elicit.server.record import CallRecord as FlowRecord
from mcp_elicit.server.record import MalformedRecord as MalformedFlow
from mcp_elicit.wire.errors import INTERNAL_ERROR
from mcp_elicit.wire.meta import ClientCapabilities as client_capabilities
from tests.helpers import RawCall, Script, accept, only_key, text

FORM_AND_SAMPLING = {"elicitation": {}, "sampling": {}}
SAMPLING_ONLY = {"sampling": {}}


@dataclass
class Name:
    name: str


def make_server(grace: float = 2.0) -> Server:
    app = Server("caps", state_keys=["capability-change-tests-secret-0123456789"], replay_grace=grace)

    @app.tool()
    async def suggest(ctx: Context) -> str:
        if ctx.can_elicit("form"):
            answer = await ctx.elicit("Name?", Name, key="form_q")
            return f"form: {answer.data.name}"
        if ctx.can_sample():
            reply = await ctx.sample("Suggest a name", max_tokens=5, key="sample_q")
            return f"model: {reply.text}"
        return "nobody to ask"

    @app.tool()
    async def moody(ctx: Context) -> str:
        """Asks another question on replay whatever the client declares: a defect."""
        await ctx.elicit(f"Name? ({ctx.round})", Name, key=f"q{ctx.round}")
        return "unreachable"

    return app


async def test_fewer_capabilities_on_the_retry_take_the_other_branch_at_once() -> None:
    flow = RawCall(make_server(), "suggest", capabilities=FORM_AND_SAMPLING)
    assert only_key(await flow.send()) == "form_q"
    flow.capabilities = SAMPLING_ONLY
    started = time.monotonic()
    second = await flow.send({"form_q": accept({"name": "Ada"})})
    assert time.monotonic() - started < 1.0  # no grace period waiting for the form question
    assert only_key(second) == "sample_q"
    sampled = {"role": "assistant", "content": {"type": "text", "text": "Bo"}, "model": "m"}
    assert text(await flow.send({"sample_q": sampled})) == "model: Bo"


async def test_the_same_capabilities_still_catch_a_handler_that_changes_its_questions() -> None:
    person = Script(form=lambda question: Answer("accept", {"name": "Ada"}), mode_names=["form"])
    async with Client.connect(make_server(grace=0.05), answerer=person) as client:
        with pytest.raises(McpClientError) as info:
            await client.call_tool("moody")
    assert [question.key for question in person.asked] == ["q0"]
    assert info.value.code == INTERNAL_ERROR
    assert "asked other questions instead" in info.value.message


def test_input_kinds_tell_apart_what_a_handler_may_ask() -> None:
    declared = [
        {},
        {"elicitation": {}},
        {"elicitation": {"url": {}}},
        {"elicitation": {"form": {}, "url": {}}},
        {"sampling": {}},
        {"sampling": {"tools": {}}},
        {"sampling": {"context": {}}},
        {"roots": {}},
    ]
    kinds = [client_capabilities(raw).input_kinds() for raw in declared]
    assert len(set(kinds)) == len(declared)
    assert client_capabilities({"elicitation": {"form": {}}}).input_kinds() == kinds[1]


def test_the_recorded_kinds_travel_in_the_flow_record_and_are_checked() -> None:
    record = FlowRecord(input_kinds=5)
    assert FlowRecord.from_payload(record.to_payload()).input_kinds == 5
    assert FlowRecord.from_payload(FlowRecord().to_payload()).input_kinds is None  # older tokens
    with pytest.raises(MalformedFlow):
        FlowRecord.from_payload({**record.to_payload(), "c": "5"})
