"""token_refresher and token_revoker against the real oidc-provider: a refresh with rotation,
invalid_grant for a rotated-away or revoked refresh token, and revocation that really ends the
grant (userinfo refuses the access token, introspection says inactive)."""

from __future__ import annotations

from typing import Any

from oauth_support import connect_at_provider
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.oauth import (
    token_refresher,
    token_revoker,
)
from mcp_elicit.connect.vault import Connection


def _with(connection: Connection, **changes: Any) -> Connection:
    fields = {
        name: getattr(connection, name)
        for name in ("owner", "provider", "access_token", "refresh_token", "expires_at", "scopes")
    }
    return Connection(**(fields | changes))


async def test_refresh_rotates_and_the_old_refresh_token_dies(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    provider, connection = await connect_at_provider(third_party, confidential_client)
    refresh = token_refresher(provider)
    result = await refresh(connection)
    assert result.outcome == "ok", result
    assert result.access_token
    assert result.access_token != connection.access_token
    assert result.refresh_token
    assert result.refresh_token != connection.refresh_token
    assert result.expires_in is not None
    assert result.expires_in > 0
    assert (await third_party.userinfo(result.access_token)).json()["sub"] == "alice"
    # Reusing the rotated-away refresh token is refused: re-authorization needed.
    again = await refresh(connection)
    assert again.outcome == "invalid_grant"
    assert "invalid_grant" in again.reason


async def test_refresh_after_revocation_is_invalid_grant(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    provider, connection = await connect_at_provider(third_party, confidential_client)
    await token_revoker(provider)(connection)
    result = await token_refresher(provider)(connection)
    assert result.outcome == "invalid_grant"


async def test_revocation_ends_the_grant(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    provider, connection = await connect_at_provider(third_party, confidential_client)
    assert (await third_party.userinfo(connection.access_token)).status_code == 200
    assert connection.refresh_token is not None
    assert (await third_party.introspect(confidential_client, connection.refresh_token))["active"] is True
    await token_revoker(provider)(connection)
    assert (await third_party.userinfo(connection.access_token)).status_code == 401
    assert (await third_party.introspect(confidential_client, connection.access_token))["active"] is False
    assert (await third_party.introspect(confidential_client, connection.refresh_token))["active"] is False
    # Revoking again is fine (RFC 7009 §2.2: unknown tokens are answered with 200).
    await token_revoker(provider)(connection)


async def test_public_client_refresh_and_revoke(
    third_party: OidcProvider, public_client: dict[str, Any]
) -> None:
    provider, connection = await connect_at_provider(third_party, public_client)
    result = await token_refresher(provider)(connection)
    assert result.outcome == "ok"
    assert result.access_token is not None
    refreshed = _with(connection, access_token=result.access_token, refresh_token=result.refresh_token)
    await token_revoker(provider)(refreshed)
    assert (await third_party.userinfo(refreshed.access_token)).status_code == 401
