"""A Server-Sent Events decoder, sans I/O: feed bytes, get the ``data`` of each event.

Only what MCP uses: ``data:`` lines (joined with newlines), events ended by a blank line, any
of CRLF / LF / CR as line ends, comments (``:``, keep-alives) ignored, one UTF-8 byte order mark
at the start of the stream skipped. ``event`` is read and dropped. ``id`` and ``retry`` are kept
in :attr:`SseDecoder.last_event_id` and :attr:`SseDecoder.retry_ms`, for the 2025-11-25 wire
(a client resumes a stream the server closed with ``GET`` and ``Last-Event-ID`` after ``retry``
milliseconds); 2026-07-28 has no resumability and ignores them. A CR ends its line at once,
even as the last byte received (a server ending lines with CR alone may then wait for an answer);
a LF that follows it, in the same chunk or the next, is the rest of that one line end.
"""

from __future__ import annotations

import re

from mcp_elicit.client.errors import MalformedMessageError


class SseDecoder:
    __slots__ = (
        "_buffer",
        "_data",
        "_data_size",
        "_id_buffer",
        "_max_event_bytes",
        "_scanned",
        "_skip_lf",
        "_started",
        "last_event_id",
        "retry_ms",
    )

    def __init__(self, max_event_bytes: int) -> None:
        self._buffer = bytearray()
        # How much of the buffer is known to hold no line end: a long line arriving in small
        # chunks is scanned once, not once per chunk (which made decoding it quadratic).
        self._scanned = 0
        self._data: list[bytes] = []
        self._data_size = 0
        self._max_event_bytes = max_event_bytes
        self._started = False  # past the place of a byte order mark
        self._skip_lf = False  # the last chunk ended with a CR: a LF opening this one is its CRLF
        self._id_buffer: str | None = None  # the id field of the event being read
        self.last_event_id: str | None = None  # of the last event dispatched (even one without data)
        self.retry_ms: int | None = None  # the last valid retry field

    def resumed(self) -> SseDecoder:
        """The decoder of the stream that picks this one up (``GET`` with ``Last-Event-ID``): read
        from its start, since what this one left unfinished (half a line, an event short of its
        blank line) is no part of it; only the last event id and the retry interval carry over."""
        fresh = SseDecoder(self._max_event_bytes)
        fresh.last_event_id, fresh.retry_ms = self.last_event_id, self.retry_ms
        return fresh

    def feed(self, chunk: bytes) -> list[bytes]:
        """The data of every event completed by ``chunk``."""
        buffer = self._buffer
        buffer += chunk  # in place: the partial line is not copied again
        if not self._started:
            # The SSE spec skips one BOM at the start; kept, it would hide the first field's name
            # (and that event may be the response). It may arrive split over chunks.
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                return []
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
            self._started = True
        if self._skip_lf and buffer:
            if buffer[0] == _LF:
                del buffer[0]
            self._skip_lf = False
        events: list[bytes] = []
        start = 0
        scan = self._scanned
        length = len(buffer)
        while True:
            end = _line_end(buffer, scan)
            if end < 0:
                scan = length
                break
            if buffer[end] == _CR:
                if end + 1 == length:
                    self._skip_lf = True  # it may be the first half of a CRLF
                    following = end + 1
                else:
                    following = end + 2 if buffer[end + 1] == _LF else end + 1
            else:
                following = end + 1
            event = self._line(bytes(buffer[start:end]))
            start = scan = following
            if event is not None:
                events.append(event)
        del buffer[:start]
        self._scanned = scan - start
        if len(buffer) > self._max_event_bytes:
            raise MalformedMessageError(f"an SSE line is over the limit of {self._max_event_bytes} bytes")
        return events

    def _line(self, line: bytes) -> bytes | None:
        if not line:
            # The SSE spec sets the last event id at every dispatch, also of an event with no data
            # (a "priming" event: an id and an empty data line, sent only to be resumed from).
            if self._id_buffer is not None:
                self.last_event_id = self._id_buffer
            if not self._data:
                return None
            data = b"\n".join(self._data)
            self._data = []
            self._data_size = 0
            return data
        if line.startswith(b":"):
            return None
        name, _, value = line.partition(b":")
        if name == b"data":
            if value.startswith(b" "):
                value = value[1:]
            # With the newline that joins it to the line before: endless empty data lines grow the
            # event too, and must hit the limit.
            self._data_size += len(value) + (1 if self._data else 0)
            self._data.append(value)
            if self._data_size > self._max_event_bytes:
                raise MalformedMessageError(
                    f"an SSE event is over the limit of {self._max_event_bytes} bytes"
                )
        elif name == b"id":
            value = value[1:] if value.startswith(b" ") else value
            if b"\0" not in value:  # the spec ignores an id holding NUL
                self._id_buffer = value.decode("utf-8", "replace")[:_MAX_ID_CHARS]
        elif name == b"retry":
            value = value[1:] if value.startswith(b" ") else value
            if value.isdigit() and len(value) <= 9:  # ASCII digits only; at most 11.5 days
                self.retry_ms = int(value)
        return None


_BOM = b"\xef\xbb\xbf"
_MAX_ID_CHARS = 1024  # an event id is sent back in a header: a server cannot make it huge
_CR = 0x0D
_LF = 0x0A
# Either line end, found in one pass: two find() calls would rescan the rest of the buffer for
# an LF at every CR of a stream that ends its lines with CR alone.
_EOL = re.compile(rb"[\r\n]")


def _line_end(buffer: bytearray, start: int) -> int:
    found = _EOL.search(buffer, start)
    return -1 if found is None else found.start()
