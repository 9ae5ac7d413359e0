"""Scopes and reconnection at the real third-party provider (oidc-provider), over HTTP: the
authorize request carries the flow's scopes, a reduced grant is stored as granted, a reconnect
revokes the grant it replaces, and a grant that cannot be replaced or stored never stays live
without a vault row."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any

import httpx
import pytest
from pages_support import Harness, running_pages
from test_pages_oauth import local, start_connect
from tests.oidc_provider import OidcProvider, login_over_http

from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.oauth.revoke import token_revoker
from mcp_elicit.connect.vault import Connection


@dataclass
class Upstream:
    """The provider's revocation endpoint as the pages reach it: the real one, or (``down``) a
    loopback port where nothing listens (the provider is unreachable)."""

    dead_port: int
    provider: OAuthProvider | None = None
    down: bool = False
    during_revocation: Callable[[], Awaitable[None]] | None = None
    revoked: list[Connection] = field(default_factory=list)

    async def __call__(self, connection: Connection) -> None:
        assert self.provider is not None
        if self.during_revocation is not None:
            await self.during_revocation()
            self.during_revocation = None
        self.revoked.append(connection)
        provider = self.provider
        if self.down:
            provider = replace(provider, revocation_url=f"http://127.0.0.1:{self.dead_port}/revoke")
        await token_revoker(provider, timeout=5)(connection)


@pytest.fixture
async def site(tmp_path: Path, idp: OidcProvider, third_party: OidcProvider) -> AsyncIterator[Harness]:
    with socket.socket() as closed:  # bound, never listening: connection refused
        closed.bind(("127.0.0.1", 0))
        upstream = Upstream(closed.getsockname()[1])
        async with running_pages(tmp_path, idp, third_party, revokers={"github": upstream}) as harness:
            upstream.provider = harness.app._ctx.providers["github"]
            harness.upstream = upstream  # type: ignore[attr-defined]
            yield harness


@pytest.fixture
async def http(site: Harness) -> AsyncIterator[httpx.AsyncClient]:
    """As the package's ``http``, for this module's ``site``: no cookie jar, no redirects."""
    jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
    async with httpx.AsyncClient(
        base_url=site.base, cookies=jar, follow_redirects=False, timeout=15
    ) as client:
        yield client


def client_of(pages: Harness) -> dict[str, Any]:
    github = pages.app._ctx.providers["github"]
    return {"client_id": github.client_id, "client_secret": github.client_secret}


async def active(pages: Harness, token: str) -> bool:
    """Whether the provider still honours ``token`` (RFC 7662; does not use it up)."""
    return bool((await pages.third_party.introspect(client_of(pages), token))["active"])


def token_requests(pages: Harness) -> int:
    return pages.third_party.log_text().count("POST /token ")


async def connect(
    pages: Harness, http: httpx.AsyncClient, scopes: list[str] | None = None
) -> tuple[str, httpx.Response, str]:
    """A whole connection as alice: (the authorize URL, the callback's response, the flow id)."""
    flow = await pages.flows.create(pages.principal("alice"), "connect", "github", scopes or ["repo"])
    session = pages.cookie("alice")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    callback = await login_over_http(authorize, "alice")
    return authorize, await http.get(local(callback), headers={"cookie": f"{session}; {tx}"}), flow.id


async def test_the_authorize_request_asks_for_the_flows_scopes(
    site: Harness, http: httpx.AsyncClient
) -> None:
    flow = await site.flows.create(site.principal("alice"), "connect", "github", ["repo", "read:user"])
    page = await http.get(f"/connect/{flow.id}", headers={"cookie": site.cookie("alice")})
    assert "read:user" in page.text  # what the confirmation page lists ...
    authorize, tx = await start_connect(site, http, site.cookie("alice"), flow.id)
    assert httpx.URL(authorize).params["scope"].split() == ["repo", "read:user"]  # ... is asked for
    callback = await login_over_http(authorize, "alice")
    done = await http.get(local(callback), headers={"cookie": f"{site.cookie('alice')}; {tx}"})
    assert done.status_code == 303
    stored = await site.vault.get_connection(site.principal("alice").key, "github")
    assert stored is not None
    assert set(stored.scopes) == {"repo", "read:user"}


async def test_a_reduced_grant_is_stored_as_granted(site: Harness, http: httpx.AsyncClient) -> None:
    # The provider does not know "admin:org": it grants the rest (RFC 6749 §3.3).
    authorize, done, _ = await connect(site, http, ["repo", "admin:org"])
    assert httpx.URL(authorize).params["scope"].split() == ["repo", "admin:org"]
    assert done.status_code == 303
    stored = await site.vault.get_connection(site.principal("alice").key, "github")
    assert stored is not None
    assert stored.scopes == ("repo",)


async def test_a_reconnect_revokes_the_grant_it_replaces(site: Harness, http: httpx.AsyncClient) -> None:
    owner = site.principal("alice").key
    _, first, _ = await connect(site, http)
    assert first.status_code == 303
    old = await site.vault.get_connection(owner, "github")
    assert old is not None
    assert old.refresh_token
    assert await active(site, old.refresh_token)

    _, second, _ = await connect(site, http, ["repo", "read:user"])
    assert second.status_code == 303
    new = await site.vault.get_connection(owner, "github")
    assert new is not None
    assert new.id != old.id
    assert new.refresh_token
    # The old grant is dead at the provider (not merely dropped from the vault); the new one works.
    assert not await active(site, old.refresh_token)
    assert not await active(site, old.access_token)
    assert await active(site, new.refresh_token)
    assert await active(site, new.access_token)


async def test_an_unrevocable_earlier_grant_stops_the_reconnect_before_the_code_is_redeemed(
    site: Harness, http: httpx.AsyncClient
) -> None:
    owner = site.principal("alice").key
    _, first, _ = await connect(site, http)
    assert first.status_code == 303
    old = await site.vault.get_connection(owner, "github")
    assert old is not None
    assert old.refresh_token

    site.upstream.down = True  # type: ignore[attr-defined]
    redeemed = token_requests(site)
    _, refused, flow_id = await connect(site, http)
    assert refused.status_code == 502
    assert "could not be reached to revoke it" in refused.text
    assert "Nothing new was stored" in refused.text
    assert "Something went wrong" not in refused.text
    assert token_requests(site) == redeemed, "the code must not be redeemed: no grant left unstored"
    kept = await site.vault.get_connection(owner, "github")
    assert kept is not None
    # Kept, flagged, with its tokens: the next try revokes it (never silently dropped).
    assert (kept.id, kept.status, kept.refresh_token) == (old.id, "revocation_failed", old.refresh_token)
    failed = await site.flows.get(flow_id)
    assert failed.status == "failed"
    assert failed.detail == "Your earlier connection could not be revoked, so no new one was made."

    # The provider is back: the next link revokes the old grant first, then connects.
    site.upstream.down = False  # type: ignore[attr-defined]
    _, again, _ = await connect(site, http)
    assert again.status_code == 303
    new = await site.vault.get_connection(owner, "github")
    assert new is not None
    assert new.status == "active"
    assert not await active(site, old.refresh_token)


async def test_a_grant_redeemed_for_a_flow_that_ended_meanwhile_is_revoked(
    site: Harness, http: httpx.AsyncClient
) -> None:
    owner = site.principal("alice").key
    _, first, _ = await connect(site, http)
    assert first.status_code == 303
    flow = await site.flows.create(site.principal("alice"), "connect", "github", ["repo"])
    session = site.cookie("alice")
    authorize, tx = await start_connect(site, http, session, flow.id)
    callback = await login_over_http(authorize, "alice")

    async def dismissed_in_the_client() -> None:  # while the browser was at the provider
        await site.flows.fail(flow.id, "dismissed in the client", owner=owner)

    site.upstream.during_revocation = dismissed_in_the_client  # type: ignore[attr-defined]
    refused = await http.get(local(callback), headers={"cookie": f"{session}; {tx}"})
    assert refused.status_code == 409
    assert "Something went wrong" not in refused.text
    # Two revocations: the grant being replaced, then the new one nobody will store.
    old, new = site.upstream.revoked  # type: ignore[attr-defined]
    assert new.refresh_token
    assert new.refresh_token != old.refresh_token
    assert not await active(site, new.refresh_token)
    assert not await active(site, new.access_token)
    assert await site.vault.get_connection(owner, "github") is None
