"""``ctx.close_stream()``: a handler ends the connection under its call's stream (SEP-1699
polling) and the 2025-11-25 client picks the stream up again with ``Last-Event-ID``; where there
is no such stream it does nothing. Real HTTP: the server's ASGI app under uvicorn on
127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.client import Client
from tests.helpers import InProcessServer
from tests.server.legacy_http import Event, LegacyClient, result_text

app = Server("legacy-close-stream")


@dataclass
class Name:
    name: str


@app.tool()
async def polls(ctx: Context) -> str:
    """Logs, lets go of the connection, logs again, then answers."""
    await ctx.log("info", "before the close")
    await ctx.close_stream()
    await ctx.log("info", "after the close")
    return "done"


@app.tool()
async def asks_then_polls(ctx: Context) -> str:
    """A question first, then the close: the call goes on after the client resumed."""
    answer = await ctx.elicit("Your name?", Name)
    await ctx.close_stream()
    await asyncio.sleep(0.05)
    return f"hello {answer.data.name}" if answer.accepted else "no name"


@app.tool()
async def closes(ctx: Context) -> str:
    await ctx.close_stream()
    return "closed nothing"


@pytest.fixture(scope="module")
def served() -> Iterator[InProcessServer]:
    with InProcessServer(app.asgi()) as server:
        yield server


@pytest.fixture
async def client(served: InProcessServer) -> AsyncIterator[LegacyClient]:
    async with httpx.AsyncClient(timeout=10) as http:
        legacy = LegacyClient(http, served.base + "/mcp")
        await legacy.initialize()
        assert (await legacy.request("logging/setLevel", {"level": "info"}))["result"] == {}
        yield legacy


def logged(events: list[Event]) -> list[object]:
    """The data of the log messages among ``events``."""
    messages = [event.message for event in events]
    return [m["params"]["data"] for m in messages if m and m.get("method") == "notifications/message"]


async def test_the_post_connection_ends_at_the_close_and_the_rest_comes_on_the_resumed_stream(
    client: LegacyClient,
) -> None:
    async with client.call("tools/call", {"name": "polls", "arguments": {}}) as stream:
        first = await stream.rest()
    # The priming event, what was sent before the close, and nothing after it: the response
    # has ended while the call goes on.
    assert first[0].data == ""
    assert first[0].id is not None
    assert logged(first) == ["before the close"]
    assert not any(e.message and "result" in e.message for e in first)
    last_seen = first[-1].id
    assert last_seen is not None

    async with client.get(last_event_id=last_seen) as resumed:
        rest = await resumed.rest()
    assert logged(rest) == ["after the close"]
    assert result_text(rest[-1]) == "done"
    # One stream: its ids go on from where the client left it.
    stream_id, _, seq = last_seen.rpartition(".")
    assert [e.id for e in rest] == [f"{stream_id}.{int(seq) + 1 + i}" for i in range(len(rest))]


async def test_a_question_then_a_close(client: LegacyClient) -> None:
    """The handler is replayed with the answer, closes the stream and answers later: the
    client resumes after its last event and gets the result."""
    async with client.call("tools/call", {"name": "asks_then_polls", "arguments": {}}) as stream:
        await stream.next()  # priming
        question = await stream.next()
        assert question is not None
        assert question.message is not None
        assert question.message["method"] == "elicitation/create"
        answer = {"action": "accept", "content": {"name": "Ada"}}
        response = await client.post({"jsonrpc": "2.0", "id": question.message["id"], "result": answer})
        assert response.status_code == 202
        rest = await stream.rest()
    assert [e.message for e in rest if e.message and "method" not in e.message] == []  # no response
    async with client.get(last_event_id=(rest or [question])[-1].id) as resumed:
        after = await resumed.rest()
    assert result_text(after[-1]) == "hello Ada"


async def test_a_call_answered_with_json_has_no_stream_to_close(client: LegacyClient) -> None:
    reply = await client.request("tools/call", {"name": "closes", "arguments": {}})
    assert reply["result"]["content"][0]["text"] == "closed nothing"


async def test_close_stream_does_nothing_on_a_2026_request() -> None:
    async with Client.connect(app, protocol="2026-07-28") as client:
        result = await client.call_tool("polls")
    assert result.raw["resultType"] == "complete"
    assert result.text == "done"


async def test_a_call_answered_with_json_drops_its_logs_and_cannot_ask(client: LegacyClient) -> None:
    """A POST that accepts only JSON has no way to the client before the response: the logs
    are dropped (as on the 2026-07-28 side), a question fails the call with the reason."""
    reply = await client.request("tools/call", {"name": "polls", "arguments": {}})
    assert reply["result"]["content"][0]["text"] == "done"
    refused = await client.request("tools/call", {"name": "asks_then_polls", "arguments": {}})
    assert refused["error"]["code"] == -32600
    assert "does not accept text/event-stream" in refused["error"]["message"]
