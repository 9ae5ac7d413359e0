"""token_revoker: RFC 7009 requests (refresh token first), what counts as revoked, and the
provider without a revocation endpoint."""

from __future__ import annotations

import logging

import pytest
from oauth_support import SECRET_TOKENS, Answer, ScriptedServer, scripted_provider

from mcp_elicit.connect.oauth import RevocationFailed, token_revoker
from mcp_elicit.connect.vault import Connection

CONNECTION = Connection(
    owner="https://idp|alice",
    provider="github",
    access_token=SECRET_TOKENS[0],
    refresh_token=SECRET_TOKENS[1],
)


async def test_refresh_token_first_then_access_token(server: ScriptedServer) -> None:
    server.routes["/revoke"] = Answer(200)
    await token_revoker(scripted_provider(server))(CONNECTION)
    assert [r.form for r in server.requests] == [
        {"token": SECRET_TOKENS[1], "token_type_hint": "refresh_token"},
        {"token": SECRET_TOKENS[0], "token_type_hint": "access_token"},
    ]
    assert all(
        r.path == "/revoke" and r.headers["authorization"].startswith("Basic ") for r in server.requests
    )


async def test_access_token_only(server: ScriptedServer) -> None:
    server.routes["/revoke"] = Answer(200)
    connection = Connection(owner="o", provider="github", access_token=SECRET_TOKENS[0])
    await token_revoker(scripted_provider(server))(connection)
    assert [r.form["token_type_hint"] for r in server.requests] == ["access_token"]


@pytest.mark.parametrize(
    "answer",
    [
        Answer(503, headers={"retry-after": "10"}),
        Answer(400, body={"error": "invalid_client"}),
        Answer(400, body={"error": "unsupported_token_type"}),
        Answer(301, headers={"location": "/elsewhere"}),
    ],
)
async def test_failures_raise(server: ScriptedServer, answer: Answer) -> None:
    server.routes["/revoke"] = answer
    with pytest.raises(RevocationFailed) as info:
        await token_revoker(scripted_provider(server))(CONNECTION)
    assert "refresh_token" in str(info.value)
    assert all(secret not in str(info.value) for secret in SECRET_TOKENS)
    assert len(server.requests) == 1  # stopped after the refresh token


async def test_timeout_raises(server: ScriptedServer) -> None:
    server.routes["/revoke"] = Answer(200, delay=2.0)
    with pytest.raises(RevocationFailed, match="timeout"):
        await token_revoker(scripted_provider(server), timeout=0.3)(CONNECTION)


async def test_access_token_not_revocable_after_the_refresh_token(server: ScriptedServer) -> None:
    def answer(request: object) -> Answer:
        if "refresh_token" in request.form["token_type_hint"]:  # type: ignore[attr-defined]
            return Answer(200)
        return Answer(400, body={"error": "unsupported_token_type"})

    server.routes["/revoke"] = answer
    await token_revoker(scripted_provider(server))(CONNECTION)
    assert len(server.requests) == 2


async def test_access_token_failure_after_the_refresh_token_still_raises(server: ScriptedServer) -> None:
    server.routes["/revoke"] = lambda request: Answer(
        200 if "refresh" in request.form["token_type_hint"] else 500
    )
    with pytest.raises(RevocationFailed, match="access_token: HTTP 500"):
        await token_revoker(scripted_provider(server))(CONNECTION)


async def test_no_revocation_endpoint(server: ScriptedServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit.connect.oauth")
    await token_revoker(scripted_provider(server, revocation_url=None))(CONNECTION)
    assert server.requests == []
    assert "no revocation endpoint" in caplog.text
    assert all(secret not in caplog.text for secret in SECRET_TOKENS)


async def test_connection_of_another_provider(server: ScriptedServer) -> None:
    gitlab = Connection(owner="o", provider="gitlab", access_token=SECRET_TOKENS[0])
    with pytest.raises(RevocationFailed):
        await token_revoker(scripted_provider(server))(gitlab)
    assert server.requests == []
