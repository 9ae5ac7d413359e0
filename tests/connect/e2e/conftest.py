"""Fixtures for the full-stack tests: one kit server process per module (SQLite in a temporary
folder), signing in at the real ``idp`` and connecting to the real ``third_party`` (both from
``tests/connect/conftest.py``), plus the test's own vault and flow-store objects on the same
storage, to look at what the server did.

Users are shared by the tests of a module: before each test their connections and secrets are
deleted and their open flows closed, so that every test starts from "never connected".
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e_support import Deployment, KitServer, Storage, TokenFor
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.vault import Vault

USERS = ("alice", "bob")


@pytest.fixture(scope="module")
def deployment(
    idp: OidcProvider, third_party: OidcProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("kit-e2e")
    made, port = Deployment.create(idp, third_party, Storage("sqlite", dir=str(folder)), folder)
    made.start(port)
    yield made
    made.stop()


@pytest.fixture(scope="module")
def kit_server(deployment: Deployment) -> KitServer:
    return deployment.servers[0]


@pytest.fixture
async def vault(deployment: Deployment) -> AsyncIterator[Vault]:
    """The test's own vault object on the server's storage, cleared of the test users' data."""
    opened = deployment.vault()
    for user in USERS:
        owner = deployment.principal(user)
        for provider in ("github", "gitlab"):
            await opened.delete_connection(owner, provider)
        await opened.delete_secret(owner, "api_key")
    deployment.storage.close_open_flows()
    yield opened
    await opened.close()


@pytest.fixture
async def flows(deployment: Deployment) -> AsyncIterator[FlowStore]:
    opened = deployment.flows()
    yield opened
    await opened.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """No cookie jar of its own, no redirects followed: each request says which cookies it sends."""
    from http.cookiejar import CookieJar, DefaultCookiePolicy

    jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    async with httpx.AsyncClient(cookies=jar, follow_redirects=False, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def _tokens() -> dict[str, str]:
    return {}


@pytest.fixture
def token_for(deployment: Deployment, _tokens: dict[str, str]) -> TokenFor:
    """``await token_for("alice")``: a real MCP access token from the idp for this deployment's
    ``/mcp`` (minted once per module and user)."""

    async def mint(user: str) -> str:
        if user not in _tokens:
            _tokens[user] = await deployment.token(user)
        return _tokens[user]

    return mint
