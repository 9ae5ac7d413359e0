"""Fixtures for the OAuth client tests: a scripted local server for edge cases, and clients
registered at the real oidc-provider (``third_party`` from tests/connect/conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oauth_support import REAL_REDIRECT_URI, MakeVault, ScriptedServer
from tests.connect.vault.vault_support import VaultSpec, drop_pg_tables, new_ring, unique_prefix
from tests.helpers import find_pg_dsn
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.vault import Vault


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture(scope="session")
def confidential_client(third_party: OidcProvider) -> dict[str, Any]:
    return third_party.register_client(
        [REAL_REDIRECT_URI], client_name="mcp-elicit (basic)", scope="openid profile email repo"
    )


@pytest.fixture(scope="session")
def public_client(third_party: OidcProvider) -> dict[str, Any]:
    return third_party.register_client(
        [REAL_REDIRECT_URI], token_endpoint_auth_method="none", client_name="mcp-elicit (public)"
    )


@pytest.fixture(scope="session")
def post_client(third_party: OidcProvider) -> dict[str, Any]:
    return third_party.register_client(
        [REAL_REDIRECT_URI], token_endpoint_auth_method="client_secret_post", client_name="mcp-elicit (post)"
    )


@pytest.fixture(params=["sqlite", "postgres"])
async def make_vault(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MakeVault]:
    """Opens vault instances on one shared store (a SQLite file, or real PostgreSQL tables), each
    with its own database connection and the same keys; all closed and dropped afterwards."""
    prefix = unique_prefix()
    location = (
        str(tmp_path / "vault.db") if request.param == "sqlite" else find_pg_dsn("the PostgreSQL vault")
    )
    spec = VaultSpec(request.param, location, prefix)
    ring = new_ring()
    try:
        yield lambda: spec.make(ring)
    finally:
        for opened in spec.opened:
            await opened.close()
        if request.param == "postgres":
            drop_pg_tables(location, prefix)


@pytest.fixture
def vault(make_vault: MakeVault) -> Vault:
    return make_vault()
