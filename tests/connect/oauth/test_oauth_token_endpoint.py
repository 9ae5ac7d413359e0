"""The code redemption: sent only to the pinned token URL with the right form and client
authentication; every bad answer (5xx, timeout, redirect, huge or non-JSON body, wrong token type)
fails closed, and no token text ever reaches a message, a repr or a log line."""

from __future__ import annotations

import base64
import logging

import pytest
from oauth_support import REDIRECT_URI, SECRET_TOKENS, Answer, ScriptedServer, scripted_provider, token_body

from mcp_elicit.connect.oauth import AuthorizationCodeGrant, AuthorizationFailed, TokenGrant


def _callback(flow: AuthorizationCodeGrant) -> tuple[object, dict[str, str]]:
    _, pending = flow.begin()
    return pending, {"code": "the-code", "state": pending.state, "iss": flow.provider.issuer or ""}


async def _finish(flow: AuthorizationCodeGrant) -> TokenGrant:
    pending, params = _callback(flow)
    return await flow.finish(pending, params, provider_in_path="github")  # type: ignore[arg-type]


def _assert_no_secrets(*texts: str) -> None:
    for text in texts:
        for secret in (*SECRET_TOKENS, "the-code", "s3cret"):
            assert secret not in text


async def test_redeems_at_the_pinned_url_with_pkce_and_basic_auth(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body(scope="repo read:user"))
    flow = AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI)
    _, pending = flow.begin()
    params = {"code": "the-code", "state": pending.state, "iss": server.base}
    grant = await flow.finish(pending, params, provider_in_path="github")
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/token")
    assert request.form == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "redirect_uri": REDIRECT_URI,
        "code_verifier": pending.code_verifier,
    }
    # RFC 6749 §2.3.1: the id and secret are form-encoded before the Basic encoding.
    basic = base64.b64decode(request.headers["authorization"].removeprefix("Basic ")).decode()
    assert basic == "client-1:s3cret%3A%2F%20x"
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert grant.access_token == SECRET_TOKENS[0]
    assert grant.refresh_token == SECRET_TOKENS[1]
    assert grant.expires_in == 3600.0
    assert grant.scopes == ("repo", "read:user")
    assert grant.token_type == "Bearer"
    assert grant.id_claims is None
    _assert_no_secrets(repr(grant), str(grant))


async def test_public_client_sends_client_id_and_no_secret(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body(refresh_token=None, expires_in=None, scope=None))
    flow = AuthorizationCodeGrant(scripted_provider(server, client_secret=None), REDIRECT_URI)
    grant = await _finish(flow)
    (request,) = server.requests
    assert "authorization" not in request.headers
    assert request.form["client_id"] == "client-1"
    assert "client_secret" not in request.form
    assert grant.refresh_token is None
    assert grant.expires_in is None
    assert grant.scopes == ("repo",)  # no scope in the answer: the requested ones (RFC 6749 §5.1)


async def test_client_secret_post(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body())
    provider = scripted_provider(server, token_endpoint_auth_method="client_secret_post")
    await _finish(AuthorizationCodeGrant(provider, REDIRECT_URI))
    (request,) = server.requests
    assert "authorization" not in request.headers
    assert (request.form["client_id"], request.form["client_secret"]) == ("client-1", "s3cret:/ x")


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors(server: ScriptedServer, status: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.routes["/token"] = Answer(status, body=f"upstream broke; code the-code {SECRET_TOKENS[0]}")
    flow = AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI)
    with pytest.raises(AuthorizationFailed) as info:
        await _finish(flow)
    exc = info.value
    assert exc.reason == "token-endpoint"
    assert exc.detail == f"http-{status}"
    _assert_no_secrets(str(exc), repr(exc), exc.public_message, str(exc.provider_error), caplog.text)


