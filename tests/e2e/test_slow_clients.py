"""Slow and idle clients against the real server: ``serve(head_timeout=...)`` (1 s here) closes
connections that never finish a request head, and they never stop others from being served."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.conftest import HttpServer
from tests.e2e.test_http import body, headers_for, post
from tests.helpers import wait_for_text


@pytest.fixture(params=["httptools", "h11"])
def server(request: pytest.FixtureRequest) -> HttpServer:
    """Both of uvicorn's HTTP protocols get the head timeout."""
    name = "http_server" if request.param == "httptools" else "h11_server"
    found: HttpServer = request.getfixturevalue(name)
    return found


async def _open(server: HttpServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(server.url)
    assert parts.hostname == "127.0.0.1"
    return await asyncio.open_connection(parts.hostname, parts.port)


async def _closed_after(reader: asyncio.StreamReader, limit: float) -> float:
    """Seconds until the server closes the connection (reads EOF), failing after ``limit``."""
    started = time.monotonic()
    data = await asyncio.wait_for(reader.read(), timeout=limit)
    assert data == b"", data  # closed without an answer: no head, nothing to answer
    return time.monotonic() - started


async def test_a_silent_connection_is_closed(server: HttpServer) -> None:
    reader, writer = await _open(server)
    try:
        assert 0.5 < await _closed_after(reader, 5.0) < 4.0
    finally:
        writer.close()


async def test_a_head_sent_one_byte_at_a_time_is_closed(server: HttpServer) -> None:
    """Every byte would reset uvicorn's own keep-alive timer; the head timer is not reset."""
    reader, writer = await _open(server)
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    started = time.monotonic()
    try:
        for byte in head:
            if writer.is_closing() or reader.at_eof():
                break
            writer.write(bytes([byte]))
            try:
                await writer.drain()
            except ConnectionError:
                break
            await asyncio.sleep(0.05)
            if time.monotonic() - started > 5:
                break
        await asyncio.wait_for(reader.read(), timeout=5.0)
        assert time.monotonic() - started < 4.0
    finally:
        writer.close()


async def test_a_kept_alive_connection_gets_the_same_bound_for_its_next_head(server: HttpServer) -> None:
    reader, writer = await _open(server)
    try:
        writer.write(b"PUT /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), timeout=5.0)
        assert status.startswith(b"HTTP/1.1 405"), status
        writer.write(b"PUT /mcp HTTP/1.1\r\nHo")  # the next head starts, then stalls
        await writer.drain()
        started = time.monotonic()
        await asyncio.wait_for(reader.read(), timeout=5.0)  # rest of the 405, then EOF
        assert time.monotonic() - started < 4.0
    finally:
        writer.close()


async def test_hundreds_of_idle_connections_do_not_stop_others(server: HttpServer) -> None:
    idle = [await _open(server) for _ in range(200)]
    try:
        async with httpx.AsyncClient(timeout=5.0) as client:
            started = time.monotonic()
            response = await post(client, server.url, body("tools/list"))
            assert response.status_code == 200
            assert time.monotonic() - started < 1.0
        # ... and all of them are gone once their head timeout has passed.
        closed = await asyncio.gather(*(asyncio.wait_for(r.read(), 5.0) for r, _ in idle))
        assert closed == [b""] * len(idle)
    finally:
        for _, writer in idle:
            writer.close()


async def test_the_head_timer_stops_once_the_head_is_complete(server: HttpServer) -> None:
    """Connect, wait, send the head, then the body after the head timeout (1 s from connecting)
    has passed: the request is answered, because only the head is bounded by it."""
    message = body("tools/list")
    payload = json.dumps(message).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in headers_for(message).items())
    reader, writer = await _open(server)
    try:
        await asyncio.sleep(0.5)
        writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + head.encode()
            + f"Content-Length: {len(payload)}\r\n\r\n".encode()
        )
        await writer.drain()
        await asyncio.sleep(0.8)  # 1.3 s after connecting; the body timeout (1 s) is not reached
        writer.write(payload)
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), timeout=5.0)
        assert status.startswith(b"HTTP/1.1 200"), status
    finally:
        writer.close()


async def test_a_request_with_another_pipelined_behind_it_is_cancelled_when_the_client_leaves(
    server: HttpServer,
) -> None:
    """uvicorn's httptools protocol tells a lost connection only to the last request parsed: the
    running one, with a request pipelined behind it, must be cancelled all the same."""
    label = f"piped-{server.process.pid}-{time.monotonic_ns()}"
    first = body("tools/call", {"name": "slow", "arguments": {"label": label}})
    second = body("tools/list")

    def raw(message: dict[str, object]) -> bytes:
        data = json.dumps(message).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in headers_for(message).items())
        return (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )

    _reader, writer = await _open(server)
    writer.write(raw(first) + raw(second))
    await writer.drain()
    await asyncio.sleep(0.3)  # the first request's handler is running
    writer.transport.abort()
    assert await wait_for_text(server.markers / f"cancelled-{label}", "cancelled") == "cancelled"
