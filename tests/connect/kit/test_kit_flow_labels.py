"""The two fields the kit added to pending flows (``client``, ``description``): cleaned and capped,
and stored by both backends."""

from __future__ import annotations

from pathlib import Path

from kit_support import unique_name
from tests.helpers import find_pg_dsn
from tests.store_support import drop_pg_table, flow_tables

from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.flows.model import MAX_CLIENT_LENGTH, MAX_DESCRIPTION_LENGTH, clean_label
from mcp_elicit.connect.flows.postgres_store import PostgresFlowStore
from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore

OWNER = "https://auth.example.com|alice"


def test_labels_are_cleaned_and_capped() -> None:
    assert clean_label(None, 10) is None
    assert clean_label(" \x07\u202e\u200b ", 10) is None
    assert clean_label("Claude\u202e Desktop\x00\n  app", 100) == "Claude Desktop app"
    assert clean_label("x" * 500, MAX_CLIENT_LENGTH) == "x" * (MAX_CLIENT_LENGTH - 1) + "…"


async def check_store(store: FlowStore) -> None:
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


async def test_sqlite_stores_the_labels(tmp_path: Path) -> None:
    async with SQLiteFlowStore(tmp_path / "flows.db") as store:
        await check_store(store)


async def test_postgres_stores_the_labels() -> None:
    dsn = find_pg_dsn("the flow store's labels")
    table = unique_name("mcp_elicit_test_kit_flows_")
    try:
        async with PostgresFlowStore(dsn, table=table) as store:
            await check_store(store)
    finally:
        drop_pg_table(dsn, *flow_tables(table))
