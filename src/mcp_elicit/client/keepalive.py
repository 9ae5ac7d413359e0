"""Pinging a 2025-11-25 server while connected: the spec says implementations SHOULD ping
periodically, and that a ping that times out SHOULD count as a failed connection.

``Client(ping_interval=...)`` starts one :class:`Keepalive` once a 2025-11-25 session is open: a
``ping`` every ``interval`` seconds, each given ``interval`` seconds to be answered. Any answer
counts, an error too (a server that does not know ``ping`` is still there), and so does a 404
that ends the session (the next request opens a new one). No answer in time, or a connection
that fails, ends the keepalive: ``on_failure`` closes the connection, so that the calls still
waiting fail at once instead of waiting for replies that will not come (a server frozen, a
network gone without a reset). 2026-07-28 has no ``ping``: each request stands alone there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from mcp_elicit.client.errors import ClientError, McpClientError, SessionExpiredError


class Keepalive:
    """Pings with ``ping()`` every ``interval`` seconds until one fails; then ``on_failure(why)``."""

    def __init__(
        self,
        interval: float,
        ping: Callable[[], Awaitable[object]],
        on_failure: Callable[[str], Awaitable[None]],
    ) -> None:
        self.interval = interval
        self._ping = ping
        self._on_failure = on_failure
        self._task: asyncio.Task[None] | None = None
        self._failing = False  # on_failure runs: it is let finish, never cut in the middle

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is None or task is asyncio.current_task():
            return
        if not self._failing:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                async with asyncio.timeout(self.interval):
                    await self._ping()
            except (McpClientError, SessionExpiredError):
                continue  # an answer: the server is there
            except TimeoutError:
                why = f"no answer to a ping within {self.interval:g} s"
            except ClientError as exc:
                why = f"a ping failed: {exc}"
            else:
                continue
            self._failing = True
            await self._on_failure(why)
            return
