"""Token endpoint failures during a vault refresh (SQLite file and real PostgreSQL): the caller
gets a RefreshFailed that says whether to retry, within the refresher's timeout, and the stored
connection is left exactly as it was."""

from __future__ import annotations

import time

import pytest
from oauth_support import OWNER, SECRET_TOKENS, Answer, ScriptedServer, scripted_provider, token_body

from mcp_elicit.connect.oauth import token_refresher
from mcp_elicit.connect.vault import RefreshFailed, Vault


@pytest.mark.parametrize(
    ("answer", "retryable", "reason"),
    [
        (Answer(503, body="<html>maintenance</html>", headers={"retry-after": "7"}), True, "HTTP 503"),
        (Answer(502, body={"error": "invalid_grant"}), True, "HTTP 502"),  # a 5xx body is not believed
        (Answer(429), True, "HTTP 429"),
        (Answer(body=token_body(), delay=3.0), True, "timeout"),
        (Answer(body="<html>login</html>", headers={"content-type": "text/html"}), False, "not a JSON"),
        (Answer(body="{garbage", headers={"content-type": "application/json"}), False, "not a JSON"),
        (Answer(body=token_body(padding="x" * 100_000)), False, "too large"),
        (Answer(body=token_body(token_type="DPoP")), False, "not Bearer"),
    ],
)
async def test_failures_leave_the_stored_connection_untouched(
    vault: Vault, server: ScriptedServer, answer: Answer, retryable: bool, reason: str
) -> None:
    expired = time.time() - 5
    await vault.put_connection(
        OWNER,
        "github",
        access_token=SECRET_TOKENS[0],
        refresh_token=SECRET_TOKENS[1],
        expires_at=expired,
        scopes=["repo"],
    )
    before = await vault.get_connection(OWNER, "github")
    server.routes["/token"] = answer
    started = time.monotonic()
    with pytest.raises(RefreshFailed) as info:
        await vault.fresh_connection(OWNER, "github", token_refresher(scripted_provider(server), timeout=0.5))
    assert time.monotonic() - started < 2.5
    assert info.value.retryable is retryable
    assert reason in str(info.value)
    assert info.value.__cause__ is None
    assert all(secret not in str(info.value) for secret in SECRET_TOKENS)
    if answer.status == 503:
        assert info.value.retry_after == 7.0
    after = await vault.get_connection(OWNER, "github")
    assert after == before
    assert after is not None
    assert (after.status, after.access_token, after.refresh_token, after.expires_at) == (
        "active",
        SECRET_TOKENS[0],
        SECRET_TOKENS[1],
        expired,
    )
