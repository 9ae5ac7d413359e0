"""The stdio transport on its own: shutdown escalation, stderr handling, noise on stdout and
oversized messages, with a real subprocess (``tiny_server.py``)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from mcp_elicit.client import Client, LocalError, MalformedMessageError, ServerExitedError
from mcp_elicit.client.stdio import StdioTransport

TINY = str(Path(__file__).with_name("tiny_server.py"))


def tiny(*flags: str, close_timeout: float = 0.3, **options: object) -> StdioTransport:
    argv = [sys.executable, TINY, *flags]
    return StdioTransport(argv, display="tiny", close_timeout=close_timeout, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("flags", "returncode", "slowest"),
    [
        ((), 0, 1.0),  # exits on EOF
        (("--ignore-eof",), -signal.SIGTERM, 1.5),  # needs SIGTERM after close_timeout
        (("--ignore-eof", "--ignore-term"), -signal.SIGKILL, 2.0),  # needs SIGKILL after two waits
    ],
)
async def test_closing_escalates_with_bounded_waits(
    flags: tuple[str, ...], returncode: int, slowest: float
) -> None:
    transport = tiny(*flags, stderr="devnull")
    client = await Client.connect(transport)
    assert (await client.call_tool("a")).text == "ran a"
    process = transport._proc
    assert process is not None
    started = time.monotonic()
    await client.aclose()
    assert time.monotonic() - started < slowest
    assert process.returncode == returncode


async def test_stderr_can_be_captured() -> None:
    transport = tiny(stderr="capture")
    async with await Client.connect(transport) as client:
        await client.call_tool("first")
        await client.call_tool("second")
    assert transport.stderr_text == "tiny: calling first\ntiny: calling second\n"


async def test_banners_blank_lines_and_server_requests_on_stdout_are_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with await Client.connect(tiny("--noise", stderr="devnull")) as client:
        assert (await client.call_tool("a")).text == "ran a"
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.client.stdio"]
    assert any("ignoring a line" in w and "tiny server v0" in w for w in warnings)
    assert any("sent a ping request" in w for w in warnings)


async def test_a_message_over_the_limit_fails_its_request_and_the_connection_survives() -> None:
    transport = StdioTransport(
        [sys.executable, TINY, "--big", "5000"], display="tiny", stderr="devnull", max_message_bytes=2000
    )
    async with await Client.connect(transport) as client:
        with pytest.raises(MalformedMessageError, match="over the limit of 2000 bytes"):
            await client.call_tool("big")
        assert (await client.call_tool("small")).text == "ran small"


async def test_a_server_that_exits_while_its_child_keeps_stdout_open_fails_the_call(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    transport = tiny(stderr="devnull")
    client = await Client.connect(transport)
    try:
        started = time.monotonic()
        with pytest.raises(ServerExitedError) as info:
            await client.call_tool("orphan", {"pidfile": str(pidfile)})
        assert time.monotonic() - started < 5  # not the child's 60 s
        assert info.value.returncode == 3
        assert "the server process exited" in str(info.value)
        started = time.monotonic()
        await client.aclose()
        assert time.monotonic() - started < 2
    finally:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


async def test_stdout_ending_inside_an_over_long_line_fails_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    transport = StdioTransport(
        [sys.executable, TINY, "--big", "5000"], display="tiny", stderr="devnull", max_message_bytes=2000
    )
    async with await Client.connect(transport) as client:
        with pytest.raises(MalformedMessageError, match="over the limit of 2000 bytes"):
            await client.call_tool("cut")
        with pytest.raises(ServerExitedError):
            await client.call_tool("after")
    logged = [r for r in caplog.records if r.name == "mcp_elicit.client.stdio" and r.levelno >= logging.ERROR]
    assert logged == []  # an end of stream, not a failure with a traceback


@pytest.mark.parametrize("tool", ["latin1", "deep"])
async def test_an_answer_the_decoder_refuses_fails_its_call_at_once(tool: str) -> None:
    """A byte that is not UTF-8, or nesting deeper than the decoder goes: the answer still says
    whose it is, so that request fails now instead of waiting for its timeout."""
    async with await Client.connect(tiny(stderr="devnull"), request_timeout=10) as client:
        started = time.monotonic()
        with pytest.raises(MalformedMessageError, match="the server's answer cannot be read"):
            await client.call_tool(tool)
        assert time.monotonic() - started < 5
        assert (await client.call_tool("after")).text == "ran after"


async def test_the_servers_text_in_log_lines_carries_no_escape_sequences(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A property name (in why a tool is left out) and a method name (of a request a server must
    not send) are the server's text: a log line printed to a terminal must not run them."""
    async with await Client.connect(tiny(stderr="devnull")) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["plain"]
        assert (await client.call_tool("escapes")).text == "ran escapes"
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("mcp_elicit.client")]
    assert any("leaving out tool 'bad': property all good" in line for line in logged), logged
    assert any("the server sent a all good request" in line for line in logged), logged
    for line in logged:
        assert "\x1b" not in line, repr(line)
        assert "\x07" not in line, repr(line)


@pytest.mark.parametrize(
    ("flags", "limit"),
    [
        (("--pages", "1000"), "more than 100000 tools"),
        (("--pages", "1", "--pad", "8000000"), "more than 32 MiB of tools"),
    ],
    ids=["items", "bytes"],
)
async def test_a_listing_that_never_ends_stops_at_a_total_limit(flags: tuple[str, ...], limit: str) -> None:
    async with await Client.connect(tiny(*flags, stderr="devnull")) as client:
        with pytest.raises(LocalError, match=rf"tools/list: the server listed {limit}"):
            await client.list_tools()
