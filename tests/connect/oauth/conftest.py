"""Fixtures for the OAuth client tests: a scripted local server for edge cases, and clients
registered at the real oidc-provider (``third_party`` from tests/connect/conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oauth_support import REAL_REDIRECT_URI, ScriptedServer
from tests.oidc_provider import OidcProvider


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
