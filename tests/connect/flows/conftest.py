"""Fixtures for the flow-store tests.

PostgreSQL: 127.0.0.1:5432, database ``test``, trust auth, user ``postgres`` (or the OS user), or
``MCP_ELICIT_PG_DSN``. If no server answers, the PostgreSQL tests FAIL, unless
``MCP_ELICIT_SKIP_PG=1`` is set (then they are skipped). Each test gets its own table, dropped
afterwards.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.helpers import find_pg_dsn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from flows_support import FakeClock, StoreSpec, drop_pg_table, unique_table


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def flows_pg_dsn() -> str:
    """A DSN that works, or a clear failure (a skip only with MCP_ELICIT_SKIP_PG=1)."""
    return find_pg_dsn("the PostgreSQL flow store")


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    if request.param == "sqlite":
        yield StoreSpec("sqlite", str(tmp_path / "flows.db"))
        return
    dsn: str = request.getfixturevalue("flows_pg_dsn")
    spec = StoreSpec("postgres", dsn, unique_table())
    try:
        yield spec
    finally:
        drop_pg_table(dsn, spec.table)


@pytest.fixture
async def stores(store_spec: StoreSpec) -> AsyncIterator[StoreSpec]:
    """The parametrised store location; every store made from it is closed afterwards."""
    try:
        yield store_spec
    finally:
        for opened in store_spec.opened:
            await opened.close()
