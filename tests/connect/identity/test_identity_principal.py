"""Principal keys and the development identity."""

from __future__ import annotations

import logging

import pytest

from mcp_elicit.connect.identity import (
    DEVELOPMENT_IDENTITY_ENV_VAR,
    DEVELOPMENT_ISSUER,
    DevelopmentIdentity,
    DevelopmentIdentityRefused,
    InvalidToken,
    Principal,
    Verifier,
)
from mcp_elicit.server.auth import Unauthorized


def test_principal_key_and_round_trip() -> None:
    p = Principal("https://auth.example", "auth0|1234", client_id="c", scopes=frozenset({"a"}))
    assert p.key == "https://auth.example|auth0|1234"
    assert str(p) == p.key
    assert Principal.from_key(p.key) == p
    assert Principal.from_key(p.key).subject == "auth0|1234"
    assert p == Principal("https://auth.example", "auth0|1234")  # client_id and scopes are not identity
    assert hash(p) == hash(Principal("https://auth.example", "auth0|1234"))
    # Exact strings: no normalisation, so these are all different people.
    assert (
        len(
            {
                p,
                Principal("https://auth.example/", "auth0|1234"),
                Principal("https://AUTH.example", "auth0|1234"),
            }
        )
        == 3
    )
    assert not p.is_development


@pytest.mark.parametrize(
    ("issuer", "subject"),
    [
        ("", "a"),
        ("https://i", ""),
        ("https://a|b", "c"),
        ("https://i", "a\nb"),
        ("https://i", "a\x00"),
        (1, "a"),
    ],
)
def test_invalid_principals(issuer: object, subject: object) -> None:
    with pytest.raises(ValueError, match="not a valid principal"):
        Principal(issuer, subject)  # type: ignore[arg-type]


def test_from_key_needs_a_separator() -> None:
    with pytest.raises(ValueError, match="not a principal key"):
        Principal.from_key("no-separator")


def test_development_identity_refuses_without_acknowledgement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVELOPMENT_IDENTITY_ENV_VAR, raising=False)
    with pytest.raises(DevelopmentIdentityRefused, match="i_understand_this_is_not_secure"):
        DevelopmentIdentity()
    with pytest.raises(DevelopmentIdentityRefused):
        DevelopmentIdentity(i_understand_this_is_not_secure="yes")  # type: ignore[arg-type]
    monkeypatch.setenv(DEVELOPMENT_IDENTITY_ENV_VAR, "true")
    with pytest.raises(DevelopmentIdentityRefused):
        DevelopmentIdentity()


async def test_development_identity_is_labelled(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(DEVELOPMENT_IDENTITY_ENV_VAR, raising=False)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.identity"):
        dev = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    assert any("never deploy" in r.getMessage() for r in caplog.records)
    assert "DEVELOPMENT ONLY" in repr(dev)
    assert "NOT SECURE" in str(dev)
    assert isinstance(dev, Verifier)
    principal = await dev.verify("anything")
    assert principal.issuer == DEVELOPMENT_ISSUER == "urn:mcp-elicit:development"
    assert principal.key == "urn:mcp-elicit:development|demo-user"
    assert principal.is_development
    assert await dev.authenticate({}) == "urn:mcp-elicit:development|demo-user"

    monkeypatch.setenv(DEVELOPMENT_IDENTITY_ENV_VAR, "1")
    two = DevelopmentIdentity(tokens={"alice-token": "alice", "bob-token": "bob"})
    assert (await two.verify("bob-token")).subject == "bob"
    with pytest.raises(InvalidToken):
        await two.verify("mallory-token")
    assert (
        await two.authenticate({"authorization": "Bearer alice-token"}) == "urn:mcp-elicit:development|alice"
    )
    with pytest.raises(Unauthorized):
        await two.authenticate({"authorization": "Bearer mallory-token"})
    # With a token table, no token is no entry: the attack of simply leaving the header out.
    with pytest.raises(Unauthorized) as missing:
        await two.authenticate({})
    assert missing.value.www_authenticate == "Bearer"
    assert "invalid" not in missing.value.www_authenticate  # RFC 6750 §3.1: no error code
