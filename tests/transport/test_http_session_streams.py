"""Which of a 2025-11-25 session's finished call streams stay resumable: the last few whose
response went out (a client whose connection broke as it was written reads it again), never
one nobody came back for, and never more than a few, however many calls the session makes."""

from __future__ import annotations

from mcp_elicit import Server
from mcp_elicit.server.legacy.session import LegacySession
from mcp_elicit.transport.event_stream import EventStream
from mcp_elicit.transport.http_sessions import KEPT_DELIVERED_STREAMS, HttpSession


def session_with_streams(count: int) -> HttpSession:
    session = HttpSession("abcd.x", LegacySession.of(Server("streams"), None), None, 0.0)
    for _ in range(count):
        stream_id = session.new_stream_id()
        session.streams[stream_id] = EventStream(stream_id, resume_grace=30.0, on_abandoned=lambda: None)
    return session


def test_the_last_delivered_streams_are_kept_and_older_ones_forgotten() -> None:
    total = KEPT_DELIVERED_STREAMS + 5
    session = session_with_streams(total)
    for n in range(1, total + 1):
        session.stream_over(f"s{n}", delivered=True)
    assert sorted(session.streams, key=lambda i: int(i[1:])) == [f"s{n}" for n in range(6, total + 1)]


def test_a_stream_nobody_came_back_for_is_forgotten() -> None:
    session = session_with_streams(2)
    session.stream_over("s1", delivered=False)
    assert list(session.streams) == ["s2"]


def test_a_stream_read_again_after_a_resume_takes_one_place() -> None:
    session = session_with_streams(KEPT_DELIVERED_STREAMS + 1)
    session.stream_over("s1", delivered=True)
    for _ in range(3):
        session.stream_over("s1", delivered=True)  # resumed and read to its end again
    for n in range(2, KEPT_DELIVERED_STREAMS + 1):
        session.stream_over(f"s{n}", delivered=True)
    assert "s1" in session.streams  # still among the last KEPT_DELIVERED_STREAMS
    session.stream_over(f"s{KEPT_DELIVERED_STREAMS + 1}", delivered=True)
    assert "s1" not in session.streams
