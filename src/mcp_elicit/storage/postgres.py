"""The PostgreSQL :class:`~mcp_elicit.storage.database.Database` (any number of processes and hosts).

* psycopg 3 (async) is imported when a database is made, never on import.
* Statements share one autocommit connection (:class:`~mcp_elicit.storage.pg_connection.PgConnection`:
  one operation at a time, each bounded by ``timeout`` including the wait for the connection and
  a reconnect; an abandoned operation never closes a socket the event loop watches). The schema
  runs on every new connection: ``CREATE TABLE IF NOT EXISTS`` (the race between two processes
  creating a table at the same moment is tolerated), an :class:`~mcp_elicit.storage.database.Index`
  only when the catalog lacks it (creating takes a table lock even when there is nothing to do).
* :meth:`PostgresDatabase.transaction` runs on the shared connection; with ``lock`` it first takes
  ``pg_advisory_xact_lock`` on :func:`lock_key` of (``lock_scope``, lock), so that transactions of
  one lock (the flows of one owner) are serialised across hosts.
* :meth:`PostgresDatabase.exclusive` opens a dedicated connection, begins a transaction, sets
  per-transaction ``lock_timeout``, ``statement_timeout`` and ``idle_in_transaction_session_timeout``
  (so a holder that hangs or dies releases the lock), and takes ``pg_advisory_xact_lock``; the
  block's statements and the release are that one transaction.
* A database belongs to one event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from .database import Executor, Index, Row, Schema, Step
from .pg_connection import PgConnection

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresDatabase", "lock_key"]

_T = TypeVar("_T")
_SET_LIMITS: Final = (
    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true), "
    "set_config('idle_in_transaction_session_timeout', %s, true)"
)
_TAKE_LOCK: Final = "SELECT pg_advisory_xact_lock(%s)"
_MISSING: Final = "SELECT to_regclass(%s::text) IS NULL"


def lock_key(scope: str, name: str) -> int:
    """The signed 64-bit advisory-lock key of the lock ``name`` in ``scope`` (a store's tables)."""
    data = f"{scope}\x00{name}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big", signed=True)


def _ms(seconds: float) -> str:
    return str(max(1, int(seconds * 1000)))


def _unless_present(index: Index) -> Callable[[AsyncConnection[Any]], Awaitable[None]]:
    async def step(conn: AsyncConnection[Any]) -> None:
        cursor = await conn.execute(_MISSING, (index.name,))
        row = await cursor.fetchone()
        if row is None or row[0]:
            await conn.execute(index.create)

    return step


