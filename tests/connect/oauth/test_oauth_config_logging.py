"""A token endpoint that refuses this server's own settings (a missing client_secret, a wrong
client_id or token_url) is a WARNING with what to check, so the operator sees it on stderr; a
person's denial, an expired or reused code, a provider outage stay INFO."""

from __future__ import annotations

import logging

import pytest
from oauth_support import REDIRECT_URI, Answer, ScriptedServer, scripted_provider

from mcp_elicit.connect.oauth import AuthorizationCodeGrant, AuthorizationFailed

HINT = "check client_id/client_secret/token_url for provider 'github'"


async def _fail(flow: AuthorizationCodeGrant, params: dict[str, str] | None = None) -> AuthorizationFailed:
    _, pending = flow.begin()
    callback = {"state": pending.state, "iss": flow.provider.issuer or "", **(params or {"code": "c"})}
    with pytest.raises(AuthorizationFailed) as info:
        await flow.finish(pending, callback, provider_in_path="github")
    return info.value


def _records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "mcp_elicit.connect.oauth"]


@pytest.mark.parametrize(
    "answer",
    [
        Answer(401, body={"error": "invalid_client"}),  # no or a wrong client_secret
        Answer(400, body={"error": "invalid_client"}),
        Answer(400, body={"error": "unauthorized_client"}),
        Answer(400, body={"error": "invalid_request", "error_description": "client_secret missing"}),
        Answer(401, body="Unauthorized"),  # no OAuth error at all
        Answer(400, body=""),
        Answer(404, body="Not Found"),  # token_url is not the token endpoint
    ],
)
async def test_a_refusal_of_our_settings_is_a_warning_with_a_hint(
    server: ScriptedServer, answer: Answer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit.connect.oauth")
    server.routes["/token"] = answer
    exc = await _fail(AuthorizationCodeGrant(scripted_provider(server, client_secret=None), REDIRECT_URI))
    assert exc.reason == "token-endpoint"
    [record] = _records(caplog)
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert message.startswith(
        f"authorization with provider 'github' failed: token-endpoint (http-{answer.status})"
    )
    assert message.endswith(HINT)


@pytest.mark.parametrize(
    "answer",
    [
        Answer(400, body={"error": "invalid_grant"}),  # the code expired or was used: try again
        Answer(503, body="maintenance"),  # the provider's outage, not our settings
    ],
)
async def test_other_token_endpoint_failures_stay_info(
    server: ScriptedServer, answer: Answer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit.connect.oauth")
    server.routes["/token"] = answer
    await _fail(AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI))
    [record] = _records(caplog)
    assert record.levelno == logging.INFO
    assert "check client_id" not in record.getMessage()


async def test_a_persons_denial_stays_info(server: ScriptedServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_elicit.connect.oauth")
    exc = await _fail(
        AuthorizationCodeGrant(scripted_provider(server), REDIRECT_URI), {"error": "access_denied"}
    )
    assert exc.declined
    [record] = _records(caplog)
    assert record.levelno == logging.INFO
    assert (
        record.getMessage()
        == "authorization with provider 'github' failed: provider-error error=access_denied"
    )
    assert server.requests == []  # nothing was sent to the token endpoint
