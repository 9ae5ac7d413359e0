"""Fixtures that start the e2e server as a real process on 127.0.0.1.

Every test module here runs twice: with the servers on uvloop (production: ``run_http()``,
``serve()`` and the stdio server take it whenever it is installed) and on asyncio's loop (where
uvloop is not installed). ``server_loop`` sets ``MCP_ELICIT_TEST_LOOP`` for every server process
the module's tests start, whichever way they start it.
"""

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


def start_http_server(markers: Path, *extra: str) -> HttpServer:
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
            "--head-timeout",
            "1",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for_port(port, process)
    return HttpServer(f"http://127.0.0.1:{port}/mcp", markers, process)


def stop(server: HttpServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="module", params=["uvloop", "asyncio"], autouse=True)
def server_loop(request: pytest.FixtureRequest) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_ELICIT_TEST_LOOP", request.param)
        yield request.param


@pytest.fixture(scope="module")
def http_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = start_http_server(tmp_path_factory.mktemp("markers"))
    try:
        yield server
    finally:
        stop(server)


@pytest.fixture(scope="module")
def h11_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The same server on uvicorn's h11 protocol (what runs when httptools is not installed)."""
    server = start_http_server(tmp_path_factory.mktemp("markers"), "--h11")
    try:
        yield server
    finally:
        stop(server)
