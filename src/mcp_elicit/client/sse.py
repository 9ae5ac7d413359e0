"""A Server-Sent Events decoder, sans I/O: feed bytes, get the ``data`` of each event.

Only what MCP uses: ``data:`` lines (joined with newlines), events ended by a blank line, any
of CRLF / LF / CR as line ends, comments (``:``, keep-alives) ignored. ``event``, ``id`` and
``retry`` are read and dropped: 2026-07-28 has no resumability.
"""

from __future__ import annotations

from mcp_elicit.client.errors import MalformedMessageError


class SseDecoder:
    __slots__ = ("_buffer", "_data", "_data_size", "_max_event_bytes")

    def __init__(self, max_event_bytes: int) -> None:
        self._buffer = b""
        self._data: list[bytes] = []
        self._data_size = 0
        self._max_event_bytes = max_event_bytes

    def feed(self, chunk: bytes) -> list[bytes]:
        """The data of every event completed by ``chunk``."""
        buffer = self._buffer + chunk
        events: list[bytes] = []
        start = 0
        length = len(buffer)
        while start < length:
            end = _line_end(buffer, start)
            if end < 0:
                break
            line = buffer[start:end]
            # A CR at the very end may be the first half of a CRLF: wait for the next chunk.
            if buffer[end : end + 1] == b"\r":
                if end + 1 == length:
                    break
                start = end + 2 if buffer[end + 1 : end + 2] == b"\n" else end + 1
            else:
                start = end + 1
            event = self._line(line)
            if event is not None:
                events.append(event)
        self._buffer = buffer[start:]
        if len(self._buffer) > self._max_event_bytes:
            raise MalformedMessageError(f"an SSE line is over the limit of {self._max_event_bytes} bytes")
        return events

    def _line(self, line: bytes) -> bytes | None:
        if not line:
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
            self._data.append(value)
            self._data_size += len(value)
            if self._data_size > self._max_event_bytes:
                raise MalformedMessageError(
                    f"an SSE event is over the limit of {self._max_event_bytes} bytes"
                )
        return None


def _line_end(buffer: bytes, start: int) -> int:
    lf = buffer.find(b"\n", start)
    cr = buffer.find(b"\r", start, lf if lf >= 0 else len(buffer))
    return cr if cr >= 0 else lf
