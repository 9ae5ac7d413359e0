"""Fixtures for the identity tests: keys (made once), a real JWKS server on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from identity_support import (
    FakeClock,
    JwksState,
    SigningKey,
    ec_key,
    ed_key,
    jwks_app,
    rsa_key,
)
from tests.helpers import InProcessServer


@pytest.fixture(scope="session")
def rsa() -> SigningKey:
    return rsa_key("rsa-1")


@pytest.fixture(scope="session")
def rsa_other() -> SigningKey:
    """Another RSA key that claims the same kid (a forger's key)."""
    return rsa_key("rsa-1")


@pytest.fixture(scope="session")
def rsa_rotated() -> SigningKey:
    return rsa_key("rsa-2")


@pytest.fixture(scope="session")
def ec() -> SigningKey:
    return ec_key("ec-1")


@pytest.fixture(scope="session")
def ed() -> SigningKey:
    return ed_key("ed-1")


@pytest.fixture(scope="session")
def _jwks_server() -> Iterator[tuple[InProcessServer, JwksState]]:
    state = JwksState()
    with InProcessServer(jwks_app(state)) as server:
        yield server, state


@pytest.fixture
def jwks_state(
    _jwks_server: tuple[InProcessServer, JwksState], rsa: SigningKey, ec: SigningKey, ed: SigningKey
) -> JwksState:
    """The JWKS server's state, reset for each test: the three keys, no requests counted."""
    _, state = _jwks_server
    state.keys = [rsa.jwk, ec.jwk, ed.jwk]
    state.requests = 0
    state.seen_headers.clear()
    state.status = 200
    state.delay = 0.0
    return state


@pytest.fixture
def jwks_url(_jwks_server: tuple[InProcessServer, JwksState], jwks_state: JwksState) -> str:
    server, _ = _jwks_server
    return f"{server.base}/jwks.json"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
