"""Ctrl-C (SIGINT) on a stdio server ends it with status 130, whatever it is busy with: a
client that stopped reading its stdout, or a handler blocked in a worker thread. Real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

SERVER = Path(__file__).with_name("e2e_server.py")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def start(tmp_path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(SERVER), "--stdio", "--marker-dir", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    params = {"_meta": META, "name": tool, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def interrupt(process: subprocess.Popen[bytes]) -> tuple[int | None, str]:
    """SIGINT, then the exit status (None if it is still running 10 s later) and stderr."""
    process.send_signal(signal.SIGINT)
    status: int | None
    try:
        status = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        status = None
        process.kill()
        process.wait()
    assert process.stderr is not None
    return status, process.stderr.read().decode()


def test_ctrl_c_ends_a_server_whose_client_stopped_reading(tmp_path: Path) -> None:
    """The server waits on a full stdout (memory stays bounded); it used to wait there through
    Ctrl-C too, answered by nothing short of SIGKILL."""
    process = start(tmp_path)
    assert process.stdin is not None
    lines = b"".join(call(i, "big", {"size": 65536}) + b"\n" for i in range(200))

    def flood() -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(lines)
            process.stdin.flush()
        except OSError:
            pass  # the server ended: what was left is not read

    threading.Thread(target=flood, daemon=True).start()
    time.sleep(3)  # far more than the pipe holds: the server now waits on its stdout
    assert process.poll() is None
    started = time.monotonic()
    status, stderr = interrupt(process)
    assert status == 130
    assert time.monotonic() - started < 5
    assert "Traceback" not in stderr


def test_ctrl_c_with_a_handler_in_a_thread_is_130_not_a_clean_end(tmp_path: Path) -> None:
    """The grace for work still running after serving ends fired with status 0 and blamed
    "stdin closed", as if the client had ended the session."""
    process = start(tmp_path)
    assert process.stdin is not None
    process.stdin.write(call(1, "in_a_thread", {"seconds": 20}) + b"\n")
    process.stdin.flush()
    time.sleep(3)  # the handler is now asleep in its worker thread
    status, stderr = interrupt(process)
    assert status == 130
    assert "after the interrupt; exiting without it" in stderr
    assert "stdin closed" not in stderr
    assert "Traceback" not in stderr
