"""A :class:`SingleUseStore` in PostgreSQL (any number of processes and hosts).

* Consuming is ``INSERT ... ON CONFLICT (token_id) DO NOTHING RETURNING 1`` in autocommit mode:
  the primary key makes exactly one insert of a given id win, across every connection. A returned
  row means "first use".
* Redelivery mode (:class:`~mcp_elicit.state.single_use.RedeliveryStore`) uses the same table and
  two more nullable columns, ``request_digest`` and ``response``: a claim is the same insert with
  the digest (plus one ``SELECT`` when the id is taken), a commit is one
  ``UPDATE ... WHERE response IS NULL RETURNING 1`` (plus one ``SELECT`` when it lost).
* The table is created on first use (``CREATE TABLE IF NOT EXISTS``; the race between two
  processes creating it at the same moment is tolerated). A table made by an earlier version
  without the two redelivery columns gets them (``ALTER TABLE ... ADD COLUMN IF NOT EXISTS``, only
  when the catalog says they are missing; the index too is created only when the catalog lacks it:
  both take a table lock even when there is nothing to do, and this runs on every reconnect).
* One psycopg 3 ``AsyncConnection`` guarded by an ``asyncio.Lock`` (a round trip on a local network
  is a fraction of a millisecond, and psycopg prepares the statement after a few uses).
* Every operation, including waiting for the lock and (re)connecting, runs under a client-side
  timeout; the server also gets a ``statement_timeout``. On any failure the connection is dropped
  and :class:`StateStoreUnavailable` is raised; the next call connects again. A consume whose
  outcome is unknown is never retried here: the engine must fail closed.
* Before a query, an idle connection whose socket has unread data (the server terminated the
  backend or is shutting down) is replaced first, so a connection that died while idle costs no
  failed call.
* psycopg is imported when a store is created, not when :mod:`mcp_elicit.state` is imported.
* A store belongs to one event loop.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from hmac import compare_digest
from typing import TYPE_CHECKING, Any

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit._pg import PgConnection, index_name, index_unless_present, quoted_name, table_parts

from .errors import StateStoreUnavailable
from .single_use import Claim

if TYPE_CHECKING:
    from psycopg import AsyncConnection, sql

__all__ = ["PostgresSingleUseStore"]

_log = logging.getLogger("mcp_elicit.state")


def _check_record(token_id: str, expires_at: float) -> None:
    if not isinstance(token_id, str) or not token_id:
        raise TypeError("token_id must be a non-empty str")
    if isinstance(expires_at, bool) or not isinstance(expires_at, int | float):
        raise TypeError("expires_at must be a number (seconds since the epoch)")
    if not math.isfinite(expires_at):
        raise ValueError("expires_at must be finite")


def _as_bytes(value: object) -> bytes | None:
    """A ``bytea`` column as bytes (psycopg gives bytes; memoryview/bytearray are tolerated)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise TypeError(f"unexpected bytea value of type {type(value).__name__}")


