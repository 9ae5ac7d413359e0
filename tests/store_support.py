"""What the tests of the two store families share: the single-use state stores
(``tests/state``) and the pending-flow stores (``tests/connect/flows``), each run on SQLite and
on PostgreSQL (a fresh table per test), and the fixture bodies that give every test each backend
and close what it opened.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import pytest


class Closable(Protocol):
    async def close(self) -> None: ...


S = TypeVar("S", bound=Closable)


def drop_pg_table(dsn: str, *tables: str) -> None:
    """Drop each of ``tables`` (those that exist) from the test database."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in tables:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))


async def until_server_hung_up(pg: Any, within: float = 5.0) -> None:
    """Wait until the server's end of a store's idle PostgreSQL connection (``pg``, the
    ``PgConnection`` of its database) is seen closed by the client, after ``pg_terminate_backend``:
    how soon that arrives depends on the machine's load, so a fixed sleep makes the tests that
    follow flaky."""
    from mcp_elicit.storage.pg_connection import has_unread_data

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        conn = pg._conn
        if conn is None or has_unread_data(conn):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the terminated PostgreSQL connection still looks open after {within} s")


FLOW_COMPANION_SUFFIXES = ("_revoked",)
"""Tables a PostgreSQL flow store creates next to its own (``<table>_revoked``: sign-outs)."""


def flow_tables(table: str) -> tuple[str, ...]:
    """A PostgreSQL flow store's table and its companions, for dropping after a test."""
    return (table, *(table + suffix for suffix in FLOW_COMPANION_SUFFIXES))


@dataclass
class StoreSpec(Generic[S]):
    """Where a store lives (a SQLite file, or a PostgreSQL DSN and table), so that a test, the
    stores it opens and worker processes all reach the same one. Subclasses name the two store
    classes, the SQLite file and the prefix of PostgreSQL tables."""

    sqlite_type: ClassVar[type]
    postgres_type: ClassVar[type]
    sqlite_file: ClassVar[str]
    table_prefix: ClassVar[str]
    companion_suffixes: ClassVar[tuple[str, ...]] = ()  # tables the store makes next to its own

    kind: str  # "sqlite" | "postgres"
    location: str  # file path or DSN
    table: str = ""
    opened: list[S] = field(default_factory=list)

    @classmethod
    def new_table(cls) -> str:
        """A PostgreSQL table name no other test uses."""
        return f"{cls.table_prefix}_{uuid.uuid4().hex[:16]}"

    def make(self, **kwargs: Any) -> S:
        if self.kind == "sqlite":
            store: S = self.sqlite_type(self.location, **kwargs)
        else:
            store = self.postgres_type(self.location, table=self.table, **kwargs)
        self.opened.append(store)
        return store


def each_backend(
    request: pytest.FixtureRequest, tmp_path: Path, spec_type: type[StoreSpec[Any]], dsn_fixture: str
) -> Iterator[StoreSpec[Any]]:
    """The body of a ``store_spec`` fixture parametrised over ``["sqlite", "postgres"]``: a
    fresh SQLite file, or a fresh PostgreSQL table dropped afterwards (the DSN comes from
    ``dsn_fixture``, which fails clearly when no server answers)."""
    if request.param == "sqlite":
        yield spec_type("sqlite", str(tmp_path / spec_type.sqlite_file))
        return
    dsn: str = request.getfixturevalue(dsn_fixture)
    spec = spec_type("postgres", dsn, spec_type.new_table())
    try:
        yield spec
    finally:
        drop_pg_table(dsn, spec.table, *(spec.table + suffix for suffix in spec.companion_suffixes))


async def closing_opened(spec: StoreSpec[Any]) -> AsyncIterator[StoreSpec[Any]]:
    """The body of a ``stores`` fixture: the spec, then every store made from it closed."""
    try:
        yield spec
    finally:
        for opened in spec.opened:
            await opened.close()
