"""The kit's ASGI site: /mcp behind the identity (401 + resource_metadata), the RFC 9728 document,
the page routes (503 without login), and the kit's configuration checks."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from kit_sites import VAULT_KEY, SiteFactory
from kit_support import call_body, post_mcp

from mcp_elicit import Context, Server
from mcp_elicit.connect.identity import DevelopmentIdentity, JWTIdentity
from mcp_elicit.connect.kit import ConnectApp, ConnectKit
from mcp_elicit.connect.pages import DevelopmentLogin, PageRateLimit
from mcp_elicit.connect.vault import Vault


async def test_mcp_needs_a_valid_token(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    site = await make_site()
    metadata_url = f"{site.base}/.well-known/oauth-protected-resource/mcp"

    anonymous = await post_mcp(http, site.mcp_url, call_body("list_repos"), None)
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    assert anonymous.json()["error"]["message"].startswith("Unauthorized")

    other_audience = site.auth.mint("alice", "https://elsewhere.example/mcp")
    refused = await post_mcp(http, site.mcp_url, call_body("list_repos"), other_audience)
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert f'resource_metadata="{metadata_url}"' in refused.headers["www-authenticate"]

    ok = await post_mcp(http, site.mcp_url, call_body("list_repos"), site.token("alice"))
    assert ok.status_code == 200
    assert ok.json()["result"]["resultType"] == "input_required"


async def test_protected_resource_metadata_is_served(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    site = await make_site()
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        document = (await http.get(site.base + path)).json()
        assert document["resource"] == site.mcp_url
        assert document["authorization_servers"] == [site.auth.issuer]


async def test_page_routes_answer_503_without_login(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    site = await make_site()
    page = await http.get(f"{site.base}/connect/{'A' * 43}")
    assert page.status_code == 503
    assert "login" in page.text
    assert (await http.get(f"{site.base}/login")).status_code == 503
    assert (await http.get(f"{site.base}/elsewhere")).status_code == 404


async def test_tool_error_when_the_server_has_no_kit() -> None:
    from tests.helpers import Script, signed_in

    from mcp_elicit.client import Client

    app = Server("no-kit")

    @app.tool()
    async def needs(ctx: Context) -> str:
        await ctx.connection("github")
        return "no"

    async with Client.connect(signed_in(app, "https://issuer|alice"), answerer=Script()) as client:
        result = await client.call_tool("needs")
    assert result.is_error is True
    assert "Server(connect=ConnectKit" in result.text


def test_asgi_with_a_kit_is_the_whole_site(tmp_path: Path) -> None:
    kit = ConnectKit(
        base_url="https://mcp.example.com",
        identity=JWTIdentity(
            issuer="https://auth.example.com",
            jwks_url="https://auth.example.com/jwks",
            audience="https://mcp.example.com/mcp",
        ),
        vault=Vault.sqlite(tmp_path / "v.db", keys=[VAULT_KEY]),
    )
    server = Server("site", connect=kit)
    app = server.asgi()
    assert isinstance(app, ConnectApp)
    assert app.mcp.path == "/mcp"
    assert app.pages is None
    assert app.metadata is not None
    assert kit.metadata == {
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "bearer_methods_supported": ["header"],
    }
    with pytest.raises(ValueError, match="authenticate"):
        server.asgi(authenticate=kit.authenticate)
    with pytest.raises(ValueError, match="mcp_path"):
        server.asgi(path="/other")
    # flows=None next to an SQLite vault: a sibling file
    assert repr(kit.flows) == f"SQLiteFlowStore({str(tmp_path / 'v-flows.db')!r})"


def test_kit_configuration_is_checked(tmp_path: Path) -> None:
    identity = JWTIdentity(
        issuer="https://auth.example.com",
        jwks_url="https://auth.example.com/jwks",
        audience="https://x.example/mcp",
    )
    vault = Vault.sqlite(tmp_path / "v.db", keys=[VAULT_KEY])
    with pytest.raises(ValueError, match="https"):
        ConnectKit(base_url="http://mcp.example.com", identity=identity, vault=vault)
    with pytest.raises(ValueError, match="hold"):
        ConnectKit(base_url="https://mcp.example.com", identity=identity, vault=vault, hold=600)
    dev = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    with pytest.raises(ValueError, match="development=True"):
        ConnectKit(base_url="https://mcp.example.com", identity=dev, vault=vault)
    with pytest.raises(ValueError, match="development=True is only for a base_url on this machine"):
        ConnectKit(base_url="https://mcp.example.com", identity=dev, vault=vault, development=True)
    kit = ConnectKit(base_url="http://127.0.0.1:9", identity=dev, vault=vault, development=True)
    assert kit.metadata is None  # no issuer to publish
    settings = {"authorize_url": "https://a.example/x", "token_url": "https://a.example/t", "client_id": "c"}
    kit.oauth_provider("github", **settings)
    with pytest.raises(ValueError, match="already registered"):
        kit.oauth_provider("github", **settings)
    assert kit.provider_title("github") == "GitHub"


def test_the_kit_hands_its_page_rate_limit_to_the_pages(tmp_path: Path) -> None:
    identity = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    vault = Vault.sqlite(tmp_path / "v.db", keys=[VAULT_KEY])
    settings = {"base_url": "http://127.0.0.1:9", "identity": identity, "vault": vault, "development": True}
    login = DevelopmentLogin(identity)
    with pytest.raises(TypeError, match="page_rate_limit must be a PageRateLimit"):
        ConnectKit(**settings, login=login, page_rate_limit={"requests_per_minute": 5})  # type: ignore[arg-type]
    limits = PageRateLimit(requests_per_minute=5, request_burst=2)
    for given, expected in ((limits, limits), (None, None)):
        kit = ConnectKit(**settings, login=login, page_rate_limit=given)  # type: ignore[arg-type]
        app = Server("site", connect=kit).asgi()
        assert isinstance(app, ConnectApp)
        assert app.pages is not None
        limiter = app.pages._limiter
        assert (limiter.limits if limiter is not None else None) == expected
    default = ConnectKit(**settings, login=login)  # type: ignore[arg-type]
    default_app = Server("site", connect=default).asgi()
    assert isinstance(default_app, ConnectApp)
    assert default_app.pages is not None
    assert default_app.pages._limiter is not None
    assert default_app.pages._limiter.limits == PageRateLimit()


async def test_the_kit_signs_a_user_out_everywhere(tmp_path: Path) -> None:
    identity = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    vault = Vault.sqlite(tmp_path / "v.db", keys=[VAULT_KEY])
    kit = ConnectKit(base_url="http://127.0.0.1:9", identity=identity, vault=vault, development=True)
    flows = kit.flows
    alice = "https://auth.example.test|alice"
    created = time.time() - 1
    assert not await flows.session_revoked("sid", alice, created)
    await kit.sign_out_everywhere(alice)
    assert await flows.session_revoked("sid", alice, created)
    assert not await flows.session_revoked("sid", "https://auth.example.test|bob", created)
    await flows.close()
    await vault.close()


def test_a_postgres_vault_needs_an_explicit_flow_store() -> None:
    pytest.importorskip("psycopg")
    identity = JWTIdentity(
        issuer="https://auth.example.com",
        jwks_url="https://auth.example.com/jwks",
        audience="https://x.example/mcp",
    )
    vault = Vault.postgres("host=127.0.0.1 dbname=test", keys=[VAULT_KEY])
    with pytest.raises(ValueError, match="PostgresFlowStore"):
        ConnectKit(base_url="https://mcp.example.com", identity=identity, vault=vault)


async def test_with_login_the_pages_are_mounted(make_site: SiteFactory, http: httpx.AsyncClient) -> None:
    from kit_support import flow_id_of, offline_login, url_request

    site = await make_site(login=offline_login())
    first = await site.caller(http, "alice").call("list_repos")
    _, url, _ = url_request(first)
    page = await http.get(url)  # not signed in: the pages answer (sign-in first), never a 503
    assert page.status_code != 503
    assert page.headers.get("x-frame-options") == "DENY"
    assert (await http.get(f"{site.base}/done")).status_code == 200
    # Opening the page changed nothing: the flow is still pending for the retry.
    assert (await site.flows.get(flow_id_of(url))).status == "pending"
