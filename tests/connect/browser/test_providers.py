"""Smoke tests of the test infrastructure itself: the oidc-provider instances (``idp``,
``third_party``) and Debian Chromium via Playwright (``browser``)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from playwright.async_api import Browser
from tests.browser_support import CallbackServer
from tests.oidc_provider import (
    OidcProvider,
    authorization_code_flow,
    login_over_http,
    mcp_access_token,
    pkce_pair,
    redirect_params,
    sign_in,
)

from mcp_elicit.connect.identity import InvalidToken, JWTIdentity, Principal

MCP_URL = "http://127.0.0.1:8765/mcp"


def _decode(part: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decoded


def jwt_parts(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims, unverified (the test looks; JWTIdentity verifies)."""
    header, payload, _ = token.split(".")
    return _decode(header), _decode(payload)


def test_discovery_metadata(idp: OidcProvider, third_party: OidcProvider) -> None:
    assert idp.issuer != third_party.issuer
    for provider in (idp, third_party):
        meta = provider.metadata
        assert meta["issuer"] == provider.issuer
        assert provider.issuer.startswith("http://127.0.0.1:")
        assert meta["code_challenge_methods_supported"] == ["S256"]
        assert meta["authorization_response_iss_parameter_supported"] is True
        for endpoint in ("authorization", "token", "revocation", "registration", "userinfo", "introspection"):
            assert provider.endpoint(endpoint).startswith(provider.issuer + "/")
        assert "refresh_token" in meta["grant_types_supported"]
        assert "none" in meta["token_endpoint_auth_methods_supported"]
    assert {"repo", "read:user"} <= set(third_party.metadata["scopes_supported"])


async def test_browser_sign_in_returns_code_with_iss(
    idp: OidcProvider, browser: Browser, callback_server: CallbackServer
) -> None:
    client = idp.register_client([callback_server.url()])
    verifier, challenge = pkce_pair()
    url = idp.authorize_url(client, code_challenge=challenge, state="s-1", scope="openid email")
    page = await (await browser.new_context()).new_page()
    await page.goto(url)
    assert await page.title() == "Sign in - Test IdP"

    # A wrong password is refused on the form itself.
    await sign_in(page, "alice", password="nope")
    await page.get_by_role("alert").wait_for()
    assert "Unknown login or wrong password." in await page.get_by_role("alert").inner_text()

    await sign_in(page, "alice")
    await page.wait_for_url(callback_server.url() + "?**")
    assert await page.locator("#callback").inner_text() == "Callback received"
    params = (await callback_server.wait_for()).query
    assert params["state"] == "s-1"
    assert params["iss"] == idp.issuer
    tokens = await idp.exchange_code(client, params["code"], verifier)
    assert jwt_parts(tokens["id_token"])[1]["sub"] == "alice"


async def test_mcp_access_token_accepted_by_jwt_identity(idp: OidcProvider) -> None:
    token = await mcp_access_token(idp, "alice", MCP_URL)
    header, claims = jwt_parts(token)
    assert header["alg"] == "RS256"
    assert (claims["iss"], claims["sub"], claims["aud"]) == (idp.issuer, "alice", MCP_URL)
    assert claims["scope"] == "mcp"

    identity = JWTIdentity(issuer=idp.issuer, audience=MCP_URL, jwks_url=idp.jwks_url)
    principal = await identity.verify(token)
    assert principal == Principal(idp.issuer, "alice")
    # Minted for another resource: refused (no passthrough into this server).
    other = JWTIdentity(issuer=idp.issuer, audience="http://127.0.0.1:8766/mcp", jwks_url=idp.jwks_url)
    with pytest.raises(InvalidToken):
        await other.verify(token)


async def test_refresh_and_revocation(third_party: OidcProvider) -> None:
    client = third_party.register_client(
        ["http://127.0.0.1:9/cb"], token_endpoint_auth_method="client_secret_post"
    )
    tokens = await authorization_code_flow(third_party, "bob", client=client, scope="openid repo")
    assert (await third_party.userinfo(tokens["access_token"])).json()["sub"] == "bob"

    refreshed = await third_party.refresh(client, tokens["refresh_token"])
    assert refreshed["refresh_token"] != tokens["refresh_token"]  # rotation is on by default
    assert (await third_party.userinfo(refreshed["access_token"])).status_code == 200
    # the old refresh token died with the rotation
    old = await third_party.token_request_raw(
        client, [("grant_type", "refresh_token"), ("refresh_token", tokens["refresh_token"])]
    )
    assert old.status_code == 400
    assert old.json()["error"] == "invalid_grant"

    await third_party.revoke(client, refreshed["access_token"], hint="access_token")
    assert (await third_party.userinfo(refreshed["access_token"])).status_code == 401
    assert (await third_party.introspect(client, refreshed["access_token"]))["active"] is False
    await third_party.revoke(client, refreshed["refresh_token"], hint="refresh_token")
    with pytest.raises(RuntimeError, match="invalid_grant"):
        await third_party.refresh(client, refreshed["refresh_token"])


async def test_login_over_http_refuses_unknown_user(idp: OidcProvider) -> None:
    url = idp.authorize_url(idp.public_client(), code_challenge=pkce_pair()[1])
    with pytest.raises(PermissionError):
        await login_over_http(url, "mallory")


async def test_two_browser_contexts_are_two_users(
    idp: OidcProvider, browser: Browser, callback_server: CallbackServer
) -> None:
    client = idp.register_client([callback_server.url("/cb")], token_endpoint_auth_method="none")
    alice_page = await (await browser.new_context()).new_page()
    bob_page = await (await browser.new_context()).new_page()
    results: dict[str, str] = {}
    for user, page in (("alice", alice_page), ("bob", bob_page)):
        verifier, challenge = pkce_pair()
        await page.goto(idp.authorize_url(client, code_challenge=challenge, state=user))
        await sign_in(page, user)
        await page.wait_for_url(callback_server.url("/cb") + "?**")
        params = redirect_params(page.url)
        tokens = await idp.exchange_code(client, params["code"], verifier)
        results[user] = jwt_parts(tokens["id_token"])[1]["sub"]
    assert results == {"alice": "alice", "bob": "bob"}

    # Alice's browser keeps her session: a second authorization needs no login form at all.
    _, challenge = pkce_pair()
    await alice_page.goto(idp.authorize_url(client, code_challenge=challenge, state="again"))
    await alice_page.wait_for_url(callback_server.url("/cb") + "?**")
    assert "code" in redirect_params(alice_page.url)


async def test_consent_page_and_deny(browser: Browser, callback_server: CallbackServer) -> None:
    with OidcProvider(name="Consenting IdP", consent="page") as provider:
        client = provider.register_client([callback_server.url()], client_name="Demo App")
        page = await (await browser.new_context()).new_page()
        await page.goto(provider.authorize_url(client, code_challenge=pkce_pair()[1], scope="openid email"))
        await sign_in(page, "bob")
        await page.get_by_role("heading", name="Authorize Demo App").wait_for()
        await page.get_by_role("button", name="Deny").click()
        await page.wait_for_url(callback_server.url() + "?**")
        params = redirect_params(page.url)
        assert params["error"] == "access_denied"
        assert params["iss"] == provider.issuer
