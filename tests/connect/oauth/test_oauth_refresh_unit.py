"""token_refresher's mapping of every token endpoint outcome onto the vault's RefreshResult."""

from __future__ import annotations

import logging

import pytest
from oauth_support import SECRET_TOKENS, Answer, ScriptedServer, scripted_provider, token_body

from mcp_elicit.connect.oauth import token_refresher
from mcp_elicit.connect.oauth.refresh import parse_retry_after
from mcp_elicit.connect.vault import Connection


def _connection(**changes: object) -> Connection:
    fields: dict[str, object] = {
        "owner": "https://idp|alice",
        "provider": "github",
        "access_token": SECRET_TOKENS[0],
        "refresh_token": SECRET_TOKENS[1],
    }
    fields.update(changes)
    return Connection(**fields)  # type: ignore[arg-type]


async def test_ok_sends_the_refresh_grant(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body(access_token="new-at", refresh_token=None, scope=None))
    result = await token_refresher(scripted_provider(server))(_connection())
    assert result.outcome == "ok"
    assert (result.access_token, result.refresh_token, result.scopes) == ("new-at", None, None)
    assert result.expires_in == 3600.0
    (request,) = server.requests
    assert request.path == "/token"
    assert request.form == {"grant_type": "refresh_token", "refresh_token": SECRET_TOKENS[1]}
    assert request.headers["authorization"].startswith("Basic ")


@pytest.mark.parametrize(
    ("answer", "outcome", "retry_after"),
    [
        (Answer(400, body={"error": "invalid_grant"}), "invalid_grant", None),
        (Answer(429, headers={"retry-after": "30"}), "transient", 30.0),
        (Answer(429), "transient", None),
        (Answer(503, headers={"retry-after": "99999"}), "transient", 3600.0),
        (Answer(500, body="oops"), "transient", None),
        (Answer(401, body={"error": "invalid_client"}), "failed", None),
        (Answer(400, body={"error": "unauthorized_client"}), "failed", None),
        (Answer(400, body="not json"), "failed", None),
        (Answer(body="{}", headers={"content-type": "application/json"}), "failed", None),
        (Answer(body=token_body(token_type="mac")), "failed", None),
        (Answer(body=token_body(padding="x" * 100_000)), "failed", None),
        (Answer(302, headers={"location": "/elsewhere"}), "failed", None),
    ],
)
async def test_outcomes(
    server: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
    answer: Answer,
    outcome: str,
    retry_after: float | None,
) -> None:
    caplog.set_level(logging.DEBUG)
    server.routes["/token"] = answer
    result = await token_refresher(scripted_provider(server))(_connection())
    assert result.outcome == outcome, result
    assert result.retry_after == retry_after
    for secret in SECRET_TOKENS:
        assert secret not in result.reason
        assert secret not in repr(result)
        assert secret not in caplog.text


async def test_timeout_is_transient(server: ScriptedServer) -> None:
    server.routes["/token"] = Answer(body=token_body(), delay=2.0)
    result = await token_refresher(scripted_provider(server), timeout=0.3)(_connection())
    assert (result.outcome, result.reason) == ("transient", "token endpoint timeout")


async def test_no_refresh_token_needs_reauthorization(server: ScriptedServer) -> None:
    result = await token_refresher(scripted_provider(server))(_connection(refresh_token=None))
    assert result.outcome == "invalid_grant"
    assert server.requests == []


async def test_connection_of_another_provider(server: ScriptedServer) -> None:
    result = await token_refresher(scripted_provider(server))(_connection(provider="gitlab"))
    assert result.outcome == "failed"
    assert server.requests == []


def test_retry_after_http_date() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412480.0) == 30.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
