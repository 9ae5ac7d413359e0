"""A stdio server's stderr, captured: handed over live (``on_stderr``), read to its end when the
process exits (its last words explain a failure), and bounded however much it writes."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mcp_elicit.client import Client, ServerExitedError
from mcp_elicit.client.stdio import STDERR_KEEP_BYTES, STDERR_READ_BYTES, StdioTransport

SERVER = textwrap.dedent(
    r"""
    import asyncio, subprocess, sys
    from mcp_elicit import Server

    app = Server("noisy", state_keys=["stdio-stderr-tests-secret-0123456789abcdef"])

    @app.tool()
    async def slow() -> str:
        print("working on it", file=sys.stderr, flush=True)
        await asyncio.sleep(1.5)
        return "done"

    @app.tool()
    async def flood(megabytes: int) -> str:
        block = b"x" * 1023 + b"\n"
        for _ in range(megabytes * 1024):
            sys.stderr.buffer.write(block)
        sys.stderr.buffer.flush()
        return "flooded"

    app.run_stdio()
    # Last words, after stdin closed: more than a pipe holds, then the line that matters, from a
    # child that inherited stderr and writes it just after this process has exited.
    sys.stderr.write("y" * 300_000 + "\n")
    sys.stderr.flush()
    late = "import sys, time; time.sleep(0.1); sys.stderr.write('the last line\\n')"
    subprocess.Popen([sys.executable, "-c", late])
    """
)


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    path = tmp_path / "noisy.py"
    path.write_text(SERVER)
    return [sys.executable, str(path)]


async def test_on_stderr_gets_what_the_server_writes_while_the_call_runs(server: list[str]) -> None:
    seen: list[tuple[float, bytes]] = []
    transport = StdioTransport(
        server,
        display="noisy",
        stderr="capture",
        on_stderr=lambda chunk: seen.append((time.monotonic(), chunk)),
    )
    async with Client.connect(transport) as client:
        result = await client.call_tool("slow")
        answered = time.monotonic()
    assert result.text == "done"
    early = [chunk for when, chunk in seen if when < answered - 1.0]
    assert b"working on it\n" in b"".join(early)  # shown while the tool still sleeps


async def test_what_the_server_writes_as_it_exits_is_kept(server: list[str]) -> None:
    transport = StdioTransport(server, display="noisy", stderr="capture")
    async with Client.connect(transport) as client:
        await client.call_tool("slow")
    assert transport.stderr_text.endswith("y\nthe last line\n")


async def test_megabytes_on_stderr_keep_only_the_end_and_do_not_slow_the_call(server: list[str]) -> None:
    chunks: list[int] = []
    transport = StdioTransport(
        server, display="noisy", stderr="capture", on_stderr=lambda chunk: chunks.append(len(chunk))
    )
    async with Client.connect(transport) as client:
        started = time.monotonic()
        result = await client.call_tool("flood", {"megabytes": 10})
        took = time.monotonic() - started
    assert result.text == "flooded"
    assert took < 5.0
    assert sum(chunks) > 10 * 1024 * 1024  # every byte went by ...
    assert max(chunks) <= STDERR_READ_BYTES
    kept = transport.stderr_text
    assert len(kept) <= STDERR_KEEP_BYTES + STDERR_READ_BYTES  # ... and only the end is kept
    assert kept.endswith("the last line\n")


async def test_a_failing_on_stderr_does_not_stop_the_reading(
    server: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    def broken(chunk: bytes) -> None:
        raise RuntimeError("the display is gone")

    transport = StdioTransport(server, display="noisy", stderr="capture", on_stderr=broken)
    async with Client.connect(transport) as client:
        assert (await asyncio.wait_for(client.call_tool("flood", {"megabytes": 1}), 10)).text == "flooded"
    assert transport.stderr_text.endswith("the last line\n")
    assert "on_stderr failed" in caplog.text


def test_on_stderr_needs_the_capture() -> None:
    with pytest.raises(ValueError, match='on_stderr needs stderr="capture"'):
        StdioTransport(["true"], display="true", stderr="inherit", on_stderr=lambda chunk: None)


def test_the_stderr_lines_in_the_error_message_carry_no_terminal_controls() -> None:
    """A program printing the exception shows the server's last stderr lines: a hostile server
    wrote escape sequences there (a clipboard write, a screen clear) that reached the terminal."""
    tail = "boom\x1b]52;c;ZXZpbA==\x07\x1b[2J\rlate\nsecond line"
    error = ServerExitedError("the server exited", 1, tail)
    assert str(error) == "the server exited (exit code 1); last stderr lines:\nboomlate\nsecond line"
    assert error.stderr_tail == tail  # kept as written, for a display that cleans it itself
