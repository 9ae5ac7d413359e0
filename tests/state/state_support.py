"""Helpers shared by the mcp_elicit.state tests (and the cross-process worker)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from mcp_elicit.state import PostgresSingleUseStore, SingleUseStore, SQLiteSingleUseStore

AUDIENCE = "https://mcp.example.test/mcp"


class FakeClock:
    """A settable clock for expiry tests."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def drop_pg_table(dsn: str, table: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


def unique_table() -> str:
    return f"mcp_elicit_test_{uuid.uuid4().hex[:16]}"


@dataclass
class StoreSpec:
    """Where a store lives, so that tests and worker processes can open the same one."""

    kind: str  # "sqlite" | "postgres"
    location: str  # file path or DSN
    table: str = ""
    opened: list[SingleUseStore] = field(default_factory=list)

    def make(self, **kwargs: Any) -> SingleUseStore:
        store: SingleUseStore
        if self.kind == "sqlite":
            store = SQLiteSingleUseStore(self.location, **kwargs)
        else:
            store = PostgresSingleUseStore(self.location, table=self.table, **kwargs)
        self.opened.append(store)
        return store
