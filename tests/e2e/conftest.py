"""Fixtures that start the e2e server as a real process on 127.0.0.1.

Every test module here runs twice: with the servers on uvloop (production: ``run_http()``,
``serve()`` and the stdio server take it whenever it is installed) and on asyncio's loop (where
uvloop is not installed). ``server_loop`` sets ``MCP_ELICIT_TEST_LOOP`` (and the ``PYTHONPATH``
that hides uvloop, see :func:`tests.server_process.loop_env`) for every server process the
module's tests start, whichever way they start it; the HTTP servers start through
:func:`tests.server_process.start_server`, like every server process of the tests.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port
from tests.server_process import PY, ServerProcess, loop_env, start_server

SERVER = Path(__file__).with_name("e2e_server.py")


@dataclass
class HttpServer:
    """A test server on HTTP (``e2e_server.py``, or an instance of ``routing_server.py``), and the
    folder its tools leave markers in (its log is there too)."""

    running: ServerProcess
    markers: Path

    @property
    def url(self) -> str:
        return self.running.url

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.running.process

    def log_text(self) -> str:
        """What the server wrote to stdout and stderr."""
        return self.running.log_text()


def start_http_server(markers: Path, *extra: str) -> HttpServer:
    port = free_port()
    argv = [
        PY,
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
    ]
    return HttpServer(start_server(argv, log=markers / f"server-{port}.log", port=port), markers)


def stop(server: HttpServer) -> None:
    server.running.stop()


@contextmanager
def running_http_server(markers: Path, *extra: str) -> Iterator[HttpServer]:
    """:func:`start_http_server`, stopped when the block ends."""
    server = start_http_server(markers, *extra)
    try:
        yield server
    finally:
        stop(server)


@pytest.fixture(scope="module", params=["uvloop", "asyncio"], autouse=True)
def server_loop(request: pytest.FixtureRequest) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in loop_env(request.param).items():
            patch.setenv(name, value)
        yield request.param


@pytest.fixture(scope="module")
def http_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with running_http_server(tmp_path_factory.mktemp("markers")) as server:
        yield server


@pytest.fixture(scope="module")
def h11_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The same server on uvicorn's h11 protocol (what runs when httptools is not installed)."""
    with running_http_server(tmp_path_factory.mktemp("markers"), "--h11") as server:
        yield server


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the test's raw requests."""
    async with httpx.AsyncClient(timeout=20) as client:
        yield client
