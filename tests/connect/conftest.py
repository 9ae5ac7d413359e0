"""Fixtures shared by the connect tests: real identity providers and a real browser.

* ``idp`` (session): :class:`tests.oidc_provider.OidcProvider` named "Test IdP", the MCP
  authorization server: accounts ``alice`` / ``bob`` (password ``"password"``), consent granted
  automatically; ``mcp_access_token(idp, "alice", resource)`` mints a JWT for an MCP server URL.
* ``third_party`` (session): a second, separate provider named "GitHub (test)" with the extra
  scopes ``repo`` and ``read:user``: the third-party account a user connects (opaque tokens,
  refresh, revocation, userinfo as "the API").
* ``browser``: from ``tests/conftest.py`` (headless Debian Chromium, one context per user).
* ``callback_server`` (function): a loopback HTTP server recording requests, usable as a
  client's redirect URI.

The providers are started lazily, once per session, only by tests that ask for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from tests.browser_support import CallbackServer
from tests.oidc_provider import OidcProvider

if TYPE_CHECKING:
    pass


@pytest.fixture(scope="session")
def idp() -> Iterator[OidcProvider]:
    with OidcProvider(name="Test IdP") as provider:
        yield provider


@pytest.fixture(scope="session")
def third_party() -> Iterator[OidcProvider]:
    with OidcProvider(name="GitHub (test)", scopes=["repo", "read:user"]) as provider:
        yield provider


@pytest.fixture
def callback_server() -> Iterator[CallbackServer]:
    with CallbackServer() as server:
        yield server
