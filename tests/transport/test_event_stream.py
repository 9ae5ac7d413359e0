"""A call's SSE stream on a 2025-11-25 session, as the ASGI server sees it: what goes out in
which write, when a connection ends, and what a reconnection gets (``serve_events`` driven
through its ASGI interface, the one uvicorn calls)."""

from __future__ import annotations

import asyncio
import tracemalloc
from typing import Any

import pytest

from mcp_elicit.transport.event_stream import MAX_KEPT_BYTES, MAX_KEPT_EVENTS, EventStream, serve_events


class Connection:
    """One HTTP connection's ASGI side: what the app sent, and the client going away."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.disconnect = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def bodies(self) -> list[tuple[bytes, bool]]:
        return [(m["body"], m["more_body"]) for m in self.sent if m["type"] == "http.response.body"]


def serving(stream: EventStream, conn: Connection, after: int | None = None) -> asyncio.Task[None]:
    return asyncio.ensure_future(serve_events(stream, after, conn.send, conn.receive, []))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def a_client_that_left(stream: EventStream, *events: bytes) -> Connection:
    """A connection to ``stream`` that got ``events``, then its client went away."""
    conn = Connection()
    task = serving(stream, conn)
    for event in events:
        stream.send(event)
    await settle()
    conn.disconnect.set()
    await asyncio.wait_for(task, 1)
    return conn


def new_stream(abandoned: list[str] | None = None, grace: float = 30.0) -> EventStream:
    calls = [] if abandoned is None else abandoned
    return EventStream(
        "s1",
        resume_grace=grace,
        on_abandoned=lambda: calls.append("abandoned"),
        on_over=lambda delivered: calls.append("delivered" if delivered else "over"),
    )


async def test_the_response_and_the_end_of_the_stream_go_out_in_one_write() -> None:
    stream = new_stream()
    stream.prime()
    conn = Connection()
    task = serving(stream, conn)
    await settle()
    stream.send(b'{"question":1}')
    await settle()
    stream.finish(b'{"answer":2}')
    await asyncio.wait_for(task, 1)
    assert conn.sent[0]["type"] == "http.response.start"
    assert conn.bodies() == [
        (b"retry: 1000\nid: s1.0\ndata: \n\n", True),
        (b'id: s1.1\ndata: {"question":1}\n\n', True),
        # the last event ends the response: no empty write of its own after it
        (b'id: s1.2\ndata: {"answer":2}\n\n', False),
    ]


async def test_events_queued_together_go_out_together() -> None:
    stream = new_stream()
    stream.send(b"a")
    stream.send(b"b")
    conn = Connection()
    task = serving(stream, conn)
    await settle()
    stream.finish(None)  # ended without a response (a cancelled call)
    await asyncio.wait_for(task, 1)
    assert conn.bodies() == [(b"id: s1.1\ndata: a\n\nid: s1.2\ndata: b\n\n", True), (b"", False)]


async def test_closing_the_connection_keeps_the_stream_for_a_reconnection() -> None:
    stream = new_stream()
    first = Connection()
    task = serving(stream, first)
    stream.send(b"a")
    await settle()
    stream.close_connection()
    await asyncio.wait_for(task, 1)
    assert first.bodies() == [(b"id: s1.1\ndata: a\n\n", True), (b"", False)]
    assert not stream.done
    stream.send(b"b")  # while nobody listens: kept
    again = Connection()
    task = serving(stream, again, after=1)
    await settle()
    stream.finish(b"c")
    await asyncio.wait_for(task, 1)
    assert again.bodies() == [(b"id: s1.2\ndata: b\n\n", True), (b"id: s1.3\ndata: c\n\n", False)]


async def test_a_second_connection_ends_the_first() -> None:
    stream = new_stream()
    first, second = Connection(), Connection()
    one = serving(stream, first)
    stream.send(b"a")
    await settle()
    two = serving(stream, second, after=0)
    await asyncio.wait_for(one, 1)
    assert first.bodies() == [(b"id: s1.1\ndata: a\n\n", True), (b"", False)]
    stream.finish(b"b")
    await asyncio.wait_for(two, 1)
    assert second.bodies() == [(b"id: s1.1\ndata: a\n\n", True), (b"id: s1.2\ndata: b\n\n", False)]


async def test_a_client_that_goes_away_gets_nothing_more_and_an_unclaimed_stream_is_abandoned() -> None:
    abandoned: list[str] = []
    stream = new_stream(abandoned, grace=0.05)
    conn = await a_client_that_left(stream, b"a")
    stream.send(b"b")
    await asyncio.sleep(0.2)
    assert conn.bodies() == [(b"id: s1.1\ndata: a\n\n", True)]  # no end: the client is gone
    assert abandoned == ["abandoned"]
    assert not stream.done  # the call decides what to do (the transport cancels it)


# -- how long a finished stream is kept ---------------------------------------------------------


async def test_a_stream_whose_end_went_out_says_so_at_once() -> None:
    """No timer for the grace: the session decides at once what to keep of it."""
    events: list[str] = []
    stream = new_stream(events, grace=30.0)
    task = serving(stream, Connection())
    await settle()
    stream.finish(b'{"answer":1}')
    assert events == []  # not before the end has gone out
    await asyncio.wait_for(task, 1)
    assert events == ["delivered"]


async def test_a_stream_that_ends_with_nobody_listening_is_kept_for_the_grace_then_over() -> None:
    events: list[str] = []
    stream = new_stream(events, grace=0.1)
    await a_client_that_left(stream)
    stream.finish(b"end")
    await asyncio.sleep(0.02)
    assert events == []  # within the grace: a reconnection could still read the end
    await asyncio.sleep(0.2)
    assert events == ["over"]


async def test_a_reconnection_within_the_grace_reads_the_end_and_then_the_stream_is_over() -> None:
    events: list[str] = []
    stream = new_stream(events, grace=0.1)
    await a_client_that_left(stream, b"a")
    stream.finish(b"end")
    again = Connection()
    await asyncio.wait_for(serving(stream, again, after=1), 1)
    assert again.bodies() == [(b"id: s1.2\ndata: end\n\n", False)]
    assert events == ["delivered"]
    await asyncio.sleep(0.2)
    assert events == ["delivered"]  # the grace's timer was stopped: not over twice


async def test_a_connection_that_breaks_before_the_end_keeps_the_stream_for_a_reconnection() -> None:
    events: list[str] = []
    stream = new_stream(events, grace=0.1)

    class Broken(Connection):
        async def send(self, message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and not message["more_body"]:
                raise OSError("connection reset")
            await super().send(message)

    task = serving(stream, Broken())
    await settle()
    stream.finish(b"end")
    await asyncio.wait_for(task, 1)
    assert events == []  # the end did not go out: kept
    again = Connection()
    await asyncio.wait_for(serving(stream, again, after=0), 1)
    assert again.bodies() == [(b"id: s1.1\ndata: end\n\n", False)]
    assert events == ["delivered"]


async def test_a_close_with_the_end_queued_behind_it_keeps_the_stream() -> None:
    """``ctx.close_stream()`` then the answer, before the writer ran: the connection ends at the
    close and the end waits for the reconnection (the end did not go out on this one)."""
    events: list[str] = []
    stream = new_stream(events, grace=30.0)
    first = Connection()
    task = serving(stream, first)
    await settle()
    stream.send(b"before")
    stream.close_connection()
    stream.send(b"after")
    stream.finish(b"end")
    await asyncio.wait_for(task, 1)
    assert first.bodies() == [(b"id: s1.1\ndata: before\n\n", False)]
    assert events == []
    again = Connection()
    await asyncio.wait_for(serving(stream, again, after=1), 1)
    assert again.bodies() == [(b"id: s1.2\ndata: after\n\nid: s1.3\ndata: end\n\n", False)]
    assert events == ["delivered"]


# -- a client that does not keep up ---------------------------------------------------------------


class Stalled(Connection):
    """A client that stops reading after the response's head: every body write waits (as
    uvicorn's ``send`` does once the socket's buffers are full) until ``resume`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.resume = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            await self.resume.wait()
        await super().send(message)


def ids_in(bodies: list[tuple[bytes, bool]]) -> list[int]:
    text = b"".join(body for body, _ in bodies).decode()
    return [int(line.rsplit(".", 1)[1]) for line in text.splitlines() if line.startswith("id: ")]


async def test_a_client_further_behind_than_the_stream_keeps_is_cut_and_resumes_from_what_is_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = new_stream()
    stalled = Stalled()
    task = serving(stream, stalled)
    stream.send(b"first")
    await settle()  # its write waits: the client reads nothing
    total = MAX_KEPT_EVENTS + 500
    for n in range(2, total + 1):
        stream.send(b"event %d" % n)
    stalled.resume.set()
    await asyncio.wait_for(task, 1)
    # The write that was waiting, then the connection's end with nothing of what was queued.
    assert stalled.bodies() == [(b"id: s1.1\ndata: first\n\n", True), (b"", False)]
    assert "the client has not read 1001 events" in caplog.text
    assert not stream.done  # the call goes on; the client reconnects
    again = Connection()
    reconnection = serving(stream, again, after=1)
    await settle()
    stream.finish(b"end")
    await asyncio.wait_for(reconnection, 1)
    # What the stream kept when the client came back, then the end.
    assert ids_in(again.bodies()) == list(range(total + 1 - MAX_KEPT_EVENTS, total + 2))
    assert again.bodies()[-1][1] is False
    assert (
        f"the client resumed after event 1, but events 2 to {total - MAX_KEPT_EVENTS} are no longer kept"
        in caplog.text
    )


async def test_a_response_over_what_the_stream_keeps_goes_out_with_what_came_before_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A notification, then at once a response larger than MAX_KEPT_BYTES, before the writer had
    a turn: the connection was taken as further behind than the stream keeps and cut, and the
    notification, which the stream no longer kept, was lost (the client resumed from the
    response, a second later). The newest event is always kept, so it is no sign of a slow
    reader."""
    stream = new_stream()
    conn = Connection()
    task = serving(stream, conn)
    await settle()
    stream.send(b"progress")
    stream.finish(b"x" * (MAX_KEPT_BYTES + 10))
    await asyncio.wait_for(task, 1)
    assert ids_in(conn.bodies()) == [1, 2]
    assert "has not read" not in caplog.text


async def test_what_waits_for_a_stalled_client_is_bounded_in_bytes() -> None:
    """40 MiB of events for a client that reads nothing: the server holds what the stream keeps
    for a replay, not all of it."""
    stream = new_stream()
    stalled = Stalled()
    task = serving(stream, stalled)
    stream.send(b"first")
    await settle()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(400):
            stream.send(bytes([65 + n % 26]) * 100_000)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 2.5 * MAX_KEPT_BYTES, held
    stalled.resume.set()
    await asyncio.wait_for(task, 1)
    assert stalled.bodies()[-1] == (b"", False)


async def test_a_slow_client_that_keeps_within_what_the_stream_keeps_is_not_cut(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = new_stream()
    stalled = Stalled()
    task = serving(stream, stalled)
    for n in range(1, MAX_KEPT_EVENTS + 1):  # as many as the stream keeps: not more
        stream.send(b"event %d" % n)
    await settle()
    stalled.resume.set()
    await settle()
    stream.finish(b"end")
    await asyncio.wait_for(task, 1)
    assert ids_in(stalled.bodies()) == list(range(1, MAX_KEPT_EVENTS + 2))
    assert "has not read" not in caplog.text


async def test_a_resumption_within_what_the_stream_keeps_is_not_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stream = new_stream()
    await a_client_that_left(stream, b"a")
    for n in range(MAX_KEPT_EVENTS - 1):
        stream.send(b"more %d" % n)
    stream.finish(b"end")  # events 2 to 1001 are kept: the oldest right after 1
    again = Connection()
    await asyncio.wait_for(serving(stream, again, after=1), 1)
    assert ids_in(again.bodies()) == list(range(2, MAX_KEPT_EVENTS + 2))
    assert "no longer kept" not in caplog.text