class PostgresSingleUseStore(ClosesOnExit):
    """Single-use token ids in a PostgreSQL table, atomic across processes and hosts.

    ``dsn`` is a libpq connection string or URI (it is never included in error messages).
    ``timeout`` bounds every operation (lock wait + connect + query), in seconds.
    ``purge_every``: after that many consumes, expired rows are deleted (``0`` disables it).
    ``clock`` is the time source for that purge; it must agree with the sealer's clock.
    """

    def __init__(
        self,
        dsn: str,
        *,
        table: str = "mcp_elicit_used_state",
        timeout: float = 5.0,
        purge_every: int = 1000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._pg = PgConnection(
            dsn,
            timeout=timeout,
            label="PostgreSQL single-use store",
            unavailable=StateStoreUnavailable,
            needs="PostgresSingleUseStore",
            chain=True,
        )
        if purge_every < 0:
            raise ValueError("purge_every must be >= 0")
        parts = table_parts(table)
        from psycopg import sql as psql

        self._table = table
        self._purge_every = purge_every
        self._clock = clock
        self._consumed = 0

        ident = psql.Identifier(*parts)
        index = psql.Identifier(index_name(parts[-1], "expires_at_idx"))
        columns = (
            "(token_id text PRIMARY KEY, expires_at double precision NOT NULL, "
            "request_digest text, response bytea)"
        )
        self._q_insert: sql.Composed = psql.SQL(
            "INSERT INTO {} (token_id, expires_at) VALUES (%s, %s) "
            "ON CONFLICT (token_id) DO NOTHING RETURNING 1"
        ).format(ident)
        self._q_claim: sql.Composed = psql.SQL(
            "INSERT INTO {} (token_id, expires_at, request_digest) VALUES (%s, %s, %s) "
            "ON CONFLICT (token_id) DO NOTHING RETURNING 1"
        ).format(ident)
        self._q_claimed: sql.Composed = psql.SQL(
            "SELECT request_digest, response FROM {} WHERE token_id = %s"
        ).format(ident)
        self._q_commit: sql.Composed = psql.SQL(
            "UPDATE {} SET response = %s "
            "WHERE token_id = %s AND request_digest = %s AND response IS NULL RETURNING 1"
        ).format(ident)
        self._q_committed: sql.Composed = psql.SQL(
            "SELECT response FROM {} WHERE token_id = %s AND request_digest = %s"
        ).format(ident)
        # The catalog check is parameterised with the quoted name; the parts are plain identifiers.
        self._regclass = quoted_name(*parts)
        self._q_missing_columns: sql.SQL = psql.SQL(
            "SELECT c FROM unnest(ARRAY['request_digest', 'response']) AS c "
            "WHERE NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass "
            "AND attname = c AND NOT attisdropped)"
        )
        self._q_add_columns: sql.Composed = psql.SQL(
            "ALTER TABLE {} ADD COLUMN IF NOT EXISTS request_digest text, "
            "ADD COLUMN IF NOT EXISTS response bytea"
        ).format(ident)
        purge = "DELETE FROM {} WHERE expires_at < %s"
        self._q_purge: sql.Composed = psql.SQL(purge).format(ident)
        self._pg.ddl = (
            psql.SQL("CREATE TABLE IF NOT EXISTS {} " + columns).format(ident),
            index_unless_present(
                quoted_name(*parts[:-1], index_name(parts[-1], "expires_at_idx")),
                psql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (expires_at)").format(index, ident),
            ),
            self._add_missing_columns,
        )

    @property
    def table(self) -> str:
        """The table's name as given (optionally schema-qualified)."""
        return self._table

    def __repr__(self) -> str:  # never shows the DSN (it may hold a password)
        return f"PostgresSingleUseStore(table={self._table!r})"

    async def _add_missing_columns(self, conn: AsyncConnection[Any]) -> None:
        """A table made by a version without redelivery gets its two columns."""
        cursor = await conn.execute(self._q_missing_columns, (self._regclass,))
        if await cursor.fetchall():
            await conn.execute(self._q_add_columns)

    # ------------------------------------------------------------------------------ operations

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """``True`` the first time ``token_id`` is seen, ``False`` afterwards (atomic)."""
        _check_record(token_id, expires_at)
        params = (token_id, float(expires_at))

        async def insert(conn: AsyncConnection[Any]) -> bool:
            cursor = await conn.execute(self._q_insert, params)
            return await cursor.fetchone() is not None

        result = await self._pg.run("consume", insert)
        await self._count_and_purge()
        return result

    async def _count_and_purge(self) -> None:
        if self._purge_every:
            self._consumed += 1
            if self._consumed % self._purge_every == 0:
                try:
                    await self.purge_expired(self._clock())
                except StateStoreUnavailable as exc:
                    _log.warning("purging expired requestState records failed: %s", exc)

    async def claim(self, token_id: str, request_digest: str, expires_at: float) -> Claim:
        """Record ``(token_id, request_digest)`` unless the id is known; report what is stored."""
        _check_record(token_id, expires_at)
        if not isinstance(request_digest, str) or not request_digest:
            raise TypeError("request_digest must be a non-empty str")
        params = (token_id, float(expires_at), request_digest)

        async def insert(conn: AsyncConnection[Any]) -> Claim:
            cursor = await conn.execute(self._q_claim, params)
            if await cursor.fetchone() is not None:
                return Claim(first=True, same_request=True)
            cursor = await conn.execute(self._q_claimed, (token_id,))
            row = await cursor.fetchone()
            if row is None:  # purged between the two statements: only after expiry, refuse
                return Claim(first=False, same_request=False)
            stored_digest, response = row
            same = isinstance(stored_digest, str) and compare_digest(stored_digest, request_digest)
            return Claim(first=False, same_request=same, response=_as_bytes(response) if same else None)

        result = await self._pg.run("claim", insert)
        await self._count_and_purge()
        return result

    async def commit(self, token_id: str, request_digest: str, response: bytes) -> bytes | None:
        """Store ``response`` unless an answer is stored; returns the answer now stored."""
        if not isinstance(token_id, str) or not token_id:
            raise TypeError("token_id must be a non-empty str")
        if not isinstance(response, bytes):
            raise TypeError("response must be bytes")

        async def update(conn: AsyncConnection[Any]) -> bytes | None:
            cursor = await conn.execute(self._q_commit, (response, token_id, request_digest))
            if await cursor.fetchone() is not None:
                return response
            cursor = await conn.execute(self._q_committed, (token_id, request_digest))
            row = await cursor.fetchone()
            return None if row is None else _as_bytes(row[0])

        return await self._pg.run("commit", update)

    async def purge_expired(self, now: float) -> int:
        """Delete rows with ``expires_at < now``; returns how many were deleted."""
        params = (float(now),)

        async def purge(conn: AsyncConnection[Any]) -> int:
            cursor = await conn.execute(self._q_purge, params)
            return max(cursor.rowcount, 0)

        return await self._pg.run("purge", purge)

    async def close(self) -> None:
        """Close the connection. Later calls raise :class:`StateStoreUnavailable`."""
        await self._pg.close()
