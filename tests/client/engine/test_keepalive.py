"""``Client(ping_interval=...)`` on a 2025-11-25 session: the client pings the server while
connected, and a server that stops answering (frozen with SIGSTOP: its sockets and pipes stay
open, nothing is ever reset) fails the calls still waiting with a TransportError that says so,
instead of leaving them waiting for ever. Our server as a real process, over HTTP and stdio."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcp_elicit.client import Answer, Client, FormQuestion, TransportError
from mcp_elicit.client.era import ProtocolChoice
from tests.helpers import free_port
from tests.server_process import PY, running_server

from .conftest import OURS
from .support import Script

INTERVAL = 0.2


@contextmanager
def frozen(pid: int) -> Iterator[None]:
    """The process stopped (SIGSTOP) for the block, then let go (killed processes excepted)."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def spawned_by_us(marker_dir: Path) -> int:
    """The pid of the stdio server the client spawned (its command line names ``marker_dir``)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(OURS).encode() in cmdline and str(marker_dir).encode() in cmdline:
            return int(entry.name)
    raise AssertionError("the spawned server was not found")


async def started(markers: Path, label: str) -> None:
    for _ in range(200):
        if (markers / f"started-{label}").exists():
            return
        await asyncio.sleep(0.025)
    raise AssertionError(f"{label} never started")


async def test_a_frozen_http_server_fails_the_calls_waiting(tmp_path: Path) -> None:
    port = free_port()
    argv = [PY, str(OURS), "--port", str(port), "--marker-dir", str(tmp_path)]
    with running_server(argv, log=tmp_path / "server.log", port=port) as server:
        async with Client.connect(server.url, protocol="2025-11-25", ping_interval=INTERVAL) as client:
            call = asyncio.create_task(client.call_tool("slow", {"label": "http"}))
            await started(tmp_path, "http")
            with (
                frozen(server.process.pid),
                pytest.raises(
                    TransportError, match=r"stopped answering \(no answer to a ping within 0.2 s\)"
                ),
            ):
                await asyncio.wait_for(call, 10)


async def test_a_frozen_stdio_server_fails_the_calls_waiting(tmp_path: Path) -> None:
    command = [PY, str(OURS), "--stdio", "--marker-dir", str(tmp_path)]
    async with Client.connect(
        command, protocol="2025-11-25", ping_interval=INTERVAL, stderr="capture"
    ) as client:
        call = asyncio.create_task(client.call_tool("slow", {"label": "stdio"}))
        await started(tmp_path, "stdio")
        with (
            frozen(spawned_by_us(tmp_path)),
            pytest.raises(TransportError, match=r"stopped answering \(no answer to a ping within 0.2 s\)"),
        ):
            await asyncio.wait_for(call, 20)


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_that_answers_keeps_its_connection(
    tmp_path: Path, transport: str, protocol: ProtocolChoice, caplog: pytest.LogCaptureFixture
) -> None:
    """Pings every 50 ms while the person takes half a second to answer: the call ends as it
    would without them (at 2026-07-28 nothing is pinged: each request stands alone)."""

    async def slowly(question: FormQuestion) -> Answer:
        await asyncio.sleep(0.5)
        return Answer("accept", {"name": "Ada"})

    caplog.set_level(logging.WARNING, "mcp_elicit")
    port = free_port()
    argv = [PY, str(OURS), "--port", str(port), "--marker-dir", str(tmp_path)]
    with running_server(argv, log=tmp_path / "server.log", port=port) as server:
        target: str | list[str] = (
            server.url if transport == "http" else [PY, str(OURS), "--stdio", "--marker-dir", str(tmp_path)]
        )
        answerer = Script(form=slowly)
        async with Client.connect(target, answerer=answerer, protocol=protocol, ping_interval=0.05) as client:
            result = await client.call_tool("greet")
    assert result.text == "Hello, Ada Ada!"
    assert "stopped answering" not in caplog.text


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_a_ping_interval_must_be_above_zero(bad: float) -> None:
    with pytest.raises(ValueError, match="ping_interval must be a number of seconds above 0"):
        Client.connect("http://127.0.0.1:9/mcp", ping_interval=bad)
