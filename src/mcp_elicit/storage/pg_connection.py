"""The connection under :class:`~mcp_elicit.storage.postgres.PostgresDatabase`: one shared psycopg
connection, every operation bounded in time, and operations that ran out of time abandoned without
closing a socket the event loop still watches.

No psycopg import at module level here: :class:`PgConnection` imports psycopg when a database
creates one, so importing :mod:`mcp_elicit` never imports psycopg.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import select
import socket
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

from mcp_elicit._extras import require

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg.abc import Query

    Ddl: TypeAlias = Query | Callable[[AsyncConnection[Any]], Awaitable[object]]

_T = TypeVar("_T")
_log = logging.getLogger("mcp_elicit.postgres")
# How long an abandoned operation gets to end by itself (its sockets shut down) before it is
# cancelled, and how long a caller waits for that before going on.
_GRACE: Final = 0.5
_DURABLE_COMMITS: Final = (
    "SELECT set_config('synchronous_commit', 'on', false) WHERE current_setting('synchronous_commit') = 'off'"
)


def has_unread_data(conn: AsyncConnection[Any]) -> bool:
    """Whether an idle connection's socket is readable: the server is closing it (terminated
    backend, restart, idle timeout), so it is replaced before use instead of failing a call."""
    try:
        fd = conn.fileno()
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            return bool(poller.poll(0))
        readable, _, _ = select.select([fd], [], [], 0)  # pragma: no cover - Windows
        return bool(readable)  # pragma: no cover
    except Exception:
        return True


def shut_down(conn: AsyncConnection[Any]) -> None:
    """End ``conn``'s traffic at once but leave its descriptor open.

    An operation that is abandoned may still be inside psycopg, with the event loop watching the
    connection's socket. Closing the descriptor then pulls it from under the loop: asyncio's
    selector shrugs, but uvloop (libuv) aborts the whole process on its next poll, and a new
    socket that reuses the number could lose its watcher. ``shutdown()`` instead makes the socket
    readable (end of file) and unwritable for everyone who holds it, so the operation fails inside
    psycopg on its next step, and psycopg removes its watchers itself; the descriptor is closed
    only after that (:meth:`PgConnection.drop`). It works on a duplicate of the descriptor: the
    duplicate is closed here, the original stays libpq's."""
    try:
        duplicate = os.dup(conn.fileno())
    except Exception:  # already closed or never connected: nothing is watched
        return
    try:
        sock = socket.socket(fileno=duplicate)
    except OSError:  # pragma: no cover - libpq's descriptor is always a socket
        os.close(duplicate)
        return
    with sock, contextlib.suppress(OSError):  # not connected yet: the caller cancels instead
        sock.shutdown(socket.SHUT_RDWR)


def retrieve(task: asyncio.Task[Any]) -> None:
    """Mark an abandoned task's outcome as seen (no "exception was never retrieved" noise)."""
    if not task.cancelled():
        task.exception()


