"""Helpers for the flow-store tests (and the cross-process worker)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.connect.flows import FlowStore, PostgresFlowStore, SQLiteFlowStore

ALICE = "https://auth.example.test|alice"
BOB = "https://auth.example.test|bob"
NOW = 1_800_000_000.0


class FakeClock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def unique_table() -> str:
    return f"mcp_elicit_test_flows_{uuid.uuid4().hex[:16]}"


def drop_pg_table(dsn: str, table: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


@dataclass
class StoreSpec:
    """Where a store lives, so that tests and worker processes can open the same one."""

    kind: str  # "sqlite" | "postgres"
    location: str  # file path or DSN
    table: str = ""
    opened: list[FlowStore] = field(default_factory=list)

    def make(self, **kwargs: Any) -> FlowStore:
        store: FlowStore
        if self.kind == "sqlite":
            store = SQLiteFlowStore(self.location, **kwargs)
        else:
            store = PostgresFlowStore(self.location, table=self.table, **kwargs)
        self.opened.append(store)
        return store
