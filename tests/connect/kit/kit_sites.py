"""What the kit tests share besides fixtures: the tools every site serves, a running site, and
how its storage is made. (Tests import from here, never from ``conftest``: two conftest modules
on ``sys.path`` would shadow each other.)"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kit_support import AuthServer, McpCaller
from tests.helpers import InProcessServer

from mcp_elicit import Context, Server
from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore
from mcp_elicit.connect.identity import JWTIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing

STATE_KEY = KeyRing.generate_secret()
VAULT_KEY = KeyRing.generate_secret()


def offline_kit(tmp: Path, **options: Any) -> ConnectKit:
    """A kit whose identity and pages are never reached (tests drive the server in-process,
    with the principal given): a SQLite vault in ``tmp``, development mode."""
    return ConnectKit(
        base_url="http://127.0.0.1:9",
        identity=JWTIdentity(
            issuer="https://auth.example.com",
            jwks_url="https://auth.example.com/jwks",
            audience="http://127.0.0.1:9/mcp",
        ),
        vault=Vault.sqlite(tmp / "vault.db", keys=[VAULT_KEY]),
        development=True,
        **options,
    )


def fp(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:12]


def build_server(kit: ConnectKit) -> Server:
    """The tools every site serves."""
    app = Server("kit-tests", state_keys=[STATE_KEY], connect=kit)

    @app.tool()
    async def list_repos(ctx: Context) -> dict[str, Any]:
        github = await ctx.connection("github", reason="list your repositories")
        return {"repos": ["alpha", "beta"], "token_fingerprint": fp(github.access_token)}

    @app.tool()
    async def scoped(ctx: Context) -> str:
        github = await ctx.connection("github", scopes=["repo", "gist"])
        return f"scoped {fp(github.access_token)}"

    @app.tool()
    async def echo_token(ctx: Context) -> str:
        """A tool that deliberately puts the token in its result (only the tool can do that)."""
        github = await ctx.connection("github")
        return github.access_token

    @app.tool()
    async def summarize(text: str, ctx: Context) -> str:
        key = await ctx.secret("openai_api_key", "Your OpenAI API key")
        return f"summary of {len(text)} characters with key {fp(key)}"

    @app.tool()
    async def gitlab(ctx: Context) -> str:
        await ctx.connection("gitlab")
        return "unreachable"

    @app.tool()
    async def form_then_connect(ctx: Context) -> str:
        answer = await ctx.elicit(
            "Which organisation?", {"type": "object", "properties": {"org": {"type": "string"}}}
        )
        github = await ctx.connection("github")
        org = (answer.content or {}).get("org")
        return f"{org}: {fp(github.access_token)}"

    @app.tool()
    async def connect_then_form(ctx: Context) -> str:
        github = await ctx.connection("github")
        answer = await ctx.elicit(
            "Which repository?", {"type": "object", "properties": {"repo": {"type": "string"}}}
        )
        repo = (answer.content or {}).get("repo")
        return f"{repo}: {fp(github.access_token)}"

    return app


@dataclass
class Site:
    """One running server with its kit, and the test's own view of the same storage."""

    server: Server
    kit: ConnectKit
    thread: InProcessServer
    flows: FlowStore  # the test's objects (the "pages" instance), not the server's
    vault: Vault
    auth: AuthServer
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return self.thread.base

    @property
    def mcp_url(self) -> str:
        return self.thread.base + "/mcp"

    def token(self, subject: str) -> str:
        return self.auth.mint(subject, self.kit.resource)  # the audience the kit's identity expects

    def caller(self, http: httpx.AsyncClient, subject: str | None) -> McpCaller:
        return McpCaller(http, self.mcp_url, None if subject is None else self.token(subject))


@dataclass
class Storage:
    """How to make the server's stores and the test's stores for one site."""

    server_vault: Callable[[], Vault]
    server_flows: Callable[[], FlowStore | None]
    test_vault: Callable[[], Vault]
    test_flows: Callable[[], FlowStore]


def sqlite_storage(tmp: Path, **flow_options: Any) -> Storage:
    vault_path = tmp / "vault.db"
    flows_path = tmp / "vault-flows.db"  # the kit's default for this vault
    return Storage(
        server_vault=lambda: Vault.sqlite(vault_path, keys=[VAULT_KEY]),
        server_flows=lambda: SQLiteFlowStore(flows_path, **flow_options) if flow_options else None,
        test_vault=lambda: Vault.sqlite(vault_path, keys=[VAULT_KEY]),
        test_flows=lambda: SQLiteFlowStore(flows_path),
    )


SiteFactory = Callable[..., Awaitable[Site]]
