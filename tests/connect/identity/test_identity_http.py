"""The authenticator through a real HttpApp on uvicorn (127.0.0.1), and RFC 9728 metadata."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from identity_support import ISSUER, SigningKey, claims, closed_port
from tests.helpers import InProcessServer, bound_socket

from mcp_elicit import Context, Server
from mcp_elicit.connect.identity import (
    WELL_KNOWN_PATH,
    JWTIdentity,
    ProtectedResourceMetadataApp,
    authenticator,
    protected_resource_metadata,
    resource_metadata_path,
    resource_metadata_url,
)
from mcp_elicit.server.auth import Unauthorized

VERSION = "2026-07-28"
_ids = itertools.count(1)


def make_server() -> Server:
    server = Server(
        "identity-tests", version="1.0.0", state_keys=["identity-tests-only-secret-abcdefghijklmnop"]
    )

    @server.tool()
    async def whoami(ctx: Context) -> str:
        """Echo the principal the engine was given."""
        return ctx.principal or "anonymous"

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """One question, then who answered it (user and OAuth client)."""
        answer = await ctx.elicit("Go on?", key="go")
        return f"{answer.action} by {ctx.principal} via {ctx.client}"

    return server


def call(name: str = "whoami") -> tuple[dict[str, Any], dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": next(_ids),
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    return body, headers


@dataclass
class Deployment:
    base: str
    resource: str
    metadata_url: str
    metadata: dict[str, Any]


def _serve(jwks_url: str) -> Iterator[Deployment]:
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    resource = f"{base}/mcp"
    metadata_url = resource_metadata_url(resource, development=True)
    metadata = protected_resource_metadata(
        resource=resource,
        authorization_servers=[ISSUER],
        scopes_supported=["mcp:tools"],
        resource_name="identity tests",
        development=True,
    )
    verifier = JWTIdentity(issuer=ISSUER, audience=resource, jwks_url=jwks_url, jwks_timeout=1.0)
    mcp = make_server().asgi(
        authenticate=authenticator(verifier, resource_metadata_url=metadata_url, development=True)
    )
    with InProcessServer(ProtectedResourceMetadataApp(metadata, app=mcp), sock=sock):
        yield Deployment(base, resource, metadata_url, metadata)


@pytest.fixture
def deployment(jwks_url: str) -> Iterator[Deployment]:
    yield from _serve(jwks_url)


def live_claims(resource: str, **overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    values: dict[str, Any] = {"aud": resource, "exp": now + 600, "iat": now - 5, "nbf": now - 5}
    values.update(overrides)
    return claims(**values)


async def test_no_token_bad_token_good_token(deployment: Deployment, rsa: SigningKey) -> None:
    url = f"{deployment.base}/mcp"
    missing = f'Bearer resource_metadata="{deployment.metadata_url}"'
    invalid = (
        'Bearer error="invalid_token", error_description="The access token is invalid or expired", '
        f'resource_metadata="{deployment.metadata_url}"'
    )
    assert deployment.metadata_url == f"{deployment.base}/.well-known/oauth-protected-resource/mcp"
    async with httpx.AsyncClient(timeout=10) as client:
        body, headers = call()
        response = await client.post(url, content=json.dumps(body), headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == missing
        assert (
            response.json()["error"]["message"] == "Unauthorized: this server requires a bearer access token"
        )

        body, headers = call()
        response = await client.post(
            url, content=json.dumps(body), headers={**headers, "authorization": "Basic YWxpY2U6cHc="}
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == missing

        bad_tokens = [
            "not-a-jwt",
            rsa.mint(live_claims(deployment.resource, exp=int(time.time()) - 3600)),  # expired
            rsa.mint(live_claims("https://other.example/mcp")),  # another resource's token
            rsa.mint(live_claims(deployment.resource, iss="https://evil.example")),
        ]
        for token in bad_tokens:
            body, headers = call()
            response = await client.post(
                url, content=json.dumps(body), headers={**headers, "authorization": f"Bearer {token}"}
            )
            assert response.status_code == 401, token
            assert response.headers["www-authenticate"] == invalid
            assert token not in response.text
        body, headers = call()
        response = await client.post(
            url, content=json.dumps(body), headers={**headers, "authorization": "Bearer"}
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == invalid

        good = rsa.mint(live_claims(deployment.resource))
        for scheme in ("Bearer", "bearer"):
            body, headers = call()
            response = await client.post(
                url, content=json.dumps(body), headers={**headers, "authorization": f"{scheme} {good}"}
            )
            assert response.status_code == 200, response.text
            result = response.json()["result"]
            assert result["content"][0]["text"] == f"{ISSUER}|alice"


async def test_a_notification_is_authenticated_like_a_request(
    deployment: Deployment, rsa: SigningKey
) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    # A 2026-07-28 notification (by its header): one without the header, and without a session,
    # would be a 2025-11-25 message outside any session (400).
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "mcp-protocol-version": "2026-07-28",
    }
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(f"{deployment.base}/mcp", content=json.dumps(body), headers=headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer ")
        good = rsa.mint(live_claims(deployment.resource))
        response = await client.post(
            f"{deployment.base}/mcp",
            content=json.dumps(body),
            headers={**headers, "authorization": f"Bearer {good}"},
        )
        assert response.status_code == 202


async def test_state_is_bound_to_the_client_the_token_was_issued_to(
    deployment: Deployment, rsa: SigningKey
) -> None:
    """The spec: servers MUST bind elicitation requests to the client and the user identity. A
    token of the same user issued to another OAuth client cannot resume the flow."""
    url = f"{deployment.base}/mcp"

    def confirm(token: str, **params: Any) -> tuple[str, dict[str, str]]:
        body, headers = call("confirm")
        body["params"].update(params)
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {}}
        return json.dumps(body), {**headers, "authorization": f"Bearer {token}"}

    app_a = rsa.mint(live_claims(deployment.resource, client_id="app-a"))
    app_b = rsa.mint(live_claims(deployment.resource, client_id="app-b"))
    async with httpx.AsyncClient(timeout=10) as client:
        content, headers = confirm(app_a)
        first = (await client.post(url, content=content, headers=headers)).json()["result"]
        retry = {"requestState": first["requestState"], "inputResponses": {"go": {"action": "accept"}}}
        content, headers = confirm(app_b, **retry)
        refused = await client.post(url, content=content, headers=headers)
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == "Invalid or expired requestState"
        content, headers = confirm(app_a, **retry)
        done = await client.post(url, content=content, headers=headers)
        assert done.json()["result"]["content"][0]["text"] == f"accept by {ISSUER}|alice via app-a"


async def test_metadata_endpoint(deployment: Deployment) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            response = await client.get(deployment.base + path)
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            assert response.headers["cache-control"] == "public, max-age=3600"
            assert response.headers["access-control-allow-origin"] == "*"
            assert response.json() == {
                "resource": deployment.resource,
                "authorization_servers": [ISSUER],
                "scopes_supported": ["mcp:tools"],
                "bearer_methods_supported": ["header"],
                "resource_name": "identity tests",
            }
        head = await client.head(deployment.base + "/.well-known/oauth-protected-resource/mcp")
        assert head.status_code == 200
        assert head.content == b""
        assert int(head.headers["content-length"]) > 0
        assert (await client.post(deployment.base + WELL_KNOWN_PATH)).status_code == 405
        preflight = await client.options(deployment.base + WELL_KNOWN_PATH)
        assert preflight.status_code == 204
        assert "GET" in preflight.headers["access-control-allow-methods"]
        # Other paths still reach the MCP app, which checks the token before anything else (a GET
        # is a 2025-11-25 session's stream).
        mcp = await client.get(deployment.base + "/mcp")
        assert mcp.status_code == 401
        assert mcp.headers["www-authenticate"].startswith("Bearer ")


async def test_issuer_down_fails_closed_with_a_server_error(rsa: SigningKey) -> None:
    """No usable JWKS: neither 200 nor 401 (a 401 would send the client to refresh a good token)."""
    for deployment in _serve(f"http://127.0.0.1:{closed_port()}/jwks.json"):
        async with httpx.AsyncClient(timeout=10) as client:
            body, headers = call()
            token = rsa.mint(live_claims(deployment.resource))
            started = time.monotonic()
            response = await client.post(
                f"{deployment.base}/mcp",
                content=json.dumps(body),
                headers={**headers, "authorization": f"Bearer {token}"},
            )
            assert response.status_code == 503
            assert response.json()["error"]["code"] == -32603
            assert response.headers["retry-after"] == "5"
            assert time.monotonic() - started < 5
            assert token not in response.text


async def test_authenticator_challenge_parameters() -> None:
    class Never:
        async def verify(self, token: str) -> Any:
            raise AssertionError("not reached")

    authenticate = authenticator(
        Never(),
        resource_metadata_url="https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        realm="mcp",
        scope=["mcp:tools", "files:read"],
    )
    with pytest.raises(Unauthorized) as info:
        await authenticate({})
    assert info.value.www_authenticate == (
        'Bearer realm="mcp", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", '
        'scope="mcp:tools files:read"'
    )
    with pytest.raises(Unauthorized) as info:
        await authenticate({"authorization": "Bearer a b"})
    assert info.value.www_authenticate.startswith('Bearer realm="mcp", error="invalid_token", ')
    with pytest.raises(ValueError, match="https"):
        authenticator(Never(), resource_metadata_url="http://mcp.example.com/.well-known/x")
    with pytest.raises(ValueError, match="https"):  # loopback http only with development=True
        authenticator(Never(), resource_metadata_url="http://127.0.0.1:8000/.well-known/x")
    with pytest.raises(ValueError, match="quoted-string"):
        authenticator(Never(), resource_metadata_url="https://m.example/x", realm='a"b')


def test_metadata_rules() -> None:
    assert resource_metadata_url("https://mcp.example.com/mcp") == (
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    )
    assert resource_metadata_url("https://mcp.example.com") == (
        "https://mcp.example.com/.well-known/oauth-protected-resource"
    )
    assert resource_metadata_url("https://mcp.example.com:8443/a/b/") == (
        "https://mcp.example.com:8443/.well-known/oauth-protected-resource/a/b"
    )
    assert resource_metadata_path("https://mcp.example.com/") == WELL_KNOWN_PATH
    for bad in ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp#x", "https://u@mcp.example.com/"):
        with pytest.raises(ValueError, match="resource"):
            protected_resource_metadata(resource=bad, authorization_servers=[ISSUER])
    with pytest.raises(ValueError, match="query"):
        protected_resource_metadata(resource="https://m.example/mcp?x=1", authorization_servers=[ISSUER])
    with pytest.raises(ValueError, match="authorization_servers"):
        protected_resource_metadata(resource="https://m.example/mcp", authorization_servers=[])
    with pytest.raises(ValueError, match="replace"):
        protected_resource_metadata(
            resource="https://m.example/mcp", authorization_servers=[ISSUER], extra={"resource": "x"}
        )
    document = protected_resource_metadata(
        resource="https://m.example/mcp",
        authorization_servers=[ISSUER],
        extra={"resource_signing_alg_values_supported": ["RS256"]},
    )
    assert document["resource_signing_alg_values_supported"] == ["RS256"]
    assert "scopes_supported" not in document
