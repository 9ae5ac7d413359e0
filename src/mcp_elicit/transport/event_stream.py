"""One resumable SSE stream of a 2025-11-25 session: events with ids, kept for a replay.

A call on a 2025-11-25 HTTP session is answered on its POST's SSE stream: the requests it sends
the client (``elicitation/create``...), its notifications, then its response. Each event has an
id, ``<stream>.<seq>``, unique in the session; the first is a *priming* event (the id and no
data) with a ``retry`` time. The connection may close before the stream is done (the client's
network dropped, or the handler closed it to let the client poll): the call goes on, its events
are kept, and a ``GET`` with ``Last-Event-ID`` picks the stream up again where the client left
it. A stream that nobody picks up again within ``resume_grace`` seconds ends its call.

What a stream keeps for a replay is bounded (its last ``MAX_KEPT_EVENTS`` events, at most
``MAX_KEPT_BYTES``, the newest always), and so is what waits for a slow connection: a client that
falls further behind than the stream keeps has its connection ended, and resumes from the kept
events. It misses those the stream no longer has (logged): holding everything a client has not
read yet would let one slow reader fill the server's memory.

Once the stream is done, ``on_over`` says how it ended: its end went out on a connection
(``delivered``), or it ended with no connection to take its end, or its connection broke first,
and nobody came back for it within ``resume_grace`` seconds. The session decides what to keep
(:meth:`~mcp_elicit.transport.http_sessions.HttpSession.stream_over`).

:class:`EventStream` is the stream itself, independent of any connection; :func:`serve_events`
writes it to one ASGI connection until the stream is done or the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from typing import Final

from mcp_elicit.transport.asgi import EVENT_STREAM, Header, Receive, Send
from mcp_elicit.transport.shutdown import stopping_task

RETRY_MS: Final = 1000  # how long a client waits before reconnecting (the priming event says)
MAX_KEPT_EVENTS: Final = 1000  # events kept for a replay, per stream
MAX_KEPT_BYTES: Final = 4 * 1024 * 1024

logger = logging.getLogger("mcp_elicit.transport")


class EventStream:
    """The events of one stream (see the module docstring). ``on_abandoned`` is called when the
    stream has no connection for ``resume_grace`` seconds before it is done; ``on_over`` once it
    is done, with whether its end went out on a connection (see the module docstring)."""

    def __init__(
        self,
        stream_id: str,
        *,
        resume_grace: float,
        on_abandoned: Callable[[], None],
        on_over: Callable[[bool], None] = lambda delivered: None,
    ) -> None:
        self.id = stream_id
        self._seq = 0
        self._kept: deque[tuple[int, bytes]] = deque()
        self._kept_bytes = 0
        # What waits to go out on the attached connection, if any.
        self._listener: _Outbox | None = None
        self.done = False
        self._resume_grace = resume_grace
        self._on_abandoned = on_abandoned
        self._on_over = on_over
        # While the stream runs: when it is abandoned; once it is done: when it is forgotten.
        self._timer: asyncio.TimerHandle | None = None

    # -- what the call sends -------------------------------------------------------------------
    def prime(self) -> None:
        """The first event: an id, no data, and the retry time."""
        self._push(b"retry: %d\nid: %s.0\ndata: \n\n" % (RETRY_MS, self.id.encode()))

    def send(self, message: bytes) -> None:
        self._seq += 1
        self._push(b"id: %s.%d\ndata: %s\n\n" % (self.id.encode(), self._seq, message), self._seq)

    def finish(self, message: bytes | None) -> None:
        """The last event (the response; None: end without one, e.g. a cancelled request)."""
        if self.done:
            return
        if message is not None:
            self.send(message)
        self.done = True
        self._cancel_timer()
        if self._listener is not None:
            self._listener.close(ends_stream=True)  # that connection takes the end, then detaches
        else:
            self._keep_for_a_reconnection()

    def close_connection(self) -> None:
        """End the current connection without ending the stream (the client reconnects): what
        was sent before still goes out on it, what follows is kept for the next one."""
        if self._listener is not None:
            self._listener.close(ends_stream=False)

    @property
    def last_seq(self) -> int:
        """The seq of the stream's latest event (0: only the priming one)."""
        return self._seq

    def _push(self, event: bytes, seq: int = 0) -> None:
        if self.done:
            return
        self._kept.append((seq, event))
        self._kept_bytes += len(event)
        # The oldest go first; the newest is always kept, however large (the response may be it).
        while len(self._kept) > 1 and (
            len(self._kept) > MAX_KEPT_EVENTS or self._kept_bytes > MAX_KEPT_BYTES
        ):
            _, dropped = self._kept.popleft()
            self._kept_bytes -= len(dropped)
        listener = self._listener
        if listener is not None:
            listener.put(event)
            if listener.behind():
                logger.warning(
                    "stream %s: the client has not read %d events (%d bytes); its connection ends, "
                    "and it resumes from the %d events this stream keeps",
                    self.id,
                    len(listener.events),
                    listener.size,
                    len(self._kept),
                )
                listener.drop()

    # -- connections ---------------------------------------------------------------------------
    def attach(self, after: int | None) -> _Outbox:
        """A new connection for the stream: the events after ``after`` (None: all), then what
        comes. A connection still attached is ended (one connection per stream)."""
        if self._listener is not None:
            self._listener.close(ends_stream=False)
        self._cancel_timer()
        outbox = _Outbox()
        oldest = self._kept[0][0] if self._kept else 0
        if after is not None and after + 1 < oldest:
            logger.warning(
                "stream %s: the client resumed after event %d, but events %d to %d are no longer "
                "kept (a stream keeps its last %d events, %d bytes at most): it misses them",
                self.id,
                after,
                after + 1,
                oldest - 1,
                MAX_KEPT_EVENTS,
                MAX_KEPT_BYTES,
            )
        for seq, event in self._kept:
            if after is None or seq > after:
                outbox.put(event)
        if self.done:
            outbox.close(ends_stream=True)
        self._listener = outbox
        return outbox

    def detach(self, outbox: _Outbox, *, delivered: bool) -> None:
        """The connection of ``outbox`` is over; ``delivered``: the stream's end went out on it."""
        if self._listener is not outbox:
            return  # a newer connection took over
        self._listener = None
        if delivered:
            self._on_over(True)
        elif self.done:
            self._keep_for_a_reconnection()
        else:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._resume_grace, self._abandoned)

    def _abandoned(self) -> None:
        self._timer = None
        if not self.done and self._listener is None:
            self._on_abandoned()

    def _keep_for_a_reconnection(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self._resume_grace, self._forgotten)

    def _forgotten(self) -> None:
        self._timer = None
        if self._listener is None:
            self._on_over(False)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _Outbox:
    """What waits to go out on one connection, in order, until it is closed, and a way to wake
    its writer: an asyncio.Queue without what a queue of many consumers needs (~30k instructions
    less per 2025-11-25 flow, 2.6%; bench/README.md)."""

    def __init__(self) -> None:
        self.events: deque[bytes] = deque()
        self.size = 0  # bytes in ``events``
        # Nothing more goes out on the connection once it is closed; ``ends_stream``: it was
        # closed by the stream's end (which it carries), not to be picked up by another.
        self.closed = False
        self.ends_stream = False
        self._wakeup: asyncio.Future[None] | None = None

    def put(self, event: bytes) -> None:
        if self.closed:
            return  # the stream keeps it for the next connection
        self.events.append(event)
        self.size += len(event)
        self._wake()

    def close(self, *, ends_stream: bool) -> None:
        if self.closed:
            return  # the first reason stands
        self.closed = True
        self.ends_stream = ends_stream
        self._wake()

    def behind(self) -> bool:
        """Whether the connection lags further behind than the stream keeps: as the stream keeps
        its newest event however large, the newest does not count against the bytes (a response
        over MAX_KEPT_BYTES alone is no sign of a slow reader: it has not had a turn to read it)."""
        newest = len(self.events[-1]) if self.events else 0
        return len(self.events) > MAX_KEPT_EVENTS or self.size - newest > MAX_KEPT_BYTES

    def drop(self) -> None:
        """End the connection without what it has not sent yet (the stream kept what it can)."""
        self.events.clear()
        self.size = 0
        self.close(ends_stream=False)

    def take(self) -> bytes:
        """Everything queued, in one piece: one write for the call's response and the end of the
        stream, most often."""
        taken = b"".join(self.events)
        self.events.clear()
        self.size = 0
        return taken

    async def wait(self) -> None:
        """Until there is an event, or the connection is closed."""
        while not (self.events or self.closed):
            self._wakeup = asyncio.get_running_loop().create_future()
            await self._wakeup

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)


