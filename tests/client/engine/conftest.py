"""Servers for the engine tests, as real processes: stdio subprocesses spawned by the client under
test, or Streamable HTTP servers on 127.0.0.1 started once per module
(:func:`tests.server_process.running_server`).

Every async test here is bounded: it is cancelled after ``TEST_TIMEOUT`` seconds (and the whole
run is aborted with a traceback dump if a test blocks the loop itself).
"""

from __future__ import annotations

import asyncio
import faulthandler
import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import free_port
from tests.server_process import PY, ServerProcess, running_server

from .support import RogueLog, marker_server

HERE = Path(__file__).resolve().parent
OURS = HERE / "ours_server.py"
SDK = HERE / "sdk_server.py"
ROGUE = HERE / "rogue_server.py"
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
class Target:
    """Something to connect to: a command line (stdio) or a URL (HTTP)."""

    transport: str
    target: str | list[str]
    markers: Path | None = None
    log: RogueLog | None = None


# -- our server ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ours_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    with marker_server(OURS, "ours", tmp_path_factory) as running:
        yield running


@pytest.fixture(params=["stdio", "http"])
def ours(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "stdio":
        return Target("stdio", [PY, str(OURS), "--stdio", "--marker-dir", str(tmp_path)], tmp_path)
    server, markers = request.getfixturevalue("ours_http")
    return Target("http", server.url, markers)


# -- the official SDK's server ------------------------------------------------------------------
@pytest.fixture(scope="module")
def sdk_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    port = free_port()
    log = tmp_path_factory.mktemp("sdk") / "server.log"
    with running_server([PY, str(SDK), str(port)], log=log, port=port) as server:
        yield server
    assert "Traceback" not in server.log_text(), server.log_text()


@pytest.fixture(params=["stdio", "http"])
def sdk(request: pytest.FixtureRequest) -> Target:
    if request.param == "stdio":
        return Target("stdio", [PY, str(SDK), "stdio"])
    return Target("http", request.getfixturevalue("sdk_http").url)


# -- the misbehaving server ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def rogue_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, RogueLog]]:
    folder = tmp_path_factory.mktemp("rogue")
    log = folder / "received.jsonl"
    port = free_port()
    argv = [PY, str(ROGUE), "--port", str(port), "--log", str(log)]
    with running_server(argv, log=folder / "server.log", port=port) as server:
        yield server, RogueLog(log)


@pytest.fixture(params=["stdio", "http"])
def rogue(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    if request.param == "stdio":
        log = tmp_path / "received.jsonl"
        return Target("stdio", [PY, str(ROGUE), "--stdio", "--log", str(log)], log=RogueLog(log))
    server, log = request.getfixturevalue("rogue_http")
    return Target("http", server.url, log=log)


@pytest.fixture
def rogue_over_http(rogue_http: tuple[ServerProcess, RogueLog]) -> Target:
    server, log = rogue_http
    return Target("http", server.url, log=log)


@pytest.fixture
def rogue_stdio(tmp_path: Path) -> Target:
    log = tmp_path / "received.jsonl"
    return Target("stdio", [PY, str(ROGUE), "--stdio", "--log", str(log)], log=RogueLog(log))
