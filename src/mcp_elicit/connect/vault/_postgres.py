"""The vault's PostgreSQL backend (any number of processes and hosts).

* psycopg 3 (async) is imported when a PostgreSQL vault is created, never on import.
* Ordinary statements share one autocommit ``AsyncConnection`` guarded by an ``asyncio.Lock``;
  the tables are created on its first connect (``CREATE TABLE IF NOT EXISTS``; the race between
  two processes creating them at the same moment is tolerated).
* The refresh lock (:meth:`PostgresDatabase.exclusive`) opens a dedicated connection, begins a
  transaction, sets per-transaction ``lock_timeout``, ``statement_timeout`` and
  ``idle_in_transaction_session_timeout`` (so a holder that hangs or dies releases the lock), and
  takes ``pg_advisory_xact_lock(h)`` where ``h`` is a 64-bit hash of (table prefix, owner,
  provider). The re-read, the write and the lock release are one transaction.
* Every operation (waiting for the shared connection, connecting, each statement, commit) runs under
  a client-side timeout; a timed-out operation is abandoned (its socket closed first, so psycopg's
  own cancellation cannot hang), the connection dropped, and :class:`VaultUnavailable` raised. The
  next call connects again. Messages never contain the DSN; a password, should libpq ever echo it,
  is masked.
* A vault belongs to one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from mcp_elicit._pg import PgConnection

from ._db import Executor, Row
from ._sql import Statements
from .errors import VaultUnavailable

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresDatabase", "advisory_key"]

_T = TypeVar("_T")
_LOCK_LABEL: Final = b"mcp-elicit/vault refresh lock\x00"
_SET_LIMITS: Final = (
    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true), "
    "set_config('idle_in_transaction_session_timeout', %s, true)"
)
_TAKE_LOCK: Final = "SELECT pg_advisory_xact_lock(%s)"


def advisory_key(prefix: str, owner: str, provider: str) -> int:
    """The signed 64-bit advisory-lock key for one connection (distinct per table prefix)."""
    data = _LOCK_LABEL + b"\x00".join(
        part.encode("utf-8", "surrogatepass") for part in (prefix, owner, provider)
    )
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big", signed=True)


def _ms(seconds: float) -> str:
    return str(max(1, int(seconds * 1000)))


class _VaultConnection(PgConnection):
    """The shared connection with the vault's messages: the first line of the error only, and a
    refresh lock that could not be had within ``lock_timeout`` said as such."""

    def failure(self, what: str, exc: BaseException) -> Exception:
        if isinstance(exc, self.psycopg.errors.LockNotAvailable):
            return VaultUnavailable(f"{self.label}: timed out waiting for the refresh lock ({what})")
        first_line = (str(exc).strip().splitlines() or [""])[0]
        detail = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
        return VaultUnavailable(f"{self.label}: {what} failed: {self.scrub(detail)}")


class PostgresDatabase:
    def __init__(self, dsn: str, statements: Statements, *, prefix: str, timeout: float) -> None:
        self._pg = _VaultConnection(
            dsn,
            timeout=timeout,
            label="PostgreSQL vault",
            unavailable=VaultUnavailable,
            needs="Vault.postgres",
        )
        self._pg.ddl = statements.schema
        self._sql = statements
        self._prefix = prefix

    def describe(self) -> str:
        return f"postgres tables {self._sql.tables[0]!r}, {self._sql.tables[1]!r}"

    # ------------------------------------------------------------------------------ executor

    async def fetchone(self, query: str, params: Sequence[object]) -> Row | None:
        async def op(conn: AsyncConnection[Any]) -> Row | None:
            cursor = await conn.execute(query, tuple(params))
            row = await cursor.fetchone()
            return None if row is None else tuple(row)

        return await self._pg.run("query", op)

    async def fetchall(self, query: str, params: Sequence[object]) -> list[Row]:
        async def op(conn: AsyncConnection[Any]) -> list[Row]:
            cursor = await conn.execute(query, tuple(params))
            return [tuple(row) for row in await cursor.fetchall()]

        return await self._pg.run("query", op)

    async def execute(self, query: str, params: Sequence[object]) -> int:
        async def op(conn: AsyncConnection[Any]) -> int:
            cursor = await conn.execute(query, tuple(params))
            return max(cursor.rowcount, 0)

        return await self._pg.run("write", op)

    # ------------------------------------------------------------------------------ advisory lock

    @contextlib.asynccontextmanager
    async def exclusive(
        self, owner: str, provider: str, *, wait: float, hold: float
    ) -> AsyncIterator[Executor]:
        pg = self._pg
        await pg.run("prepare", _noop)  # tables exist, server reachable
        loop = asyncio.get_running_loop()
        used: list[AsyncConnection[Any]] = []
        key = advisory_key(self._prefix, owner, provider)
        limits = (_ms(wait), _ms(wait + pg.timeout), _ms(hold))

        async def open_and_lock() -> AsyncConnection[Any]:
            conn = await pg.connect(autocommit=False)
            used.append(conn)
            await conn.execute(_SET_LIMITS, limits)
            await conn.execute(_TAKE_LOCK, (key,))
            return conn

        try:
            conn = await pg.bounded(
                "refresh lock", open_and_lock, used, loop.time() + pg.timeout + wait, pg.timeout + wait
            )
        except BaseException:
            for opened in used:
                await pg.drop(opened)
            raise
        try:
            yield _Transaction(pg, conn)
            await pg.bounded("commit", conn.commit, [conn], loop.time() + pg.timeout, pg.timeout)
        finally:
            await pg.drop(conn)  # closing without a commit rolls back

    async def close(self) -> None:
        await self._pg.close()


async def _noop(conn: AsyncConnection[Any]) -> None:
    return None


class _Transaction:
    """Statements inside the transaction that holds the advisory lock."""

    def __init__(self, pg: PgConnection, conn: AsyncConnection[Any]) -> None:
        self._pg = pg
        self._conn = conn

    async def _statement(self, what: str, op: Callable[[], Awaitable[_T]]) -> _T:
        timeout = self._pg.timeout
        return await self._pg.bounded(
            what, op, [self._conn], asyncio.get_running_loop().time() + timeout, timeout
        )

    async def fetchone(self, query: str, params: Sequence[object]) -> Row | None:
        async def op() -> Row | None:
            cursor = await self._conn.execute(query, tuple(params))
            row = await cursor.fetchone()
            return None if row is None else tuple(row)

        return await self._statement("query", op)

    async def fetchall(self, query: str, params: Sequence[object]) -> list[Row]:
        async def op() -> list[Row]:
            cursor = await self._conn.execute(query, tuple(params))
            return [tuple(row) for row in await cursor.fetchall()]

        return await self._statement("query", op)

    async def execute(self, query: str, params: Sequence[object]) -> int:
        async def op() -> int:
            cursor = await self._conn.execute(query, tuple(params))
            return max(cursor.rowcount, 0)

        return await self._statement("write", op)
