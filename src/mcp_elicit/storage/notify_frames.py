"""Messages of any size as PostgreSQL ``NOTIFY`` payloads, and back.

A ``NOTIFY`` payload must be text shorter than 8000 bytes. A message (bytes) is cut into frames,
each ``<message id> <index> <count> <base64 piece>``: ASCII whatever the database's encoding, and
under the limit. The sender sends the frames of one message in one transaction, so a listener
gets all of them or none, in order (PostgreSQL delivers a session's notifications in commit
order); :class:`Reassembly` puts them back together, and drops what does not fit that promise (a
frame out of order, a message left incomplete for too long, more pending bytes than the bound):
the layer above bounds every exchange in time, so a dropped message is one that never arrived.
No I/O here.
"""

from __future__ import annotations

import base64
import binascii
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["MAX_MESSAGE_BYTES", "PIECE_BYTES", "Reassembly", "frames"]

PIECE_BYTES: Final = 5700
"""Bytes of a message per frame: 7600 characters of base64 plus a header of at most 40, under
PostgreSQL's 8000-byte limit."""
MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
"""The largest message :func:`frames` cuts (and :class:`Reassembly` takes)."""
_MAX_FRAMES: Final = -(-MAX_MESSAGE_BYTES // PIECE_BYTES)

_log = logging.getLogger("mcp_elicit.postgres")


def frames(message: bytes) -> list[str]:
    """The ``NOTIFY`` payloads that carry ``message`` (at least one: an empty message is one
    empty frame). :class:`ValueError` over :data:`MAX_MESSAGE_BYTES`."""
    if len(message) > MAX_MESSAGE_BYTES:
        raise ValueError(f"a message of {len(message)} bytes is over the {MAX_MESSAGE_BYTES}-byte limit")
    count = max(1, -(-len(message) // PIECE_BYTES))
    message_id = secrets.token_hex(8)
    return [
        f"{message_id} {index} {count} "
        + base64.b64encode(message[index * PIECE_BYTES : (index + 1) * PIECE_BYTES]).decode("ascii")
        for index in range(count)
    ]


@dataclass
class _Pending:
    count: int
    started: float
    pieces: list[bytes] = field(default_factory=list)


class Reassembly:
    """Frames in, whole messages out (see the module docstring). ``max_pending_bytes`` bounds
    the bytes of incomplete messages; ``max_age`` (seconds) how long one may stay incomplete."""

    def __init__(
        self,
        *,
        max_pending_bytes: int = MAX_MESSAGE_BYTES,
        max_age: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pending: dict[str, _Pending] = {}
        self._pending_bytes = 0
        self._max_pending_bytes = max_pending_bytes
        self._max_age = max_age
        self._clock = clock

    def add(self, payload: str) -> bytes | None:
        """The message ``payload`` completes, or None (more frames to come, or a frame dropped:
        malformed, out of order, over a bound; logged)."""
        parts = payload.split(" ", 3)
        # ASCII digits, a few of them: str.isdigit() takes "²", which int() refuses, and int()
        # refuses over 4300 digits too (anyone who can NOTIFY on the channel writes these).
        if len(parts) != 4 or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts[1:3]):
            _log.warning("a notification that is not a frame of ours was dropped")
            return None
        message_id, index, count = parts[0], int(parts[1]), int(parts[2])
        try:
            piece = base64.b64decode(parts[3], validate=True)
        except (binascii.Error, ValueError):
            _log.warning("a frame with a malformed body was dropped")
            return None
        if not 0 < count <= _MAX_FRAMES or index >= count or len(piece) > PIECE_BYTES:
            _log.warning("a frame out of bounds was dropped")
            return None
        if count == 1:
            return piece
        now = self._clock()
        self._expire(now)
        pending = self._pending.get(message_id)
        if pending is None:
            if index != 0:
                return None  # the start was lost (the listener reconnected): nothing to build on
            pending = self._pending[message_id] = _Pending(count, now)
        if index != len(pending.pieces) or count != pending.count:
            _log.warning("a frame out of order was dropped, with its message")
            self._drop(message_id)
            return None
        pending.pieces.append(piece)
        self._pending_bytes += len(piece)
        if len(pending.pieces) == count:
            self._drop(message_id)
            return b"".join(pending.pieces)
        if self._pending_bytes > self._max_pending_bytes:
            _log.warning("incomplete messages over %d bytes: one was dropped", self._max_pending_bytes)
            self._drop(message_id)
        return None

    def clear(self) -> None:
        """Forget every incomplete message (the listener lost its connection: they never end)."""
        self._pending.clear()
        self._pending_bytes = 0

    def _drop(self, message_id: str) -> None:
        pending = self._pending.pop(message_id, None)
        if pending is not None:
            self._pending_bytes -= sum(len(piece) for piece in pending.pieces)

    def _expire(self, now: float) -> None:
        for message_id in [m for m, p in self._pending.items() if now - p.started > self._max_age]:
            _log.warning("an incomplete message was dropped after %g s", self._max_age)
            self._drop(message_id)
