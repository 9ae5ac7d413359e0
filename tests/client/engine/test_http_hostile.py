"""The built-in HTTP/1.1 client against a server that writes exactly the bytes a test gives it:
framing that lies, responses without a body, interim responses, compression nobody asked for,
and SSE streams a strict reading would lose. Everything listens on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
from typing import Any

import pytest

from mcp_elicit.client import Client, HttpStatusError, MalformedMessageError

from .test_http_transport import DISCOVER, chunked, ok, raw_server, tool_text, with_length

__all__ = ["raw_server"]  # the fixture, used by name

FAST = 5.0  # every case here answers at once; waiting longer means the client is stuck


def handler(reply: Any) -> Any:
    """Discover answered normally; every tools/call gets ``reply(message)``."""

    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        if message["method"] == "server/discover":
            return with_length(ok(message, DISCOVER)), False
        return reply(message), False

    return handle


def named(message: dict[str, Any]) -> bytes:
    return ok(message, tool_text(message["params"]["name"]))


async def test_bytes_past_the_content_length_are_never_read_as_the_next_reply(raw_server: Any) -> None:
    """A body longer than its Content-Length, arriving with it: the surplus (here a whole reply
    for the next request id) must not answer the next request on that connection."""

    def reply(message: dict[str, Any]) -> bytes:
        forged = ok({"id": message["id"] + 1}, tool_text("FORGED"))
        return with_length(named(message)) + with_length(forged)

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("a")).text == "a"
        assert (await client.call_tool("b")).text == "b"
    assert server.connections == 2  # the connection that carried the surplus was dropped


@pytest.mark.parametrize("status", ["204 No Content", "304 Not Modified"])
async def test_a_reply_that_has_no_body_by_definition_is_not_read_to_the_close(
    raw_server: Any, status: str
) -> None:
    """204 and 304 end at their head (RFC 9112 section 6.3): reading a body until the server
    closes would wait for as long as it keeps the connection open."""

    def reply(message: dict[str, Any]) -> bytes:
        if message["params"]["name"] == "empty":
            return f"HTTP/1.1 {status}\r\n\r\n".encode()
        return with_length(named(message))

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        with pytest.raises((MalformedMessageError, HttpStatusError), match=status[:3]):
            await client.call_tool("empty")
        assert (await client.call_tool("after")).text == "after"


async def test_a_reply_with_both_content_length_and_chunked_is_read_chunked_on_a_dropped_connection(
    raw_server: Any,
) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        body = named(message)
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("a")).text == "a"
        assert (await client.call_tool("b")).text == "b"
    # Discover and "a" share the first connection; after a's ambiguous reply it is dropped
    # (RFC 9112 section 6.1), so "b" goes out on a second one.
    assert server.connections == 2


@pytest.mark.parametrize(
    ("interim", "error"),
    [
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "switched protocols"),
        (b"HTTP/1.1 100 Continue\r\n\r\n" * 40, "more than 32 interim"),
    ],
    ids=["101-unasked", "endless-100"],
)
async def test_interim_responses_are_bounded_and_a_protocol_switch_is_refused(
    raw_server: Any, interim: bytes, error: str
) -> None:
    server = await raw_server(handler(lambda message: interim))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError, match=error):
            await client.call_tool("x")


async def test_100_and_103_before_the_reply_are_skipped(raw_server: Any) -> None:
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"
    server = await raw_server(handler(lambda message: early + with_length(named(message))))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("hinted")).text == "hinted"


@pytest.mark.parametrize("line", [b"HTTP/1.1 2000 OK", b"HTTP/1.1 099 Odd", b"HTTP/1.1 200OK"])
async def test_a_status_code_is_exactly_three_digits(raw_server: Any, line: bytes) -> None:
    server = await raw_server(handler(lambda m: line + b"\r\nContent-Length: 2\r\n\r\n{}"))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError, match=r"not an HTTP/1\.x response"):
            await client.call_tool("x")


async def test_a_status_line_without_a_reason_is_fine(raw_server: Any) -> None:
    server = await raw_server(
        handler(lambda m: (lambda b: b"HTTP/1.1 200\r\nContent-Length: %d\r\n\r\n" % len(b) + b)(named(m)))
    )
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("terse")).text == "terse"


@pytest.mark.parametrize("header", ["Content-Encoding", "Transfer-Encoding"])
async def test_a_compressed_reply_the_request_did_not_accept_says_so(raw_server: Any, header: str) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        body = gzip.compress(named(message))
        if header == "Content-Encoding":
            return with_length(body, extra="Content-Encoding: gzip\r\n")
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
        )
        return head + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError, match=rf"compressed \({header}: gzip\), which the request"):
            await client.call_tool("x")
    assert all(headers["accept-encoding"] == "identity" for _, headers in server.requests)


@pytest.mark.parametrize(
    "events",
    [
        [b"\xef\xbb\xbf", b"data: %s\n\n"],  # a byte order mark first, in a chunk of its own
        [b": hi\rdata: %s\r\r"],  # CR line ends, the last CR the last byte of the stream
    ],
    ids=["bom", "cr-at-the-end"],
)
async def test_sse_streams_the_spec_allows_deliver_their_response(
    raw_server: Any, events: list[bytes]
) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        return chunked([event.replace(b"%s", named(message)) for event in events], "text/event-stream")

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("streamed")).text == "streamed"


async def test_a_server_request_on_the_stream_is_logged_and_never_answered(
    raw_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """An elicitation/create *request* (the 2025-11-25 way) on a 2026-07-28 stream: no answer
    goes out for it, no answerer is asked, and the log says so (as on stdio)."""
    legacy = {
        "jsonrpc": "2.0",
        "id": "srv-1",
        "method": "elicitation/create",
        "params": {"message": "Password?", "requestedSchema": {"type": "object", "properties": {}}},
    }

    def reply(message: dict[str, Any]) -> bytes:
        events = [b"data: " + json.dumps(legacy).encode() + b"\n\n", b"data: " + named(message) + b"\n\n"]
        return chunked(events, "text/event-stream")

    server = await raw_server(handler(reply))
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.client.http"):
        async with asyncio.timeout(FAST), Client.connect(server.url) as client:
            assert (await client.call_tool("legacy")).text == "legacy"
    assert [m["method"] for m, _ in server.requests] == ["server/discover", "tools/call"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.client.http"]
    assert any("sent a elicitation/create request in the reply to tools/call" in w for w in warnings), (
        warnings
    )


@pytest.mark.parametrize("where", ["discover", "call"])
async def test_a_redirect_is_named_with_its_target_and_never_followed(raw_server: Any, where: str) -> None:
    """A POST sent again elsewhere could run a tool at a host nobody chose; and a redirect on
    server/discover says where the server is, not that it speaks an older MCP."""
    redirect = b"HTTP/1.1 302 Found\r\nLocation: https://elsewhere.example/mcp\r\nContent-Length: 0\r\n\r\n"

    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        if message["method"] == "server/discover" and where == "call":
            return with_length(ok(message, DISCOVER)), False
        return redirect, False

    server = await raw_server(handle)
    with pytest.raises(
        HttpStatusError, match=r"redirects to https://elsewhere\.example/mcp; redirects are not"
    ):
        async with asyncio.timeout(FAST), Client.connect(server.url) as client:
            await client.call_tool("x")
    assert len(server.requests) == (1 if where == "discover" else 2)  # nothing sent to the new place


async def test_a_head_whose_lines_end_in_a_bare_lf_is_read(raw_server: Any) -> None:
    """RFC 9112 section 2.2 lets a recipient take a bare LF for a line's end; waiting for a CRLF
    that never comes would last until the timeout."""

    def reply(message: dict[str, Any]) -> bytes:
        body = named(message)
        return b"HTTP/1.1 200 OK\nContent-Type: application/json\r\nContent-Length: %d\n\n" % len(body) + body

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("lf")).text == "lf"
        assert (await client.call_tool("again")).text == "again"  # the connection stays in step


@pytest.mark.parametrize(
    ("trailers", "what"),
    [
        (b"X-Trailer: t\r\n" * 5000, "trailer fields"),  # no blank line after them, the connection open
        (b"X-Trailer: " + b"t" * 70_000 + b"\r\n\r\n", "trailer fields"),  # one line past the limit
        (None, "response head"),
    ],
)
async def test_trailers_and_heads_are_bounded(raw_server: Any, trailers: bytes | None, what: str) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        if trailers is None:
            return b"HTTP/1.1 200 OK\r\n" + b"X-Header: h\r\n" * 6000
        body = named(message)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + b"%x\r\n" % len(body) + body + b"\r\n0\r\n" + trailers

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError, match=f"the server's {what} is over the limit"):
            await client.call_tool("x")


async def test_trailers_after_the_last_chunk_are_read_past(raw_server: Any) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        body = named(message)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + b"%x\r\n" % len(body) + body + b"\r\n0\r\nX-One: 1\r\nX-Two: 2\n\r\n"

    server = await raw_server(handler(reply))
    async with asyncio.timeout(FAST), Client.connect(server.url) as client:
        assert (await client.call_tool("a")).text == "a"
        assert (await client.call_tool("b")).text == "b"