class PostgresDatabase:
    """A store's tables in PostgreSQL (see the module docstring). ``dsn`` is a libpq connection
    string or URI (never part of a message or a repr); ``label`` starts every message
    (``"PostgreSQL vault"``) and names the store in the :class:`ImportError` without psycopg;
    ``where`` describes the tables in :meth:`describe`; ``chain`` keeps psycopg's error as
    the cause of the store's own."""

    def __init__(
        self,
        dsn: str,
        schema: Schema,
        *,
        label: str,
        unavailable: Callable[[str], Exception],
        timeout: float,
        where: str,
        lock_scope: str = "",
        chain: bool = False,
    ) -> None:
        self._pg = PgConnection(dsn, timeout=timeout, label=label, unavailable=unavailable, chain=chain)
        self._pg.ddl = [_unless_present(item) if isinstance(item, Index) else item for item in schema]
        self._where = where
        self._lock_scope = lock_scope

    @property
    def dialect(self) -> Literal["postgres"]:
        return "postgres"

    def describe(self) -> str:
        return f"postgres {self._where}"

    def lock_key(self, name: str) -> int:
        """The advisory-lock key of the lock ``name`` (:func:`lock_key` in this database's scope)."""
        return lock_key(self._lock_scope, name)

    # ------------------------------------------------------------------------------ executor

    async def fetchone(self, query: str, params: Sequence[object] = (), *, what: str = "query") -> Row | None:
        async def op(conn: AsyncConnection[Any]) -> Row | None:
            cursor = await conn.execute(query, params)
            row: Row | None = await cursor.fetchone()
            return row

        return await self._pg.run(what, op)

    async def fetchall(self, query: str, params: Sequence[object] = (), *, what: str = "query") -> list[Row]:
        async def op(conn: AsyncConnection[Any]) -> list[Row]:
            cursor = await conn.execute(query, params)
            rows: list[Row] = await cursor.fetchall()
            return rows

        return await self._pg.run(what, op)

    async def execute(self, query: str, params: Sequence[object] = (), *, what: str = "write") -> int:
        async def op(conn: AsyncConnection[Any]) -> int:
            cursor = await conn.execute(query, params)
            return max(cursor.rowcount, 0)

        return await self._pg.run(what, op)

    async def write_or_read(self, write: Step, read: Step, *, what: str) -> tuple[int, Row | None]:
        async def op(conn: AsyncConnection[Any]) -> tuple[int, Row | None]:
            cursor = await conn.execute(*write)
            if cursor.rowcount > 0:
                return cursor.rowcount, None
            cursor = await conn.execute(*read)
            row: Row | None = await cursor.fetchone()
            return 0, row

        return await self._pg.run(what, op)

    async def transaction(
        self, steps: Sequence[Step], *, lock: str | None = None, what: str = "write"
    ) -> list[int]:
        key = None if lock is None else self.lock_key(lock)

        async def op(conn: AsyncConnection[Any]) -> list[int]:
            counts: list[int] = []
            async with conn.transaction():
                if key is not None:
                    await conn.execute(_TAKE_LOCK, (key,))
                for query, params in steps:
                    cursor = await conn.execute(query, params)
                    counts.append(max(cursor.rowcount, 0))
            return counts

        return await self._pg.run(what, op)

    # ------------------------------------------------------------------------------ advisory lock

    @contextlib.asynccontextmanager
    async def exclusive(self, name: str, *, wait: float, hold: float, what: str) -> AsyncIterator[Executor]:
        pg = self._pg
        await pg.run("prepare", _noop)  # tables exist, server reachable
        loop = asyncio.get_running_loop()
        used: list[AsyncConnection[Any]] = []
        key = self.lock_key(name)
        limits = (_ms(wait), _ms(wait + pg.timeout), _ms(hold))

        async def open_and_lock() -> AsyncConnection[Any]:
            conn = await pg.connect(autocommit=False)
            used.append(conn)
            await conn.execute(_SET_LIMITS, limits)
            await conn.execute(_TAKE_LOCK, (key,))
            return conn

        try:
            conn = await pg.bounded(
                what, open_and_lock, used, loop.time() + pg.timeout + wait, pg.timeout + wait
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
    """Statements inside the transaction that holds the advisory lock, each bounded by the
    timeout (and abandoned like any other operation)."""

    def __init__(self, pg: PgConnection, conn: AsyncConnection[Any]) -> None:
        self._pg = pg
        self._conn = conn

    async def _statement(self, what: str, op: Callable[[], Awaitable[_T]]) -> _T:
        timeout = self._pg.timeout
        return await self._pg.bounded(
            what, op, [self._conn], asyncio.get_running_loop().time() + timeout, timeout
        )

    async def fetchone(self, query: str, params: Sequence[object] = (), *, what: str = "query") -> Row | None:
        async def op() -> Row | None:
            cursor = await self._conn.execute(query, params)
            row: Row | None = await cursor.fetchone()
            return row

        return await self._statement(what, op)

    async def fetchall(self, query: str, params: Sequence[object] = (), *, what: str = "query") -> list[Row]:
        async def op() -> list[Row]:
            cursor = await self._conn.execute(query, params)
            rows: list[Row] = await cursor.fetchall()
            return rows

        return await self._statement(what, op)

    async def execute(self, query: str, params: Sequence[object] = (), *, what: str = "write") -> int:
        async def op() -> int:
            cursor = await self._conn.execute(query, params)
            return max(cursor.rowcount, 0)

        return await self._statement(what, op)
