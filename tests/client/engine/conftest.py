"""Servers for the engine tests, as real processes: stdio subprocesses spawned by the client under
test, or Streamable HTTP servers on 127.0.0.1 started once per module.

Every async test here is bounded: it is cancelled after ``TEST_TIMEOUT`` seconds (and the whole
run is aborted with a traceback dump if a test blocks the loop itself).
"""

from __future__ import annotations

import asyncio
import faulthandler
import functools
import inspect
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import free_port

from .support import RogueLog

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
OURS = HERE / "ours_server.py"
SDK = HERE / "sdk_server.py"
ROGUE = HERE / "rogue_server.py"
PY = sys.executable
TEST_TIMEOUT = 30.0


def _bounded(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Any:
        async with asyncio.timeout(TEST_TIMEOUT):
            return await fn(*args, **kwargs)

    return run


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        ours = isinstance(item, pytest.Function) and HERE in Path(str(item.fspath)).parents
        if ours and inspect.iscoroutinefunction(item.obj):
            item.obj = _bounded(item.obj)


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """Last resort against a test that blocks the event loop: dump every stack and exit."""
    faulthandler.dump_traceback_later(TEST_TIMEOUT * 3, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@dataclass
class HttpServer:
    url: str
    process: subprocess.Popen[bytes]
    output: Path  # the server's stdout and stderr

    def output_text(self) -> str:
        return self.output.read_text(errors="replace")


def start_http(argv: list[str], port: int, output: Path, timeout: float = 20.0) -> HttpServer:
    with output.open("wb") as out:
        process = subprocess.Popen(
            argv,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
        )
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {output.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(
                    f"server did not listen on 127.0.0.1:{port}: {output.read_text()}"
                ) from None
            time.sleep(0.05)
    return HttpServer(f"http://127.0.0.1:{port}/mcp", process, output)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


@dataclass
class Target:
    """Something to connect to: a command line (stdio) or a URL (HTTP)."""

    transport: str
    target: str | list[str]
    markers: Path | None = None
    log: RogueLog | None = None


# -- our server ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ours_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, Path]]:
    markers = tmp_path_factory.mktemp("ours-markers")
    port = free_port()
    argv = [PY, str(OURS), "--port", str(port), "--marker-dir", str(markers)]
    server = start_http(argv, port, tmp_path_factory.mktemp("ours") / "server.log")
    try:
        yield server, markers
    finally:
        stop(server.process)
    assert "Traceback" not in server.output_text(), server.output_text()


@pytest.fixture(params=["stdio", "http"])
def ours(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "stdio":
        return Target("stdio", [PY, str(OURS), "--stdio", "--marker-dir", str(tmp_path)], tmp_path)
    server, markers = request.getfixturevalue("ours_http")
    return Target("http", server.url, markers)


# -- the official SDK's server ------------------------------------------------------------------
@pytest.fixture(scope="module")
def sdk_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    port = free_port()
    server = start_http([PY, str(SDK), str(port)], port, tmp_path_factory.mktemp("sdk") / "server.log")
    try:
        yield server
    finally:
        stop(server.process)
    assert "Traceback" not in server.output_text(), server.output_text()


@pytest.fixture(params=["stdio", "http"])
def sdk(request: pytest.FixtureRequest) -> Target:
    if request.param == "stdio":
        return Target("stdio", [PY, str(SDK), "stdio"])
    return Target("http", request.getfixturevalue("sdk_http").url)


# -- the misbehaving server ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def rogue_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, RogueLog]]:
    folder = tmp_path_factory.mktemp("rogue")
    log = folder / "received.jsonl"
    port = free_port()
    server = start_http([PY, str(ROGUE), "--port", str(port), "--log", str(log)], port, folder / "server.log")
    try:
        yield server, RogueLog(log)
    finally:
        stop(server.process)


@pytest.fixture(params=["stdio", "http"])
def rogue(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "stdio":
        log = tmp_path / "received.jsonl"
        return Target("stdio", [PY, str(ROGUE), "--stdio", "--log", str(log)], log=RogueLog(log))
    server, log = request.getfixturevalue("rogue_http")
    return Target("http", server.url, log=log)


@pytest.fixture
def rogue_over_http(rogue_http: tuple[HttpServer, RogueLog]) -> Target:
    server, log = rogue_http
    return Target("http", server.url, log=log)


@pytest.fixture
def rogue_stdio(tmp_path: Path) -> Target:
    log = tmp_path / "received.jsonl"
    return Target("stdio", [PY, str(ROGUE), "--stdio", "--log", str(log)], log=RogueLog(log))
