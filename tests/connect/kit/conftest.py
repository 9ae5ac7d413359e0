"""Fixtures for the ConnectKit tests: the IdP side (JWKS + token endpoint) once per session, and a
factory of real sites (Server + ConnectKit under uvicorn on 127.0.0.1), each with its own thread,
event loop and kit, plus the test's own store objects on the same storage (acting as the pages).
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kit_support import AuthServer, McpCaller, ThreadedServer, bound_socket

from mcp_elicit import Context, Server
from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore
from mcp_elicit.connect.identity import JWTIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing

STATE_KEY = KeyRing.generate_secret()
VAULT_KEY = KeyRing.generate_secret()


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


@pytest.fixture(scope="session")
def auth() -> Iterator[AuthServer]:
    state = AuthServer()
    with ThreadedServer(state.app()) as server:
        state.base = server.base
        yield state


@pytest.fixture(autouse=True)
def _reset_auth(auth: AuthServer) -> None:
    auth.token_status = 400
    auth.token_body = {"error": "invalid_grant"}
    auth.token_requests = 0


@dataclass
class Site:
    """One running server with its kit, and the test's own view of the same storage."""

    server: Server
    kit: ConnectKit
    thread: ThreadedServer
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


@pytest.fixture
async def make_site(auth: AuthServer, tmp_path: Path, github_token_url: str) -> AsyncIterator[SiteFactory]:
    """``await make_site(hold=..., storage=...)``: a running site; everything is stopped and
    closed at the end of the test."""
    async with AsyncExitStack() as stack:

        async def make(
            *,
            hold: float = 0.6,
            storage: Storage | None = None,
            login: Any = None,
            base_url: str | None = None,
            **kit_options: Any,
        ) -> Site:
            """``base_url``: the public URL, when several instances share one (default: this
            instance's own address)."""
            chosen = storage or sqlite_storage(tmp_path)
            sock = bound_socket()
            base = base_url or f"http://127.0.0.1:{sock.getsockname()[1]}"
            kit = ConnectKit(
                base_url=base,
                identity=JWTIdentity(issuer=auth.issuer, jwks_url=auth.jwks_url, audience=base + "/mcp"),
                vault=chosen.server_vault(),
                flows=chosen.server_flows(),
                login=login,
                hold=hold,
                development=True,
                **kit_options,
            )
            kit.oauth_provider(
                "github",
                authorize_url=auth.base + "/authorize",
                token_url=github_token_url,
                client_id="kit-github-client",
                client_secret="kit-github-secret",
                scopes=["repo"],
            )
            server = build_server(kit)
            thread = ThreadedServer(server.asgi(), sock)
            thread.on_close = kit.aclose  # closed in the server's own loop
            stack.enter_context(thread)
            flows, vault = chosen.test_flows(), chosen.test_vault()
            stack.push_async_callback(flows.close)
            stack.push_async_callback(vault.close)
            return Site(server, kit, thread, flows, vault, auth)

        yield make


@pytest.fixture
def github_token_url(auth: AuthServer) -> str:
    return auth.token_url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 5.0) -> bool:
    deadline = asyncio.get_running_loop().time() + within
    while asyncio.get_running_loop().time() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.05)
    return False
