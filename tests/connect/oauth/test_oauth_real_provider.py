"""The OAuth client against the real oidc-provider (``third_party``, "GitHub (test)"): discovery,
sign-in as alice, code redemption with PKCE, ID token validation, and every refusal the callback
checks make, with proof that a refused callback did not redeem the code."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from oauth_support import REAL_REDIRECT_URI, abort_over_http
from tests.oidc_provider import OidcProvider, login_over_http, redirect_params

from mcp_elicit.connect.oauth import (
    AuthorizationCodeGrant,
    AuthorizationFailed,
    DiscoveryFailed,
    OAuthProvider,
    PendingAuthorization,
    discover,
)


class Clock:
    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def _provider(third_party: OidcProvider, client: dict[str, Any], **extra: Any) -> OAuthProvider:
    return await discover(
        third_party.issuer,
        id="github",
        client_id=client["client_id"],
        client_secret=client.get("client_secret"),
        scopes=("openid", "profile", "repo"),
        title="GitHub (test)",
        **extra,
    )


async def _callback(
    flow: AuthorizationCodeGrant, user: str = "alice"
) -> tuple[PendingAuthorization, dict[str, str]]:
    url, pending = flow.begin()
    return pending, redirect_params(await login_over_http(url, user))


async def test_discovery_pins_the_metadata(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    provider = await _provider(third_party, confidential_client)
    meta = third_party.metadata
    assert provider.issuer == third_party.issuer
    assert provider.authorize_url == meta["authorization_endpoint"]
    assert provider.token_url == meta["token_endpoint"]
    assert provider.revocation_url == meta["revocation_endpoint"]
    assert provider.jwks_url == meta["jwks_uri"]
    assert provider.userinfo_url == meta["userinfo_endpoint"]
    assert provider.iss_parameter_supported is True
    assert provider.openid is True
    assert provider.auth_method == "client_secret_basic"


async def test_discovery_refuses_another_issuer_spelling(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    with pytest.raises(DiscoveryFailed, match="names issuer"):
        await discover(third_party.issuer + "/", id="github", client_id=confidential_client["client_id"])


async def test_happy_path(third_party: OidcProvider, confidential_client: dict[str, Any]) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    assert params["iss"] == third_party.issuer
    grant = await flow.finish(pending, params, provider_in_path="github")
    assert grant.id_claims is not None
    assert grant.id_claims["sub"] == "alice"
    assert grant.id_claims["nonce"] == pending.nonce
    assert grant.id_claims["aud"] == confidential_client["client_id"]
    assert grant.subject == "alice"
    assert grant.refresh_token
    assert grant.expires_in is not None
    assert grant.expires_in > 0
    assert set(grant.scopes) >= {"openid", "repo"}
    # The access token works at the provider's API (userinfo) and belongs to alice.
    answer = await third_party.userinfo(grant.access_token)
    assert answer.status_code == 200
    assert answer.json()["sub"] == "alice"


async def test_public_client(third_party: OidcProvider, public_client: dict[str, Any]) -> None:
    provider = await _provider(third_party, public_client)
    assert provider.auth_method == "none"
    flow = AuthorizationCodeGrant(provider, REAL_REDIRECT_URI)
    pending, params = await _callback(flow, "bob")
    grant = await flow.finish(pending, params, provider_in_path="github")
    assert grant.subject == "bob"


async def test_client_secret_post(third_party: OidcProvider, post_client: dict[str, Any]) -> None:
    provider = await _provider(third_party, post_client, token_endpoint_auth_method="client_secret_post")
    flow = AuthorizationCodeGrant(provider, REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    assert (await flow.finish(pending, params, provider_in_path="github")).subject == "alice"


async def test_reused_pending_is_refused_by_the_provider(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    await flow.finish(pending, params, provider_in_path="github")
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, params, provider_in_path="github")
    assert (info.value.reason, info.value.error) == ("token-endpoint", "invalid_grant")


async def test_pkce_is_enforced(third_party: OidcProvider, confidential_client: dict[str, Any]) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    wrong = PendingAuthorization.from_dict(pending.to_dict() | {"code_verifier": "v" * 64})
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(wrong, params, provider_in_path="github")
    assert (info.value.reason, info.value.error) == ("token-endpoint", "invalid_grant")


async def _refused_then_still_redeemable(
    flow: AuthorizationCodeGrant,
    pending: PendingAuthorization,
    good: dict[str, str],
    bad: dict[str, str],
    reason: str,
    *,
    path: str = "github",
) -> None:
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, bad, provider_in_path=path)
    assert info.value.reason == reason
    # The refusal came before redemption: the code is still good for the right callback.
    grant = await flow.finish(pending, good, provider_in_path="github")
    assert grant.subject == "alice"


async def test_state_mismatch(third_party: OidcProvider, confidential_client: dict[str, Any]) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    _, other = flow.begin()
    bad = params | {"state": other.state}
    await _refused_then_still_redeemable(flow, pending, params, bad, "state-mismatch")


async def test_callback_under_another_providers_path(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    await _refused_then_still_redeemable(flow, pending, params, params, "wrong-provider", path="gitlab")


async def test_iss_mismatch(third_party: OidcProvider, confidential_client: dict[str, Any]) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    bad = params | {"iss": third_party.issuer + "/"}
    await _refused_then_still_redeemable(flow, pending, params, bad, "iss-mismatch")


async def test_iss_missing_when_advertised(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    bad = {k: v for k, v in params.items() if k != "iss"}
    await _refused_then_still_redeemable(flow, pending, params, bad, "iss-missing")


async def test_expired_pending(third_party: OidcProvider, confidential_client: dict[str, Any]) -> None:
    clock = Clock()
    provider = await _provider(third_party, confidential_client)
    flow = AuthorizationCodeGrant(provider, REAL_REDIRECT_URI, clock=clock, max_age=60)
    pending, params = await _callback(flow)
    clock.now += 61
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, params, provider_in_path="github")
    assert info.value.reason == "expired"


async def test_user_cancels_at_the_provider(
    third_party: OidcProvider, confidential_client: dict[str, Any]
) -> None:
    flow = AuthorizationCodeGrant(await _provider(third_party, confidential_client), REAL_REDIRECT_URI)
    url, pending = flow.begin()
    params = redirect_params(await abort_over_http(url))
    assert params["error"] == "access_denied"
    assert (params["state"], params["iss"]) == (pending.state, third_party.issuer)
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, params, provider_in_path="github")
    exc = info.value
    assert exc.reason == "provider-error"
    assert exc.declined
    assert exc.provider_error == params["error_description"]
    # The same real response with a hostile description (an attacker-controlled provider page,
    # or a tampered redirect): the public message stays ours, the provider's text only cleaned.
    hostile = params | {"error_description": "<script>alert(1)</script>\x07\x1b[31m\u202eevil\r\n"}
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, hostile, provider_in_path="github")
    exc = info.value
    assert exc.declined
    assert "<" not in exc.public_message
    assert exc.provider_error == "<script>alert(1)</script>[31mevil"


async def test_no_secret_in_logs_reprs_or_errors(
    third_party: OidcProvider, confidential_client: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    provider = await _provider(third_party, confidential_client)
    flow = AuthorizationCodeGrant(provider, REAL_REDIRECT_URI)
    pending, params = await _callback(flow)
    caplog.clear()  # the test helper's own login requests carry the code; ours must not log it
    grant = await flow.finish(pending, params, provider_in_path="github")
    with pytest.raises(AuthorizationFailed) as info:  # the code again: refused by the provider
        await flow.finish(pending, params, provider_in_path="github")
    secrets = [grant.access_token, grant.refresh_token, params["code"], pending.code_verifier, pending.state]
    secrets.append(confidential_client["client_secret"])
    shown = [caplog.text, repr(grant), str(grant), repr(pending), repr(provider), repr(flow)]
    shown += [repr(info.value), str(info.value), str(info.value.provider_error), str(info.value.detail)]
    for secret in secrets:
        assert secret
        for text in shown:
            assert secret not in text
