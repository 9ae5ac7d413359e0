"""Shared fixtures for the mcp_elicit.state tests.

PostgreSQL: tests use 127.0.0.1:5432, database ``test``, trust auth, user ``postgres`` (falling back
to the OS user), or the DSN in ``MCP_ELICIT_PG_DSN``. If no server answers, the PostgreSQL tests
FAIL, unless ``MCP_ELICIT_SKIP_PG=1`` is set (then they are skipped).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from tests.helpers import find_pg_dsn
from tests.store_support import closing_opened, each_backend

# The helpers live next to this file; make them importable whatever pytest's import mode is.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from state_support import (
    AUDIENCE,
    FakeClock,
    StoreSpec,
)

from mcp_elicit.state import KeyRing, RequestBinding, SingleUseStore, StateSealer, args_digest


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ring() -> KeyRing:
    return KeyRing.from_secrets([KeyRing.generate_secret()])


@pytest.fixture
def binding() -> RequestBinding:
    return RequestBinding(
        method="tools/call",
        target="book_table",
        args_digest=args_digest({"date": "2026-08-01", "party": 4}),
        principal="https://issuer.example|alice",
    )


@pytest.fixture
def sealer(ring: KeyRing, clock: FakeClock) -> StateSealer:
    return StateSealer(ring, audience=AUDIENCE, clock=clock)


# ------------------------------------------------------------------------------------ PostgreSQL


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    """A DSN that works, or a clear failure (a skip only with MCP_ELICIT_SKIP_PG=1)."""
    return find_pg_dsn("the PostgreSQL single-use store")


# ------------------------------------------------------------------------------------ stores


@pytest.fixture(params=["sqlite", "postgres"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    yield from each_backend(request, tmp_path, StoreSpec, "pg_dsn")


@pytest.fixture
async def stores(store_spec: StoreSpec) -> AsyncIterator[StoreSpec]:
    """The parametrised store location; every store made from it is closed afterwards."""
    async for spec in closing_opened(store_spec):
        yield spec


@pytest.fixture
def store(stores: StoreSpec) -> SingleUseStore:
    return stores.make()


@pytest.fixture
def make_binding() -> Callable[..., RequestBinding]:
    def make(
        method: str = "tools/call",
        target: str = "book_table",
        arguments: object = None,
        principal: str | None = "https://issuer.example|alice",
    ) -> RequestBinding:
        return RequestBinding(method, target, args_digest(arguments), principal)

    return make
