"""Fixtures for the vault tests: every test taking ``spec`` / ``vault`` runs against SQLite and
PostgreSQL.

PostgreSQL: 127.0.0.1:5432, database ``test``, trust auth, user ``postgres`` (falling back to the OS
user), or the DSN in ``MCP_ELICIT_PG_DSN``. If no server answers, the PostgreSQL variants FAIL with a
message saying so, unless ``MCP_ELICIT_SKIP_PG=1`` (then they are skipped). Each test gets its own
table prefix; the tables are dropped afterwards.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vault_support import FakeClock, VaultSpec, drop_pg_tables, new_ring, unique_prefix

from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing


def _candidate_dsns() -> list[str]:
    explicit = os.environ.get("MCP_ELICIT_PG_DSN")
    if explicit:
        return [explicit]
    users = ["postgres"]
    try:
        me = getpass.getuser()
    except Exception:  # pragma: no cover
        me = ""
    if me and me not in users:
        users.append(me)
    return [f"host=127.0.0.1 port=5432 dbname=test user={user} connect_timeout=3" for user in users]


@pytest.fixture(scope="session")
def pg_dsn() -> str:
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
        "PostgreSQL is unreachable, so the PostgreSQL vault cannot be tested.\n"
        "Tried:\n  " + "\n  ".join(errors) + "\n"
        "Start PostgreSQL on 127.0.0.1:5432 with a database 'test' (trust auth), or point "
        "MCP_ELICIT_PG_DSN at one, or set MCP_ELICIT_SKIP_PG=1 to skip these tests."
    )
    if os.environ.get("MCP_ELICIT_SKIP_PG") == "1":
        pytest.skip(message)
    pytest.fail(message, pytrace=False)


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
