"""Construction rules: https outside development, the loopback-only development exception and
what it changes in the cookies; OidcLogin needs an OpenID provider."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pages_support import offline_login

from mcp_elicit.connect.flows import MAX_SESSION_LIFETIME, SQLiteFlowStore
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.pages import ConnectPages, OidcLogin
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing

IDP = "https://id.example.com"


def login() -> OidcLogin:
    return offline_login(IDP)


def make(tmp_path: Path, base_url: str, development: bool = False, **options: Any) -> ConnectPages:
    keys = KeyRing.from_secrets([KeyRing.generate_secret()])
    return ConnectPages(
        base_url=base_url,
        login=login(),
        flows=SQLiteFlowStore(tmp_path / "f.db"),
        vault=Vault.sqlite(tmp_path / "v.db", keys=keys),
        keys=keys,
        server_name="S",
        development=development,
        **{"providers": {}, **options},
    )


async def call(
    app: ConnectPages, path: str, query: bytes = b"", root_path: str = ""
) -> tuple[int, list[tuple[bytes, bytes]]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": query,
        "headers": [],
        "root_path": root_path,
    }
    await app(scope, receive, send)
    return sent[0]["status"], sent[0]["headers"]


NEXT = b"next=/mcp-pages/connect/" + b"A" * 43


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000", "http://127.0.0.1"]
)
async def test_development_on_loopback_uses_plain_cookie_names(tmp_path: Path, base_url: str) -> None:
    app = make(tmp_path, base_url + "/mcp-pages", development=True)
    assert app.session_cookie_name == "mcp-elicit-session"
    status, headers = await call(app, "/mcp-pages/login", NEXT)
    assert status == 303
    cookie = dict(headers)[b"set-cookie"].decode()
    assert cookie.startswith("mcp-elicit-login-")
    assert "Secure" not in cookie


@pytest.mark.parametrize("base_url", ["http://example.com", "https://example.com", "http://10.0.0.1:8000"])
def test_development_elsewhere_is_refused(tmp_path: Path, base_url: str) -> None:
    with pytest.raises(ValueError, match=r"loopback|this machine"):
        make(tmp_path, base_url, development=True)


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:8000", "http://mcp.example.com", "ftp://mcp.example.com"]
)
def test_production_needs_https(tmp_path: Path, base_url: str) -> None:
    with pytest.raises(ValueError, match="https"):
        make(tmp_path, base_url)


async def test_production_cookies_are_host_prefixed_and_secure(tmp_path: Path) -> None:
    app = make(tmp_path, "https://mcp.example.com/mcp-pages")
    assert app.session_cookie_name == "__Host-mcp-elicit-session"
    assert app.login_redirect_uri == "https://mcp.example.com/mcp-pages/login/callback"
    status, headers = await call(app, "/mcp-pages/login", NEXT)
    assert status == 303
    cookie = dict(headers)[b"set-cookie"].decode()
    assert cookie.startswith("__Host-mcp-elicit-login-")
    for attribute in ("Secure", "HttpOnly", "SameSite=Lax", "Path=/"):
        assert attribute in cookie
    assert "Domain" not in cookie
    assert (await call(app, "/mcp-pages/done"))[0] == 200
    assert (await call(app, "/done"))[0] == 404  # outside the base path
    # Mounted with the prefix already stripped (root_path = the base path) works the same.
    assert (await call(app, "/done", root_path="/mcp-pages"))[0] == 200


@pytest.mark.parametrize("ttl", [59, 86401, float("nan"), True, "3600"])
def test_session_ttl_is_bounded_by_the_longest_session_a_sign_out_covers(tmp_path: Path, ttl: object) -> None:
    # Sign-outs are kept MAX_SESSION_LIFETIME seconds: a longer session would outlive its sign-out.
    assert MAX_SESSION_LIFETIME == 86400
    with pytest.raises(ValueError, match="session_ttl must be between 60 and 86400 seconds"):
        make(tmp_path, "https://mcp.example.com", session_ttl=ttl)
    assert make(tmp_path, "https://mcp.example.com", session_ttl=86400).base_url == "https://mcp.example.com"


def test_oidc_login_needs_an_openid_provider() -> None:
    plain = OAuthProvider(id="gh", authorize_url=f"{IDP}/a", token_url=f"{IDP}/t", client_id="c")
    with pytest.raises(ValueError, match="ask for the 'openid' scope") as refused:
        OidcLogin(plain)
    assert "OpenID Connect provider" in str(refused.value)
    # The scope was asked for, but the server speaks no OpenID Connect (discover() found plain
    # OAuth metadata): the scopes are not to blame.
    scoped = dataclasses.replace(plain, scopes=("openid", "profile"))
    with pytest.raises(ValueError, match="found no OpenID configuration at its issuer") as refused:
        OidcLogin(scoped)
    assert "ask for the 'openid' scope (scopes=" not in str(refused.value)


@pytest.mark.parametrize("mode", ["form_post", "fragment", "query.jwt"])
def test_a_provider_answering_other_than_in_the_query_is_refused_up_front(tmp_path: Path, mode: str) -> None:
    """The callbacks are GETs read from the query, found by SameSite=Lax cookies. Before, such a
    provider was accepted, and every user's callback failed: a form_post arrives as a
    cross-site POST (405, and it carries no Lax cookie), a fragment never reaches the server."""
    apple = OAuthProvider(
        id="apple",
        authorize_url="https://appleid.example.com/auth/authorize",
        token_url="https://appleid.example.com/auth/token",
        client_id="c",
        extra_authorize_params={"response_mode": mode},
    )
    with pytest.raises(ValueError, match=rf"'apple'.*response_mode='{mode}' is not supported"):
        make(tmp_path, "https://mcp.example.com", providers={"apple": apple})
    query = dataclasses.replace(apple, extra_authorize_params={"response_mode": "query"})
    assert make(tmp_path, "https://mcp.example.com", providers={"apple": query}).redirect_uri("apple") == (
        "https://mcp.example.com/oauth/apple/callback"
    )
