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
from tests.store_support import closing_opened, each_backend

sys.path.insert(0, str(Path(__file__).resolve().parent))

from flows_support import FakeClock, StoreSpec


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def flows_pg_dsn() -> str:
    """A DSN that works, or a clear failure (a skip only with MCP_ELICIT_SKIP_PG=1)."""
    return find_pg_dsn("the PostgreSQL flow store")


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    yield from each_backend(request, tmp_path, StoreSpec, "flows_pg_dsn")


@pytest.fixture
async def stores(store_spec: StoreSpec) -> AsyncIterator[StoreSpec]:
    """The parametrised store location; every store made from it is closed afterwards."""
    async for spec in closing_opened(store_spec):
        yield spec
