"""A :class:`FlowStore` in an SQLite file (one host; any number of processes on that file).

* One table, ``mcp_elicit_flows`` (fixed name, no SQL is built from input; use another file for
  another store), and ``mcp_elicit_flows_revoked`` for the pages' sign-outs, in WAL mode;
  ``":memory:"`` gives a private store for tests. A table made by an earlier version gets the
  newer columns on first use (``PRAGMA table_info``, ``ADD COLUMN``).
* Every operation runs on a worker thread (:func:`asyncio.to_thread`) with one connection guarded
  by a lock, so waiting for another process's write lock never blocks the event loop. Flow traffic
  is a handful of statements per user interaction; simplicity wins over the last microsecond.
* Transitions are single ``UPDATE ... RETURNING`` statements: SQLite serialises writers (across
  processes too), so exactly one of two racing ``begin`` calls changes the row. Creation runs in
  ``BEGIN IMMEDIATE`` (the write lock is taken before counting), so the per-owner cap holds.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Final, TypeVar

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit._sqlite import connect_private, describe, prepare_retrying

from . import _sql
from .errors import FlowStoreUnavailable, TooManyPendingFlows
from .model import DEFAULT_MAX_PENDING_PER_USER, DEFAULT_RETENTION, MAX_FLOW_TTL, Row
from .store import BaseFlowStore

__all__ = ["SQLiteFlowStore"]

_TABLE: Final = "mcp_elicit_flows"
_NAMES: Final = {
    "table": _TABLE,
    "owner_index": f"{_TABLE}_owner_idx",
    "expires_index": f"{_TABLE}_expires_idx",
    "revoked": f"{_TABLE}_revoked",
}
_T = TypeVar("_T")


def _sql_for(template: str) -> str:
    return template.format(**_NAMES)  # fixed names only


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Bring a table made by an earlier version up to date (columns in ``_sql.ADDED_COLUMNS``)."""
    present = {str(row[1]) for row in conn.execute(f"PRAGMA table_info({_TABLE})")}
    for column in _sql.ADDED_COLUMNS:
        if column in present:
            continue
        try:
            conn.execute(_sql.ADD_COLUMN.format(table=_TABLE, column=column))  # fixed names only
        except sqlite3.OperationalError as exc:
            # Another process may have added it between our PRAGMA and our ALTER: that is fine.
            if "duplicate column" not in str(exc).lower():
                raise


class SQLiteFlowStore(BaseFlowStore, ClosesOnExit):
    """Pending flows in an SQLite file. Safe across asyncio tasks, threads and processes.

    ``max_pending_per_user``: open flows allowed per owner (default 3). ``ttl``: default flow
    lifetime (at most, and by default, 600 s). ``retention``: seconds a record is kept after its
    expiry. ``busy_timeout``: seconds to wait for another writer. ``clock``: wall-clock seconds.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "mcp-elicit-flows.db",
        *,
        max_pending_per_user: int = DEFAULT_MAX_PENDING_PER_USER,
        ttl: float = MAX_FLOW_TTL,
        retention: float = DEFAULT_RETENTION,
        busy_timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(max_pending_per_user=max_pending_per_user, ttl=ttl, retention=retention, clock=clock)
        if busy_timeout < 0:
            raise ValueError("busy_timeout must be >= 0")
        self._path = os.fspath(path)
        self._busy_timeout = float(busy_timeout)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._statements = {template: _sql_for(template) for template in _sql.STATEMENTS}

    @property
    def path(self) -> str:
        """The SQLite database file."""
        return self._path

    def __repr__(self) -> str:
        return f"SQLiteFlowStore({self._path!r})"

    # ------------------------------------------------------------------------------ plumbing

    def _open(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        conn = connect_private(self._path, timeout=self._busy_timeout)
        memory = self._path == ":memory:"

        def prepare(conn: sqlite3.Connection) -> None:
            if not memory:
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
            conn.execute("PRAGMA synchronous = NORMAL")
            for template in _sql.SCHEMA:
                conn.execute(_sql_for(template))
            _add_missing_columns(conn)

        try:
            # Two stores opening one new file at once: switching to WAL can fail at once with
            # "database is locked" (no busy handler there), so retry within busy_timeout.
            prepare_retrying(conn, prepare, self._busy_timeout)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _run_sync(self, op: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            if self._closed:
                raise FlowStoreUnavailable("SQLite flow store is closed")
            try:
                conn = self._open()
                return op(conn)
            except sqlite3.Error as exc:
                raise FlowStoreUnavailable(f"SQLite flow store {describe(self._path, exc)}") from None

    async def _run(self, op: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise FlowStoreUnavailable("SQLite flow store is closed")
        return await asyncio.to_thread(self._run_sync, op)

    # ------------------------------------------------------------------------------ primitives

    async def _insert(
        self,
        key: str,
        owner: str,
        kind: str,
        provider: str,
        scopes: str,
        now: float,
        expires: float,
        labels: tuple[str | None, str | None],
    ) -> None:
        q = self._statements
        limit = self.max_pending_per_user
        purge_before = now - self.retention

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(q[_sql.EXPIRE_OWNER], (now, owner, now))
                conn.execute(q[_sql.PURGE_OWNER], (owner, purge_before))
                (count,) = conn.execute(q[_sql.COUNT_OPEN], (owner, now)).fetchone()
                if count >= limit:
                    raise TooManyPendingFlows(limit)
                conn.execute(q[_sql.INSERT], (key, owner, kind, provider, scopes, now, expires, now, *labels))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        await self._run(op)

    async def _update_returning(self, statement: str, params: tuple[object, ...]) -> Row | None:
        sql = self._statements[statement]

        def op(conn: sqlite3.Connection) -> Row | None:
            cursor = conn.execute(sql, params)
            row: Row | None = cursor.fetchone()
            cursor.close()  # finishes the statement (RETURNING) so the write is committed now
            return row

        return await self._run(op)

    async def _select(self, key: str) -> Row | None:
        sql = self._statements[_sql.SELECT]

        def op(conn: sqlite3.Connection) -> Row | None:
            row: Row | None = conn.execute(sql, (key,)).fetchone()
            return row

        return await self._run(op)

    async def _expire(self, now: float) -> int:
        q = self._statements
        purge_before = now - self.retention

        def op(conn: sqlite3.Connection) -> int:
            marked = conn.execute(q[_sql.EXPIRE_ALL], (now, now)).rowcount
            conn.execute(q[_sql.PURGE_ALL], (purge_before,))
            conn.execute(q[_sql.PURGE_REVOKED], (now,))
            return max(marked, 0)

        return await self._run(op)

    async def _revoke(self, key: str, since: float, until: float, now: float) -> None:
        q = self._statements

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(q[_sql.PURGE_REVOKED], (now,))
            conn.execute(q[_sql.REVOKE], (key, since, until))

        await self._run(op)

    async def _revoked(self, session_key: str, owner_row: str, created: float, now: float) -> bool:
        sql = self._statements[_sql.IS_REVOKED]

        def op(conn: sqlite3.Connection) -> bool:
            return conn.execute(sql, (now, session_key, owner_row, created)).fetchone() is not None

        return await self._run(op)

    async def close(self) -> None:
        """Close the connection. Later calls raise :class:`FlowStoreUnavailable`."""

        def shut() -> None:
            with self._lock:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None

        await asyncio.to_thread(shut)
