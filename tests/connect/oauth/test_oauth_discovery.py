"""discover() against scripted metadata: exact issuer, S256 required, the RFC 8414 fallback,
insecure endpoints refused, the RFC 9207 flag and the client authentication method."""

from __future__ import annotations

from typing import Any

import pytest
from oauth_support import Answer, ScriptedServer

from mcp_elicit.connect.oauth import DiscoveryFailed, discover
from mcp_elicit.connect.oauth.discovery import metadata_urls


def _metadata(server: ScriptedServer, **changes: Any) -> dict[str, Any]:
    base = server.base
    document: dict[str, Any] = {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "revocation_endpoint": f"{base}/revoke",
        "jwks_uri": f"{base}/jwks",
        "userinfo_endpoint": f"{base}/me",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
    }
    document.update(changes)
    return {k: v for k, v in document.items() if v is not None}


def test_metadata_urls() -> None:
    assert metadata_urls("https://as.example/tenant/1") == (
        "https://as.example/tenant/1/.well-known/openid-configuration",
        "https://as.example/.well-known/oauth-authorization-server/tenant/1",
    )


async def test_openid_configuration(server: ScriptedServer) -> None:
    server.routes["/.well-known/openid-configuration"] = Answer(body=_metadata(server))
    provider = await discover(server.base, id="gh", client_id="c", client_secret="s", scopes=("openid",))
    assert provider.token_url == f"{server.base}/token"
    assert provider.iss_parameter_supported
    assert provider.openid
    assert provider.userinfo_url == f"{server.base}/me"
    assert provider.auth_method == "client_secret_basic"


async def test_rfc8414_fallback(server: ScriptedServer) -> None:
    server.routes["/.well-known/oauth-authorization-server"] = Answer(
        body=_metadata(server, authorization_response_iss_parameter_supported=None, userinfo_endpoint=None)
    )
    provider = await discover(server.base, id="gh", client_id="c", scopes=("repo",))
    assert [r.path for r in server.requests] == [
        "/.well-known/openid-configuration",
        "/.well-known/oauth-authorization-server",
    ]
    assert not provider.iss_parameter_supported
    assert not provider.openid
    assert provider.auth_method == "none"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"issuer": "https://evil.example"}, "names issuer"),
        ({"issuer": None}, "names issuer"),
        ({"code_challenge_methods_supported": ["plain"]}, "S256"),
        ({"code_challenge_methods_supported": None}, "S256"),
        ({"token_endpoint": "http://as.example/token"}, "token_endpoint"),
        ({"token_endpoint": None}, "token_endpoint"),
        ({"authorization_endpoint": ["x"]}, "not a string"),
        ({"authorization_response_iss_parameter_supported": "yes"}, "boolean"),
    ],
)
async def test_refused_metadata(server: ScriptedServer, changes: dict[str, Any], message: str) -> None:
    server.routes["/.well-known/openid-configuration"] = Answer(body=_metadata(server, **changes))
    with pytest.raises(DiscoveryFailed, match=message):
        await discover(server.base, id="gh", client_id="c")


async def test_issuer_with_trailing_slash_is_another_issuer(server: ScriptedServer) -> None:
    server.routes["/.well-known/openid-configuration"] = Answer(body=_metadata(server))
    with pytest.raises(DiscoveryFailed, match="names issuer"):
        await discover(server.base + "/", id="gh", client_id="c")


async def test_no_metadata_and_bad_bodies(server: ScriptedServer) -> None:
    with pytest.raises(DiscoveryFailed, match="no metadata"):
        await discover(server.base, id="gh", client_id="c")
    server.routes["/.well-known/openid-configuration"] = Answer(
        body="<html>", headers={"content-type": "text/html"}
    )
    with pytest.raises(DiscoveryFailed, match="not a JSON object"):
        await discover(server.base, id="gh", client_id="c")


async def test_auth_method_from_metadata(server: ScriptedServer) -> None:
    server.routes["/.well-known/openid-configuration"] = Answer(
        body=_metadata(server, token_endpoint_auth_methods_supported=["client_secret_post"])
    )
    provider = await discover(server.base, id="gh", client_id="c", client_secret="s")
    assert provider.auth_method == "client_secret_post"
    server.routes["/.well-known/openid-configuration"] = Answer(
        body=_metadata(
            server,
            token_endpoint_auth_methods_supported=["private_key_jwt"],
            token_endpoint_auth_signing_alg_values_supported=["RS256"],
        )
    )
    with pytest.raises(DiscoveryFailed, match="neither"):
        await discover(server.base, id="gh", client_id="c", client_secret="s")


async def test_arguments() -> None:
    with pytest.raises(TypeError, match="issuer"):
        await discover("https://as.example", issuer="https://other", id="gh", client_id="c")
    with pytest.raises(TypeError, match="client_id"):
        await discover("https://as.example", id="gh")
    with pytest.raises(DiscoveryFailed, match="https"):
        await discover("http://as.example", id="gh", client_id="c")
