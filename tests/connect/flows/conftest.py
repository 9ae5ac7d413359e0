"""Fixtures for the flow-store tests.

PostgreSQL: 127.0.0.1:5432, database ``test``, trust auth, user ``postgres`` (or the OS user), or
``MCP_ELICIT_PG_DSN``. If no server answers, the PostgreSQL tests FAIL, unless
``MCP_ELICIT_SKIP_PG=1`` is set (then they are skipped). Each test gets its own table, dropped
afterwards.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from flows_support import FakeClock, StoreSpec, drop_pg_table, unique_table


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _candidate_dsns() -> list[str]:
    explicit = os.environ.get("MCP_ELICIT_PG_DSN")
    if explicit:
        return [explicit]
    users = ["postgres"]
    try:
        me = getpass.getuser()
    except Exception:  # pragma: no cover - no OS user name
        me = ""
    if me and me not in users:
        users.append(me)
    return [f"host=127.0.0.1 port=5432 dbname=test user={user} connect_timeout=3" for user in users]


@pytest.fixture(scope="session")
def flows_pg_dsn() -> str:
    """A DSN that works, or a clear failure (a skip only with MCP_ELICIT_SKIP_PG=1)."""
    import psycopg

    errors: list[str] = []
    for dsn in _candidate_dsns():
        try:
            with psycopg.connect(dsn) as conn:
                conn.execute("SELECT 1")
            return dsn
        except psycopg.Error as exc:
            errors.append(f"{dsn!r}: {exc}".strip())
    message = (
        "PostgreSQL is unreachable, so the PostgreSQL flow store cannot be tested.\n"
        "Tried:\n  " + "\n  ".join(errors) + "\n"
        "Start PostgreSQL on 127.0.0.1:5432 with a database 'test' (trust auth), or point "
        "MCP_ELICIT_PG_DSN at one, or set MCP_ELICIT_SKIP_PG=1 to skip these tests."
    )
    if os.environ.get("MCP_ELICIT_SKIP_PG") == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


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
