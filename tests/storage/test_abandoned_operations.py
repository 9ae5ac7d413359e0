"""Operations abandoned while the database still works on them (issue 17), in this process, on
asyncio's loop and on uvloop (``tests/conftest.py``): what the caller gets, what becomes of the
connection, and that nothing is closed while another thread or the event loop still uses it.
The abandonments inside psycopg that aborted uvloop are run in worker processes by
``tests/reliability/test_pg_abandon.py``."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.helpers import find_pg_dsn
from tests.store_support import drop_pg_table

from mcp_elicit.storage.pg_connection import PgConnection
from mcp_elicit.storage.postgres import PostgresDatabase
from mcp_elicit.storage.sqlite import SQLiteDatabase


class Unavailable(Exception):
    """The store's "unavailable" error, as a store passes its own to the database."""


# ------------------------------------------------------------------------------ PostgreSQL


@pytest.fixture(scope="module")
def dsn() -> str:
    return find_pg_dsn("abandoning PostgreSQL operations")


@pytest.fixture
def table(dsn: str) -> Iterator[str]:
    name = f"abandon_{uuid.uuid4().hex[:12]}"
    yield name
    drop_pg_table(dsn, name)


@pytest.fixture
async def database(dsn: str, table: str) -> AsyncIterator[PostgresDatabase]:
    db = PostgresDatabase(
        dsn,
        [f"CREATE TABLE IF NOT EXISTS {table} (k TEXT PRIMARY KEY)"],
        label="test store",
        unavailable=Unavailable,
        timeout=0.5,
        where=f"table {table!r}",
        lock_scope=table,
    )
    yield db
    await db.close()


def pg_of(db: PostgresDatabase) -> PgConnection:
    pg: PgConnection = db._pg
    return pg


async def until_reaped(pg: PgConnection, within: float = 5.0) -> None:
    """Until every abandoned operation has ended and its connections are closed."""
    deadline = time.monotonic() + within
    while pg._abandoned or pg._reapers or pg._retiring:
        assert time.monotonic() < deadline, "abandoned operations still running"
        await asyncio.sleep(0.02)


async def test_a_statement_abandoned_inside_the_lock_fails_the_next_one_on_its_connection(
    database: PostgresDatabase, table: str
) -> None:
    """A caller that catches the timeout inside ``exclusive`` and goes on gets the store's error
    at once for every later statement of the block (its connection is shut down, then closed by
    the reaper), the commit included; then the lock and the database work again."""
    pg = pg_of(database)

    async def block_that_goes_on() -> None:
        async with database.exclusive("lock", wait=1.0, hold=5.0, what="the test lock") as tx:
            with pytest.raises(Unavailable, match=r"no answer to sleep within 0\.5 s"):
                await tx.fetchone("SELECT pg_sleep(5)", what="sleep")
            started = time.perf_counter()
            with pytest.raises(Unavailable, match=r"^test store: next "):
                await tx.fetchone("SELECT 1", what="next")
            assert time.perf_counter() - started < 0.1

    with pytest.raises(Unavailable, match=r"^test store: commit "):
        await block_that_goes_on()
    await until_reaped(pg)
    # The server holds the lock until its statement_timeout (wait + timeout = 1.5 s) ends the
    # abandoned sleep: it does not notice the client's end of the connection before.
    async with database.exclusive("lock", wait=5.0, hold=5.0, what="the test lock") as tx:
        await tx.execute(f"INSERT INTO {table} (k) VALUES (%s)", ("after",))
    assert await database.fetchone(f"SELECT k FROM {table}") == ("after",)


async def test_a_connection_whose_abandoned_operation_still_runs_is_never_used_again(
    database: PostgresDatabase,
) -> None:
    """Should an abandoned operation outlive the grace its caller waits (a step of its own that
    refuses its cancellation), its connection is still refused to later operations: the reaper
    closes it when that operation ends, which could be while a later one waits on its socket."""
    pg = pg_of(database)
    conn = await pg.connect()
    loop = asyncio.get_running_loop()
    release = asyncio.Event()

    async def stubborn() -> None:
        give_up = loop.time() + 5.0  # never holds the test's loop at its end
        while not release.is_set() and loop.time() < give_up:
            with contextlib.suppress(asyncio.CancelledError):  # refuses the reaper's cancellation
                await asyncio.sleep(0.02)

    async def select() -> object:
        return await (await conn.execute("SELECT 1")).fetchone()

    try:
        with pytest.raises(Unavailable, match=r"no answer to stubborn within 0\.1 s"):
            await pg.bounded("stubborn", stubborn, [conn], loop.time() + 0.1, 0.1)
        await asyncio.sleep(0.6)  # past the grace: the reaper has cancelled it, in vain
        assert conn in pg._retiring
        assert not conn.closed
        with pytest.raises(Unavailable, match=r"^test store: next refused: its connection was abandoned$"):
            await pg.bounded("next", select, [conn], loop.time() + 0.5, 0.5)
    finally:
        release.set()
    await until_reaped(pg)
    assert conn.closed


