"""A PostgreSQL cluster of a test's own, on a free 127.0.0.1 port, that the test may stop, kill,
freeze and start again without touching the machine's shared server.

Built with the Debian binaries (``/usr/lib/postgresql/<version>/bin``). PostgreSQL refuses to run
as root, so as root the cluster belongs to the ``postgres`` user (``runuser``); as anyone else it
belongs to that user. Trust authentication, one database ``test``, fsync off (nothing here must
survive a power cut; commits stay synchronous, so a server stopped or killed loses nothing).
The caller must call :meth:`ThrowawayPostgres.destroy`.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _bin_dir() -> Path | None:
    root = Path("/usr/lib/postgresql")
    if not root.is_dir():
        return None
    versions = sorted((p for p in root.iterdir() if (p / "bin" / "initdb").exists()), key=lambda p: p.name)
    return versions[-1] / "bin" if versions else None


def unavailable_reason() -> str | None:
    """``None`` when a throwaway cluster can be made here, else why not (for a skip)."""
    if _bin_dir() is None:
        return "no PostgreSQL server binaries under /usr/lib/postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to own a cluster"
        if shutil.which("runuser") is None:
            return "running as root without runuser"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayPostgres:
    """One private cluster: :meth:`start`, :meth:`stop` (immediate), :meth:`freeze` /
    :meth:`thaw` (SIGSTOP / SIGCONT of every server process: a database that no longer answers),
    :meth:`destroy`."""

    def __init__(self) -> None:
        bin_dir = _bin_dir()
        assert bin_dir is not None, unavailable_reason()
        self._bin = bin_dir
        self._as_root = os.geteuid() == 0
        self.base = Path(tempfile.mkdtemp(prefix="rel-pg-"))
        self.data = self.base / "data"
        self.port = _free_port()
        self.dsn = f"host=127.0.0.1 port={self.port} dbname=test user=postgres connect_timeout=2"
        self._frozen: list[int] = []
        if self._as_root:
            owner = pwd.getpwnam("postgres")
            os.chown(self.base, owner.pw_uid, owner.pw_gid)
        self.base.chmod(0o700)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.base}'\nfsync = off\n"
                "full_page_writes = off\nshared_buffers = 16MB\n"
                "max_connections = 40\n"
            )
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "test")

    def _run(self, tool: str, *args: str, timeout: float = 60.0) -> None:
        command = [str(self._bin / tool), *args]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, cwd="/")
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stdout}{done.stderr}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "log"), "-w", "-t", "30", "start")

    def stop(self) -> None:
        """Stop at once (``-m immediate``: like a crash; open connections are cut)."""
        self.thaw()
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop")

    def _server_pids(self) -> list[int]:
        pid_file = self.data / "postmaster.pid"
        try:
            postmaster = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return []
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children")
        try:
            kids = [int(pid) for pid in children.read_text().split()]
        except OSError:
            kids = []
        return [postmaster, *kids]

    def freeze(self) -> None:
        """SIGSTOP the postmaster and every backend: connections stay open, nothing answers."""
        for pid in self._server_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                self._frozen.append(pid)

    def thaw(self) -> None:
        for pid in self._frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self._frozen.clear()

    def destroy(self) -> None:
        try:
            self.thaw()
            if (self.data / "postmaster.pid").exists():
                with contextlib.suppress(RuntimeError, subprocess.SubprocessError):
                    self.stop()
        finally:
            shutil.rmtree(self.base, ignore_errors=True)

    def wait_ready(self, timeout: float = 30.0) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.dsn) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.Error:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
