"""Every ASGI app of ours acknowledges the lifespan protocol (uvicorn's default ``lifespan="auto"``
sends it), so mounting them under any ASGI server starts and stops cleanly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_elicit import Server
from mcp_elicit.connect.identity import ProtectedResourceMetadataApp, protected_resource_metadata
from mcp_elicit.state import KeyRing


def _apps() -> dict[str, Any]:
    server = Server("lifespan", state_keys=[KeyRing.generate_secret()])
    metadata = protected_resource_metadata(
        resource="https://mcp.example.com/mcp", authorization_servers=["https://auth.example.com"]
    )
    return {"http": server.asgi(), "metadata": ProtectedResourceMetadataApp(metadata)}


@pytest.mark.parametrize("name", ["http", "metadata"])
async def test_startup_and_shutdown_are_acknowledged(name: str) -> None:
    app = _apps()[name]
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: list[dict[str, Any]] = []
    for kind in ("lifespan.startup", "lifespan.shutdown"):
        inbox.put_nowait({"type": kind})

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app({"type": "lifespan"}, inbox.get, send), timeout=5)
    assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


async def test_shutdown_ends_the_sessions_and_stops_listening_for_other_instances() -> None:
    """What the HTTP app holds is let go at the lifespan shutdown: its 2025-11-25 sessions end
    (their ids answer 404) and the connection it listens on for other instances' letters closes
    (it would otherwise stay until the process ends)."""
    import secrets

    import httpx
    import psycopg

    from mcp_elicit.storage import PostgresSessionRouter
    from tests.helpers import find_pg_dsn
    from tests.http_session_support import initialize

    dsn = find_pg_dsn("the relay's shutdown")
    channel = f"mcp_elicit_lifespan_{secrets.token_hex(4)}"
    router = PostgresSessionRouter(dsn, channel=channel, timeout=3.0)
    app = Server("lifespan", state_keys=[KeyRing.generate_secret()], session_router=router).asgi()

    async def listening() -> int:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as db:
            cursor = await db.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE %s", (f"LISTEN%{channel}%",)
            )
            row = await cursor.fetchone()
            return 0 if row is None else int(row[0])

    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    inbox.put_nowait({"type": "lifespan.startup"})
    lifespan = asyncio.ensure_future(app({"type": "lifespan"}, inbox.get, send))
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
        ) as http:
            opened = await http.post("/mcp", json=initialize(), headers=headers)
            assert opened.status_code == 200, opened.text
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await http.post("/mcp", json=ping, headers=session)).status_code == 200
            assert await listening() == 1  # the instance listens once it holds a session

            inbox.put_nowait({"type": "lifespan.shutdown"})
            await asyncio.wait_for(lifespan, timeout=10)
            assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
            assert (await http.post("/mcp", json=ping, headers=session)).status_code == 404
        assert await listening() == 0
    finally:
        lifespan.cancel()
        await router.close()
