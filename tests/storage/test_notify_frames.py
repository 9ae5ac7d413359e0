"""Messages cut into ``NOTIFY`` frames and put back together (no database: the frames'
format, their bounds, and what a listener does with frames that break the promise of whole
messages in order)."""

from __future__ import annotations

import logging
import secrets

import pytest
from tests.helpers import FakeClock

from mcp_elicit.storage.notify_frames import MAX_MESSAGE_BYTES, PIECE_BYTES, Reassembly, frames


@pytest.mark.parametrize("size", [0, 1, PIECE_BYTES - 1, PIECE_BYTES, PIECE_BYTES + 1, PIECE_BYTES * 7 + 3])
def test_any_message_goes_through_frames_under_the_limit(size: int) -> None:
    message = secrets.token_bytes(size)
    payloads = frames(message)
    assert len(payloads) == max(1, -(-size // PIECE_BYTES))
    assert all(len(p.encode("utf-8")) < 8000 and p.isascii() for p in payloads)  # NOTIFY's limit
    reassembly = Reassembly()
    out = [reassembly.add(p) for p in payloads]
    assert out[:-1] == [None] * (len(payloads) - 1)
    assert out[-1] == message


def test_messages_from_two_senders_interleaved_come_out_whole() -> None:
    first, second = secrets.token_bytes(PIECE_BYTES * 3), secrets.token_bytes(PIECE_BYTES * 2)
    a, b = frames(first), frames(second)
    reassembly = Reassembly()
    done = [m for p in (a[0], b[0], a[1], b[1], a[2]) if (m := reassembly.add(p)) is not None]
    assert done == [second, first]


def test_a_message_over_the_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="over the 67108864-byte limit"):
        frames(b"x" * (MAX_MESSAGE_BYTES + 1))


def test_frames_that_break_the_promise_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_elicit.postgres")
    reassembly = Reassembly()
    for junk in ("hello", "id x 2 AAAA", "id 0 2 not*base64", "id 5 2 AAAA", "id 0 99999999 AAAA"):
        assert reassembly.add(junk) is None
    assert len(caplog.records) == 5
    # Out of order: the message is dropped, and its later frames build nothing.
    payloads = frames(secrets.token_bytes(PIECE_BYTES * 3))
    assert reassembly.add(payloads[0]) is None
    assert reassembly.add(payloads[2]) is None
    assert reassembly.add(payloads[1]) is None  # its start is gone: nothing to build on
    assert "out of order" in caplog.text
    # A message whose start never came (the listener reconnected meanwhile) builds nothing.
    assert [reassembly.add(p) for p in frames(secrets.token_bytes(PIECE_BYTES * 2))[1:]] == [None]


def test_incomplete_messages_are_bounded_in_bytes_and_in_time() -> None:
    clock = FakeClock(0.0)
    reassembly = Reassembly(max_pending_bytes=PIECE_BYTES * 2, max_age=30.0, clock=clock)
    big = frames(secrets.token_bytes(PIECE_BYTES * 4))
    assert reassembly.add(big[0]) is None
    assert reassembly.add(big[1]) is None  # at the bound
    assert reassembly.add(big[2]) is None  # over it: the message is dropped
    assert reassembly.add(big[3]) is None  # so its last frame completes nothing
    slow = frames(secrets.token_bytes(PIECE_BYTES * 2))
    assert reassembly.add(slow[0]) is None
    clock.advance(31)
    other = frames(b"y" * (PIECE_BYTES + 1))
    assert reassembly.add(other[0]) is None  # expires the slow one on the way
    assert reassembly.add(slow[1]) is None
    assert reassembly.add(other[1]) == b"y" * (PIECE_BYTES + 1)
    pending = frames(secrets.token_bytes(PIECE_BYTES * 2))
    assert reassembly.add(pending[0]) is None
    reassembly.clear()  # the listener lost its connection
    assert reassembly.add(pending[1]) is None
