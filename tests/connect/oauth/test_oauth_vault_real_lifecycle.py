"""The vault and the real oidc-provider together (SQLite file and real PostgreSQL): single-flight
refresh across two vault instances while the provider rotates refresh tokens, invalid_grant after
an upstream revocation, disconnect, and a refresh answer with an odd field (through a proxy that
rewrites the real provider's answer) that must not cost the rotated refresh token."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import httpx
import pytest
from oauth_support import OWNER, Answer, MakeVault, Recorded, ScriptedServer, connect_at_provider
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.oauth import (
    token_refresher,
    token_revoker,
)
from mcp_elicit.connect.vault import Connection, NeedsReauthorization, RefreshResult, Vault


async def _store_expired(vault: Vault, connection: Connection) -> None:
    await vault.put_connection(
        OWNER,
        "github",
        access_token=connection.access_token,
        refresh_token=connection.refresh_token,
        expires_at=time.time() - 5,
        scopes=connection.scopes,
    )


async def test_two_vault_instances_refresh_once_with_a_rotating_provider(
    third_party: OidcProvider, confidential_client: dict[str, Any], make_vault: MakeVault
) -> None:
    provider, connection = await connect_at_provider(third_party, confidential_client)
    first, second = make_vault(), make_vault()
    await _store_expired(first, connection)
    real = token_refresher(provider)
    calls: list[str | None] = []

    async def counting(conn: Connection) -> RefreshResult:
        calls.append(conn.refresh_token)
        await asyncio.sleep(0.2)  # both instances surely contend
        return await real(conn)

    results = await asyncio.gather(
        *(vault.fresh_connection(OWNER, "github", counting) for vault in (first, second) for _ in range(5))
    )
    assert calls == [connection.refresh_token]
    tokens = {result.access_token for result in results}
    assert len(tokens) == 1
    (token,) = tokens
    assert token != connection.access_token
    assert (await third_party.userinfo(token)).json()["sub"] == "alice"
    stored = await second.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.refresh_token not in (None, connection.refresh_token)
    assert connection.refresh_token is not None
    assert (await third_party.introspect(confidential_client, connection.refresh_token))["active"] is False
    assert (await third_party.introspect(confidential_client, stored.refresh_token))["active"] is True


async def test_upstream_revocation_then_refresh_needs_reauthorization(
    third_party: OidcProvider, confidential_client: dict[str, Any], make_vault: MakeVault
) -> None:
    provider, connection = await connect_at_provider(third_party, confidential_client)
    vault = make_vault()
    await _store_expired(vault, connection)
    await token_revoker(provider)(connection)
    with pytest.raises(NeedsReauthorization) as info:
        await vault.fresh_connection(OWNER, "github", token_refresher(provider))
    assert "must connect again" in str(info.value)
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.status == "needs_reauthorization"
    assert stored.refresh_token == connection.refresh_token
    # Later calls do not go back to the provider.
    with pytest.raises(NeedsReauthorization):
        await vault.fresh_connection(OWNER, "github", token_refresher(provider))


async def test_disconnect_revokes_at_the_provider_and_is_idempotent(
    third_party: OidcProvider, confidential_client: dict[str, Any], make_vault: MakeVault
) -> None:
    provider, connection = await connect_at_provider(third_party, confidential_client)
    vault = make_vault()
    await _store_expired(vault, connection)
    assert await vault.disconnect(OWNER, "github", token_revoker(provider)) is True
    assert connection.refresh_token is not None
    assert (await third_party.introspect(confidential_client, connection.refresh_token))["active"] is False
    assert await vault.get_connection(OWNER, "github") is None
    assert await vault.disconnect(OWNER, "github", token_revoker(provider)) is False


def _mangling_proxy(server: ScriptedServer, token_url: str, **changes: Any) -> None:
    """``server``'s /token forwards to the real token endpoint and rewrites fields of its answer."""

    def forward(request: Recorded) -> Answer:
        headers = {k: v for k, v in request.headers.items() if k in ("authorization", "content-type")}
        answer = httpx.post(token_url, content=request.body, headers=headers, timeout=10)
        body = answer.json()
        if answer.status_code == 200:
            body.update(changes)
        return Answer(answer.status_code, body=body)

    server.routes["/token"] = forward


@pytest.mark.parametrize(
    ("changes", "expiry", "scopes"),
    [
        ({"expires_in": -1}, "now", ("openid", "repo")),
        ({"expires_in": "an hour"}, "unknown", ("openid", "repo")),
        ({"expires_in": True}, "unknown", ("openid", "repo")),
        ({"scope": ["openid", "repo"]}, "later", ("openid", "repo")),
        ({"scope": 'repo "admin"'}, "later", ("openid", "repo")),
        ({"id_token": 12345}, "later", ("openid", "repo")),
    ],
)
async def test_an_odd_field_in_a_refresh_answer_does_not_lose_the_rotated_refresh_token(
    third_party: OidcProvider,
    confidential_client: dict[str, Any],
    make_vault: MakeVault,
    server: ScriptedServer,
    changes: dict[str, Any],
    expiry: str,
    scopes: tuple[str, ...],
) -> None:
    """The provider has rotated the refresh token by the time its answer is read: refusing the
    answer for a field that has a sensible default would leave a dead refresh token in the vault
    (and a provider with reuse detection revokes the whole grant when it is tried)."""
    provider, connection = await connect_at_provider(third_party, confidential_client)
    proxied = replace(provider, token_url=f"{server.base}/token")
    _mangling_proxy(server, third_party.endpoint("token"), **changes)
    vault = make_vault()
    await _store_expired(vault, connection)
    before = time.time()
    fresh = await vault.fresh_connection(OWNER, "github", token_refresher(proxied))
    assert fresh.refresh_token not in (None, connection.refresh_token)
    assert (await third_party.userinfo(fresh.access_token)).json()["sub"] == "alice"
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert (stored.access_token, stored.refresh_token) == (fresh.access_token, fresh.refresh_token)
    assert stored.scopes == scopes
    if expiry == "unknown":
        assert stored.expires_at is None
    elif expiry == "now":
        assert stored.expires_at is not None
        assert before <= stored.expires_at <= time.time()
    else:
        assert stored.expires_at is not None
        assert stored.expires_at > time.time() + 60
    # The stored refresh token is the live one: the next refresh works.
    assert fresh.refresh_token is not None
    assert (await third_party.introspect(confidential_client, fresh.refresh_token))["active"] is True
