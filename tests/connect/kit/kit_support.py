"""Helpers for the ConnectKit tests: a real JWKS and token endpoint on 127.0.0.1, tokens minted
with PyJWT, servers under uvicorn in background threads, raw MCP requests over HTTP, and the
"browser step" done the way the pages do it (begin, store, complete).

Each server runs in its own thread and event loop, with its own kit (stores are bound to one
loop); the test opens its own store and vault objects on the same SQLite files or PostgreSQL
tables to act as the pages (another "instance").
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from tests.store_support import drop_pg_table, flow_tables

from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.pages import OidcLogin
from mcp_elicit.connect.vault import Vault
from mcp_elicit.wire.http import encode_header_value

ISSUER_PATH = "/issuer"
VERSION = "2026-07-28"
URL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
FORM_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}
CLIENT_INFO = {"name": "kit-tests", "title": "Kit\u202e Tests\x07 Client", "version": "1"}
_ids = itertools.count(1)


# ------------------------------------------------------------------------------ the IdP side


@dataclass
class AuthServer:
    """A JWKS (``/issuer/jwks.json``) and a third-party token endpoint (``/token``) whose answer
    the test chooses; plus the RSA key that signs MCP access tokens."""

    key: Any = field(default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    kid: str = "kit-rsa-1"
    token_status: int = 400
    token_body: dict[str, Any] = field(default_factory=lambda: {"error": "invalid_grant"})
    token_requests: int = 0
    base: str = ""

    @property
    def issuer(self) -> str:
        return self.base + ISSUER_PATH

    @property
    def jwks_url(self) -> str:
        return self.issuer + "/jwks.json"

    @property
    def token_url(self) -> str:
        return self.base + "/token"

    def jwks(self) -> dict[str, Any]:
        jwk = RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True)
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        return {"keys": [jwk]}

    def mint(self, subject: str, audience: str, **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": audience,
            "sub": subject,
            "iat": now - 5,
            "exp": now + 600,
            "client_id": "kit-client",
            **claims,
        }
        return jwt.encode(payload, self.key, algorithm="RS256", headers={"kid": self.kid})

    def principal(self, subject: str) -> str:
        return f"{self.issuer}|{subject}"

    def app(self) -> Callable[..., Any]:
        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            if scope["path"] == ISSUER_PATH + "/jwks.json":
                status, body = 200, self.jwks()
            elif scope["path"] == "/token":
                while (await receive()).get("more_body"):
                    pass
                self.token_requests += 1
                status, body = self.token_status, self.token_body
            else:
                status, body = 404, {"error": "not_found"}
            data = json.dumps(body).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": data})

        return app


# ------------------------------------------------------------------------------ MCP over HTTP


def call_body(
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    state: str | None = None,
    responses: dict[str, Any] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "name": tool,
        "arguments": arguments or {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": URL_CAPS if capabilities is None else capabilities,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        },
    }
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params}


async def post_mcp(
    http: httpx.AsyncClient, url: str, message: dict[str, Any], token: str | None
) -> httpx.Response:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": message["method"],
        "mcp-name": encode_header_value(message["params"]["name"]),
    }
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return await http.post(url, content=json.dumps(message), headers=headers)


class McpCaller:
    """One person's MCP client against one server URL (raw HTTP, real tokens)."""

    def __init__(self, http: httpx.AsyncClient, url: str, token: str | None) -> None:
        self.http = http
        self.url = url
        self.token = token

    async def rpc(self, tool: str, arguments: dict[str, Any] | None = None, **options: Any) -> dict[str, Any]:
        response = await post_mcp(self.http, self.url, call_body(tool, arguments, **options), self.token)
        data: dict[str, Any] = response.json()
        return data

    async def call(
        self, tool: str, arguments: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        data = await self.rpc(tool, arguments, **options)
        assert "result" in data, data
        result: dict[str, Any] = data["result"]
        return result


def url_request(result: dict[str, Any]) -> tuple[str, str, str]:
    """(key, url, message) of the one URL elicitation in an input-required result."""
    assert result["resultType"] == "input_required", result
    ((key, request),) = result["inputRequests"].items()
    assert request["method"] == "elicitation/create"
    params = request["params"]
    assert params["mode"] == "url"
    return key, params["url"], params["message"]


def text_of(result: dict[str, Any]) -> str:
    assert result["resultType"] == "complete", result
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


def flow_id_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


ACCEPT: dict[str, Any] = {"action": "accept"}


# ------------------------------------------------------------------------------ the pages' part


async def browser_connects(
    flows: FlowStore, vault: Vault, flow_id: str, owner: str, access_token: str, provider: str = "github"
) -> None:
    """What the connect page and the OAuth callback do once the owner is signed in."""
    await flows.begin(flow_id, owner)
    await vault.put_connection(
        owner, provider, access_token=access_token, refresh_token="rt-" + access_token, expires_in=3600
    )
    await flows.complete(flow_id, owner=owner)


async def browser_enters_secret(
    flows: FlowStore, vault: Vault, flow_id: str, owner: str, name: str, value: str
) -> None:
    await flows.begin(flow_id, owner)
    await vault.put_secret(owner, name, value)
    await flows.complete(flow_id, owner=owner)


def unique_name(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"


def drop_pg(dsn: str, table: str, vault_prefix: str) -> None:
    import psycopg
    from psycopg import sql

    drop_pg_table(dsn, *flow_tables(table))
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE %s",
            (vault_prefix.replace("_", r"\_") + "%",),
        ).fetchall()
        for (name,) in rows:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))


def offline_login() -> OidcLogin:
    """The pages need a sign-in to be mounted; nobody signs in through it here (sessions are
    planted, as the pages tests do), so it points at a closed port."""
    return OidcLogin(
        OAuthProvider(
            id="login",
            authorize_url="http://127.0.0.1:9/authorize",
            token_url="http://127.0.0.1:9/token",
            client_id="kit-pages",
            openid=True,
            issuer="http://127.0.0.1:9/issuer",
            jwks_url="http://127.0.0.1:9/issuer/jwks.json",
        )
    )
