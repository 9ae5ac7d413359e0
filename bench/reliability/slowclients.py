"""Slow and idle clients: do hundreds of them stop the server from answering everyone else?

Kinds of connection opened against one instance, all at once:

* idle: connects and never sends a byte;
* used, then idle: one request, then silence (uvicorn's ``timeout_keep_alive`` should close it);
* slow headers: sends a request head one header line per second, never finishing it;
* slow body: a complete head announcing 1000 bytes, 10 bytes of body, then silence (the body
  timeout, when configured, should answer 408 and close).

Meanwhile canary flows run against the same instance; their latency before and during is
compared. Nothing here waits without a bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field

from httpclient import META, PROTOCOL_VERSION
from load import Driver, percentile


@dataclass
class SlowReport:
    idle: int = 0
    idle_closed: int = 0
    used: int = 0
    used_closed: int = 0
    slow_headers: int = 0
    slow_headers_closed: int = 0
    slow_body: int = 0
    slow_body_408: int = 0
    slow_body_closed: int = 0
    canary_before: list[float] = field(default_factory=list)
    canary_during: list[float] = field(default_factory=list)
    canary_lost: int = 0
    server_fds_peak: int = 0
    seconds: float = 0.0

    def p99(self, values: list[float]) -> float:
        return percentile(values, 99)


def _fd_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed the connection within ``seconds``, and what it sent."""
    data = b""
    try:
        async with asyncio.timeout(seconds):
            while True:
                chunk = await reader.read(4096)
                if not chunk:
                    return True, data
                data += chunk
    except TimeoutError:
        return False, data
    except (ConnectionResetError, OSError):
        return True, data


async def run(
    port: int,
    pid: int,
    canary: Driver,
    *,
    idle: int,
    used: int,
    slow_headers: int,
    slow_body: int,
    hold: float,
    canary_users: int = 10,
) -> SlowReport:
    report = SlowReport(idle=idle, used=used, slow_headers=slow_headers, slow_body=slow_body)
    t0 = time.perf_counter()
    writers: list[asyncio.StreamWriter] = []

    async def canary_for(seconds: float, into: list[float]) -> None:
        stop = time.perf_counter() + seconds
        before_lost = canary.stats.lost + canary.stats.wrong
        mark = len(canary.stats.latencies)
        await canary.run(canary_users, lambda: time.perf_counter() < stop)
        into.extend(canary.stats.latencies[mark:])
        report.canary_lost += canary.stats.lost + canary.stats.wrong - before_lost

    await canary_for(2.0, report.canary_before)

    async def connect() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        writers.append(writer)
        return reader, writer

    discover = (
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":'
        + __import__("orjson").dumps(META)
        + b"}}"
    )
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json\r\nMCP-Protocol-Version: {PROTOCOL_VERSION}\r\n"
        "Mcp-Method: server/discover\r\n"
    ).encode()

    async def idle_one() -> bool:
        reader, _ = await connect()
        closed, _ = await _closed_within(reader, hold)
        return closed

    async def used_one() -> bool:
        reader, writer = await connect()
        writer.write(head + f"Content-Length: {len(discover)}\r\n\r\n".encode() + discover)
        await writer.drain()
        got = b""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(10):
                while b"\r\n\r\n" not in got or not got.rstrip().endswith(b"}"):
                    chunk = await reader.read(65536)
                    if not chunk:
                        break
                    got += chunk
        closed, _ = await _closed_within(reader, hold)
        return closed

    async def slow_headers_one() -> bool:
        reader, writer = await connect()
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        stop = time.perf_counter() + hold
        n = 0
        while time.perf_counter() < stop:
            closed, _ = await _closed_within(reader, 1.0)
            if closed:
                return True
            n += 1
            try:
                writer.write(f"X-Slow-{n}: y\r\n".encode())
                await writer.drain()
            except (ConnectionResetError, BrokenPipeError):
                return True
        return False

    async def slow_body_one() -> tuple[bool, bool]:
        reader, writer = await connect()
        writer.write(head + b"Content-Length: 1000\r\n\r\n" + b'{"jsonrpc"')
        await writer.drain()
        closed, data = await _closed_within(reader, hold)
        return closed, data.startswith(b"HTTP/1.1 408")

    async def watch_fds() -> None:
        stop = time.perf_counter() + hold + 1
        while time.perf_counter() < stop:
            report.server_fds_peak = max(report.server_fds_peak, _fd_count(pid))
            await asyncio.sleep(0.25)

    try:
        tasks = [
            *(asyncio.ensure_future(idle_one()) for _ in range(idle)),
            *(asyncio.ensure_future(used_one()) for _ in range(used)),
            *(asyncio.ensure_future(slow_headers_one()) for _ in range(slow_headers)),
        ]
        body_tasks = [asyncio.ensure_future(slow_body_one()) for _ in range(slow_body)]
        fds = asyncio.ensure_future(watch_fds())
        await asyncio.sleep(0.5)  # let them all connect, then measure the canary
        await canary_for(max(1.0, hold - 2.0), report.canary_during)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        body_results = await asyncio.gather(*body_tasks, return_exceptions=True)
        await fds
        flags = [r is True for r in results]
        report.idle_closed = sum(flags[:idle])
        report.used_closed = sum(flags[idle : idle + used])
        report.slow_headers_closed = sum(flags[idle + used :])
        for r in body_results:
            if isinstance(r, tuple):
                report.slow_body_closed += int(r[0])
                report.slow_body_408 += int(r[1])
    finally:
        for writer in writers:
            writer.close()
    report.seconds = time.perf_counter() - t0
    return report
