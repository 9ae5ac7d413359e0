"""AuthorizationCodeGrant.begin: the authorization URL carries exactly what RFC 6749/7636 and
OIDC ask for, built from the pinned configuration, with fresh secrets each time."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qs, urlsplit

import pytest
from oauth_support import REDIRECT_URI

from mcp_elicit.connect.oauth import AuthorizationCodeGrant, OAuthProvider


def _provider(**overrides: object) -> OAuthProvider:
    fields: dict[str, object] = {
        "id": "github",
        "authorize_url": "https://github.example/login/oauth/authorize?tenant=t1",
        "token_url": "https://github.example/token",
        "client_id": "client 1",
        "scopes": ("repo", "read:user"),
        "issuer": "https://github.example",
        "openid": True,
        "jwks_url": "https://github.example/jwks",
        "extra_authorize_params": {"prompt": "consent", "access_type": "offline"},
    }
    fields.update(overrides)
    return OAuthProvider(**fields)  # type: ignore[arg-type]


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_authorization_url() -> None:
    url, pending = AuthorizationCodeGrant(_provider(), REDIRECT_URI).begin()
    assert url.startswith("https://github.example/login/oauth/authorize?")
    query = _query(url)
    assert all(len(v) == 1 for v in query.values()), query
    q = {k: v[0] for k, v in query.items()}
    assert q["tenant"] == "t1"  # the configured URL's own query is kept
    assert q["response_type"] == "code"
    assert q["client_id"] == "client 1"
    assert q["redirect_uri"] == REDIRECT_URI
    assert q["scope"] == "openid repo read:user"
    assert q["state"] == pending.state
    assert len(base64.urlsafe_b64decode(pending.state + "==")) >= 16  # >= 128 bits
    digest = hashlib.sha256(pending.code_verifier.encode()).digest()
    assert q["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert q["code_challenge_method"] == "S256"
    assert q["nonce"] == pending.nonce
    assert q["prompt"] == "consent"
    assert q["access_type"] == "offline"
    assert "code_verifier" not in q
    assert pending.code_verifier not in url
    assert pending.provider_id == "github"
    assert pending.redirect_uri == REDIRECT_URI


def test_plain_oauth_has_no_nonce_and_no_openid_scope() -> None:
    provider = _provider(openid=False, scopes=("repo",))
    url, pending = AuthorizationCodeGrant(provider, REDIRECT_URI).begin()
    q = _query(url)
    assert pending.nonce is None
    assert "nonce" not in q
    assert q["scope"] == ["repo"]


def test_every_begin_is_fresh() -> None:
    flow = AuthorizationCodeGrant(_provider(), REDIRECT_URI)
    pendings = [flow.begin()[1] for _ in range(20)]
    for name in ("state", "code_verifier", "nonce"):
        assert len({getattr(p, name) for p in pendings}) == 20


@pytest.mark.parametrize("name", ["response_type", "client_id", "scope", "code_challenge_method"])
def test_extra_params_cannot_replace_the_protocol_ones(name: str) -> None:
    with pytest.raises(ValueError, match="extra_authorize_params"):
        AuthorizationCodeGrant(_provider(extra_authorize_params={name: "x"}), REDIRECT_URI)


@pytest.mark.parametrize(
    "uri", ["http://mcp.example.test/cb", "javascript:alert(1)", "https://mcp.example.test/cb#x", "/cb"]
)
def test_redirect_uri_must_be_https_or_loopback(uri: str) -> None:
    with pytest.raises(ValueError, match="redirect_uri"):
        AuthorizationCodeGrant(_provider(), uri)


def test_loopback_redirect_is_allowed_for_development() -> None:
    AuthorizationCodeGrant(_provider(), "http://127.0.0.1:8000/oauth/github/callback")


def test_a_connect_flows_own_scopes_are_asked_for() -> None:
    flow = AuthorizationCodeGrant(_provider(), REDIRECT_URI)
    url, _ = flow.begin(["repo", "gist", "repo"])
    assert _query(url)["scope"] == ["openid repo gist"]  # openid kept first, no duplicates
    url, _ = AuthorizationCodeGrant(_provider(openid=False), REDIRECT_URI).begin(["gist"])
    assert _query(url)["scope"] == ["gist"]
    with pytest.raises(TypeError):
        flow.begin("repo gist")  # type: ignore[arg-type]
