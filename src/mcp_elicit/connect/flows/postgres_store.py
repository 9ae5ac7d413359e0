"""A :class:`FlowStore` in PostgreSQL (any number of processes and hosts).

* The table (name configurable, ``schema.name`` allowed, plain identifiers only), and
  ``<table>_revoked`` for the pages' sign-outs, are created on first use (``CREATE TABLE IF NOT
  EXISTS``; two processes racing to create them is tolerated); a table made by an earlier version
  gets the newer columns (``ADD COLUMN IF NOT EXISTS``). Indexes and columns are looked up in the
  catalog first, so a reconnect takes no table lock when the schema is complete.
* Transitions are single ``UPDATE ... WHERE status = <expected> ... RETURNING`` statements in
  autocommit mode: under READ COMMITTED a second concurrent updater waits for the first one's row
  lock, re-evaluates the ``WHERE`` against the new row version and matches nothing, so exactly one
  ``begin`` wins, across connections and hosts.
* Creation runs in a transaction that first takes ``pg_advisory_xact_lock`` on a 64-bit hash of
  (table, owner), so concurrent creates for one owner are serialised and the cap holds.
* One psycopg 3 ``AsyncConnection`` guarded by an ``asyncio.Lock``. Every operation (waiting for
  the lock, connecting, the statements) runs under one client-side deadline, and the server gets a
  ``statement_timeout``. On timeout the connection's socket is closed before the task is
  cancelled (cancelling a running psycopg query would otherwise wait for the server), so a dead
  database costs ``timeout`` seconds, not more. Any failure drops the connection and raises
  :class:`FlowStoreUnavailable`; the next call reconnects.
* psycopg is imported when a store is created, not when the package is imported. A store belongs
  to one event loop.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit._pg import (
    PgConnection,
    columns_unless_present,
    index_name,
    index_unless_present,
    quoted_name,
    table_parts,
)

from . import _sql
from .errors import FlowStoreUnavailable, TooManyPendingFlows
from .model import DEFAULT_MAX_PENDING_PER_USER, DEFAULT_RETENTION, MAX_FLOW_TTL, Row
from .store import BaseFlowStore

if TYPE_CHECKING:
    from psycopg import AsyncConnection, sql

__all__ = ["PostgresFlowStore"]


class PostgresFlowStore(BaseFlowStore, ClosesOnExit):
    """Pending flows in a PostgreSQL table, atomic across processes and hosts.

    ``dsn``: a libpq connection string or URI (never included in messages). ``timeout``: bound on
    every operation, in seconds. Other options as for :class:`SQLiteFlowStore`.
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "mcp_elicit_flows",
        max_pending_per_user: int = DEFAULT_MAX_PENDING_PER_USER,
        ttl: float = MAX_FLOW_TTL,
        retention: float = DEFAULT_RETENTION,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(max_pending_per_user=max_pending_per_user, ttl=ttl, retention=retention, clock=clock)
        self._pg = PgConnection(
            dsn,
            timeout=timeout,
            label="PostgreSQL flow store",
            unavailable=FlowStoreUnavailable,
            needs="PostgresFlowStore",
            # a refusal: the connection is fine (the transaction was rolled back)
            passthrough=(TooManyPendingFlows,),
        )
        parts = table_parts(table)
        from psycopg import sql as psql

        self._table = table

        names = {
            "table": psql.Identifier(*parts),
            "owner_index": psql.Identifier(index_name(parts[-1], "owner_idx")),
            "expires_index": psql.Identifier(index_name(parts[-1], "expires_idx")),
            # the pages' sign-outs, next to the flows (same schema)
            "revoked": psql.Identifier(*parts[:-1], index_name(parts[-1], "revoked")),
        }

        def compose(template: str) -> sql.Composed:
            return psql.SQL(template.replace("?", "%s")).format(**names)

        # Run on every (re)connect, so the indexes and the columns added since an earlier
        # version are looked up in the catalog first: creating or altering takes a table lock
        # even when there is nothing to do (see index_unless_present, columns_unless_present).
        indexes = {_sql.CREATE_OWNER_INDEX: "owner_idx", _sql.CREATE_EXPIRES_INDEX: "expires_idx"}
        self._pg.ddl = [
            index_unless_present(quoted_name(*parts[:-1], index_name(parts[-1], indexes[t])), compose(t))
            if t in indexes
            else compose(t)
            for t in _sql.SCHEMA
        ] + [
            columns_unless_present(
                quoted_name(*parts),
                _sql.ADDED_COLUMNS,
                lambda column: psql.SQL(_sql.ADD_COLUMN_IF_NOT_EXISTS).format(
                    table=names["table"], column=psql.Identifier(column)
                ),
            )
        ]
        self._q: dict[str, sql.Composed] = {template: compose(template) for template in _sql.STATEMENTS}
        self._q_lock: sql.SQL = psql.SQL("SELECT pg_advisory_xact_lock(%s)")

    @property
    def table(self) -> str:
        """The flows table's name as given (optionally schema-qualified); the pages' sign-outs are
        kept next to it, in ``<table>_revoked``."""
        return self._table

    def __repr__(self) -> str:  # never the DSN (it may hold a password)
        return f"PostgresFlowStore(table={self._table!r})"

    def _lock_key(self, owner: str) -> int:
        digest = hashlib.sha256(f"mcp-elicit-flows\0{self._table}\0{owner}".encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)

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
        q = self._q
        limit = self.max_pending_per_user
        purge_before = now - self.retention
        lock_key = self._lock_key(owner)

        async def op(conn: AsyncConnection[Any]) -> None:
            async with conn.transaction():
                await conn.execute(self._q_lock, (lock_key,))
                await conn.execute(q[_sql.EXPIRE_OWNER], (now, owner, now))
                await conn.execute(q[_sql.PURGE_OWNER], (owner, purge_before))
                cursor = await conn.execute(q[_sql.COUNT_OPEN], (owner, now))
                row = await cursor.fetchone()
                assert row is not None
                if row[0] >= limit:
                    raise TooManyPendingFlows(limit)
                await conn.execute(
                    q[_sql.INSERT], (key, owner, kind, provider, scopes, now, expires, now, *labels)
                )

        await self._pg.run("create", op)

    async def _update_returning(self, statement: str, params: tuple[object, ...]) -> Row | None:
        query = self._q[statement]

        async def op(conn: AsyncConnection[Any]) -> Row | None:
            cursor = await conn.execute(query, params)
            row: Row | None = await cursor.fetchone()
            return row

        return await self._pg.run("update", op)

    async def _select(self, key: str) -> Row | None:
        query = self._q[_sql.SELECT]

        async def op(conn: AsyncConnection[Any]) -> Row | None:
            cursor = await conn.execute(query, (key,))
            row: Row | None = await cursor.fetchone()
            return row

        return await self._pg.run("select", op)

    async def _expire(self, now: float) -> int:
        q = self._q
        purge_before = now - self.retention

        async def op(conn: AsyncConnection[Any]) -> int:
            cursor = await conn.execute(q[_sql.EXPIRE_ALL], (now, now))
            marked = max(cursor.rowcount, 0)
            await conn.execute(q[_sql.PURGE_ALL], (purge_before,))
            await conn.execute(q[_sql.PURGE_REVOKED], (now,))
            return marked

        return await self._pg.run("expire", op)

    async def _revoke(self, key: str, since: float, until: float, now: float) -> None:
        q = self._q

        async def op(conn: AsyncConnection[Any]) -> None:
            await conn.execute(q[_sql.PURGE_REVOKED], (now,))
            await conn.execute(q[_sql.REVOKE], (key, since, until))

        await self._pg.run("revoke", op)

    async def _revoked(self, session_key: str, owner_row: str, created: float, now: float) -> bool:
        query = self._q[_sql.IS_REVOKED]

        async def op(conn: AsyncConnection[Any]) -> bool:
            cursor = await conn.execute(query, (now, session_key, owner_row, created))
            return await cursor.fetchone() is not None

        return await self._pg.run("revoked", op)

    async def close(self) -> None:
        """Close the connection. Later calls raise :class:`FlowStoreUnavailable`."""
        await self._pg.close()
