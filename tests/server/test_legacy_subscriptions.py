"""``resources/subscribe`` and ``resources/unsubscribe`` on 2025-11-25 sessions, and
``Server.resource_updated``: the sessions that subscribed hear ``notifications/resources/updated`` on
their GET stream (on stdout over stdio). Real HTTP (uvicorn on 127.0.0.1) and real pipes."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from mcp_elicit import Context, Server
from mcp_elicit.server.legacy.subscriptions import MAX_PER_SESSION
from mcp_elicit.transport.stdio_server import serve_stdio
from tests.helpers import InProcessServer
from tests.helpers import request as modern_request
from tests.server.legacy_http import LegacyClient

app = Server("legacy-subscriptions")
NOTE = "notes://current"


@app.resource(NOTE, mime_type="text/plain")
async def note() -> str:
    return "the current note"


@app.tool()
async def touch(ctx: Context, uri: str) -> str:
    """Says that ``uri`` changed; answers how many sessions were told."""
    told = await app.resource_updated(uri)
    return f"told {told}"


bare = Server("no-resources")


@bare.tool()
async def nothing() -> str:
    return "nothing"


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with InProcessServer(app.asgi()) as server:
        yield server.base + "/mcp"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


async def session(http: httpx.AsyncClient, url: str) -> LegacyClient:
    client = LegacyClient(http, url)
    await client.initialize()
    return client


async def touched(client: LegacyClient, uri: str = NOTE) -> str:
    reply = await client.request("tools/call", {"name": "touch", "arguments": {"uri": uri}})
    text: str = reply["result"]["content"][0]["text"]
    return text


async def test_initialize_says_resources_can_be_subscribed(http: httpx.AsyncClient, served: str) -> None:
    client = await session(http, served)
    assert client.initialize_result["capabilities"]["resources"] == {"subscribe": True}
    # 2026-07-28 has no resources/subscribe: its discovery does not offer it.
    discovered = await app.dispatch(modern_request("server/discover"))
    assert discovered["capabilities"]["resources"] == {}


async def test_a_subscriber_hears_of_updates_on_its_get_stream_until_it_unsubscribes(
    http: httpx.AsyncClient, served: str
) -> None:
    watcher = await session(http, served)
    other = await session(http, served)
    assert (await watcher.request("resources/subscribe", {"uri": NOTE}))["result"] == {}
    async with watcher.get() as stream:
        priming = await stream.next()
        assert priming is not None
        assert priming.data == ""
        assert await touched(other) == "told 1"
        update = await asyncio.wait_for(stream.next(), 5)
        assert update is not None
        assert update.message == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": NOTE},
        }
        assert await touched(other, "notes://another") == "told 0"  # nobody watches that one
        assert (await watcher.request("resources/unsubscribe", {"uri": NOTE}))["result"] == {}
        assert await touched(other) == "told 0"
        # Unsubscribing from what one does not watch is no error either.
        assert (await watcher.request("resources/unsubscribe", {"uri": NOTE}))["result"] == {}


async def test_without_a_get_stream_an_update_reaches_nobody(http: httpx.AsyncClient, served: str) -> None:
    watcher = await session(http, served)
    assert (await watcher.request("resources/subscribe", {"uri": NOTE}))["result"] == {}
    assert await touched(watcher) == "told 0"
    async with watcher.get() as stream:
        await stream.next()  # priming: the stream is open
        assert await touched(watcher) == "told 1"
    # Closed again (the server sees the client go within a moment).
    for _ in range(100):
        if await touched(watcher) == "told 0":
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the closed GET stream still counts as open")


async def test_an_ended_session_watches_nothing(http: httpx.AsyncClient, served: str) -> None:
    watcher = await session(http, served)
    other = await session(http, served)
    assert (await watcher.request("resources/subscribe", {"uri": NOTE}))["result"] == {}
    async with watcher.get() as stream:
        await stream.next()
        assert await touched(other) == "told 1"
        assert await stream.next() is not None  # the update
        ended = await http.delete(served, headers=watcher.headers())
        assert ended.status_code == 200
        assert await touched(other) == "told 0"


async def test_uris_are_checked_and_a_session_watches_a_bounded_number(
    http: httpx.AsyncClient, served: str
) -> None:
    client = await session(http, served)
    for params in ({}, {"uri": 5}, {"uri": ""}, {"uri": "x:" + "a" * 5000}):
        reply = await client.request("resources/subscribe", params)
        assert reply["error"]["code"] == -32602, params
    replies = await asyncio.gather(
        *(client.request("resources/subscribe", {"uri": f"notes://{i}"}) for i in range(MAX_PER_SESSION))
    )
    assert all(reply["result"] == {} for reply in replies)
    again = await client.request("resources/subscribe", {"uri": "notes://0"})
    assert again["result"] == {}  # the same one again: nothing new to keep
    over = await client.request("resources/subscribe", {"uri": "notes://one-more"})
    assert over["error"]["code"] == -32602
    assert f"watches {MAX_PER_SESSION} resources already" in over["error"]["message"]


async def test_a_server_without_resources_offers_no_subscriptions(http: httpx.AsyncClient) -> None:
    with InProcessServer(bare.asgi()) as server:
        client = await session(http, server.base + "/mcp")
        assert "resources" not in client.initialize_result["capabilities"]
        reply = await client.request("resources/subscribe", {"uri": NOTE})
        assert reply["error"]["code"] == -32601


async def test_over_stdio_the_update_comes_on_stdout() -> None:
    """The stdio transport in this process, on real pipes."""
    loop = asyncio.get_running_loop()
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = os.fdopen(in_read, "rb", buffering=0)
    stdout = os.fdopen(out_write, "wb", buffering=0)
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_read, "rb", buffering=0)
    )
    serving = asyncio.create_task(serve_stdio(app, stdin, stdout))

    def send(message: dict[str, Any]) -> None:
        os.write(in_write, json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def receive() -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(reader.readline(), 5))
        return message

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "tests", "version": "1"},
                },
            }
        )
        assert (await receive())["result"]["capabilities"]["resources"] == {"subscribe": True}
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "resources/subscribe", "params": {"uri": NOTE}})
        assert await receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        send({"id": 3, "method": "tools/call", "params": {"name": "touch", "arguments": {"uri": NOTE}}})
        update, answer = await receive(), await receive()
        assert update == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": NOTE},
        }
        assert answer["id"] == 3
        assert answer["result"]["content"][0]["text"] == "told 1"
    finally:
        os.close(in_write)  # EOF: the server ends
        await asyncio.wait_for(serving, 10)
        stdout.close()
        transport.close()