# Digits of a seq: more than any stream reaches (int() of thousands of digits is slow, and
# refused past 4300).
_MAX_SEQ_DIGITS: Final = 19


def last_event(header: str) -> tuple[str, int] | None:
    """``(stream id, seq)`` from a ``Last-Event-ID`` header, or None when it names no event of
    ours (the caller answers 404, as for an event no stream has). Only the ids we write are
    ours: ``s1.007`` is not ``s1.7``."""
    stream, _, seq = header.strip().rpartition(".")
    if not stream or not seq.isascii() or not seq.isdigit() or len(seq) > _MAX_SEQ_DIGITS:
        return None
    if seq != "0" and seq.startswith("0"):
        return None
    return stream, int(seq)


async def serve_events(
    stream: EventStream,
    after: int | None,
    send: Send,
    receive: Receive,
    headers: list[Header],
    last_words: Callable[[], bytes] | None = None,
) -> None:
    """Write ``stream`` to this connection (a 200 ``text/event-stream`` response with
    ``headers``) until it is done, the connection is to close, or the client goes away. When the
    server stops first (:mod:`~mcp_elicit.transport.shutdown`), the stream ends with what
    ``last_words()`` gives (a call's: its error), and the response with what is queued."""
    outbox = stream.attach(after)
    gone = False
    delivered = False  # the stream's end went out on this connection

    async def watch() -> None:
        nonlocal gone
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
                outbox.close(ends_stream=False)
                return

    watcher = asyncio.ensure_future(watch())
    try:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*EVENT_STREAM, *headers],
            }
        )
        while True:
            await outbox.wait()
            if gone:
                break
            last = outbox.closed  # what is queued now is all this connection sends
            await send({"type": "http.response.body", "body": outbox.take(), "more_body": not last})
            if last:
                delivered = outbox.ends_stream
                break
    except OSError:
        pass  # the connection broke under us: the stream waits for a reconnection
    except asyncio.CancelledError:
        task = stopping_task()
        if task is None:
            raise
        if last_words is not None:
            stream.finish(last_words())
        with contextlib.suppress(Exception):  # the client may be gone
            await send({"type": "http.response.body", "body": outbox.take(), "more_body": False})
        if task.uncancel() > 0:
            raise
    finally:
        watcher.cancel()
        stream.detach(outbox, delivered=delivered)
