"""The ASGI lifespan protocol: acknowledge the start, and the shutdown once the app's own
``on_shutdown`` (if any) has released what it holds."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["acknowledge_lifespan"]


logger = logging.getLogger("mcp_elicit.transport")


async def acknowledge_lifespan(
    receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
    send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    on_shutdown: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Answer ``lifespan.startup`` and ``lifespan.shutdown`` until the server shuts down,
    running ``on_shutdown`` first (a failure of it is logged: the server stops anyway)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if on_shutdown is not None:
                try:
                    await on_shutdown()
                except Exception:
                    logger.exception("releasing the app's resources at shutdown failed")
            await send({"type": "lifespan.shutdown.complete"})
            return
