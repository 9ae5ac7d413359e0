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
