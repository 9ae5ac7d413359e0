"""A stdio server started by hand in a terminal says, once, what it is waiting for: it used to
wait in silence (typed text answered with a -32700 line). Not a word when stdin is a pipe, as
when a client starts it."""

from __future__ import annotations

import os
import pty
import select
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcp_elicit.transport import stdio_server
from mcp_elicit.transport.stdio_server import terminal_hint

SERVER = """
from mcp_elicit import Server

app = Server("tty", state_keys=["stdio-terminal-tests-secret-0123456789abcdef"])


@app.tool()
async def greet(name: str) -> str:
    return f"Hello, {name}"


app.run()
"""
HINT = "serving MCP on stdio (this terminal)"


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return path


@contextmanager
def started(script: Path, stdin: int) -> Iterator[subprocess.Popen[bytes]]:
    # Started by its file name from its folder, as by hand: the command stays short enough to be
    # shown whatever the length of the temporary folder (a longer one is left out, tested below).
    process = subprocess.Popen(
        [sys.executable, script.name],
        cwd=script.parent,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            stream.close()


def first_stderr_line(process: subprocess.Popen[bytes], within: float = 20.0) -> bytes:
    assert process.stderr is not None
    deadline = time.monotonic() + within
    line = b""
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(process.stderr.fileno(), 1)
            if not chunk:
                break
            line += chunk
    return line


def test_a_terminal_on_stdin_gets_one_line_naming_the_command(script: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        with started(script, terminal) as process:
            line = first_stderr_line(process).decode()
    finally:
        os.close(controller)
        os.close(terminal)
    command = shlex.join([sys.executable, script.name])
    assert line == (
        f"{HINT}: an MCP client starts this command (e.g. mcp-elicit call {shlex.quote(command)} "
        "TOOL); Ctrl-C ends it\n"
    )


def test_a_pipe_on_stdin_gets_no_hint(script: Path) -> None:
    with started(script, subprocess.PIPE) as process:
        _, err = process.communicate(b"", timeout=30)  # a client that closes at once
    assert process.returncode == 0, err
    assert HINT.encode() not in err


def test_a_command_that_cannot_be_told_is_this_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -c '...'`` (or an interactive session): no command to show, the words stay."""
    monkeypatch.setattr(sys, "argv", ["-c"])
    monkeypatch.setattr(sys, "orig_argv", [sys.executable, "-c", "app.run()"])
    assert (
        terminal_hint() == f"{HINT}: an MCP client starts this command (e.g. mcp-elicit call); Ctrl-C ends it"
    )
    monkeypatch.setattr(sys, "argv", ["server.py"])
    monkeypatch.setattr(sys, "orig_argv", ["python", "server.py"])
    assert "mcp-elicit call 'python server.py' TOOL" in stdio_server.terminal_hint()
    # A command longer than a line would drown the hint: the words stay, the command goes.
    monkeypatch.setattr(sys, "orig_argv", ["python", "/" + "d" * 120 + "/server.py"])
    assert (
        terminal_hint() == f"{HINT}: an MCP client starts this command (e.g. mcp-elicit call); Ctrl-C ends it"
    )
