"""A :class:`SingleUseStore` in an SQLite file (one host; any number of processes on that file).

How it stays atomic and keeps the event loop responsive:

* Table ``used_state(token_id TEXT PRIMARY KEY, expires_at REAL, request_digest TEXT,
  response BLOB)``; consuming is one ``INSERT ... ON CONFLICT(token_id) DO NOTHING`` in autocommit
  mode. SQLite serialises writers (also across processes), so exactly one insert of a given id
  changes a row: that caller gets ``True``, everyone else ``False``.
* Redelivery mode (:class:`~mcp_elicit.state.single_use.RedeliveryStore`): a claim is the same
  insert with the request digest (plus one ``SELECT`` when the id is taken); a commit is one
  ``UPDATE ... WHERE response IS NULL`` (plus one ``SELECT`` when it lost). The digest never
  changes once written, so the two statements need no transaction around them. A file made by an
  earlier version gets the two columns added when it is opened.
* The file is in WAL mode. Two connections are kept:

  - a *fast* one with a zero busy timeout, used inline on the event loop thread. An uncontended
    insert blocks the loop for about 10 microseconds (measured: mean 9.5 us, p99 22 us, p99.9
    0.2 ms on a local disk; no fsync with ``synchronous=NORMAL`` in WAL mode), which is cheaper
    than a thread hop. It never waits: if the file is locked (another process or thread is
    writing) it fails at once with SQLITE_BUSY and the call moves to
  - a *slow* one with the real busy timeout, used through :func:`asyncio.to_thread`, so waiting for
    a lock never blocks the loop. Opening, purging, checkpointing and closing also run there.

  The fast connection does not auto-checkpoint (a checkpoint fsyncs); every 1000 inline inserts
  a passive checkpoint runs in the worker thread instead.
* ``durable=True`` switches to ``synchronous=FULL`` (an fsync per consume, so a power cut cannot
  forget a consumed id) and then every insert goes through the worker thread.
* ``":memory:"`` gives a private in-memory store (one connection, this process only), handy in
  tests.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from hmac import compare_digest
from typing import Final, TypeVar

from mcp_elicit._closing import ClosesOnExit
from mcp_elicit._sqlite import connect_private, describe, is_busy, prepare_retrying

from .errors import StateStoreUnavailable
from .single_use import Claim

__all__ = ["SQLiteSingleUseStore"]

_log = logging.getLogger("mcp_elicit.state")

# Fixed SQL (no interpolation anywhere): the table name is not configurable for SQLite; use
# another file for another store.
_CREATE_TABLE: Final = (
    "CREATE TABLE IF NOT EXISTS used_state "
    "(token_id TEXT PRIMARY KEY NOT NULL, expires_at REAL NOT NULL, request_digest TEXT, "
    "response BLOB) WITHOUT ROWID"
)
_REDELIVERY_COLUMNS: Final = (("request_digest", "TEXT"), ("response", "BLOB"))
_CLAIM: Final = (
    "INSERT INTO used_state (token_id, expires_at, request_digest) VALUES (?, ?, ?) "
    "ON CONFLICT (token_id) DO NOTHING"
)
_CLAIMED: Final = "SELECT request_digest, response FROM used_state WHERE token_id = ?"
_COMMIT: Final = (
    "UPDATE used_state SET response = ? WHERE token_id = ? AND request_digest = ? AND response IS NULL"
)
_COMMITTED: Final = "SELECT response FROM used_state WHERE token_id = ? AND request_digest = ?"
_CREATE_INDEX: Final = "CREATE INDEX IF NOT EXISTS used_state_expires_at ON used_state (expires_at)"
_INSERT: Final = (
    "INSERT INTO used_state (token_id, expires_at) VALUES (?, ?) ON CONFLICT (token_id) DO NOTHING"
)
_PURGE: Final = "DELETE FROM used_state WHERE expires_at < ?"
_CHECKPOINT_EVERY: Final = 1000  # writes between two passive WAL checkpoints
_T = TypeVar("_T")


def _check_record(token_id: str, expires_at: float) -> None:
    if not isinstance(token_id, str) or not token_id:
        raise TypeError("token_id must be a non-empty str")
    if isinstance(expires_at, bool) or not isinstance(expires_at, int | float):
        raise TypeError("expires_at must be a number (seconds since the epoch)")
    if not math.isfinite(expires_at):
        raise ValueError("expires_at must be finite")


def _add_redelivery_columns(conn: sqlite3.Connection) -> None:
    """Give a table from a version without redelivery its two extra columns."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(used_state)")}
    for name, kind in _REDELIVERY_COLUMNS:
        if name not in present:
            try:
                conn.execute(f"ALTER TABLE used_state ADD COLUMN {name} {kind}")  # fixed names
            except sqlite3.OperationalError as exc:
                if "duplicate column" not in str(exc):  # another process added it meanwhile
                    raise


