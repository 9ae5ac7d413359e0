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

from pages_support import Harness, running_pages
from tests.oidc_provider import OidcProvider


@pytest.fixture
async def pages(tmp_path: Path, idp: OidcProvider, third_party: OidcProvider) -> AsyncIterator[Harness]:
    async with running_pages(tmp_path, idp, third_party) as harness:
        yield harness


@pytest.fixture
async def http(pages: Harness) -> AsyncIterator[httpx.AsyncClient]:
    """A client that keeps no cookies of its own and never follows redirects: every test says
    exactly which cookies it sends."""
    jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))  # accepts no cookie
    async with httpx.AsyncClient(
        base_url=pages.base, cookies=jar, follow_redirects=False, timeout=15
    ) as client:
        yield client