async def test_close_while_an_abandoned_operation_runs_closes_its_connection_once_it_ended(
    database: PostgresDatabase,
) -> None:
    pg = pg_of(database)
    assert await database.fetchone("SELECT 1") == (1,)
    caller = asyncio.ensure_future(database.fetchone("SELECT pg_sleep(5)", what="sleep"))
    await asyncio.sleep(0.2)  # the statement is at the server, psycopg waits on the socket
    abandoned = pg._conn
    assert abandoned is not None
    caller.cancel()
    started = time.perf_counter()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await database.close()
    assert time.perf_counter() - started < 1.5  # no waiting for psycopg's cancel request
    await until_reaped(pg)
    assert abandoned.closed
    with pytest.raises(Unavailable, match="test store is closed"):
        await database.fetchone("SELECT 1")


async def test_a_timed_out_operation_fails_closed_and_the_next_one_gets_a_new_connection(
    database: PostgresDatabase,
) -> None:
    pg = pg_of(database)
    # Only our deadline ends the statement (not the server's statement_timeout, as long).
    await database.fetchone("SELECT set_config('statement_timeout', '10000', false)")
    first = pg._conn
    with pytest.raises(Unavailable, match=r"test store: no answer to sleep within 0\.5 s"):
        await database.fetchone("SELECT pg_sleep(5)", what="sleep")
    assert await database.fetchone("SELECT 2") == (2,)
    assert pg._conn is not first
    await until_reaped(pg)
    assert first is not None
    assert first.closed


# ------------------------------------------------------------------------------ SQLite


def sqlite_database(path: Path) -> SQLiteDatabase:
    return SQLiteDatabase(
        str(path),
        ["CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)"],
        label="test store",
        unavailable=Unavailable,
        busy_timeout=5.0,
        inline=True,
    )


def write_lock(path: Path) -> sqlite3.Connection:
    """Another process's writer, as SQLite sees it: a connection holding the file's write lock."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


async def test_sqlite_a_cancelled_statement_keeps_its_connection_until_it_ends(tmp_path: Path) -> None:
    """SQLite's worker path: a caller cancelled while its statement waits on the worker thread
    (the file is locked) gets its cancellation at once; the thread goes on, and ``close()``
    waits for it instead of closing the connection under a running statement."""
    path = tmp_path / "store.db"
    db = sqlite_database(path)
    assert await db.execute("INSERT INTO t (k) VALUES (?)", ("before",)) == 1
    holder = write_lock(path)
    try:
        caller = asyncio.ensure_future(db.execute("INSERT INTO t (k) VALUES (?)", ("cancelled",)))
        await asyncio.sleep(0.3)  # refused inline (busy), now waiting on the worker thread
        assert not caller.done()
        caller.cancel()
        started = time.perf_counter()
        with pytest.raises(asyncio.CancelledError):
            await caller
        assert time.perf_counter() - started < 0.1
        closing = asyncio.ensure_future(db.close())
        await asyncio.sleep(0.3)
        assert not closing.done()  # the statement still runs: its connection stays open
    finally:
        holder.execute("COMMIT")
        holder.close()
    await asyncio.wait_for(closing, 5)
    with pytest.raises(Unavailable, match="test store is closed"):
        await db.execute("INSERT INTO t (k) VALUES (?)", ("after",))
    # The abandoned statement ran to its end (it was never cut off halfway).
    with sqlite3.connect(path) as check:
        assert sorted(check.execute("SELECT k FROM t").fetchall()) == [("before",), ("cancelled",)]


async def test_sqlite_after_a_cancelled_statement_the_database_works(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    db = sqlite_database(path)
    try:
        assert await db.execute("INSERT INTO t (k) VALUES (?)", ("before",)) == 1
        holder = write_lock(path)
        try:
            caller = asyncio.ensure_future(db.execute("INSERT INTO t (k) VALUES (?)", ("cancelled",)))
            await asyncio.sleep(0.3)
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
        finally:
            holder.execute("COMMIT")
            holder.close()
        assert await db.execute("INSERT INTO t (k) VALUES (?)", ("after",)) == 1
        # The cancelled statement ends by itself on the worker thread, maybe after that one.
        deadline = time.monotonic() + 5
        while len(rows := await db.fetchall("SELECT k FROM t ORDER BY k")) < 3:
            assert time.monotonic() < deadline, rows
            await asyncio.sleep(0.02)
        assert rows == [("after",), ("before",), ("cancelled",)]
    finally:
        await db.close()
