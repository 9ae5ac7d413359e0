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
  when the catalog says they are missing).
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

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from hmac import compare_digest
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_elicit._pg import has_unread_data, index_name, retrieve, table_parts

from .errors import StateStoreUnavailable
from .single_use import Claim

if TYPE_CHECKING:
    from psycopg import AsyncConnection, sql

__all__ = ["PostgresSingleUseStore"]

_log = logging.getLogger("mcp_elicit.state")
_T = TypeVar("_T")


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


class PostgresSingleUseStore:
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
        try:
            import psycopg
            from psycopg import sql as psql
            from psycopg.conninfo import conninfo_to_dict
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "PostgresSingleUseStore needs psycopg 3: pip install 'mcp-elicit[postgres]'"
            ) from exc
        if not isinstance(dsn, str):
            raise TypeError("dsn must be a str")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be a positive number of seconds")
        if purge_every < 0:
            raise ValueError("purge_every must be >= 0")
        parts = table_parts(table)
        try:
            dsn_params = conninfo_to_dict(dsn)
        except psycopg.Error:
            raise ValueError("dsn is not a valid libpq connection string or URI") from None
        # Our own connect timeout unless the DSN sets one (libpq counts whole seconds, minimum 2).
        self._connect_kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in dsn_params:
            self._connect_kwargs["connect_timeout"] = max(2, math.ceil(timeout))
        self._psycopg = psycopg
        self._dsn = dsn
        self._table = table
        self._timeout = float(timeout)
        self._purge_every = purge_every
        self._clock = clock
        self._lock = asyncio.Lock()
        self._conn: AsyncConnection[Any] | None = None
        self._closed = False
        self._consumed = 0
        self._orphans: set[asyncio.Task[Any]] = set()
        self._epoch = 0  # bumped when an operation is abandoned

        ident = psql.Identifier(*parts)
        index = psql.Identifier(index_name(parts[-1], "expires_at_idx"))
        columns = (
            "(token_id text PRIMARY KEY, expires_at double precision NOT NULL, "
            "request_digest text, response bytea)"
        )
        self._q_create_table: sql.Composed = psql.SQL("CREATE TABLE IF NOT EXISTS {} " + columns).format(
            ident
        )
        self._q_create_index: sql.Composed = psql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON {} (expires_at)"
        ).format(index, ident)
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
        self._regclass = ".".join(f'"{part}"' for part in parts)
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
        self._q_timeout: sql.Composed = psql.SQL("SET statement_timeout = {}").format(
            psql.Literal(max(1, int(self._timeout * 1000)))
        )

    @property
    def table(self) -> str:
        return self._table

    def __repr__(self) -> str:  # never shows the DSN (it may hold a password)
        return f"PostgresSingleUseStore(table={self._table!r})"

    # ------------------------------------------------------------------------------ connection

    async def _connection(self) -> AsyncConnection[Any]:
        current = self._conn
        # An idle autocommit connection has nothing to say unless the server is closing it
        # (terminated backend, restart, idle timeout): replace such a connection before sending
        # anything, so that this call still succeeds.
        if current is not None and not current.closed and not current.broken and not has_unread_data(current):
            return current
        await self._discard()
        epoch = self._epoch
        psycopg = self._psycopg
        conn: AsyncConnection[Any] = await psycopg.AsyncConnection.connect(self._dsn, **self._connect_kwargs)
        try:
            await conn.execute(self._q_timeout)
            # Two processes creating the table at the same moment: the loser gets a duplicate
            # error although IF NOT EXISTS was given. The object exists then, which is all we need.
            race_lost = (
                psycopg.errors.UniqueViolation,
                psycopg.errors.DuplicateTable,
                psycopg.errors.DuplicateObject,
            )
            for statement in (self._q_create_table, self._q_create_index):
                with contextlib.suppress(*race_lost):
                    await conn.execute(statement)
            cursor = await conn.execute(self._q_missing_columns, (self._regclass,))
            if await cursor.fetchall():  # a table from a version without redelivery
                with contextlib.suppress(*race_lost, psycopg.errors.DuplicateColumn):
                    await conn.execute(self._q_add_columns)
        except BaseException:
            await conn.close()
            raise
        if epoch != self._epoch:  # this attempt was abandoned meanwhile: do not install it
            await conn.close()
            raise StateStoreUnavailable("PostgreSQL single-use store: abandoned connection attempt")
        self._conn = conn
        return conn

    async def _drop(self, conn: AsyncConnection[Any]) -> None:
        """Forget and close ``conn`` (closing only shuts the socket; it never waits)."""
        if self._conn is conn:
            self._conn = None
        with contextlib.suppress(Exception):  # it is being thrown away anyway
            await conn.close()

    async def _discard(self) -> None:
        if self._conn is not None:
            await self._drop(self._conn)

    async def _attempt(
        self, op: Callable[[AsyncConnection[Any]], Awaitable[_T]], used: list[AsyncConnection[Any]]
    ) -> _T:
        conn = await self._connection()
        used.append(conn)
        try:
            return await op(conn)
        except BaseException:
            await self._drop(conn)
            raise

    async def _abandon(self, task: asyncio.Task[Any], used: list[AsyncConnection[Any]]) -> None:
        """Stop an operation that ran out of time, without waiting for psycopg's own cleanup.

        Cancelling a running psycopg query makes psycopg send a cancel request and wait for the
        server (up to about ten seconds), which is exactly the hang a timeout must avoid. Closing
        the socket first turns that into an immediate failure inside the task.
        """
        self._epoch += 1
        for conn in used:
            await self._drop(conn)
        task.cancel()
        task.add_done_callback(retrieve)
        try:
            await asyncio.wait({task}, timeout=0.5)
        finally:
            if not task.done():  # e.g. stuck in a connect: keep a reference until it ends
                self._orphans.add(task)
                task.add_done_callback(self._orphans.discard)

    async def _run(self, what: str, op: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        if self._closed:
            raise StateStoreUnavailable("PostgreSQL single-use store is closed")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        no_answer = f"PostgreSQL single-use store: no answer to {what} within {self._timeout:g} s"
        try:
            async with asyncio.timeout_at(deadline):
                await self._lock.acquire()
        except TimeoutError:
            raise StateStoreUnavailable(no_answer + " (waiting for the connection)") from None
        try:
            if self._closed:
                raise StateStoreUnavailable("PostgreSQL single-use store is closed")
            used: list[AsyncConnection[Any]] = []
            # The operation runs in its own task: on timeout it is abandoned, never awaited.
            task = asyncio.ensure_future(self._attempt(op, used))
            try:
                done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
            except BaseException:  # the caller was cancelled: the outcome no longer matters
                await self._abandon(task, used)
                raise
            if not done:
                await self._abandon(task, used)
                raise StateStoreUnavailable(no_answer)
            try:
                return task.result()
            except (self._psycopg.Error, OSError) as exc:
                raise StateStoreUnavailable(
                    f"PostgreSQL single-use store: {what} failed: {type(exc).__name__}: {exc}"
                ) from exc
        finally:
            self._lock.release()

    # ------------------------------------------------------------------------------ operations

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """``True`` the first time ``token_id`` is seen, ``False`` afterwards (atomic)."""
        _check_record(token_id, expires_at)
        params = (token_id, float(expires_at))

        async def insert(conn: AsyncConnection[Any]) -> bool:
            cursor = await conn.execute(self._q_insert, params)
            return await cursor.fetchone() is not None

        result = await self._run("consume", insert)
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

        result = await self._run("claim", insert)
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

        return await self._run("commit", update)

    async def purge_expired(self, now: float) -> int:
        """Delete rows with ``expires_at < now``; returns how many were deleted."""
        params = (float(now),)

        async def purge(conn: AsyncConnection[Any]) -> int:
            cursor = await conn.execute(self._q_purge, params)
            return max(cursor.rowcount, 0)

        return await self._run("purge", purge)

    async def close(self) -> None:
        """Close the connection. Later calls raise :class:`StateStoreUnavailable`."""
        self._closed = True
        async with self._lock:
            await self._discard()
        for task in list(self._orphans):
            task.cancel()

    async def __aenter__(self) -> PostgresSingleUseStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
