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
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from mcp_elicit._pg import has_unread_data, retrieve

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


class PostgresDatabase:
    def __init__(self, dsn: str, statements: Statements, *, prefix: str, timeout: float) -> None:
        try:
            import psycopg
            from psycopg.conninfo import conninfo_to_dict
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("Vault.postgres needs psycopg 3: pip install 'mcp-elicit[postgres]'") from exc
        if not isinstance(dsn, str):
            raise TypeError("dsn must be a str")
        try:
            params = conninfo_to_dict(dsn)
        except psycopg.Error:
            raise ValueError("dsn is not a valid libpq connection string or URI") from None
        self._psycopg = psycopg
        self._dsn = dsn
        password = params.get("password")
        self._password = str(password) if password else None
        self._connect_kwargs: dict[str, Any] = {}
        if "connect_timeout" not in params:  # libpq counts whole seconds, minimum 2
            self._connect_kwargs["connect_timeout"] = max(2, math.ceil(timeout))
        self._sql = statements
        self._prefix = prefix
        self._timeout = timeout
        self._lock = asyncio.Lock()
        self._conn: AsyncConnection[Any] | None = None
        self._closed = False
        self._epoch = 0
        self._orphans: set[asyncio.Task[Any]] = set()

    def describe(self) -> str:
        return f"postgres tables {self._sql.tables[0]!r}, {self._sql.tables[1]!r}"

    # ------------------------------------------------------------------------------ errors

    def _scrub(self, text: str) -> str:
        if self._password:
            text = text.replace(self._password, "***")
        return text.replace(self._dsn, "<dsn>") if self._dsn else text

    def _unavailable(self, what: str, exc: BaseException) -> VaultUnavailable:
        first_line = (str(exc).strip().splitlines() or [""])[0]
        detail = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
        return VaultUnavailable(f"PostgreSQL vault: {what} failed: {self._scrub(detail)}")

    # ------------------------------------------------------------------------------ connections

    async def _connect(self, *, autocommit: bool) -> AsyncConnection[Any]:
        conn: AsyncConnection[Any] = await self._psycopg.AsyncConnection.connect(
            self._dsn, autocommit=autocommit, **self._connect_kwargs
        )
        return conn

    async def _shared(self) -> AsyncConnection[Any]:
        current = self._conn
        if current is not None and not current.closed and not current.broken and not has_unread_data(current):
            return current
        await self._discard()
        epoch = self._epoch
        conn = await self._connect(autocommit=True)
        try:
            await conn.execute(f"SET statement_timeout = {_ms(self._timeout)}")
            errors = self._psycopg.errors
            race_lost = (errors.UniqueViolation, errors.DuplicateTable, errors.DuplicateObject)
            for statement in self._sql.schema:
                with contextlib.suppress(*race_lost):
                    await conn.execute(statement)
        except BaseException:
            await conn.close()
            raise
        if epoch != self._epoch:  # abandoned meanwhile: do not install it
            await conn.close()
            raise VaultUnavailable("PostgreSQL vault: abandoned connection attempt")
        self._conn = conn
        return conn

    async def _drop(self, conn: AsyncConnection[Any]) -> None:
        if self._conn is conn:
            self._conn = None
        with contextlib.suppress(Exception):
            await conn.close()

    async def _discard(self) -> None:
        if self._conn is not None:
            await self._drop(self._conn)

    async def _abandon(self, task: asyncio.Task[Any], used: list[AsyncConnection[Any]]) -> None:
        """Stop an operation that ran out of time without waiting for psycopg's cancellation
        (which waits for the server): close its sockets first, then cancel it."""
        self._epoch += 1
        for conn in used:
            await self._drop(conn)
        task.cancel()
        task.add_done_callback(retrieve)
        try:
            await asyncio.wait({task}, timeout=0.5)
        finally:
            if not task.done():
                self._orphans.add(task)
                task.add_done_callback(self._orphans.discard)

    async def _bounded(
        self,
        what: str,
        op: Callable[[], Awaitable[_T]],
        used: list[AsyncConnection[Any]],
        deadline: float,
        timeout: float,  # noqa: ASYNC109 - only reported in the message; the deadline is enforced
    ) -> _T:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(op())
        try:
            done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
        except BaseException:  # the caller was cancelled
            await self._abandon(task, used)
            raise
        if not done:
            await self._abandon(task, used)
            raise VaultUnavailable(f"PostgreSQL vault: no answer to {what} within {timeout:g} s")
        try:
            return task.result()
        except self._psycopg.errors.LockNotAvailable:
            raise VaultUnavailable(
                f"PostgreSQL vault: timed out waiting for the refresh lock ({what})"
            ) from None
        except (self._psycopg.Error, OSError) as exc:
            raise self._unavailable(what, exc) from None

    async def _run(self, what: str, op: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        if self._closed:
            raise VaultUnavailable("PostgreSQL vault is closed")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        try:
            async with asyncio.timeout_at(deadline):
                await self._lock.acquire()
        except TimeoutError:
            raise VaultUnavailable(
                f"PostgreSQL vault: no answer to {what} within {self._timeout:g} s "
                "(waiting for the connection)"
            ) from None
        try:
            if self._closed:
                raise VaultUnavailable("PostgreSQL vault is closed")
            used: list[AsyncConnection[Any]] = []

            async def attempt() -> _T:
                conn = await self._shared()
                used.append(conn)
                try:
                    return await op(conn)
                except BaseException:
                    await self._drop(conn)
                    raise

            return await self._bounded(what, attempt, used, deadline, self._timeout)
        finally:
            self._lock.release()

    # ------------------------------------------------------------------------------ executor

    async def fetchone(self, query: str, params: Sequence[object]) -> Row | None:
        async def op(conn: AsyncConnection[Any]) -> Row | None:
            cursor = await conn.execute(query, tuple(params))
            row = await cursor.fetchone()
            return None if row is None else tuple(row)

        return await self._run("query", op)

    async def fetchall(self, query: str, params: Sequence[object]) -> list[Row]:
        async def op(conn: AsyncConnection[Any]) -> list[Row]:
            cursor = await conn.execute(query, tuple(params))
            return [tuple(row) for row in await cursor.fetchall()]

        return await self._run("query", op)

    async def execute(self, query: str, params: Sequence[object]) -> int:
        async def op(conn: AsyncConnection[Any]) -> int:
            cursor = await conn.execute(query, tuple(params))
            return max(cursor.rowcount, 0)

        return await self._run("write", op)

    # ------------------------------------------------------------------------------ advisory lock

    @contextlib.asynccontextmanager
    async def exclusive(
        self, owner: str, provider: str, *, wait: float, hold: float
    ) -> AsyncIterator[Executor]:
        if self._closed:
            raise VaultUnavailable("PostgreSQL vault is closed")
        await self._run("prepare", _noop)  # tables exist, server reachable
        loop = asyncio.get_running_loop()
        used: list[AsyncConnection[Any]] = []
        key = advisory_key(self._prefix, owner, provider)
        limits = (_ms(wait), _ms(wait + self._timeout), _ms(hold))

        async def open_and_lock() -> AsyncConnection[Any]:
            conn = await self._connect(autocommit=False)
            used.append(conn)
            await conn.execute(_SET_LIMITS, limits)
            await conn.execute(_TAKE_LOCK, (key,))
            return conn

        try:
            conn = await self._bounded(
                "refresh lock", open_and_lock, used, loop.time() + self._timeout + wait, self._timeout + wait
            )
        except BaseException:
            for opened in used:
                await self._drop(opened)
            raise
        try:
            yield _Transaction(self, conn)
            await self._bounded("commit", conn.commit, [conn], loop.time() + self._timeout, self._timeout)
        finally:
            await self._drop(conn)  # closing without a commit rolls back

    async def close(self) -> None:
        self._closed = True
        async with self._lock:
            await self._discard()
        for task in list(self._orphans):
            task.cancel()


async def _noop(conn: AsyncConnection[Any]) -> None:
    return None


class _Transaction:
    """Statements inside the transaction that holds the advisory lock."""

    def __init__(self, db: PostgresDatabase, conn: AsyncConnection[Any]) -> None:
        self._db = db
        self._conn = conn

    async def _statement(self, what: str, op: Callable[[], Awaitable[_T]]) -> _T:
        db = self._db
        timeout = db._timeout
        return await db._bounded(what, op, [self._conn], asyncio.get_running_loop().time() + timeout, timeout)

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
