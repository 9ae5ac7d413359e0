"""The SSE decoder: the same events however the stream is cut, in time linear in its size."""

from __future__ import annotations

import itertools
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_elicit.client.errors import MalformedMessageError
from mcp_elicit.client.sse import SseDecoder

LIMIT = 1 << 20


def decode(stream: bytes, cuts: list[int], limit: int = LIMIT) -> list[bytes]:
    decoder = SseDecoder(limit)
    events: list[bytes] = []
    edges = [0, *sorted(c for c in cuts if 0 < c < len(stream)), len(stream)]
    for start, end in itertools.pairwise(edges):
        events.extend(decoder.feed(stream[start:end]))
    return events


def reference(stream: bytes) -> list[bytes]:
    """The events by the letter of the SSE spec (a CR ends its line, even as the last byte)."""
    body = stream.removeprefix(b"\xef\xbb\xbf")  # one byte order mark at the start is skipped
    events: list[bytes] = []
    data: list[bytes] = []
    for line in re.split(rb"\r\n|\r|\n", body)[:-1]:
        if not line:
            if data:
                events.append(b"\n".join(data))
            data = []
        else:
            name, _, value = line.partition(b":")  # "data" alone is the field with ""
            if name == b"data":
                data.append(value[1:] if value.startswith(b" ") else value)
    return events


EOL = st.sampled_from([b"\n", b"\r", b"\r\n"])
VALUE = st.binary(max_size=12).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
LINE = st.one_of(
    st.tuples(st.sampled_from([b"data:", b"data: ", b": ", b"event: ", b"id: ", b"retry: "]), VALUE).map(
        b"".join
    ),
    st.just(b""),  # a blank line ends an event
    VALUE,
)
STREAM = st.lists(st.tuples(LINE, EOL), max_size=30).map(lambda lines: b"".join(a + b for a, b in lines))


@settings(max_examples=300, deadline=None)
@given(STREAM, st.lists(st.integers(0, 400), max_size=40))
def test_any_chunking_gives_the_events_of_the_whole_stream(stream: bytes, cuts: list[int]) -> None:
    whole = decode(stream, [])
    assert decode(stream, cuts) == whole
    assert decode(stream, list(range(len(stream)))) == whole  # one byte at a time
    assert whole == reference(stream)


def test_a_long_line_in_small_chunks_takes_linear_time() -> None:
    # 16 MiB in 1 KiB chunks: rescanning the buffer per chunk (the old decoder) does ~128 GiB of
    # copying and scanning, tens of seconds; one pass takes milliseconds. The bound leaves
    # room for a slow, busy machine.
    payload = b"a" * (16 << 20)
    stream = b"data: " + payload + b"\r\n\r\n"
    decoder = SseDecoder(len(payload) + 16)
    events: list[bytes] = []
    started = time.process_time()
    for i in range(0, len(stream), 1024):
        events.extend(decoder.feed(stream[i : i + 1024]))
    assert time.process_time() - started < 2.0
    assert events == [payload]


def test_many_short_cr_lines_in_one_chunk_take_linear_time() -> None:
    # Lines ended by CR alone: looking for an LF past each of them would rescan the chunk.
    stream = b"data: x\r" * 400_000 + b"\r\n"
    started = time.process_time()
    [event] = SseDecoder(LIMIT).feed(stream)
    assert time.process_time() - started < 3.0
    assert event == b"\n".join([b"x"] * 400_000)


@pytest.mark.parametrize("chunk", [1, 7, 1024])
def test_the_line_limit_holds_however_the_line_arrives(chunk: int) -> None:
    decoder = SseDecoder(4096)
    stream = b"data: " + b"a" * 4090  # 4096 bytes of one unfinished line: at the limit
    for i in range(0, len(stream), chunk):
        assert decoder.feed(stream[i : i + chunk]) == []
    with pytest.raises(MalformedMessageError, match="an SSE line is over the limit of 4096 bytes"):
        decoder.feed(b"a")


def test_the_event_limit_holds_across_lines() -> None:
    decoder = SseDecoder(100)
    for _ in range(10):  # 90 bytes of data and the 9 newlines that join them
        assert decoder.feed(b"data: " + b"a" * 9 + b"\n") == []
    assert decoder.feed(b"data:\n") == []  # one more newline: 100 bytes, at the limit
    with pytest.raises(MalformedMessageError, match="an SSE event is over the limit of 100 bytes"):
        decoder.feed(b"data: a\n")


def test_endless_empty_data_lines_hit_the_event_limit() -> None:
    """Each empty data line adds a newline to the event: a server streaming "data:" forever
    must be stopped at the limit, not fill memory."""
    decoder = SseDecoder(1000)
    for _ in range(1001):  # 1000 newlines join 1001 empty lines: at the limit
        assert decoder.feed(b"data:\n") == []
    with pytest.raises(MalformedMessageError, match="an SSE event is over the limit of 1000 bytes"):
        decoder.feed(b"data:\n")


@pytest.mark.parametrize("cut", [0, 1, 2, 3, 4])
def test_a_byte_order_mark_at_the_start_is_skipped_however_it_arrives(cut: int) -> None:
    stream = b"\xef\xbb\xbfdata: first\n\ndata: \xef\xbb\xbfsecond\n\n"
    decoder = SseDecoder(LIMIT)
    events = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
    assert events == [b"first", b"\xef\xbb\xbfsecond"]  # only the stream's first BOM goes


def test_a_cr_that_ends_the_data_received_ends_its_line_at_once() -> None:
    """A server ending its lines with CR alone may then wait (for the answer to the request it
    just sent): the event is read without waiting for another byte."""
    decoder = SseDecoder(LIMIT)
    assert decoder.feed(b": ping\rdata: x\r\r") == [b"x"]


def test_a_lf_after_a_cr_that_ended_a_chunk_is_the_rest_of_that_line_end() -> None:
    decoder = SseDecoder(LIMIT)
    assert decoder.feed(b"data: x\r") == []
    assert decoder.feed(b"\n\r") == [b"x"]  # CRLF, then CR: the blank line
    assert decoder.feed(b"\n") == []  # the rest of that CRLF, not another blank line
    assert decoder.feed(b"data: y\n\n") == [b"y"]
    assert decoder.feed(b"") == []
    assert decoder.feed(b"data: z\r") == []
    assert decoder.feed(b"") == []  # an empty chunk keeps the doubt about the LF
    assert decoder.feed(b"\n\n") == [b"z"]
