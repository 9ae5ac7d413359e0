"""``run_http()``'s port: one taken ends the process with one line naming it and the fix (it
used to be uvicorn's ``ERROR: [Errno 98] ...`` and status 3, the status ``mcp-elicit call``
gives a declined question); ``port=0`` listens on a free port the system picks, and the
start-up line says which (it used to be refused)."""

from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.server_process import stop_process

SERVER = """
import sys

from mcp_elicit import Server

app = Server("ports", version="1", state_keys=["run-http-ports-tests-secret-0123456789abcdef"])


@app.tool()
async def greet(name: str) -> str:
    return f"Hello, {name}"


app.run_http(port=int(sys.argv[1]))
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SERVER)
    return path


def test_a_port_in_use_is_one_line_naming_it_and_the_fix(script: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, str(script), str(port)], capture_output=True, text=True, timeout=60, check=False
        )
    assert done.returncode == 1
    assert done.stderr == (
        f"port {port} on 127.0.0.1: address already in use: stop what uses it or pass run_http(port=...)\n"
    )


def first_line(process: subprocess.Popen[bytes], within: float = 30.0) -> str:
    """The first line the process writes on stderr, waiting at most ``within`` seconds."""
    assert process.stderr is not None
    deadline = time.monotonic() + within
    line = b""
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        if select.select([process.stderr], [], [], 0.2)[0]:
            chunk = os.read(process.stderr.fileno(), 1)
            if not chunk:
                break
            line += chunk
    return line.decode()


def test_port_zero_serves_on_a_free_port_and_says_which(script: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, str(script), "0"], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        line = first_line(process)
        found = re.fullmatch(r"ports 1: MCP over Streamable HTTP at http://127\.0\.0\.1:(\d+)/mcp\n", line)
        assert found, line
        port = int(found[1])
        assert port != 0
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # it listens on the port it names
    finally:
        stop_process(process)
        assert process.stderr is not None
        process.stderr.close()
