"""Start the demo site (``python -m mcp_elicit.demo``) as a child process and stop it again.

The child serves on 127.0.0.1 only and prints one JSON line when it is ready (its addresses, the
run's bearer token, the DEMO ONLY principal). Its stdin stays an open pipe: closing it is how it
is told to stop (and what happens if this process dies). Its stderr is kept (the last lines) to
explain a failure.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

__all__ = ["DemoSiteError", "DemoSiteInfo", "demo_site"]

_READY_TIMEOUT: Final = 30.0
_STOP_TIMEOUT: Final = 5.0
_STDERR_LINES: Final = 20


class DemoSiteError(Exception):
    """The demo site did not start (the message includes the end of its stderr)."""


@dataclass(frozen=True, slots=True)
class DemoSiteInfo:
    mcp: str
    pages: str
    ci: str
    bearer: str
    principal: str


def _info(line: bytes) -> DemoSiteInfo:
    try:
        data = json.loads(line)
        info = DemoSiteInfo(
            str(data["mcp"]), str(data["pages"]), str(data["ci"]), str(data["bearer"]), str(data["principal"])
        )
    except (ValueError, KeyError, TypeError):
        raise DemoSiteError("the demo site printed something other than its ready line") from None
    for url in (info.mcp, info.pages, info.ci):
        if urlsplit(url).hostname != "127.0.0.1":
            raise DemoSiteError("the demo site must serve on 127.0.0.1 only")
    return info


@contextlib.asynccontextmanager
async def demo_site() -> AsyncIterator[DemoSiteInfo]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_elicit.demo",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
    reading = asyncio.create_task(_keep(process.stderr, stderr))
    try:
        try:
            line = await asyncio.wait_for(process.stdout.readline(), _READY_TIMEOUT)
        except TimeoutError:
            line = b""
        if not line:
            await _stop(process)
            await reading
            tail = "\n".join(stderr)
            raise DemoSiteError(f"the demo site did not start{':' if tail else ''}\n{tail}".rstrip())
        yield _info(line)
    finally:
        await _stop(process)
        reading.cancel()


async def _keep(stream: asyncio.StreamReader, lines: collections.deque[str]) -> None:
    while line := await stream.readline():  # also keeps the pipe from filling up
        lines.append(line.decode("utf-8", "replace").rstrip())


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    if process.stdin is not None:
        process.stdin.close()  # the site stops when its stdin closes
    try:
        await asyncio.wait_for(process.wait(), _STOP_TIMEOUT)
        return
    except TimeoutError:
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), _STOP_TIMEOUT)
    except TimeoutError:
        process.kill()
        await process.wait()
