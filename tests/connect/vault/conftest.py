"""Fixtures for the vault tests: every test taking ``spec`` / ``vault`` runs against SQLite and
PostgreSQL.

PostgreSQL: 127.0.0.1:5432, database ``test``, trust auth, user ``postgres`` (falling back to the OS
user), or the DSN in ``MCP_ELICIT_PG_DSN``. If no server answers, the PostgreSQL variants FAIL with a
message saying so, unless ``MCP_ELICIT_SKIP_PG=1`` (then they are skipped). Each test gets its own
table prefix; the tables are dropped afterwards.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from tests.helpers import find_pg_dsn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vault_support import FakeClock, VaultSpec, drop_pg_tables, new_ring, unique_prefix

from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    """A DSN that works, or a clear failure (a skip only with MCP_ELICIT_SKIP_PG=1)."""
    return find_pg_dsn("the PostgreSQL vault")


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VaultSpec]:
    prefix = unique_prefix()
    if request.param == "sqlite":
        yield VaultSpec("sqlite", str(tmp_path / "vault.db"), prefix)
        return
    dsn: str = request.getfixturevalue("pg_dsn")
    try:
        yield VaultSpec("postgres", dsn, prefix)
    finally:
        drop_pg_tables(dsn, prefix)


@pytest.fixture
async def vaults(spec: VaultSpec) -> AsyncIterator[VaultSpec]:
    """The parametrised location; every vault made from it is closed afterwards."""
    try:
        yield spec
    finally:
        for opened in spec.opened:
            await opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ring() -> KeyRing:
    return new_ring()


@pytest.fixture
def vault(vaults: VaultSpec, ring: KeyRing, clock: FakeClock) -> Vault:
    return vaults.make(ring, clock=clock)
