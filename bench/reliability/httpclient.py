"""A small HTTP/1.1 client for the reliability harness: keep-alive connections, one request at a
time per connection, a pool per server instance, and errors that say what broke.

Adapted from ``bench/loadclient.py`` (its response parser and pre-built request heads), but driven
by futures instead of a callback state machine: the harness needs per-request outcomes (to re-issue
a broken request on the other instance), not peak throughput.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

# The HTTP/1.1 response parser is the benchmark load client's (bench/loadclient.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from loadclient import ProtocolError, _parse_response

PROTOCOL_VERSION = "2026-07-28"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "reliability", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


class ConnectionBroken(Exception):
    """The connection closed (or was reset) before the whole response arrived."""


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    head: bytes  # lower-cased status line and headers
    body: bytes

    def json(self) -> Any:
        return orjson.loads(self.body)

    @property
    def closes(self) -> bool:
        return b"\r\nconnection: close" in self.head


def parse_response(buf: bytearray) -> Response | None:
    """Pop one complete response from ``buf``; ``None`` while it is incomplete (the load
    client's parser: Content-Length, chunked, and body-less statuses)."""
    parsed = _parse_response(buf)
    return None if parsed is None else Response(*parsed)


def post_request(
    port: int,
    body: bytes,
    *,
    method: str,
    name: str | None,
    extra: Sequence[tuple[str, str]] = (),
    path: str = "/mcp",
) -> bytes:
    """A complete POST with the 2026-07-28 headers matching ``method`` and ``name``."""
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {PROTOCOL_VERSION}",
        f"Mcp-Method: {method}",
    ]
    if name is not None:
        lines.append(f"Mcp-Name: {name}")
    lines.extend(f"{k}: {v}" for k, v in extra)
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class HttpConnection(asyncio.Protocol):
    """One keep-alive connection; :meth:`send` waits for the response to one request."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[Response] | None = None
        self.closed = False
        self.last_used = time.monotonic()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's are not asyncio.Transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        try:
            response = parse_response(self.buf)
        except (ProtocolError, ValueError) as exc:
            waiter.set_exception(ProtocolError(str(exc)))
            self.close()
            return
        if response is not None:
            waiter.set_result(response)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            what = "reset" if exc is not None else "closed"
            waiter.set_exception(ConnectionBroken(f"connection {what} before the response"))

    async def send(self, raw: bytes, within: float) -> Response:
        if self.closed or self.transport is None:
            raise ConnectionBroken("connection already closed")
        loop = asyncio.get_running_loop()
        self.waiter = loop.create_future()
        self.transport.write(raw)
        try:
            response = await asyncio.wait_for(self.waiter, within)
        except TimeoutError:
            self.close()
            raise
        finally:
            self.waiter = None
            self.last_used = time.monotonic()
        if response.closes:
            self.close()
        return response

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


class Instance:
    """A server instance (one port) and a pool of keep-alive connections to it.

    A pooled connection idle for longer than ``idle_limit`` (shorter than the server's
    keep-alive timeout) is closed instead of reused, so a request is never sent on a connection
    the server is closing. Any failure of a request is the caller's to handle (re-issue it).
    """

    def __init__(self, name: str, port: int, *, max_idle: int = 400, idle_limit: float = 3.0) -> None:
        self.name = name
        self.port = port
        self.max_idle = max_idle
        self.idle_limit = idle_limit
        self._idle: list[HttpConnection] = []
        self.generation = 0  # bumped on restart: idle connections of a dead process are dropped

    async def _connect(self, within: float) -> HttpConnection:
        loop = asyncio.get_running_loop()
        _, conn = await asyncio.wait_for(
            loop.create_connection(HttpConnection, "127.0.0.1", self.port), within
        )
        sock = conn.transport.get_extra_info("socket") if conn.transport else None
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    async def post(
        self,
        body: bytes,
        *,
        method: str = "tools/call",
        name: str | None = None,
        extra: Sequence[tuple[str, str]] = (),
        timeout: float = 10.0,  # noqa: ASYNC109 - a per-request bound that callers pass through
    ) -> Response:
        """POST on an idle pooled connection, or a new one."""
        raw = post_request(self.port, body, method=method, name=name, extra=extra)
        generation = self.generation
        conn: HttpConnection | None = None
        now = time.monotonic()
        while self._idle:
            candidate = self._idle.pop()
            if candidate.closed or now - candidate.last_used > self.idle_limit:
                candidate.close()
                continue
            conn = candidate
            break
        if conn is None:
            conn = await self._connect(min(timeout, 3.0))
        response = await conn.send(raw, timeout)
        self._release(conn, generation)
        return response

    def _release(self, conn: HttpConnection, generation: int) -> None:
        if conn.closed or generation != self.generation or len(self._idle) >= self.max_idle:
            conn.close()
        else:
            self._idle.append(conn)

    def drop_idle(self) -> None:
        self.generation += 1
        while self._idle:
            self._idle.pop().close()


def monotonic() -> float:
    return time.perf_counter()
