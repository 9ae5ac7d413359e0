"""Whatever a server answers, the client ends the call with a result or a typed error.

A server in this process (an ASGI app, reached through the in-process transport, so the client's
HTTP reply parsing runs as over a socket) answers ``server/discover`` properly and every
``tools/call`` round with what hypothesis writes: any JSON, JSON-RPC envelopes with any id, result
or error, ``InputRequiredResult`` rounds with any input requests (forms with any schema, URL
questions with any address, sampling, roots, unknown methods) and any ``requestState``. The call
must end within a few seconds with a :class:`ToolResult` or a
:class:`~mcp_elicit.client.ClientError` -- never another exception -- and the answerer is only
ever shown a form whose schema is inside the elicitation subset.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mcp_elicit.client import (
    Answer,
    Client,
    ClientError,
    FormQuestion,
    MalformedMessageError,
    ToolResult,
    UrlQuestion,
)
from mcp_elicit.schema import check_schema
from tests.strategies import json_values

from .rogue_server import read_body

VERSION = "2026-07-28"
WITHIN = 10.0

properties = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "number", "integer", "boolean", "array", "object"]) | json_values},
    optional={
        "title": st.text(max_size=20) | json_values,
        "enum": st.lists(st.text(max_size=8), max_size=4) | json_values,
        "format": st.sampled_from(["email", "uri", "date", "date-time", "nope"]),
        "minLength": st.integers(-2, 50) | json_values,
        "maximum": st.integers() | json_values,
        "default": json_values,
        "items": json_values,
    },
)
schemas = (
    st.fixed_dictionaries(
        {"type": st.just("object") | json_values},
        optional={
            "properties": st.dictionaries(st.text(max_size=12), properties, max_size=4) | json_values,
            "required": st.lists(st.text(max_size=12), max_size=3) | json_values,
        },
    )
    | json_values
)
# Forms inside the subset, so that many rounds reach the answerer and the answers go back.
good_fields = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "format": "email"},
        {"type": "integer", "minimum": 0},
        {"type": "boolean"},
        {"type": "string", "enum": ["a", "b"]},
    ]
)
good_forms = st.fixed_dictionaries(
    {
        "method": st.just("elicitation/create"),
        "params": st.fixed_dictionaries(
            {
                "mode": st.just("form"),
                "message": st.text(max_size=30),
                "requestedSchema": st.fixed_dictionaries(
                    {
                        "type": st.just("object"),
                        "properties": st.dictionaries(
                            st.text("abcdefgh", min_size=1, max_size=6), good_fields, max_size=3
                        ),
                    }
                ),
            }
        ),
    }
)
elicitation_params = st.fixed_dictionaries(
    {"mode": st.sampled_from(["form", "url"]) | json_values},
    optional={
        "message": st.text(max_size=40) | json_values,
        "requestedSchema": schemas,
        "url": st.sampled_from(["https://example.com/x", "javascript:alert(1)", "http://10.0.0.1"])
        | st.text(max_size=30),
        "elicitationId": st.text(max_size=10) | json_values,
    },
)
other_methods = st.sampled_from(["sampling/createMessage", "roots/list", "ping", "x"]) | st.text(max_size=10)
input_requests = (
    st.fixed_dictionaries(
        {"method": st.just("elicitation/create")}, optional={"params": elicitation_params | json_values}
    )
    | st.fixed_dictionaries({"method": other_methods}, optional={"params": json_values})
    | json_values
)
results = st.one_of(
    st.fixed_dictionaries(
        {
            "resultType": st.just("input_required"),
            "inputRequests": st.dictionaries(st.text(max_size=8), good_forms, min_size=1, max_size=2),
        },
        optional={"requestState": st.text(max_size=30)},
    ),
    st.fixed_dictionaries(
        {"resultType": st.just("input_required")},
        optional={
            "inputRequests": st.dictionaries(st.text(max_size=8), input_requests, max_size=3) | json_values,
            "requestState": st.text(max_size=30) | json_values,
        },
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "resultType": st.sampled_from(["complete", "input_required", "other"]) | json_values,
            "content": st.lists(
                st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20) | json_values})
                | json_values,
                max_size=3,
            )
            | json_values,
            "isError": json_values,
            "structuredContent": json_values,
        },
    ),
    json_values,
)
errors = st.fixed_dictionaries(
    {"code": st.integers(-33000, -32000) | json_values, "message": st.text(max_size=20) | json_values},
    optional={"data": json_values},
)


@st.composite
def replies(draw: st.DrawFn) -> dict[str, Any] | bytes:
    """One reply to one tools/call round: usually a well-formed envelope, sometimes not."""
    kind = draw(st.sampled_from(["result"] * 6 + ["error", "odd envelope", "not json"]))
    if kind == "result":
        return {"jsonrpc": "2.0", "result": draw(results)}
    if kind == "error":
        return {"jsonrpc": "2.0", "error": draw(errors)}
    if kind == "odd envelope":
        return draw(st.dictionaries(st.sampled_from(["jsonrpc", "id", "result", "error"]), json_values))
    return draw(st.binary(max_size=40))


class HostileServer:
    """An ASGI app serving ``/mcp``: a proper ``server/discover``, then ``replies`` in turn for
    the ``tools/call`` rounds (a complete result once they run out)."""

    path = "/mcp"

    def __init__(self, rounds: list[dict[str, Any] | bytes], same_id: list[bool], tools: Any = ()) -> None:
        self.rounds = rounds
        self.same_id = same_id
        self.tools = tools  # tools/list's "tools"
        self.calls = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = json.loads(await read_body(receive))
        reply: dict[str, Any] | bytes
        if request["method"] == "server/discover":
            reply = {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {
                    "resultType": "complete",
                    "supportedVersions": [VERSION],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                },
            }
        elif request["method"] == "tools/list":
            listed = {"resultType": "complete", "tools": self.tools}
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": listed}
        elif self.calls < len(self.rounds):
            reply = self.rounds[self.calls]
            if isinstance(reply, dict) and self.same_id[self.calls]:
                reply = {**reply, "id": request["id"]}
            self.calls += 1
        else:
            done = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": done}
        payload = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": payload})


class Checking:
    """Accepts every question, after checking that it is one the client may show."""

    modes = frozenset({"form", "url"})

    def __init__(self) -> None:
        self.shown = 0

    async def answer_form(self, question: FormQuestion) -> Answer:
        assert check_schema(question.schema) == [], question.schema  # a form the client must refuse
        self.shown += 1
        return Answer("decline")

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.shown += 1  # (assessing the address is the answerer's part: see UrlQuestion)
        return Answer("decline")


# Tools as a server lists them: names, and input schemas whose properties may carry x-mcp-header.
header_properties = st.fixed_dictionaries(
    {"x-mcp-header": st.sampled_from(["Region", "X", "bad header"]) | json_values},
    optional={
        "type": st.sampled_from(["string", "integer", "boolean", "number", ["string", "null"]]) | json_values
    },
)
tools = (
    st.lists(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["anything", "other"]) | json_values},
            optional={
                "inputSchema": st.fixed_dictionaries(
                    {"type": st.just("object")},
                    optional={
                        "properties": st.dictionaries(
                            st.text(max_size=6), header_properties | properties, max_size=3
                        )
                    },
                )
                | json_values
            },
        )
        | json_values,
        max_size=3,
    )
    | json_values
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(replies(), st.sampled_from([True, True, True, False])), min_size=1, max_size=4),
    tools,
)
async def test_any_server_reply_ends_in_a_result_or_a_typed_error(
    rounds: list[tuple[Any, bool]], listed: Any
) -> None:
    server = HostileServer([reply for reply, _ in rounds], [same for _, same in rounds], listed)
    answerer = Checking()
    async with Client.connect(server, answerer=answerer, protocol=VERSION, max_rounds=5) as client:
        try:
            event(f"{len(await client.list_tools())} tools listed")
        except ClientError as exc:
            event(f"tools/list: {type(exc).__name__}")
        try:
            result = await asyncio.wait_for(client.call_tool("anything", {}), WITHIN)
        except ClientError as exc:
            event(f"error {type(exc).__name__}")
        else:
            assert isinstance(result, ToolResult)
            event("result")
    if answerer.shown:
        event("a question was shown")


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"items": value}
    return value


async def test_a_listing_nested_past_what_json_writes_back_is_malformed() -> None:
    """JSON is read up to 1024 levels deep but written back only to 255, and the listing is
    measured by writing it: a tool schema 300 levels deep is a malformed listing, not a
    ``TypeError`` (the CLI's ``tools`` and ``call``'s suggestions both list)."""
    deep = {"name": "deep", "inputSchema": {"type": "object", "properties": {"x": nested(300)}}}
    server = HostileServer([], [], [deep])
    async with Client.connect(server, answerer=Checking(), protocol=VERSION) as client:
        with pytest.raises(MalformedMessageError, match="tools/list nests its tools deeper than 255"):
            await client.list_tools()
    shallow = {"name": "shallow", "inputSchema": {"type": "object", "properties": {"x": nested(200)}}}
    async with Client.connect(HostileServer([], [], [shallow]), protocol=VERSION) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["shallow"]
