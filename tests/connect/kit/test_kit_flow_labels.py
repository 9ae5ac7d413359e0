"""The two fields the kit added to pending flows (``client``, ``description``): cleaned and capped,
stored by both backends, and added to a table made by an earlier version (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kit_support import unique_name
from tests.helpers import find_pg_dsn
from tests.store_support import drop_pg_table, flow_tables

from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.flows.model import MAX_CLIENT_LENGTH, MAX_DESCRIPTION_LENGTH, clean_label, flow_key
from mcp_elicit.connect.flows.postgres_store import PostgresFlowStore
from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore

OWNER = "https://auth.example.com|alice"
# The table as the first release created it (no client, no description).
OLD_TABLE = (
    "CREATE TABLE {table} (flow_key TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL, kind TEXT NOT NULL, "
    "provider TEXT NOT NULL, scopes TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, "
    "expires DOUBLE PRECISION NOT NULL, status TEXT NOT NULL, detail TEXT, updated DOUBLE PRECISION NOT NULL)"
)
OLD_ID = "A" * 42 + "B"


def test_labels_are_cleaned_and_capped() -> None:
    assert clean_label(None, 10) is None
    assert clean_label(" \x07\u202e\u200b ", 10) is None
    assert clean_label("Claude\u202e Desktop\x00\n  app", 100) == "Claude Desktop app"
    assert clean_label("x" * 500, MAX_CLIENT_LENGTH) == "x" * (MAX_CLIENT_LENGTH - 1) + "…"


async def check_store(store: FlowStore) -> None:
    old = await store.get(OLD_ID)
    assert (old.client, old.description, old.status) == (None, None, "pending")
    flow = await store.create(
        OWNER, "secret", "openai_api_key", client="Some\tClient\u2066", description="d" * 1000
    )
    assert flow.client == "Some Client"
    assert flow.description is not None
    assert len(flow.description) == MAX_DESCRIPTION_LENGTH
    for read in (await store.get(flow.id), await store.begin(flow.id, OWNER), await store.complete(flow.id)):
        assert (read.client, read.description) == (flow.client, flow.description)
    plain = await store.create(OWNER, "connect", "github")
    assert (plain.client, plain.description) == (None, None)
    assert (await store.get(plain.id)).client is None


async def test_sqlite_adds_the_columns_to_an_old_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute(OLD_TABLE.format(table="mcp_elicit_flows"))
        conn.execute(
            "INSERT INTO mcp_elicit_flows VALUES "
            "(?, ?, 'connect', 'github', '', 1.0, 9e12, 'pending', NULL, 1.0)",
            (flow_key(OLD_ID), OWNER),
        )
    async with SQLiteFlowStore(path) as store:
        await check_store(store)
    async with SQLiteFlowStore(path) as again:  # idempotent: the columns are there now
        assert (await again.get(OLD_ID)).client is None


async def test_postgres_adds_the_columns_to_an_old_table() -> None:
    import psycopg
    from psycopg import sql

    dsn = find_pg_dsn("the flow store migration")
    table = unique_name("mcp_elicit_test_kit_old_flows_")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL(OLD_TABLE).format(table=sql.Identifier(table)))
        conn.execute(
            sql.SQL(
                "INSERT INTO {} VALUES (%s, %s, 'connect', 'github', '', 1.0, 9e12, 'pending', NULL, 1.0)"
            ).format(sql.Identifier(table)),
            (flow_key(OLD_ID), OWNER),
        )
    try:
        async with PostgresFlowStore(dsn, table=table) as store:
            await check_store(store)
        async with PostgresFlowStore(dsn, table=table) as again:
            assert (await again.get(OLD_ID)).client is None
    finally:
        drop_pg_table(dsn, *flow_tables(table))
