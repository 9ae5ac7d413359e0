"""Fixtures that start the e2e server as a real process on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import free_port, wait_for_port

SERVER = Path(__file__).with_name("e2e_server.py")


@dataclass
class HttpServer:
    url: str
    markers: Path
    process: subprocess.Popen[bytes]


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    markers = tmp_path_factory.mktemp("markers")
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(SERVER),
            "--port",
            str(port),
            "--marker-dir",
            str(markers),
            "--max-message-bytes",
            "65536",
            "--body-timeout",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, process)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", markers, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