class PgConnection:
    """One psycopg 3 ``AsyncConnection`` shared by a store's operations, (re)connected on demand.

    * psycopg is imported here, when a store creates its ``PgConnection`` (``label`` names the
      store in the :class:`ImportError`). ``dsn`` must be a libpq connection string or URI; it is
      never part of a message or a repr, and a password in it is masked should libpq echo it.
    * The shared connection is opened in autocommit mode with our own ``connect_timeout`` (unless
      the DSN sets one), ``statement_timeout`` = ``timeout`` and ``synchronous_commit`` at least
      ``on`` (a crash must not forget a commit we reported); then :attr:`ddl` runs (statements,
      or async callables taking the connection), each with the "lost the race" errors of two
      processes creating the same object suppressed, and a refusal for want of rights logged
      (a role that may only read and write uses the tables an administrator made). An idle
      connection whose socket has unread data (the server is closing it) is replaced before use.
    * :meth:`run` waits for the connection's ``asyncio.Lock`` and runs the operation as a task, all
      within ``timeout``. On timeout or cancellation the operation is abandoned (:meth:`_abandon`):
      its connections are shut down, so it fails at once inside psycopg, and closed only once it
      has ended (never under the event loop's watch), and no later operation may use them; a
      new call connects again. Any failure
      drops the connection; psycopg and OS errors become ``unavailable(message)`` (chained to the
      original when ``chain``; worded by :meth:`failure`), and ``label`` starts every message.
    * :meth:`connect`, :meth:`bounded` and :meth:`drop` serve connections of the caller's own
      (:meth:`PostgresDatabase.exclusive`) under the same deadline and abandonment rules.
    * Belongs to one event loop.
    """

    def __init__(
        self,
        dsn: str,
        *,
        timeout: float,
        label: str,
        unavailable: Callable[[str], Exception],
        chain: bool = False,
    ) -> None:
        require("postgres", part=f"the {label}")
        import psycopg
        from psycopg import sql
        from psycopg.conninfo import conninfo_to_dict

        if not isinstance(dsn, str):
            raise TypeError("dsn must be a str")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be a positive number of seconds")
        try:
            params = conninfo_to_dict(dsn)
        except psycopg.Error:
            raise ValueError("dsn is not a valid libpq connection string or URI") from None
        self.psycopg = psycopg
        self.label = label
        self.timeout = float(timeout)
        self.ddl: Sequence[Ddl] = ()
        self._dsn = dsn
        password = params.get("password")
        self._password = str(password) if password else None
        self._dsn_sets = frozenset(params)  # what the DSN says, which connect(**options) keeps
        self._connect_kwargs: dict[str, Any] = {}
        if "connect_timeout" not in params:  # libpq counts whole seconds, minimum 2
            self._connect_kwargs["connect_timeout"] = max(2, math.ceil(timeout))
        self._unavailable = unavailable
        self._chain = chain
        self._race_lost: tuple[type[Exception], ...] = (
            psycopg.errors.UniqueViolation,
            psycopg.errors.DuplicateTable,
            psycopg.errors.DuplicateObject,
        )
        self._not_allowed: type[Exception] = psycopg.errors.InsufficientPrivilege
        self._lock_timeout: type[Exception] = psycopg.errors.LockNotAvailable
        self._set_timeout = sql.SQL("SET statement_timeout = {}").format(
            sql.Literal(max(1, int(self.timeout * 1000)))
        )
        self._lock = asyncio.Lock()
        self._conn: AsyncConnection[Any] | None = None
        self._closed = False
        self._epoch = 0  # bumped when an operation is abandoned
        # Connections of abandoned operations that may still be running: shut down, closed by
        # their reaper once the operation has ended (see _abandon).
        self._retiring: set[AsyncConnection[Any]] = set()
        self._abandoned: set[asyncio.Task[Any]] = set()  # operations not ended yet
        self._reapers: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:  # never the DSN (it may hold a password)
        return f"PgConnection({self.label!r})"

    # ------------------------------------------------------------------------------ errors

    def scrub(self, text: str) -> str:
        """``text`` without the DSN or its password."""
        if self._password:
            text = text.replace(self._password, "***")
        return text.replace(self._dsn, "<dsn>") if self._dsn else text

    def failure(self, what: str, exc: BaseException) -> Exception:
        """The store's "unavailable" error for a psycopg or OS error raised by ``what``: the first
        line of the error only (a DETAIL line may quote a row's values), or, for a lock that could
        not be had within ``lock_timeout``, that."""
        if isinstance(exc, self._lock_timeout):
            return self._unavailable(f"{self.label}: timed out waiting for {what}")
        first_line = (str(exc).strip().splitlines() or [""])[0]
        detail = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
        return self._unavailable(f"{self.label}: {what} failed: {self.scrub(detail)}")

    # ------------------------------------------------------------------------------ connections

    async def connect(self, *, autocommit: bool = True, **options: Any) -> AsyncConnection[Any]:
        """A new connection of the caller's own (no statement timeout, no DDL). ``options`` are
        libpq connection parameters (``keepalives_idle=10``...), each unless the DSN sets it."""
        extra = {name: value for name, value in options.items() if name not in self._dsn_sets}
        try:
            conn: AsyncConnection[Any] = await self.psycopg.AsyncConnection.connect(
                self._dsn, autocommit=autocommit, **self._connect_kwargs, **extra
            )
        except BaseException as exc:
            # An attempt cut short (cancelled: abandoned, or its caller went away) leaves psycopg's
            # half-open libpq connection, whose backend the server has already started, in the
            # frames of psycopg's connect, which this exception's traceback keeps: nobody closes
            # it, and its backend stays as long as anyone holds the exception (the caller, the
            # abandoned task), past close(). Clearing those frames closes it now.
            traceback.clear_frames(exc.__traceback__)
            raise
        return conn

    async def _shared(self, used: list[AsyncConnection[Any]]) -> AsyncConnection[Any]:
        """The shared connection, (re)connected if need be, added to ``used`` at once (so that an
        abandonment during the set-up below shuts it down too)."""
        current = self._conn
        # An idle autocommit connection has nothing to say unless the server is closing it
        # (terminated backend, restart, idle timeout): replace such a connection before sending
        # anything, so that this call still succeeds.
        if current is not None and not current.closed and not current.broken and not has_unread_data(current):
            used.append(current)
            return current
        await self._discard()
        epoch = self._epoch
        conn = await self.connect()
        used.append(conn)
        try:
            await conn.execute(self._set_timeout)
            # A server run with synchronous_commit = off (a common throughput setting) reports a
            # commit before it is on disk: a crash then forgets the last writes, and a consumed
            # requestState becomes usable again. Our writes wait for the disk; a stronger
            # setting (remote_write, remote_apply) is kept.
            await conn.execute(_DURABLE_COMMITS)
            for statement in self.ddl:
                # Two processes creating an object at the same moment: the loser gets a duplicate
                # error although IF NOT EXISTS was given. The object exists then, all we need.
                try:
                    with contextlib.suppress(*self._race_lost):
                        if callable(statement):
                            await statement(conn)
                        else:
                            await conn.execute(statement)
                except self._not_allowed as exc:
                    # A role with read/write rights on tables an administrator made: even "IF NOT
                    # EXISTS" needs CREATE (or ownership, for an index). If the object is in fact
                    # missing, the first query says so.
                    _log.warning(
                        "%s: not allowed to create or update the schema (%s); using it as it is",
                        self.label,
                        self.scrub(str(exc).splitlines()[0] if str(exc) else type(exc).__name__),
                    )
        except BaseException:
            await self.drop(conn)
            raise
        if epoch != self._epoch:  # this attempt was abandoned meanwhile: do not install it
            await self.drop(conn)
            raise self._unavailable(f"{self.label}: abandoned connection attempt")
        self._conn = conn
        return conn

    async def drop(self, conn: AsyncConnection[Any]) -> None:
        """Forget (if shared) and close ``conn`` (closing only shuts the socket; it never waits).

        A connection an abandoned operation may still be using is only shut down here; its
        reaper closes it when that operation has ended (see :func:`shut_down`)."""
        if self._conn is conn:
            self._conn = None
        if conn in self._retiring:
            shut_down(conn)
            return
        with contextlib.suppress(Exception):  # it is being thrown away anyway
            await conn.close()

    async def _discard(self) -> None:
        if self._conn is not None:
            await self.drop(self._conn)

    # ------------------------------------------------------------------------------ operations

    async def _abandon(self, task: asyncio.Task[Any], used: list[AsyncConnection[Any]]) -> None:
        """Stop an operation that ran out of time (or whose caller went away) without waiting
        for psycopg's own cleanup and without closing a socket the event loop watches.

        Cancelling a running psycopg query makes psycopg send a cancel request and wait for the
        server (up to about ten seconds), which is exactly the hang a timeout must avoid; closing
        its socket instead kills the process under uvloop (:func:`shut_down`). So the operation's
        connections are shut down: it fails on its next step, by itself. The reaper closes them
        once it has ended; an operation that holds none of them yet (still connecting) is
        cancelled, which is safe there. This waits for the reaper a short while only: an
        operation still running after that stays referenced until it ends.
        """
        self._epoch += 1
        for conn in used:
            if self._conn is conn:
                self._conn = None
            self._retiring.add(conn)
            shut_down(conn)
        self._abandoned.add(task)
        task.add_done_callback(self._abandoned.discard)
        reaper = asyncio.ensure_future(self._reap(task, used))
        self._reapers.add(reaper)
        reaper.add_done_callback(self._reapers.discard)
        await asyncio.wait({reaper}, timeout=_GRACE)

    async def _reap(self, task: asyncio.Task[Any], used: list[AsyncConnection[Any]]) -> None:
        """Wait for an abandoned operation to end, then close its connections."""
        try:
            if used:
                await asyncio.wait({task}, timeout=_GRACE)
            if not task.done():  # not on a connection of ours (connecting, or a step of its own)
                task.cancel()
            await asyncio.wait({task})
        finally:
            if task.done():
                retrieve(task)
            else:  # the reaper was cancelled (the loop is ending): the operation's own failure
                task.add_done_callback(retrieve)  # path closes what it used (drop, no longer retiring)
            for conn in used:  # the operation may have opened more since it was abandoned
                self._retiring.discard(conn)
                if task.done():
                    with contextlib.suppress(Exception):
                        await conn.close()

    async def bounded(
        self,
        what: str,
        op: Callable[[], Awaitable[_T]],
        used: list[AsyncConnection[Any]],
        deadline: float,
        timeout: float,  # noqa: ASYNC109 - only reported in the message; the deadline is enforced
    ) -> _T:
        """Run ``op`` as a task until the loop time ``deadline``; abandon it (closing the
        connections in ``used``) on timeout or cancellation.

        A connection of an abandoned operation is never used again: its reaper closes it as soon
        as that operation ends, which could be while a later operation waits on its socket (a
        caller that caught the error inside :meth:`PostgresDatabase.exclusive` and went on)."""
        if any(conn in self._retiring for conn in used):
            raise self._unavailable(f"{self.label}: {what} refused: its connection was abandoned")
        loop = asyncio.get_running_loop()
        # The operation runs in its own task: on timeout it is abandoned, never awaited.
        task = asyncio.ensure_future(op())
        try:
            done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
        except BaseException:  # the caller was cancelled: the outcome no longer matters
            await self._abandon(task, used)
            raise
        if not done:
            await self._abandon(task, used)
            raise self._unavailable(f"{self.label}: no answer to {what} within {timeout:g} s")
        try:
            return task.result()
        except (self.psycopg.Error, OSError) as exc:
            raise self.failure(what, exc) from (exc if self._chain else None)

    async def run(self, what: str, op: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        """``op`` on the shared connection, everything (lock wait, connect, op) within ``timeout``."""
        if self._closed:
            raise self._unavailable(f"{self.label} is closed")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        try:
            async with asyncio.timeout_at(deadline):
                await self._lock.acquire()
        except TimeoutError:
            raise self._unavailable(
                f"{self.label}: no answer to {what} within {self.timeout:g} s (waiting for the connection)"
            ) from None
        try:
            if self._closed:
                raise self._unavailable(f"{self.label} is closed")
            used: list[AsyncConnection[Any]] = []

            async def attempt() -> _T:
                conn = await self._shared(used)
                try:
                    return await op(conn)
                except BaseException:
                    await self.drop(conn)
                    raise

            return await self.bounded(what, attempt, used, deadline, self.timeout)
        finally:
            self._lock.release()

    async def close(self) -> None:
        """Close the shared connection. Later calls raise the store's "unavailable" error.
        Operations abandoned earlier and still running are cancelled; their reapers close their
        connections when they end."""
        self._closed = True
        async with self._lock:
            await self._discard()
        for task in list(self._abandoned):
            task.cancel()
        if self._reapers:
            await asyncio.wait(set(self._reapers), timeout=_GRACE)
