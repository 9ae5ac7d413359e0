"""The HTTP requests in progress, watched by one timer: slow bodies end, gone clients cancel.

A client that closes its connection cancels its request's handler (the 2026-07-28 way to cancel
a request over HTTP); a body that takes longer than ``body_timeout`` to arrive ends its request
with 408 (a client sending slowly must not hold a request open for ever).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_elicit.transport.asgi import Receive


class InFlight:
    """The requests in progress, and one timer for all of them (a timer per request costs more
    than the rest of the transport): it ends request bodies that take longer than
    ``body_timeout`` to arrive, and watches long-running handlers for a disconnect (the client
    closing the connection cancels its request's handler).

    Most requests finish in well under a millisecond, so a watcher task (which waits on
    ``receive()``) is only started for a handler still running after ``WATCH_AFTER`` seconds.
    """

    WATCH_AFTER = 0.05

    def __init__(self, body_timeout: float = 30.0) -> None:
        self._entries: set[InFlightRequest] = set()
        self._timer: asyncio.TimerHandle | None = None
        self.body_timeout = body_timeout
        self._period = max(min(self.WATCH_AFTER, body_timeout / 4), 0.001)

    def start(self, receive: Receive) -> InFlightRequest:
        """Track the current task while it reads its request body."""
        task = asyncio.current_task()
        assert task is not None
        loop = task.get_loop()
        entry = InFlightRequest(task, receive, loop, loop.time())
        self._entries.add(entry)
        if self._timer is None:
            self._timer = loop.call_later(self._period, self._sweep, loop)
        return entry

    def handling(self, entry: InFlightRequest) -> None:
        """Track ``entry`` (finished before) again, while its handler runs."""
        loop = entry.loop
        entry.handling = True
        entry.closed = False
        entry.started = loop.time()
        self._entries.add(entry)
        if self._timer is None:
            self._timer = loop.call_later(self._period, self._sweep, loop)

    def finish(self, entry: InFlightRequest) -> None:
        entry.closed = True
        self._entries.discard(entry)
        if entry.watcher is not None:
            entry.watcher.cancel()

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        watch_cutoff = now - self.WATCH_AFTER
        body_cutoff = now - self.body_timeout
        for entry in self._entries:
            if entry.handling:
                if entry.watcher is None and entry.started <= watch_cutoff:
                    entry.watcher = loop.create_task(entry.watch())
            elif not entry.expired and entry.started <= body_cutoff:
                entry.expired = True
                entry.task.cancel()
        if self._entries:
            self._timer = loop.call_later(self._period, self._sweep, loop)


class InFlightRequest:
    __slots__ = (
        "closed",
        "disconnected",
        "expired",
        "handling",
        "loop",
        "receive",
        "started",
        "task",
        "watcher",
    )

    def __init__(
        self, task: asyncio.Task[Any], receive: Receive, loop: asyncio.AbstractEventLoop, started: float
    ) -> None:
        self.task = task
        self.receive = receive
        self.loop = loop
        self.started = started
        self.handling = False
        self.watcher: asyncio.Task[None] | None = None
        self.closed = False
        self.disconnected = False
        self.expired = False

    async def watch(self) -> None:
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                break
        if not self.closed:
            self.disconnected = True
            self.task.cancel()
