"""Fixtures for the reliability tests: single-use stores on SQLite and PostgreSQL.

PostgreSQL: 127.0.0.1:5432, database ``test``, user ``postgres`` (trust auth), or the DSN in
``MCP_ELICIT_PG_DSN``. If it does not answer, the PostgreSQL cases fail (skipped only with
``MCP_ELICIT_SKIP_PG=1``), like the tests in ``tests/state``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from mcp_elicit.state import PostgresSingleUseStore, SQLiteSingleUseStore
from mcp_elicit.state.single_use import RedeliveryStore

DEFAULT_DSN = "host=127.0.0.1 port=5432 dbname=test user=postgres connect_timeout=3"

StoreFactory = Callable[[], RedeliveryStore]


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    import psycopg

    dsn = os.environ.get("MCP_ELICIT_PG_DSN", DEFAULT_DSN)
    try:
        with psycopg.connect(dsn) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        message = f"PostgreSQL is unreachable ({exc}); set MCP_ELICIT_SKIP_PG=1 to skip these tests"
        if os.environ.get("MCP_ELICIT_SKIP_PG") == "1":
            pytest.skip(message)
        pytest.fail(message, pytrace=False)
    return dsn


def drop_table(dsn: str, table: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


@pytest.fixture(params=["sqlite", "postgres"])
async def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    """Makes store objects on one shared location (two objects = two server instances)."""
    opened: list[RedeliveryStore] = []
    table = f"mcp_elicit_rel_{uuid.uuid4().hex[:12]}"
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else ""

    def make() -> RedeliveryStore:
        store: RedeliveryStore
        if request.param == "sqlite":
            store = SQLiteSingleUseStore(tmp_path / "used.db")
        else:
            store = PostgresSingleUseStore(dsn, table=table, timeout=3.0)
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            await store.close()
        if dsn:
            drop_table(dsn, table)
