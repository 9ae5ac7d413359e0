"""stdio faults, driven by a small raw asyncio client.

* The client closes stdin while a request runs: the server must finish (a short request still
  answers within the EOF grace period, a long one is cancelled) and exit 0, quickly, without a
  traceback.
* The server dies (SIGKILL) while a request runs: the client must get a clear error at once (its
  read ends with EOF and the exit status is known), not wait forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from httpclient import META
from procs import SERVER


class ServerGone(Exception):
    """The stdio server ended while a request was waiting for its answer."""


@dataclass
class StdioCheck:
    name: str
    ok: bool
    seconds: float
    detail: str


@dataclass
class StdioReport:
    checks: list[StdioCheck] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.checks if not c.ok)


class StdioClient:
    """A raw asyncio client: JSON lines out, JSON lines in, and a clear error when the server
    goes away."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, keys_file: Path, log: Path) -> StdioClient:
        with log.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(SERVER),
                "stdio",
                "--keys-file",
                str(keys_file),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        return cls(proc)

    async def send(self, rid: str, method: str, params: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        line = orjson.dumps(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"_meta": META, **params}}
        )
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def answer(self, rid: str, within: float) -> dict[str, object]:
        """The answer to ``rid``; :class:`ServerGone` when stdout ends first."""
        assert self.proc.stdout is not None
        async with asyncio.timeout(within):
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    code = await self.proc.wait()
                    raise ServerGone(f"the server exited (status {code}) while request {rid!r} was waiting")
                message = orjson.loads(line)
                if isinstance(message, dict) and message.get("id") == rid:
                    return message

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def stop(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()


async def run(work: Path) -> StdioReport:
    report = StdioReport()
    keys = work / "keys"

    async def started(tag: str) -> StdioClient:
        client = await StdioClient.start(keys, work / f"stdio-{tag}.log")
        await client.send("hello", "server/discover", {})
        await client.answer("hello", 20)  # it is up and serving
        return client

    def traceback_in(tag: str) -> bool:
        return b"Traceback" in (work / f"stdio-{tag}.log").read_bytes()

    # 1. stdin closed while a short request runs: it still answers, then the server exits 0.
    client = await started("eof-short")
    try:
        await client.send("s", "tools/call", {"name": "slow", "arguments": {"seconds": 0.5}})
        t0 = time.perf_counter()
        client.close_stdin()
        message = await client.answer("s", 10)
        code = await asyncio.wait_for(client.proc.wait(), 10)
        took = time.perf_counter() - t0
        ok = code == 0 and "result" in message and not traceback_in("eof-short")
        report.checks.append(
            StdioCheck("stdin closed during a 0.5 s request", ok, took, f"answered, exit {code}")
        )
    except (TimeoutError, ServerGone) as exc:
        report.checks.append(StdioCheck("stdin closed during a 0.5 s request", False, 0.0, str(exc)))
    finally:
        await client.stop()

    # 2. stdin closed while a long request runs: cancelled after the grace period, exit 0.
    client = await started("eof-long")
    try:
        await client.send("l", "tools/call", {"name": "slow", "arguments": {"seconds": 20}})
        await asyncio.sleep(0.2)
        t0 = time.perf_counter()
        client.close_stdin()
        code = await asyncio.wait_for(client.proc.wait(), 10)
        took = time.perf_counter() - t0
        ok = code == 0 and took < 4.0 and not traceback_in("eof-long")
        report.checks.append(
            StdioCheck("stdin closed during a 20 s request", ok, took, f"exit {code} after {took:.2f} s")
        )
    except TimeoutError:
        report.checks.append(StdioCheck("stdin closed during a 20 s request", False, 10.0, "did not exit"))
    finally:
        await client.stop()

    # 3. The server is killed while a request waits: the client gets a clear error at once.
    client = await started("killed")
    try:
        await client.send("k", "tools/call", {"name": "slow", "arguments": {"seconds": 20}})
        await asyncio.sleep(0.2)
        t0 = time.perf_counter()
        os.kill(client.proc.pid, signal.SIGKILL)
        try:
            await client.answer("k", 10)
            report.checks.append(StdioCheck("server killed mid-request", False, 0.0, "got an answer?"))
        except ServerGone as exc:
            took = time.perf_counter() - t0
            report.checks.append(StdioCheck("server killed mid-request", took < 2.0, took, str(exc)))
        except TimeoutError:
            report.checks.append(StdioCheck("server killed mid-request", False, 10.0, "the client hung"))
    finally:
        await client.stop()
    return report
