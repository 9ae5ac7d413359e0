"""Servers as real processes, started one way.

:func:`running_server` spawns a command line with its stdout and stderr in a log file, waits
until an HTTP server listens on ``127.0.0.1:port`` (failing with the log if it exits first or
never listens), and stops it afterwards (SIGTERM, then SIGKILL). A stdio server is not started
here: the client under test spawns its command line, unless the test speaks the wire itself
(:func:`piped_server`).

Whichever way a Python server is started (here, or by a client), it runs on the event loop that
``MCP_ELICIT_TEST_LOOP`` names, as ``tests/e2e`` runs every module: ``uvloop`` (what production
takes whenever it is installed) or ``asyncio`` (where it is not); see :func:`loop_env`.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
LOOP = "MCP_ELICIT_TEST_LOOP"
_NO_UVLOOP = Path(__file__).with_name("asyncio_only")  # where "import uvloop" fails


def loop_env(loop: str, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables that run a Python process on ``loop`` (``"uvloop"`` or ``"asyncio"``):
    ``MCP_ELICIT_TEST_LOOP``, and for asyncio a ``PYTHONPATH`` whose first folder hides uvloop."""
    if loop not in ("uvloop", "asyncio"):
        raise ValueError(f"{LOOP} must be uvloop or asyncio, not {loop!r}")
    variables = {LOOP: loop}
    path = [
        part for part in environ.get("PYTHONPATH", "").split(os.pathsep) if part and part != str(_NO_UVLOOP)
    ]
    if loop == "asyncio":
        path.insert(0, str(_NO_UVLOOP))
    variables["PYTHONPATH"] = os.pathsep.join(path)
    return variables


@dataclass
class ServerProcess:
    """A server running as a process; its stdout and stderr go to ``log``."""

    process: subprocess.Popen[bytes]
    log: Path
    port: int | None = None

    @property
    def base(self) -> str:
        assert self.port is not None, "not an HTTP server"
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """Its MCP endpoint (``/mcp``)."""
        return self.base + "/mcp"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> int:
        """SIGTERM, then SIGKILL 5 s later; its exit status."""
        return stop_process(self.process)


def stop_process(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM (unless it ended), then SIGKILL 5 s later; its exit status."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    return process.returncode


def _environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """``env`` (or this process's environment) with what runs Python on the loop it names."""
    environ = dict(os.environ if env is None else env)
    if LOOP in environ:
        environ.update(loop_env(environ[LOOP], environ))
    return environ


def start_server(
    argv: Sequence[str],
    *,
    log: Path,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    within: float = 20.0,
) -> ServerProcess:
    """Spawn ``argv`` (in ``cwd``, with ``env`` or this process's environment, on the loop its
    ``MCP_ELICIT_TEST_LOOP`` names), its output in ``log``; with ``port``, once it listens there.
    The caller stops it (:func:`running_server` does)."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=_environment(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = ServerProcess(process, log, port)
    if port is not None:
        try:
            _wait_until_listening(server, within)
        except BaseException:
            server.stop()
            raise
    return server


@contextmanager
def running_server(
    argv: Sequence[str],
    *,
    log: Path,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO,
    within: float = 20.0,
) -> Iterator[ServerProcess]:
    """:func:`start_server`, stopped when the block ends."""
    server = start_server(argv, log=log, port=port, env=env, cwd=cwd, within=within)
    try:
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def piped_server(
    argv: Sequence[str], *, limit: int = 2**16, env: Mapping[str, str] | None = None, cwd: Path = REPO
) -> AsyncIterator[asyncio.subprocess.Process]:
    """A stdio server for a test that speaks the wire itself: its stdin, stdout and stderr are
    the test's (asyncio streams reading lines of up to ``limit`` bytes), on the loop of
    :func:`start_server`; killed when the block ends if it still runs."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=_environment(env),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=limit,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def _wait_until_listening(server: ServerProcess, within: float) -> None:
    assert server.port is not None
    deadline = time.monotonic() + within
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"the server exited with status {server.process.returncode} before it listened on "
                f"127.0.0.1:{server.port}; its output:\n{server.log_text()}"
            )
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the server did not listen on 127.0.0.1:{server.port} within {within} s; "
                    f"its output:\n{server.log_text()}"
                ) from None
            time.sleep(0.05)
