"""The SSE reply of one request: its notifications (progress, logs) as they come, then its answer.

A request that asks for notifications (a ``progressToken`` or a log level in ``_meta``) and
accepts ``text/event-stream`` is answered with a stream of ``event: message`` events: one per
notification, the JSON-RPC response last, and the stream ends.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp_elicit.transport.asgi import EVENT_STREAM, Send
from mcp_elicit.wire.jsonrpc import encode_notification


class SseStream:
    """The reply as ``text/event-stream``, for a request that asked for notifications.

    Notifications are held back for ``hold`` seconds first: an error that comes within that time
    (a capability the request does not declare, a malformed answer: most errors come at once)
    still goes out as JSON with its own HTTP status (400 for -32021, say), which a stream that
    has started at 200 can no longer carry; the notifications held for it are dropped. A reply
    that comes within that time carries them before the result. After it, the stream starts and
    notifications go out as they come.
    """

    def __init__(self, send: Send, loop: asyncio.AbstractEventLoop, hold: float) -> None:
        self._send = send
        self._loop = loop
        self._hold = hold
        self._held: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self._opening: asyncio.Task[None] | None = None
        self.opened = False  # the response has started (its head is sent)
        self.started = False  # ... and the held notifications have gone out
        # The reply has been sent (or the request cancelled): a notification from a task the
        # handler left behind would be an ASGI message after the response, which the server
        # refuses with an error raised in that task.
        self._done = False

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self._done:
            return
        data = encode_notification(method, params)
        if self.started:
            await self._event(data)
            return
        self._held.append(data)
        if self._timer is None and self._opening is None:
            self._timer = self._loop.call_later(self._hold, self._open_soon)

    def _open_soon(self) -> None:
        self._timer = None
        self._opening = self._loop.create_task(self._open())

    async def _open(self) -> None:
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": list(EVENT_STREAM),
            }
        )
        self.opened = True
        # Notifications that come while these go out are held too: they follow in order.
        while self._held:
            await self._event(self._held.pop(0))
        self.started = True

    async def finish(self, payload: bytes, status: int) -> bool:
        """Send the reply on the stream and return True; or return False (the stream never
        started, and the reply is an error or has no notifications to carry) for the caller to
        send it as JSON with ``status``."""
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._opening is not None:
            await self._opening
        if not self.started:
            if status != 200 or not self._held:
                return False
            await self._open()
        await self._event(payload, last=True)
        return True

    def close(self) -> None:
        """The request was cancelled: send nothing more."""
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
        if self._opening is not None:
            self._opening.cancel()

    async def end_with(self, payload: bytes) -> None:
        """End a stream that has started (after :meth:`close`) with ``payload``."""
        await self._event(payload, last=True)

    async def _event(self, data: bytes, *, last: bool = False) -> None:
        await self._send(
            {
                "type": "http.response.body",
                "body": b"event: message\ndata: " + data + b"\n\n",
                "more_body": not last,
            }
        )
