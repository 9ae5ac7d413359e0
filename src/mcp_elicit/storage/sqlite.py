"""The SQLite :class:`~mcp_elicit.storage.database.Database`: one file, any number of processes.

* A new file is created with mode 0600 (SQLite gives its -wal and -shm files the same mode): the
  stores keep flow owners, answers and secrets, which another local user must not read. The file
  is in WAL mode (a file that refuses it is reported), with ``synchronous=NORMAL``, or ``FULL``
  when ``durable`` (an fsync per write: a power cut then forgets no write we reported).
* A *worker* connection with the real busy timeout runs statements through
  :func:`asyncio.to_thread` under a lock, so waiting for another process's write lock never blocks
  the event loop. Opening (WAL, schema), transactions, leases, checkpoints and closing run there.
* ``inline=True`` (not with ``durable``) adds a *fast* connection with a zero busy timeout, used on
  the event loop thread. An uncontended insert blocks the loop for about 10 microseconds
  (measured: mean 9.5 us, p99 22 us, p99.9 0.2 ms on a local disk; no fsync with
  ``synchronous=NORMAL`` in WAL mode), which is cheaper than a thread hop. It never waits: if the
  file is locked (another process or thread is writing) it fails at once with SQLITE_BUSY and the
  statement goes to the worker instead, which is safe because a refused statement did nothing.
  The fast connection does not checkpoint by itself (a checkpoint fsyncs): every 1000 statements
  a passive checkpoint runs on the worker, with both connections held (see :meth:`_checkpoint`).
* ``":memory:"``: one private in-memory connection (this process only), handy in tests.
* :meth:`exclusive` takes a lease row in ``leases`` (``INSERT ... ON CONFLICT DO UPDATE ... WHERE
  expires_at < now``), polled with backoff; a crashed holder's lease expires after ``hold``.
* ``sqlite3`` errors become ``unavailable(message)``; the message names the file and, when it
  cannot be written, what to check (:func:`error_text`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any, Final, Literal, TypeVar, TypeVarTuple

from .database import Executor, Row, Schema, Step

__all__ = ["SQLiteDatabase", "connect_private", "error_text", "is_busy", "prepare_retrying"]

_T = TypeVar("_T")
_A = TypeVar("_A")
_B = TypeVar("_B")
_Args = TypeVarTuple("_Args")
_log = logging.getLogger("mcp_elicit.storage")

_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6
_SQLITE_READONLY: Final = 8
_SQLITE_CANTOPEN: Final = 14
_CHECKPOINT_EVERY: Final = 1000  # statements between two passive WAL checkpoints


class _Busy(enum.Enum):
    BUSY = enum.auto()  # the inline attempt met a locked file: use the worker


_BUSY: Final = _Busy.BUSY  # a global: cheaper to look up than an enum member, on every statement


# ------------------------------------------------------------------------------ the file


def connect_private(path: str, *, timeout: float) -> sqlite3.Connection:
    """``sqlite3.connect`` to a file that only this user can read: a new database file is created
    with mode 0600 first. Autocommit mode; usable from any thread (one at a time)."""
    if path and path != ":memory:" and not path.startswith("file:") and not os.path.exists(path):
        try:
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except OSError as exc:  # what sqlite3.connect itself raises for a path it cannot open
            raise sqlite3.OperationalError(f"unable to open database file: {exc.strerror or exc}") from exc
    return sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)


def error_text(path: str, exc: sqlite3.Error) -> str:
    """``exc`` with the database file it concerns, and what to check when the file cannot be
    written: an operator reading the log must know which file, and that WAL mode also needs
    the ``-wal`` and ``-shm`` files next to it."""
    text = f"{path!r}: {exc}"
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (_SQLITE_READONLY, _SQLITE_CANTOPEN) and path != ":memory:":
        text += (
            " (the file and its directory must be writable by this process: SQLite keeps -wal "
            "and -shm files next to it)"
        )
    return text


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds a lock (worth retrying)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def prepare_retrying(
    conn: sqlite3.Connection, prepare: Callable[[sqlite3.Connection], None], timeout: float
) -> None:
    """Run ``prepare`` (switch to WAL, create the schema) on a new connection, retrying while
    another connection holds a lock, for at most ``timeout`` seconds.

    SQLite does not call the busy handler in every case here: switching the journal mode of a
    file that another connection is opening or writing at the same moment fails at once with
    "database is locked". So the busy timeout is applied by hand around the whole preparation.
    Call it from a worker thread: it sleeps between attempts.
    """
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            prepare(conn)
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


# ------------------------------------------------------------------------------ statements


def _rowcount(conn: sqlite3.Connection, query: str, params: Sequence[Any]) -> int:
    rows: int = conn.execute(query, params).rowcount  # never -1: a change (DML) counts its rows
    return rows


def _one(conn: sqlite3.Connection, query: str, params: Sequence[Any]) -> Row | None:
    cursor = conn.execute(query, params)
    row: Row | None = cursor.fetchone()
    cursor.close()  # finishes the statement (RETURNING), so that its write is committed now
    return row


def _all(conn: sqlite3.Connection, query: str, params: Sequence[Any]) -> list[Row]:
    rows: list[Row] = conn.execute(query, params).fetchall()
    return rows


def _write_or_read(conn: sqlite3.Connection, write: Step, read: Step) -> tuple[int, Row | None]:
    query, params = write
    changed: int = conn.execute(query, params).rowcount
    if changed:
        return changed, None
    query, params = read
    row: Row | None = conn.execute(query, params).fetchone()  # a read: nothing to finish
    return 0, row


def _transaction(conn: sqlite3.Connection, steps: Sequence[Step]) -> list[int]:
    conn.execute("BEGIN IMMEDIATE")  # the write lock first: nothing can change what we read
    try:
        counts = [_rowcount(conn, *step) for step in steps]
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return counts


class SQLiteDatabase:
    """One SQLite file (see the module docstring). Safe across asyncio tasks, threads and
    processes. ``label`` starts every message (``"SQLite vault"``); ``busy_timeout`` is how long a
    statement waits for another writer (and, at most, for this process's statements ahead of it);
    ``leases`` names the table of :meth:`exclusive` (created with the schema)."""

    def __init__(
        self,
        path: str,
        schema: Schema,
        *,
        label: str,
        unavailable: Callable[[str], Exception],
        busy_timeout: float,
        durable: bool = False,
        inline: bool = False,
        leases: str | None = None,
    ) -> None:
        if busy_timeout < 0:
            raise ValueError("busy_timeout must be >= 0")
        self.path = path
        self.label = label
        self._memory = path == ":memory:" or path.startswith("file::memory:")
        self._unavailable = unavailable
        self._busy_timeout = float(busy_timeout)
        self._durable = durable
        self._inline = inline and not durable
        statements = [item if isinstance(item, str) else item.create for item in schema]
        self._leases: tuple[str, str] | None = None  # (take, release)
        if leases is not None:  # a name the store made from a checked identifier
            statements.append(
                f"CREATE TABLE IF NOT EXISTS {leases} (key TEXT PRIMARY KEY NOT NULL, "
                "holder TEXT NOT NULL, expires_at REAL NOT NULL)"
            )
            self._leases = (
                f"INSERT INTO {leases} (key, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) "  # noqa: S608
                f"DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at "
                f"WHERE {leases}.expires_at < ?",
                f"DELETE FROM {leases} WHERE key = ? AND holder = ?",  # noqa: S608
            )
        self._schema = tuple(statements)
        self._init_lock = threading.Lock()
        self._slow_lock = threading.Lock()
        self._giving_back: set[asyncio.Task[None]] = set()  # leases taken for cancelled takers
        self._fast_lock = self._slow_lock if self._memory else threading.Lock()
        self._slow: sqlite3.Connection | None = None
        self._fast: sqlite3.Connection | None = None  # inline databases only
        self._closed = False
        self._since_checkpoint = 0

    @property
    def dialect(self) -> Literal["sqlite"]:
        return "sqlite"

    def describe(self) -> str:
        return f"sqlite {self.path!r}"

    def _closed_error(self) -> Exception:
        return self._unavailable(f"{self.label} is closed")

    def _failure(self, what: str, exc: sqlite3.Error) -> Exception:
        return self._unavailable(f"{self.label}: {what} failed: {error_text(self.path, exc)}")

    # ------------------------------------------------------------------------------ connections

    def _connect(self, timeout: float) -> sqlite3.Connection:
        conn = connect_private(self.path, timeout=timeout)
        try:
            conn.execute(f"PRAGMA synchronous = {'FULL' if self._durable else 'NORMAL'}")
            # After a checkpoint, cut the WAL file back to this size instead of keeping its peak.
            conn.execute("PRAGMA journal_size_limit = 4194304")
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> None:
        """Open the connections (worker thread): WAL and the schema on the first."""
        with self._init_lock:
            if self._closed:
                raise self._closed_error()
            if self._slow is not None:
                return
            try:
                slow = self._connect(self._busy_timeout)
            except sqlite3.Error as exc:
                raise self._unavailable(f"{self.label}: cannot open {error_text(self.path, exc)}") from exc
            try:
                # Two processes opening one new file at once: switching to WAL can fail at once
                # with "database is locked" (no busy handler there), so retry within the timeout.
                prepare_retrying(slow, self._prepare, self._busy_timeout)
                fast = None
                if self._inline:
                    fast = slow if self._memory else self._connect(0.0)
                    if fast is not slow:
                        fast.execute("PRAGMA wal_autocheckpoint = 0")
            except sqlite3.Error as exc:
                slow.close()
                raise self._unavailable(f"{self.label}: cannot prepare {error_text(self.path, exc)}") from exc
            except BaseException:
                slow.close()
                raise
            self._slow = slow
            self._fast = fast

    def _prepare(self, conn: sqlite3.Connection) -> None:
        if not self._memory:
            (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            if str(mode).lower() != "wal":
                raise self._unavailable(f"{self.label}: {self.path!r} refused WAL mode ({mode})")
        for statement in self._schema:
            conn.execute(statement)

    def _close_sync(self) -> None:
        with self._init_lock:
            self._closed = True
            with self._fast_lock, contextlib.ExitStack() as held:
                if self._slow_lock is not self._fast_lock:
                    held.enter_context(self._slow_lock)
                for conn in {id(c): c for c in (self._fast, self._slow) if c is not None}.values():
                    conn.close()
                self._fast = None
                self._slow = None

    # ------------------------------------------------------------------------------ running

    def _try_fast(
        self, what: str, op: Callable[[sqlite3.Connection, _A, _B], _T], a: _A, b: _B
    ) -> _T | _Busy:
        """The inline attempt, which never waits (``BUSY``: use the worker)."""
        conn = self._fast
        if conn is None or not self._fast_lock.acquire(blocking=False):
            return _BUSY
        try:
            return op(conn, a, b)
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                return _BUSY
            raise self._failure(what, exc) from exc
        except sqlite3.Error as exc:
            raise self._failure(what, exc) from exc
        finally:
            self._fast_lock.release()

    def _on_worker(self, what: str, op: Callable[[sqlite3.Connection, *_Args], _T], *args: *_Args) -> _T:
        self._open()
        # The wait behind this process's other statements counts against busy_timeout too:
        # otherwise each caller in the queue waits its own busy_timeout after the one before.
        if not self._slow_lock.acquire(timeout=self._busy_timeout):
            raise self._unavailable(
                f"{self.label}: {what} failed: timed out after {self._busy_timeout:g} s "
                "waiting for the database"
            )
        try:
            conn = self._slow
            if conn is None:
                raise self._closed_error()
            try:
                return op(conn, *args)
            except sqlite3.Error as exc:
                raise self._failure(what, exc) from exc
        finally:
            self._slow_lock.release()

    async def _call(self, what: str, op: Callable[[sqlite3.Connection, _A, _B], _T], a: _A, b: _B) -> _T:
        """``op(connection, a, b)`` inline when the file is free, else on the worker thread."""
        if self._closed:
            raise self._closed_error()
        result = self._try_fast(what, op, a, b)
        if result is _BUSY:
            result = await asyncio.to_thread(lambda: self._on_worker(what, op, a, b))
        if self._inline and not self._memory:
            self._since_checkpoint += 1
            if self._since_checkpoint >= _CHECKPOINT_EVERY:
                self._since_checkpoint = 0
                try:
                    await asyncio.to_thread(self._checkpoint)
                except sqlite3.Error as exc:
                    _log.warning("%s: checkpointing %s failed: %s", self.label, self.path, exc)
        return result

    def _checkpoint(self) -> None:
        # Both connections: statements wait (on the worker) while the log is copied back. A
        # checkpoint that writers keep overtaking never reaches the end of the log, which then
        # never restarts and grows without limit (a gigabyte a minute under load).
        with self._fast_lock, self._slow_lock:
            conn = self._slow
            if conn is not None:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    # ------------------------------------------------------------------------------ executor
    # Plain functions returning ``_call``'s coroutine: one coroutine per statement, not two.

    def fetchone(
        self, query: str, params: Sequence[object] = (), *, what: str = "query"
    ) -> Coroutine[Any, Any, Row | None]:
        return self._call(what, _one, query, params)

    def fetchall(
        self, query: str, params: Sequence[object] = (), *, what: str = "query"
    ) -> Coroutine[Any, Any, list[Row]]:
        return self._call(what, _all, query, params)

    def execute(
        self, query: str, params: Sequence[object] = (), *, what: str = "write"
    ) -> Coroutine[Any, Any, int]:
        return self._call(what, _rowcount, query, params)

    def write_or_read(
        self, write: Step, read: Step, *, what: str
    ) -> Coroutine[Any, Any, tuple[int, Row | None]]:
        return self._call(what, _write_or_read, write, read)

    async def transaction(
        self, steps: Sequence[Step], *, lock: str | None = None, what: str = "write"
    ) -> list[int]:
        # ``lock`` needs nothing more: BEGIN IMMEDIATE serialises every transaction on the file.
        if self._closed:
            raise self._closed_error()
        return await asyncio.to_thread(self._on_worker, what, _transaction, steps)

    # ------------------------------------------------------------------------------ lease

    @contextlib.asynccontextmanager
    async def exclusive(self, name: str, *, wait: float, hold: float, what: str) -> AsyncIterator[Executor]:
        if self._leases is None:
            raise RuntimeError(f"{self.label} keeps no leases")
        take, release = self._leases
        holder = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        pause = 0.005
        while True:
            now = time.time()  # wall clock: leases are compared across processes
            attempt = asyncio.ensure_future(self.execute(take, (name, holder, now + hold, now), what=what))
            try:
                taken = await asyncio.shield(attempt)
            except asyncio.CancelledError:
                # The insert may still land on the worker thread: give the lease back once it has,
                # or every later holder waits for it to expire (``hold`` seconds).
                giving_back = asyncio.ensure_future(self._give_back(attempt, release, name, holder, what))
                self._giving_back.add(giving_back)
                giving_back.add_done_callback(self._giving_back.discard)
                raise
            if taken:
                break
            if loop.time() + pause > deadline:
                raise self._unavailable(f"{self.label}: timed out after {wait:g} s waiting for {what}")
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, 0.05)
        try:
            yield self
        finally:
            # Best effort: if this fails the lease simply expires after ``hold`` seconds.
            with contextlib.suppress(Exception):
                await asyncio.shield(self.execute(release, (name, holder), what=what))

    async def _give_back(
        self, attempt: asyncio.Future[int], release: str, name: str, holder: str, what: str
    ) -> None:
        with contextlib.suppress(Exception):
            if await attempt:
                await self.execute(release, (name, holder), what=what)

    async def close(self) -> None:
        await asyncio.to_thread(self._close_sync)
