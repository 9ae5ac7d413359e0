"""Fixtures for the ConnectKit tests: the IdP side (JWKS + token endpoint) once per session, and a
factory of real sites (Server + ConnectKit under uvicorn on 127.0.0.1), each with its own thread,
event loop and kit, plus the test's own store objects on the same storage (acting as the pages).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kit_sites import VAULT_KEY, Site, SiteFactory, Storage, build_server, sqlite_storage
from kit_support import AuthServer, drop_pg, unique_name
from tests.helpers import InProcessServer, bound_socket, find_pg_dsn

from mcp_elicit.connect.flows.postgres_store import PostgresFlowStore
from mcp_elicit.connect.identity import JWTIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.vault import Vault


@pytest.fixture(scope="session")
def auth() -> Iterator[AuthServer]:
    state = AuthServer()
    with InProcessServer(state.app()) as server:
        state.base = server.base
        yield state


@pytest.fixture(autouse=True)
def _reset_auth(auth: AuthServer) -> None:
    auth.token_status = 400
    auth.token_body = {"error": "invalid_grant"}
    auth.token_requests = 0


@pytest.fixture
async def make_site(auth: AuthServer, tmp_path: Path, github_token_url: str) -> AsyncIterator[SiteFactory]:
    """``await make_site(hold=..., storage=...)``: a running site; everything is stopped and
    closed at the end of the test."""
    async with AsyncExitStack() as stack:

        async def make(
            *,
            hold: float = 0.6,
            storage: Storage | None = None,
            login: Any = None,
            base_url: str | None = None,
            **kit_options: Any,
        ) -> Site:
            """``base_url``: the public URL, when several instances share one (default: this
            instance's own address)."""
            chosen = storage or sqlite_storage(tmp_path)
            sock = bound_socket()
            base = base_url or f"http://127.0.0.1:{sock.getsockname()[1]}"
            kit = ConnectKit(
                base_url=base,
                identity=JWTIdentity(issuer=auth.issuer, jwks_url=auth.jwks_url, audience=base + "/mcp"),
                vault=chosen.server_vault(),
                flows=chosen.server_flows(),
                login=login,
                hold=hold,
                development=True,
                **kit_options,
            )
            kit.oauth_provider(
                "github",
                authorize_url=auth.base + "/authorize",
                token_url=github_token_url,
                client_id="kit-github-client",
                client_secret="kit-github-secret",
                scopes=["repo"],
            )
            server = build_server(kit)
            thread = InProcessServer(server.asgi(), sock)
            thread.on_close = kit.aclose  # closed in the server's own loop
            stack.enter_context(thread)
            flows, vault = chosen.test_flows(), chosen.test_vault()
            stack.push_async_callback(flows.close)
            stack.push_async_callback(vault.close)
            return Site(server, kit, thread, flows, vault, auth)

        yield make


@pytest.fixture
def github_token_url(auth: AuthServer) -> str:
    return auth.token_url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


@pytest.fixture
def pg_storage() -> Iterator[Storage]:
    """A PostgreSQL flow store and vault of this test's own (tables dropped afterwards)."""
    dsn = find_pg_dsn("the ConnectKit across instances")
    table = unique_name("mcp_elicit_test_kit_flows_")
    prefix = unique_name("kit_vault_") + "_"
    yield Storage(
        server_vault=lambda: Vault.postgres(dsn, keys=[VAULT_KEY], table_prefix=prefix),
        server_flows=lambda: PostgresFlowStore(dsn, table=table),
        test_vault=lambda: Vault.postgres(dsn, keys=[VAULT_KEY], table_prefix=prefix),
        test_flows=lambda: PostgresFlowStore(dsn, table=table),
    )
    drop_pg(dsn, table, prefix)