async def test_oauth_error_from_the_token_endpoint(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(
        400, body={"error": "invalid_grant", "error_description": "grant request is invalid\x00<i>"}
    )
    with pytest.raises(AuthorizationFailed) as info:
        await _finish(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    assert (info.value.reason, info.value.error) == ("token-endpoint", "invalid_grant")
    assert info.value.provider_error == "grant request is invalid<i>"


async def test_what_the_provider_echoes_of_the_request_is_withheld(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    # A provider copying the code, the verifier or the client secret into its error: none of
    # them may reach the page (provider_error), a log line or the error code kept.
    caplog.set_level(logging.DEBUG)
    flow = AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI)
    pending, params = _callback(flow)
    verifier = pending.code_verifier  # type: ignore[attr-defined]
    server.routes["/token"] = Answer(
        400,
        body={
            "error": verifier[:64],
            "error_description": f"code 'the-code' with verifier {verifier} and secret s3cret:/ x refused",
        },
    )
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, params, provider_in_path="github")  # type: ignore[arg-type]
    exc = info.value
    assert exc.error is None
    assert exc.provider_error == "code '[withheld]' with verifier [withheld] and secret [withheld] refused"
    for text in (str(exc), repr(exc), exc.provider_error, caplog.text):
        assert verifier not in text
        assert verifier[:64] not in text
    _assert_no_secrets(str(exc), repr(exc), exc.provider_error, caplog.text)


async def test_timeout(server: ScriptedServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.routes["/token"] = Answer(body=token_body(), delay=2.0)
    flow = AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI, timeout=0.3)
    with pytest.raises(AuthorizationFailed) as info:
        await _finish(flow)
    assert (info.value.reason, info.value.detail) == ("token-endpoint", "timeout")
    _assert_no_secrets(str(info.value), repr(info.value), caplog.text)


async def test_nothing_listening() -> None:
    from mcp_elicit.connect.oauth import OAuthProvider

    provider = OAuthProvider(
        id="github", authorize_url="http://127.0.0.1:9/a", token_url="http://127.0.0.1:9/t", client_id="c"
    )
    flow = AuthorizationCodeGrant(provider, REDIRECT_URI)
    _, pending = flow.begin()
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, {"code": "c", "state": pending.state}, provider_in_path="github")
    assert (info.value.reason, info.value.detail) == ("token-endpoint", "network")


async def test_redirects_are_not_followed(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(307, headers={"location": f"{server.base}/elsewhere"})
    server.routes["/elsewhere"] = Answer(body=token_body())
    with pytest.raises(AuthorizationFailed) as info:
        await _finish(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    assert info.value.reason == "token-endpoint"
    assert [r.path for r in server.requests] == ["/token"]


async def test_huge_answer(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body(padding="x" * 200_000))
    with pytest.raises(AuthorizationFailed) as info:
        await _finish(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    assert (info.value.reason, info.value.detail) == ("token-endpoint", "too-large")


@pytest.mark.parametrize(
    "answer",
    [
        Answer(body=f"access_token={SECRET_TOKENS[0]}&token_type=bearer"),  # form-encoded (old GitHub)
        Answer(body=token_body(), headers={"content-type": "text/plain"}),
        Answer(body="[]", headers={"content-type": "application/json"}),
        Answer(body="{not json", headers={"content-type": "application/json"}),
        Answer(body=token_body(token_type="mac")),
        Answer(body=token_body(token_type="DPoP")),
        Answer(body=token_body(token_type=None)),
        Answer(body=token_body(access_token=None)),
        Answer(body=token_body(access_token="")),
        Answer(body=token_body(access_token=12345)),
        Answer(body=token_body(access_token="a" * 20_000)),
        Answer(body=token_body(access_token="tok\nen")),
        Answer(body=token_body(refresh_token=["x"])),
        Answer(body=token_body(expires_in="soon")),
        Answer(body=token_body(expires_in=-5)),
        Answer(body=token_body(expires_in=True)),
        Answer(body=token_body(scope=["repo"])),
        Answer(body=token_body(scope='repo "quoted"')),
    ],
)
async def test_unacceptable_token_responses(server: ScriptedServer, answer: Answer) -> None:
    server.routes["/token"] = answer
    with pytest.raises(AuthorizationFailed) as info:
        await _finish(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    assert info.value.reason == "token-response"
    _assert_no_secrets(str(info.value), repr(info.value), str(info.value.detail))


async def test_lenient_where_providers_differ(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(
        body=token_body(token_type="bearer", expires_in="7200", scope="repo  repo gist"),
        headers={"content-type": "application/json; charset=utf-8"},
    )
    grant = await _finish(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    assert (grant.token_type, grant.expires_in, grant.scopes) == ("Bearer", 7200.0, ("repo", "gist"))


async def test_grant_to_connection(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body())
    grant = await _finish(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    connection = grant.to_connection("https://idp|alice", "github", now=1000.0)
    assert connection.access_token == SECRET_TOKENS[0]
    assert connection.refresh_token == SECRET_TOKENS[1]
    assert connection.expires_at == 4600.0
    assert connection.scopes == ("repo",)
    assert connection.provider_account_id is None
