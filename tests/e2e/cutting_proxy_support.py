"""A TCP proxy on 127.0.0.1 that breaks connections on schedule, for
``test_client_through_cutting_proxy.py``.

The client connects to the proxy, the proxy to the server. Connections are numbered in the order
the proxy accepts them (0, 1, ... since the last :meth:`CuttingProxy.plan`); what the schedule
says about connection ``n`` happens to it, in either direction (``upstream``: client to server):

* :class:`Cut`: after ``offset`` bytes of that direction went through, both sockets are closed
  (a FIN each way, or a RST with ``reset``): a network, a load balancer or a proxy that drops a
  connection at any byte, the half-written request or event included;
* :class:`Slow`: that direction is written ``piece`` bytes at a time, ``delay`` seconds apart
  (``delay`` 0 still writes each piece alone, with TCP_NODELAY): a reader must not depend on
  how the bytes are split;
* :class:`Stall`: that direction stops for ``seconds`` once ``offset`` bytes went through, then
  goes on (a network that hangs for a while and recovers).

Each connection's bytes are kept (:class:`Conn`), so that a test can tell what a cut interrupted
(:meth:`Conn.interrupted`): which request, and how far its reply had come.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

MAX_SLOW_SECONDS = 1.0  # what splitting may add to one direction of a connection, at most
MAX_KEPT = 1 << 20  # bytes of each direction kept for the test to read


@dataclass(frozen=True)
class Cut:
    """Connection ``conn`` breaks once ``offset`` bytes of one direction went through."""

    conn: int
    upstream: bool
    offset: int
    reset: bool = False


@dataclass(frozen=True)
class Slow:
    """One direction of connection ``conn`` written ``piece`` bytes at a time."""

    conn: int
    upstream: bool
    piece: int
    delay: float = 0.0


@dataclass(frozen=True)
class Stall:
    """One direction of connection ``conn`` stops for ``seconds`` after ``offset`` bytes."""

    conn: int
    upstream: bool
    offset: int
    seconds: float


Fault = Cut | Slow | Stall

_REQUEST_LINE = re.compile(rb"(GET|POST|DELETE) (\S+) HTTP/1\.1\r\n")
_STATUS_LINE = re.compile(rb"HTTP/1\.1 (\d{3})[^\r\n]*\r\n")
# A complete SSE event with an id (the client can resume after it).
_EVENT_WITH_ID = re.compile(rb"(?:^|\n)id: [^\n]+\n(?:[^\n]+\n)*\n")


@dataclass(frozen=True)
class Interrupted:
    """What a cut broke: the last request sent on the connection (``method``, whether it named a
    ``Last-Event-ID``, its JSON-RPC ``rpc`` method if a POST), and how far its reply had come."""

    method: str
    resuming: bool
    rpc: str | None
    reply_started: bool
    reply_head_done: bool
    event_with_id: bool  # a complete event with an id in the reply


@dataclass
class Conn:
    """One connection through the proxy: its bytes in each direction, and its cut."""

    number: int
    up: bytearray = field(default_factory=bytearray)  # sent by the client (cut or not)
    down: bytearray = field(default_factory=bytearray)  # received by the client
    cut: Cut | None = None  # the cut that broke it, once it did

    def interrupted(self) -> Interrupted | None:
        """What the cut broke; None when it was not cut or nothing was sent on it."""
        if self.cut is None:
            return None
        requests = list(_REQUEST_LINE.finditer(self.up))
        if not requests:
            return None
        last = requests[-1]
        request = bytes(self.up[last.start() :])
        head, _, body = request.partition(b"\r\n\r\n")
        rpc = re.search(rb'"method":\s*"([^"]+)"', body)
        replies = [m for m in _STATUS_LINE.finditer(self.down) if not m.group(1).startswith(b"1")]
        started = len(replies) >= len(requests)
        reply = bytes(self.down[replies[-1].start() :]) if started else b""
        _, done, reply_body = reply.partition(b"\r\n\r\n")
        return Interrupted(
            method=last.group(1).decode(),
            resuming=b"\r\nlast-event-id:" in head.lower(),
            rpc=rpc.group(1).decode() if rpc else None,
            reply_started=started,
            reply_head_done=bool(done),
            event_with_id=bool(_EVENT_WITH_ID.search(reply_body)),
        )


@dataclass
class _Direction:
    cut: Cut | None = None
    slow: Slow | None = None
    stall: Stall | None = None
    passed: int = 0  # bytes forwarded so far


@dataclass
class CuttingProxy:
    """The proxy (see the module docstring): ``async with CuttingProxy(server_port) as proxy``."""

    target_port: int
    port: int = 0
    log: list[str] = field(default_factory=list)
    conns: list[Conn] = field(default_factory=list)
    _faults: tuple[Fault, ...] = ()
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def __aenter__(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.drop_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def plan(self, faults: Sequence[Fault]) -> None:
        """The faults of the next connections, numbered from 0 again."""
        self._faults = tuple(faults)
        self.conns = []
        self.log = []

    @property
    def cuts(self) -> list[Conn]:
        """The connections cut so far (since :meth:`plan`)."""
        return [conn for conn in self.conns if conn.cut is not None]

    async def drop_all(self) -> None:
        """Close every connection still open (between examples) and wait for their pumps."""
        for writer in list(self._writers):
            _abort(writer)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        # The connection runs in a task of its own: asyncio logs an error for a connection
        # callback that ends cancelled, and :meth:`drop_all` cancels connections.
        task = asyncio.ensure_future(self._connection(client_reader, client_writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _connection(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        conn = Conn(len(self.conns))
        self.conns.append(conn)
        _no_delay(client_writer)
        self._writers.add(client_writer)
        server_writer: asyncio.StreamWriter | None = None
        try:
            try:
                server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
            except OSError:
                return
            _no_delay(server_writer)
            self._writers.add(server_writer)
            up, down = _Direction(), _Direction()
            for fault in self._faults:
                if fault.conn != conn.number:
                    continue
                side = up if fault.upstream else down
                if isinstance(fault, Cut) and side.cut is None:
                    side.cut = fault
                elif isinstance(fault, Slow) and side.slow is None:
                    side.slow = fault
                elif isinstance(fault, Stall) and side.stall is None:
                    side.stall = fault
            ends = (client_writer, server_writer)
            pumps = [
                asyncio.ensure_future(self._pump(conn, conn.up, client_reader, server_writer, up, ends)),
                asyncio.ensure_future(self._pump(conn, conn.down, server_reader, client_writer, down, ends)),
            ]
            try:
                # Either side ending ends the connection (HTTP/1.1 clients never half-close).
                await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
            self.log.append(f"conn {conn.number}: {up.passed} bytes up, {down.passed} down")
        finally:
            for writer in (client_writer, server_writer):
                if writer is not None:
                    writer.close()
                    self._writers.discard(writer)
                    # Its closing future holds the reset, if any: asyncio logs one never awaited.
                    with contextlib.suppress(Exception):
                        await writer.wait_closed()

    async def _pump(
        self,
        conn: Conn,
        kept: bytearray,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        plan: _Direction,
        ends: tuple[asyncio.StreamWriter, asyncio.StreamWriter],
    ) -> None:
        name = "up" if kept is conn.up else "down"
        slowed = 0.0

        # Upstream: what the client sent, even the bytes a cut kept from the server (which
        # request it was); downstream: what the client received.
        sent = kept is conn.up

        async def write(data: bytes) -> None:
            if data:
                if not sent and len(kept) < MAX_KEPT:
                    kept.extend(data)
                writer.write(data)
                await writer.drain()

        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                if sent and len(kept) < MAX_KEPT:
                    kept.extend(data)
                cut = plan.cut
                if cut is not None and plan.passed + len(data) >= cut.offset:
                    data = data[: cut.offset - plan.passed]
                stall = plan.stall
                if stall is not None and plan.passed <= stall.offset < plan.passed + len(data):
                    head = stall.offset - plan.passed
                    await write(data[:head])
                    plan.passed += head
                    data = data[head:]
                    self.log.append(
                        f"conn {conn.number} {name}: stalled {stall.seconds} s at byte {stall.offset}"
                    )
                    await asyncio.sleep(stall.seconds)
                slow = plan.slow
                if slow is not None and slowed < MAX_SLOW_SECONDS:
                    for start in range(0, len(data), slow.piece):
                        await write(data[start : start + slow.piece])
                        await asyncio.sleep(slow.delay)
                        slowed += slow.delay
                else:
                    await write(data)
                plan.passed += len(data)
                if cut is not None and plan.passed >= cut.offset:
                    conn.cut = cut
                    how = "reset" if cut.reset else "closed"
                    self.log.append(f"conn {conn.number} {name}: {how} at byte {cut.offset}")
                    for end in ends:
                        if cut.reset:
                            _abort(end)
                        else:
                            end.close()
                    return
        except (ConnectionError, OSError):
            return


def _no_delay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close with a RST (SO_LINGER 0), not a FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(Exception):
        writer.transport.abort()
