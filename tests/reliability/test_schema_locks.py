"""A store's (re)connect must not take table locks when its schema is already in place.

Every new connection of a PostgreSQL store runs its schema statements (a database restart, a
dropped connection or a new instance makes one). ``CREATE INDEX IF NOT EXISTS`` takes a SHARE lock
and ``ALTER TABLE ... ADD COLUMN IF NOT EXISTS`` an ACCESS EXCLUSIVE lock *before* finding there is
nothing to do. So a reconnect waited for any open transaction on the table (a writer for the
index; even a mere reader, e.g. ``pg_dump`` or a report, for the ALTER) until the timeout, failed
the request, and while queued for its lock held up every other instance's queries on the table.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from mcp_elicit.connect.flows import PostgresFlowStore
from mcp_elicit.state import PostgresSingleUseStore
from tests.store_support import drop_pg_table, flow_tables

FAR = time.time() + 3600
OWNER = "https://issuer.example|alice"
TIMEOUT = 2.0


@pytest.fixture
def table(pg_dsn: str) -> Iterator[str]:
    name = f"mcp_elicit_rel_locks_{uuid.uuid4().hex[:12]}"
    yield name
    drop_pg_table(pg_dsn, *flow_tables(name))


def _hold(dsn: str, statement: str) -> psycopg.Connection:
    """An open transaction that ran ``statement`` (and so holds its table lock until rollback)."""
    conn = psycopg.connect(dsn)
    conn.execute(statement)
    return conn


@pytest.mark.parametrize("holder", ["reader", "writer"])
async def test_a_new_flow_store_connection_is_not_blocked_by_open_transactions(
    pg_dsn: str, table: str, holder: str
) -> None:
    first = PostgresFlowStore(pg_dsn, table=table, timeout=TIMEOUT)
    flow = await first.create(OWNER, "connect", "github", ["repo"])
    statement = (
        f'SELECT count(*) FROM "{table}"'  # a report or pg_dump: ACCESS SHARE
        if holder == "reader"
        else f'UPDATE "{table}" SET updated = updated WHERE false'  # ROW EXCLUSIVE
    )
    other = _hold(pg_dsn, statement)
    second = PostgresFlowStore(pg_dsn, table=table, timeout=TIMEOUT)  # another instance starting
    try:
        started = time.monotonic()
        looked_up, mine = await asyncio.gather(second.get(flow.id), first.get(flow.id))
        assert looked_up.status == mine.status == "pending"
        assert time.monotonic() - started < TIMEOUT / 2
    finally:
        other.rollback()
        other.close()
        await first.close()
        await second.close()


async def test_a_new_single_use_store_connection_is_not_blocked_by_an_open_writer(
    pg_dsn: str, table: str
) -> None:
    first = PostgresSingleUseStore(pg_dsn, table=table, timeout=TIMEOUT)
    assert await first.consume("warm", FAR)
    # e.g. another instance's purge of a large table, or an administrator's session
    other = _hold(pg_dsn, f'DELETE FROM "{table}" WHERE expires_at < 0')
    second = PostgresSingleUseStore(pg_dsn, table=table, timeout=TIMEOUT)
    try:
        started = time.monotonic()
        assert await second.consume("fresh", FAR) is True
        assert await first.consume("fresh", FAR) is False
        assert time.monotonic() - started < TIMEOUT / 2
    finally:
        other.rollback()
        other.close()
        await first.close()
        await second.close()


async def test_a_missing_index_is_still_created(pg_dsn: str, table: str) -> None:
    async with PostgresSingleUseStore(pg_dsn, table=table) as store:
        assert await store.consume("x", FAR)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        (index,) = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname <> %s",
            (table, f"{table}_pkey"),
        ).fetchone() or ("",)
        conn.execute(f'DROP INDEX "{index}"')
    async with PostgresSingleUseStore(pg_dsn, table=table) as store:
        assert await store.consume("y", FAR)
    with psycopg.connect(pg_dsn) as conn:
        found = conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", (index,)).fetchall()
    assert found == [(1,)]
