"""Progress on a 2025-11-25 call whose handler asks questions: the rounds are one request with
one progress token, and the handler runs again from the top in each, so what it reported before
a question it reports again. The client must see each value higher than the last (the spec), in
both transports of that era: HTTP (uvicorn on 127.0.0.1) and stdio (a subprocess)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_elicit.client import Client, ScriptedAnswerer
from mcp_elicit.client.era import ProtocolChoice
from mcp_elicit.client.progress import Progress
from tests.helpers import InProcessServer
from tests.server.legacy_progress_server import app

SERVER = Path(__file__).with_name("legacy_progress_server.py")
# In the order asked (a 2025-11-25 question is keyed by its request id, not by ``key``).
ANSWERS = [{"action": "accept", "content": {"ok": True}}, {"action": "accept", "content": {"ok": False}}]


@pytest.fixture(scope="module")
def served() -> Iterator[InProcessServer]:
    with InProcessServer(app.asgi()) as server:
        yield server


async def progress_of_a_call(target: object, protocol: ProtocolChoice) -> list[float]:
    seen: list[Progress] = []
    async with Client.connect(
        target,
        answerer=ScriptedAnswerer(ANSWERS),
        protocol=protocol,
        on_progress=seen.append,
        request_timeout=10,
    ) as client:
        result = await client.call_tool("three_steps", {})
    assert result.text == "True False"
    return [p.progress for p in seen]


async def test_over_http_each_progress_value_is_higher_than_the_last(served: InProcessServer) -> None:
    assert await progress_of_a_call(f"http://127.0.0.1:{served.port}/mcp", "2025-11-25") == [1, 2, 3]


async def test_over_stdio_each_progress_value_is_higher_than_the_last() -> None:
    assert await progress_of_a_call([sys.executable, str(SERVER)], "2025-11-25") == [1, 2, 3]


async def test_at_2026_07_28_each_round_is_a_request_of_its_own() -> None:
    """Control: there each retry is a new request with its own token and gets what its run
    reports (as docs/server-guide.md says: a report before a question goes out with each round)."""
    assert await progress_of_a_call(app, "2026-07-28") == [1, 1, 2, 2, 1, 2, 2, 3]