def _claim_on(conn: sqlite3.Connection, token_id: str, expires_at: float, digest: str) -> Claim:
    if conn.execute(_CLAIM, (token_id, float(expires_at), digest)).rowcount == 1:
        return Claim(first=True, same_request=True)
    row = conn.execute(_CLAIMED, (token_id,)).fetchone()
    if row is None:  # purged between the two statements: only after expiry, refuse
        return Claim(first=False, same_request=False)
    stored, response = row
    same = isinstance(stored, str) and compare_digest(stored, digest)
    stored_response = bytes(response) if same and response is not None else None
    return Claim(first=False, same_request=same, response=stored_response)


def _commit_on(conn: sqlite3.Connection, token_id: str, digest: str, response: bytes) -> bytes | None:
    if conn.execute(_COMMIT, (response, token_id, digest)).rowcount == 1:
        return response
    row = conn.execute(_COMMITTED, (token_id, digest)).fetchone()
    return None if row is None or row[0] is None else bytes(row[0])


class SQLiteSingleUseStore(ClosesOnExit):
    """Single-use token ids in an SQLite file. Safe across asyncio tasks, threads and processes.

    ``busy_timeout``: seconds to wait for another writer before giving up with
    :class:`StateStoreUnavailable`. ``purge_every``: after that many consumes, expired records are
    deleted (``0`` disables it; call :meth:`purge_expired` yourself then). ``clock`` is the time
    source for that automatic purge; it must agree with the clock of the sealer.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "mcp-elicit-state.db",
        *,
        busy_timeout: float = 5.0,
        purge_every: int = 1000,
        durable: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if busy_timeout < 0:
            raise ValueError("busy_timeout must be >= 0")
        if purge_every < 0:
            raise ValueError("purge_every must be >= 0")
        self._path = os.fspath(path)
        self._memory = self._path == ":memory:"
        self._busy_timeout = float(busy_timeout)
        self._purge_every = purge_every
        self._durable = durable
        self._clock = clock
        self._init_lock = threading.Lock()
        self._fast_lock = threading.Lock()
        self._slow_lock = self._fast_lock if self._memory else threading.Lock()
        self._fast: sqlite3.Connection | None = None
        self._slow: sqlite3.Connection | None = None
        self._closed = False
        self._consumed = 0
        self._writes_since_checkpoint = 0

    @property
    def path(self) -> str:
        """The database file (or ``":memory:"``, a database in this process's memory only)."""
        return self._path

    def __repr__(self) -> str:
        return f"SQLiteSingleUseStore({self._path!r})"

    # ------------------------------------------------------------------------------ connections

    def _connect(self, timeout: float) -> sqlite3.Connection:
        path = self._path
        conn = connect_private(path, timeout=timeout)
        try:
            conn.execute(f"PRAGMA synchronous = {'FULL' if self._durable else 'NORMAL'}")
            # After a checkpoint, cut the WAL file back to this size instead of keeping its peak.
            conn.execute("PRAGMA journal_size_limit = 4194304")
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_sync(self) -> None:
        with self._init_lock:
            if self._closed:
                raise StateStoreUnavailable("SQLite single-use store is closed")
            if self._fast is not None:
                return
            try:
                slow = self._connect(self._busy_timeout)
            except sqlite3.Error as exc:
                raise StateStoreUnavailable(
                    f"SQLite single-use store: cannot open {describe(self._path, exc)}"
                ) from exc
            try:
                self._prepare(slow)
                if self._memory:
                    fast = slow
                else:
                    fast = self._connect(0.0)
                    fast.execute("PRAGMA wal_autocheckpoint = 0")
            except sqlite3.Error as exc:
                slow.close()
                raise StateStoreUnavailable(
                    f"SQLite single-use store: cannot prepare {describe(self._path, exc)}"
                ) from exc
            except BaseException:
                slow.close()
                raise
            self._slow = slow
            self._fast = fast

    def _prepare(self, conn: sqlite3.Connection) -> None:
        """Switch to WAL and create the table, retrying while another connection holds a lock
        (see :func:`mcp_elicit._sqlite.prepare_retrying`)."""

        def prepare(conn: sqlite3.Connection) -> None:
            if not self._memory:
                (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
                if str(mode).lower() != "wal":
                    raise StateStoreUnavailable(
                        f"SQLite single-use store: {self._path!r} refused WAL mode ({mode})"
                    )
            conn.execute(_CREATE_TABLE)
            conn.execute(_CREATE_INDEX)
            _add_redelivery_columns(conn)

        prepare_retrying(conn, prepare, self._busy_timeout)

    def _close_sync(self) -> None:
        with self._init_lock:
            self._closed = True
            locks = [self._fast_lock]
            if self._slow_lock is not self._fast_lock:
                locks.append(self._slow_lock)
            for lock in locks:
                lock.acquire()
            try:
                for conn in {id(c): c for c in (self._fast, self._slow) if c is not None}.values():
                    conn.close()
                self._fast = None
                self._slow = None
            finally:
                for lock in reversed(locks):
                    lock.release()

    # ------------------------------------------------------------------------------ operations

    @staticmethod
    def _insert(conn: sqlite3.Connection, token_id: str, expires_at: float) -> bool:
        cursor = conn.execute(_INSERT, (token_id, float(expires_at)))
        return cursor.rowcount == 1

    def _try_fast(self, op: Callable[[sqlite3.Connection], _T]) -> _T | None:
        """Inline attempt that never waits; ``None`` means "busy, use the worker thread".

        ``op`` must not return ``None``. A multi-statement ``op`` that meets a busy file after its
        first statement is repeated on the worker thread; the operations here are written so that
        repeating them gives the same answer (the first statement's effect is found again).
        """
        conn = self._fast
        if conn is None or self._durable or not self._fast_lock.acquire(blocking=False):
            return None
        try:
            return op(conn)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                return None
            raise StateStoreUnavailable(f"SQLite single-use store {describe(self._path, exc)}") from exc
        except sqlite3.Error as exc:
            raise StateStoreUnavailable(f"SQLite single-use store {describe(self._path, exc)}") from exc
        finally:
            self._fast_lock.release()

    def _run_slow(self, op: Callable[[sqlite3.Connection], _T]) -> _T:
        self._open_sync()
        with self._slow_lock:
            conn = self._slow
            if conn is None:
                raise StateStoreUnavailable("SQLite single-use store is closed")
            try:
                return op(conn)
            except sqlite3.Error as exc:
                raise StateStoreUnavailable(f"SQLite single-use store {describe(self._path, exc)}") from exc

    async def _write(self, op: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run a write inline when the file is free, else on the worker thread."""
        if self._closed:
            raise StateStoreUnavailable("SQLite single-use store is closed")
        result = self._try_fast(op)
        if result is None:
            result = await asyncio.to_thread(self._run_slow, op)
        if not self._memory:
            # The fast connection never checkpoints by itself (and writes through the worker
            # thread add to the log too): checkpoint off the loop every so many writes.
            self._writes_since_checkpoint += 1
            if self._writes_since_checkpoint >= _CHECKPOINT_EVERY:
                self._writes_since_checkpoint = 0
                try:
                    await asyncio.to_thread(self._checkpoint_sync)
                except sqlite3.Error as exc:
                    _log.warning("checkpointing the requestState store failed: %s", exc)
        return result

    def _purge_sync(self, now: float) -> int:
        self._open_sync()
        with self._slow_lock:
            conn = self._slow
            if conn is None:
                raise StateStoreUnavailable("SQLite single-use store is closed")
            try:
                deleted = conn.execute(_PURGE, (float(now),)).rowcount
            except sqlite3.Error as exc:
                raise StateStoreUnavailable(f"SQLite single-use store {describe(self._path, exc)}") from exc
        return max(deleted, 0)

    def _checkpoint_sync(self) -> None:
        # Both locks: writes wait (on the worker thread) while the log is copied back. A
        # checkpoint that writers keep overtaking never reaches the end of the log, which then
        # never restarts and grows without limit (a gigabyte a minute under load).
        if self._memory:
            return  # no log; and its two locks are one
        with self._fast_lock, self._slow_lock:
            conn = self._slow
            if conn is not None:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """``True`` the first time ``token_id`` is seen, ``False`` afterwards (atomic)."""
        _check_record(token_id, expires_at)
        result = await self._write(lambda conn: self._insert(conn, token_id, expires_at))
        await self._count_and_purge()
        return result

    async def claim(self, token_id: str, request_digest: str, expires_at: float) -> Claim:
        """Record ``(token_id, request_digest)`` unless the id is known; report what is stored."""
        _check_record(token_id, expires_at)
        if not isinstance(request_digest, str) or not request_digest:
            raise TypeError("request_digest must be a non-empty str")
        result = await self._write(lambda conn: _claim_on(conn, token_id, expires_at, request_digest))
        await self._count_and_purge()
        return result

    async def commit(self, token_id: str, request_digest: str, response: bytes) -> bytes | None:
        """Store ``response`` unless an answer is stored; returns the answer now stored."""
        if not isinstance(token_id, str) or not token_id:
            raise TypeError("token_id must be a non-empty str")
        if not isinstance(response, bytes):
            raise TypeError("response must be bytes")
        # Wrapped in a list so that "no row" (None) is not mistaken for "busy" by _try_fast.
        (stored,) = await self._write(lambda conn: [_commit_on(conn, token_id, request_digest, response)])
        return stored

    async def _count_and_purge(self) -> None:
        if self._purge_every:
            self._consumed += 1
            if self._consumed % self._purge_every == 0:
                await self._purge_quietly()

    async def _purge_quietly(self) -> None:
        try:
            await self.purge_expired(self._clock())
        except StateStoreUnavailable as exc:
            _log.warning("purging expired requestState records failed: %s", exc)

    async def purge_expired(self, now: float) -> int:
        """Delete records with ``expires_at < now``; returns how many were deleted."""
        if self._closed:
            raise StateStoreUnavailable("SQLite single-use store is closed")
        return await asyncio.to_thread(self._purge_sync, now)

    async def close(self) -> None:
        """Close both connections. Later calls raise :class:`StateStoreUnavailable`."""
        await asyncio.to_thread(self._close_sync)
