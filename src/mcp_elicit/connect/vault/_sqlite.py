"""The vault's SQLite backend.

* One ``sqlite3`` connection in autocommit mode, WAL journal, ``synchronous=FULL`` (a refresh that
  rotated the refresh token must survive a power cut: losing it can revoke the whole grant), used
  from worker threads (``asyncio.to_thread``) under a ``threading.Lock``, so any number of asyncio
  tasks (and threads) can share one vault. Every write is a single statement.
* A new database file is created with mode ``0600``.
* Cross-process single-flight: a lease row in ``P locks`` (``INSERT ... ON CONFLICT DO UPDATE ...
  WHERE expires_at < now``), polled with backoff; a crashed holder's lease expires after ``hold``.
* ``sqlite3`` errors (a locked file after ``timeout`` seconds, a read-only or missing directory,
  a closed vault) become :class:`VaultUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TypeVar

from mcp_elicit._sqlite import connect_private, prepare_retrying

from ._db import Executor, Row
from ._sql import Statements
from .errors import VaultUnavailable

__all__ = ["SQLiteDatabase"]

_T = TypeVar("_T")


class SQLiteDatabase:
    def __init__(self, path: str, statements: Statements, *, timeout: float) -> None:
        self._path = path
        self._memory = path == ":memory:" or path.startswith("file::memory:")
        self._sql = statements
        self._timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    def describe(self) -> str:
        return f"sqlite {self._path!r}"

    @property
    def path(self) -> str:
        """The database file (or ``:memory:``)."""
        return self._path

    # ------------------------------------------------------------------------------ connection

    def _open_locked(self) -> sqlite3.Connection:
        if self._closed:
            raise VaultUnavailable("SQLite vault is closed")
        if self._conn is not None:
            return self._conn
        conn = connect_private(self._path, timeout=self._timeout)
        try:
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """WAL + schema, retrying while another process holds the file (see prepare_retrying)."""

        def prepare(conn: sqlite3.Connection) -> None:
            if not self._memory:
                (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
                if str(mode).lower() != "wal":
                    raise VaultUnavailable(f"SQLite vault: {self._path!r} refused WAL mode ({mode})")
            conn.execute("PRAGMA synchronous = FULL")
            for statement in self._sql.schema:
                conn.execute(statement)

        prepare_retrying(conn, prepare, self._timeout)

    def _call(self, what: str, op: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            try:
                return op(self._open_locked())
            except (sqlite3.Error, OSError) as exc:  # OSError: creating the file
                raise VaultUnavailable(f"SQLite vault: {what} failed: {type(exc).__name__}: {exc}") from None

    async def _run(self, what: str, op: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise VaultUnavailable("SQLite vault is closed")
        return await asyncio.to_thread(self._call, what, op)

    # ------------------------------------------------------------------------------ executor

    async def fetchone(self, query: str, params: Sequence[object]) -> Row | None:
        def op(conn: sqlite3.Connection) -> Row | None:
            rows = conn.execute(query, tuple(params)).fetchall()  # drain: RETURNING completes here
            return tuple(rows[0]) if rows else None

        return await self._run("query", op)

    async def fetchall(self, query: str, params: Sequence[object]) -> list[Row]:
        def op(conn: sqlite3.Connection) -> list[Row]:
            return [tuple(row) for row in conn.execute(query, tuple(params)).fetchall()]

        return await self._run("query", op)

    async def execute(self, query: str, params: Sequence[object]) -> int:
        def op(conn: sqlite3.Connection) -> int:
            return max(conn.execute(query, tuple(params)).rowcount, 0)

        return await self._run("write", op)

    # ------------------------------------------------------------------------------ lease

    @contextlib.asynccontextmanager
    async def exclusive(
        self, owner: str, provider: str, *, wait: float, hold: float
    ) -> AsyncIterator[Executor]:
        key = f"refresh\x00{owner}\x00{provider}"
        holder = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        pause = 0.005
        while True:
            now = time.time()  # wall clock: leases are compared across processes
            taken = await self.execute(self._sql.acquire_lease, (key, holder, now + hold, now))
            if taken:
                break
            if loop.time() + pause > deadline:
                raise VaultUnavailable(
                    f"SQLite vault: timed out after {wait:g} s waiting for the refresh lock of {provider!r}"
                )
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, 0.05)
        try:
            yield self
        finally:
            # Best effort: if this fails the lease simply expires after ``hold`` seconds.
            with contextlib.suppress(VaultUnavailable):
                await asyncio.shield(self.execute(self._sql.release_lease, (key, holder)))

    async def close(self) -> None:
        def close_sync() -> None:
            with self._lock:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(close_sync)
