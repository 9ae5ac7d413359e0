"""SEP-1699 polling end to end, on both event loops: the conformance example as a real process
(uvicorn on 127.0.0.1); its ``test_reconnection`` tool closes the call's stream mid-call with
``ctx.close_stream()``, and a 2025-11-25 client picks the stream up again with
``Last-Event-ID`` and gets the result there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from mcp_elicit.transport.http_sessions import KEPT_DELIVERED_STREAMS
from tests.helpers import free_port
from tests.server.legacy_http import Event, LegacyClient, result_text
from tests.server_process import PY, running_server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "conformance_server.py"


@pytest.fixture(scope="module")
def url(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("conformance") / "server.log"
    with running_server([PY, str(EXAMPLE), "--port", str(port)], log=log, port=port) as server:
        yield server.url


@pytest.fixture
async def client(url: str) -> AsyncIterator[LegacyClient]:
    async with httpx.AsyncClient(timeout=10) as http:
        legacy = LegacyClient(http, url)
        await legacy.initialize()
        yield legacy


async def test_the_client_resumes_a_closed_stream_and_gets_the_result(client: LegacyClient) -> None:
    async with client.call("tools/call", {"name": "test_reconnection", "arguments": {}}) as stream:
        events = await stream.rest()
    assert len(events) == 1  # the priming event only: the connection ended mid-call
    assert events[0].data == ""
    assert events[0].id is not None
    async with client.get(last_event_id=events[0].id) as resumed:
        rest = await resumed.rest()
    assert result_text(rest[-1]) == "Reconnection test completed successfully"


async def test_a_resume_after_the_end_replays_what_was_missed(client: LegacyClient) -> None:
    """The client comes back only once the call is over: the stream was kept for it."""
    async with client.call("tools/call", {"name": "test_reconnection", "arguments": {}}) as stream:
        priming = await stream.next()
        assert priming is not None
        assert await stream.next() is None
    await asyncio.sleep(0.3)  # test_reconnection answers 0.1 s after the close
    async with client.get(last_event_id=priming.id) as resumed:
        assert result_text(await resumed.next()) == "Reconnection test completed successfully"
        assert await resumed.next() is None


async def test_a_stream_read_to_its_end_can_be_read_again_until_newer_calls_push_it_out(
    client: LegacyClient,
) -> None:
    """A client whose connection broke just as the response was written resumes and reads it
    again; only the session's last few such streams are kept (each kept for the grace, every
    finished call's events piled up under load), and an older one is a 404 that says so."""

    async def simple() -> list[Event]:
        async with client.call("tools/call", {"name": "test_simple_text", "arguments": {}}) as stream:
            return await stream.rest()

    first = await simple()
    assert result_text(first[-1]) == "This is a simple text response for testing."
    assert first[0].id is not None
    async with client.get(last_event_id=first[0].id) as resumed:
        assert result_text(await resumed.next()) == "This is a simple text response for testing."
    for _ in range(KEPT_DELIVERED_STREAMS):
        await simple()
    headers = client.headers(accept="text/event-stream", **{"last-event-id": first[0].id})
    headers.pop("content-type")
    response = await client.http.get(client.url, headers=headers)
    assert response.status_code == 404
    assert "unknown or over" in response.text
