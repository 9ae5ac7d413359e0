"""Providers that report a dead token their own way, through the vault (SQLite file and real
PostgreSQL):

* Google's revocation endpoint answers ``400 invalid_token`` for a token that is already expired or
  revoked (not the ``200`` of RFC 7009 §2.2). The token is dead: the disconnect must succeed, or a
  grant the user removed at the provider would stay ``revocation_failed`` forever and block every
  reconnection.
* GitHub's token endpoint answers errors with HTTP ``200`` and calls a dead refresh token
  ``bad_refresh_token``: the connection needs re-authorization, not an endless "refresh failed".
"""

from __future__ import annotations

import logging
import time

import pytest
from oauth_support import OWNER, SECRET_TOKENS, Answer, ScriptedServer, scripted_provider

from mcp_elicit.connect.oauth import RevocationFailed, token_refresher, token_revoker
from mcp_elicit.connect.vault import Connection, NeedsReauthorization, RefreshFailed, Vault
from mcp_elicit.connect.vault import RevocationFailed as VaultRevocationFailed

GOOGLE_DEAD = Answer(400, body={"error": "invalid_token", "error_description": "Token expired or revoked"})
GITHUB_DEAD = Answer(
    200,
    body={
        "error": "bad_refresh_token",
        "error_description": "The refresh token passed is incorrect or expired.",
    },
)
CONNECTION = Connection(
    owner=OWNER, provider="github", access_token=SECRET_TOKENS[0], refresh_token=SECRET_TOKENS[1]
)


async def _store(vault: Vault, *, expires_at: float) -> None:
    await vault.put_connection(
        OWNER,
        "github",
        access_token=SECRET_TOKENS[0],
        refresh_token=SECRET_TOKENS[1],
        expires_at=expires_at,
        scopes=["repo"],
    )


# ---------------------------------------------------------------------------------- revocation


async def test_tokens_the_provider_says_are_already_invalid_count_as_revoked(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.routes["/revoke"] = GOOGLE_DEAD
    await token_revoker(scripted_provider(server))(CONNECTION)
    assert [r.form["token_type_hint"] for r in server.requests] == ["refresh_token", "access_token"]
    assert "already invalid" in caplog.text
    assert all(secret not in caplog.text for secret in SECRET_TOKENS)


async def test_a_dead_refresh_token_does_not_excuse_a_failed_access_token_revocation(
    server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    answers = iter([GOOGLE_DEAD, Answer(503)])
    server.routes["/revoke"] = lambda _request: next(answers)
    with pytest.raises(RevocationFailed) as info:
        await token_revoker(scripted_provider(server))(CONNECTION)
    assert str(info.value) == "github: revoking the access_token: HTTP 503"
    # The reason reaches the log (the vault reports a revoker's exception by type name only).
    assert "revoking the access_token: HTTP 503" in caplog.text


async def test_disconnect_of_a_grant_already_dead_at_the_provider(
    vault: Vault, server: ScriptedServer
) -> None:
    await _store(vault, expires_at=time.time() + 3600)
    server.routes["/revoke"] = GOOGLE_DEAD
    assert await vault.disconnect(OWNER, "github", token_revoker(scripted_provider(server))) is True
    assert await vault.get_connection(OWNER, "github") is None
    # A new grant can be stored (nothing left awaiting revocation).
    await _store(vault, expires_at=time.time() + 3600)


async def test_disconnect_still_keeps_the_row_when_revocation_really_fails(
    vault: Vault, server: ScriptedServer
) -> None:
    await _store(vault, expires_at=time.time() + 3600)
    server.routes["/revoke"] = Answer(400, body={"error": "invalid_client"})
    with pytest.raises(VaultRevocationFailed):
        await vault.disconnect(OWNER, "github", token_revoker(scripted_provider(server)))
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.status == "revocation_failed"


# ---------------------------------------------------------------------------------- refresh


@pytest.mark.parametrize(
    ("answer", "outcome", "reason"),
    [
        (GITHUB_DEAD, "invalid_grant", "invalid_grant"),
        (Answer(200, body={"error": "invalid_grant"}), "invalid_grant", "invalid_grant"),
        (
            Answer(200, body={"error": "incorrect_client_credentials"}),
            "failed",
            "token endpoint HTTP 200 incorrect_client_credentials",
        ),
        (Answer(400, body={"error": "bad_refresh_token"}), "invalid_grant", "invalid_grant"),
    ],
)
async def test_error_answers_sent_with_200(
    server: ScriptedServer, answer: Answer, outcome: str, reason: str
) -> None:
    server.routes["/token"] = answer
    result = await token_refresher(scripted_provider(server))(CONNECTION)
    assert (result.outcome, result.reason) == (outcome, reason)


async def test_github_dead_refresh_token_needs_reauthorization(vault: Vault, server: ScriptedServer) -> None:
    await _store(vault, expires_at=time.time() - 5)
    server.routes["/token"] = GITHUB_DEAD
    refresher = token_refresher(scripted_provider(server))
    with pytest.raises(NeedsReauthorization) as info:
        await vault.fresh_connection(OWNER, "github", refresher)
    assert "must connect again" in str(info.value)
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert stored.status == "needs_reauthorization"
    assert stored.refresh_token == SECRET_TOKENS[1]
    # Not asked again: the next call goes straight to re-authorization.
    with pytest.raises(NeedsReauthorization):
        await vault.fresh_connection(OWNER, "github", refresher)
    assert len(server.requests) == 1


async def test_github_bad_client_credentials_leave_the_connection_alone(
    vault: Vault, server: ScriptedServer
) -> None:
    await _store(vault, expires_at=time.time() - 5)
    server.routes["/token"] = Answer(200, body={"error": "incorrect_client_credentials"})
    with pytest.raises(RefreshFailed) as info:
        await vault.fresh_connection(OWNER, "github", token_refresher(scripted_provider(server)))
    assert info.value.retryable is False
    assert "incorrect_client_credentials" in str(info.value)
    stored = await vault.get_connection(OWNER, "github")
    assert stored is not None
    assert (stored.status, stored.access_token) == ("active", SECRET_TOKENS[0])
