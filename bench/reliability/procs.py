"""Processes the harness starts (server instances) and the PostgreSQL it leans on.

Every process started here is registered in :class:`Processes` and stopped by its id in
``stop_all`` (the harness calls it in a ``finally``). PostgreSQL is restarted with
``pg_ctlcluster`` and :func:`ensure_postgres_running` brings it back whatever happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a live process in KiB, (0, 0) when it is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except (OSError, ValueError):
        return 0, 0
    return rss, hwm


@dataclass
class ServerProcess:
    """One HTTP instance; it can be killed and started again on the same port."""

    name: str
    port: int
    args: list[str]
    log_dir: Path
    python: str = sys.executable
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    peak_rss_kib: int = 0  # over every incarnation
    incarnations: list[int] = field(default_factory=list)
    paused: bool = False
    expect_exit: bool = False  # set by whoever ends it (kill -9, stop); a start clears it

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def exit_status(self) -> int | None:
        """The current process's exit status (negative: the signal that killed it), or None."""
        return None if self.proc is None else self.proc.poll()

    def spawn(self) -> None:
        self.starts += 1
        self.expect_exit = False
        self.paused = False
        log = open(self.log_dir / f"{self.name}-{self.starts}.log", "wb")  # noqa: SIM115 - child owns it
        try:
            self.proc = subprocess.Popen(
                [self.python, str(SERVER), "http", "--port", str(self.port), *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl+C on the harness does not reach it; we stop it
            )
        finally:
            log.close()
        self.incarnations.append(self.proc.pid)

    async def wait_ready(self, within: float = 30.0) -> float:
        """Wait until the port accepts connections; returns the seconds it took."""
        t0 = time.perf_counter()
        deadline = t0 + within
        while time.perf_counter() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.name} exited during start-up; see {self.log_dir}")
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), 0.5)
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
                return time.perf_counter() - t0
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.name} did not listen on 127.0.0.1:{self.port} within {within:g} s")

    async def start(self, within: float = 30.0) -> float:
        self.spawn()
        return await self.wait_ready(within)

    def sample_rss(self) -> None:
        if self.alive():
            rss, hwm = rss_kib(self.pid)
            self.peak_rss_kib = max(self.peak_rss_kib, rss, hwm)

    def pause(self) -> None:
        """SIGSTOP: frozen as by a long GC pause, CPU throttling or a suspended VM."""
        if self.alive():
            os.kill(self.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            if self.alive():
                os.kill(self.pid, signal.SIGCONT)

    def kill9(self) -> None:
        self.expect_exit = True
        if self.alive():
            self.sample_rss()
            os.kill(self.pid, signal.SIGKILL)
            assert self.proc is not None
            self.proc.wait(timeout=10)

    def hup(self) -> None:
        if self.alive():
            os.kill(self.pid, signal.SIGHUP)

    def stop(self) -> None:
        """Terminate (then kill) this instance's current process, by its id."""
        proc = self.proc
        self.expect_exit = True
        if proc is None or proc.poll() is not None:
            return
        self.resume()  # a stopped process would not act on SIGTERM
        self.sample_rss()
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


class Processes:
    """Every process the harness started, for a guaranteed stop."""

    def __init__(self) -> None:
        self.servers: list[ServerProcess] = []
        self.others: list[subprocess.Popen[bytes]] = []

    def add(self, server: ServerProcess) -> ServerProcess:
        self.servers.append(server)
        return server

    def track(self, proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
        self.others.append(proc)
        return proc

    def stop_all(self) -> None:
        for server in self.servers:
            with contextlib.suppress(Exception):
                server.stop()
        for proc in self.others:
            if proc.poll() is None:
                with contextlib.suppress(Exception):
                    proc.kill()
                    proc.wait(timeout=5)


# ------------------------------------------------------------------------------------ PostgreSQL


def pg_version() -> str | None:
    try:
        versions = sorted(os.listdir("/etc/postgresql"))
    except OSError:
        return None
    return versions[-1] if versions else None


def pg_ctl(action: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    version = pg_version()
    if version is None:
        raise RuntimeError("no /etc/postgresql/<version>: cannot control the PostgreSQL cluster")
    return subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def can_restart_postgres() -> str | None:
    """``None`` when a restart is possible here, else why not."""
    if pg_version() is None:
        return "no /etc/postgresql"
    if os.geteuid() != 0:
        return "not root (pg_ctlcluster needs to act as the cluster owner)"
    try:
        status = pg_ctl("status", timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"pg_ctlcluster unusable: {exc}"
    if status.returncode != 0:
        return f"cluster not running (pg_ctlcluster status exit {status.returncode})"
    return None


def ensure_postgres_running() -> str:
    """Start the cluster if it is down. Returns a short status for the report."""
    if pg_version() is None:
        return "not managed here"
    status = pg_ctl("status", timeout=10)
    if status.returncode == 0:
        return "running"
    started = pg_ctl("start", timeout=60)
    if started.returncode != 0:
        return f"START FAILED: {started.stderr.strip()[:200]}"
    return "was down: started again"


async def restart_postgres() -> tuple[float, str]:
    """``pg_ctlcluster ... restart``; returns (seconds, outcome)."""
    t0 = time.perf_counter()
    result = await asyncio.to_thread(pg_ctl, "restart", 90.0)
    took = time.perf_counter() - t0
    if result.returncode != 0:
        return took, f"restart failed (exit {result.returncode}): {result.stderr.strip()[:200]}"
    return took, "restarted"


def pg_connect(dsn: str) -> Any:
    import psycopg

    return psycopg.connect(dsn, autocommit=True, connect_timeout=5)


def wait_for_postgres(dsn: str, within: float = 60.0) -> bool:
    import psycopg

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with pg_connect(dsn) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            time.sleep(0.2)
    return False


def drop_tables(dsn: str, *tables: str) -> None:
    from psycopg import sql

    with pg_connect(dsn) as conn:
        for table in tables:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
