"""Request timeouts that stop while the server waits on the person.

A 2025-11-25 server asks its questions *inside* a request of ours: the ``tools/call`` stays open
while the person answers an ``elicitation/create``. ``request_timeout`` is about a server that
does not answer, not about a person taking their time, so every request's timer is paused
while one of the server's requests is open (on stdio nothing says which of ours it belongs to,
so all of them pause) and goes on with the time it had left afterwards. ``max_total_seconds``
is not paused: a call still ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class _Running:
    __slots__ = ("left", "timeout")

    def __init__(self, timeout: asyncio.Timeout) -> None:
        self.timeout = timeout
        self.left = 0.0  # seconds left when paused


class PausableTimers:
    __slots__ = ("_open", "_running")

    def __init__(self) -> None:
        self._running: set[_Running] = set()
        self._open = 0  # server requests being answered

    @property
    def paused(self) -> bool:
        return self._open > 0

    @asynccontextmanager
    async def limit(self, seconds: float) -> AsyncIterator[asyncio.Timeout]:
        """``asyncio.timeout(seconds)`` that :meth:`pause` stops; raises ``TimeoutError``."""
        async with asyncio.timeout(seconds) as timeout:
            running = _Running(timeout)
            if self._open:
                running.left = seconds
                timeout.reschedule(None)
            self._running.add(running)
            try:
                yield timeout
            finally:
                self._running.discard(running)

    def pause(self) -> None:
        """A server request opened."""
        self._open += 1
        if self._open > 1:
            return
        now = asyncio.get_running_loop().time()
        for running in self._running:
            when = running.timeout.when()
            if when is not None and not running.timeout.expired():
                running.left = max(0.0, when - now)
                running.timeout.reschedule(None)

    def resume(self) -> None:
        """A server request was answered (or given up)."""
        self._open = max(0, self._open - 1)
        if self._open:
            return
        now = asyncio.get_running_loop().time()
        for running in self._running:
            if not running.timeout.expired() and running.timeout.when() is None:
                running.timeout.reschedule(now + running.left)
