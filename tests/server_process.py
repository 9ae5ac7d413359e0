"""Servers as real processes, started one way.

:func:`running_server` spawns a command line with its stdout and stderr in a log file, waits
until an HTTP server listens on ``127.0.0.1:port`` (failing with the log if it exits first or
never listens), and stops it afterwards (SIGTERM, then SIGKILL). A stdio server is not started
here: the client under test spawns its command line.

Whichever way a Python server is started (here, or by a client), it runs on the event loop that
``MCP_ELICIT_TEST_LOOP`` names, as ``tests/e2e`` runs every module: ``uvloop`` (what production
takes whenever it is installed) or ``asyncio`` (where it is not); see :func:`loop_env`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
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
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        return self.process.returncode


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
    environ = dict(os.environ if env is None else env)
    if LOOP in environ:
        environ.update(loop_env(environ[LOOP], environ))
    with log.open("ab") as out:
        process = subprocess.Popen(
            list(argv), cwd=cwd, env=environ, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
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
