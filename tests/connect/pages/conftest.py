"""Fixtures for the pages tests: a running :class:`ConnectPages` (real uvicorn on 127.0.0.1) with
an SQLite flow store and vault in ``tmp_path``, signing in at the real ``idp`` and connecting to
the real ``third_party`` provider (both from ``tests/connect/conftest.py``)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pages_support import FakeClock, Harness, build_app, reserve_port, serve_on
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.flows import SQLiteFlowStore
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing


@pytest.fixture
async def pages(tmp_path: Path, idp: OidcProvider, third_party: OidcProvider) -> AsyncIterator[Harness]:
    keys = KeyRing.from_secrets([KeyRing.generate_secret()])
    clock = FakeClock()
    flows = SQLiteFlowStore(tmp_path / "flows.db", clock=clock)
    vault = Vault.sqlite(tmp_path / "vault.db", keys=keys, clock=clock)
    sock, port = reserve_port()
    base = f"http://127.0.0.1:{port}"
    app = build_app(base, idp, third_party, flows, vault, keys, clock)
    async with serve_on(app, sock):
        yield Harness(base, app, flows, vault, keys, idp, third_party, clock)
    await vault.close()
    await flows.close()
    sock.close()


@pytest.fixture
async def http(pages: Harness) -> AsyncIterator[httpx.AsyncClient]:
    """A client that keeps no cookies of its own and never follows redirects: every test says
    exactly which cookies it sends."""
    jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))  # accepts no cookie
    async with httpx.AsyncClient(
        base_url=pages.base, cookies=jar, follow_redirects=False, timeout=15
    ) as client:
        yield client
