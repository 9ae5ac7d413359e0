"""Helpers for the pages tests: the app on a real uvicorn (127.0.0.1, in the test's own event
loop), planted sessions, and small HTML/HTTP helpers."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from tests.helpers import InProcessServer, bound_socket
from tests.oidc_provider import OidcProvider

from mcp_elicit.connect.flows import PendingFlow, SQLiteFlowStore
from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.pages import ConnectPages, DevelopmentLogin, OidcLogin
from mcp_elicit.connect.pages.cookies import CookiePolicy
from mcp_elicit.connect.pages.csrf import csrf_token
from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.connect.pages.session import Session, SessionCookies
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing
from mcp_elicit.state.key_file import KeyFile

# A provider nothing is asked of (its endpoints are a closed port): for tests of the pages alone.
CI = OAuthProvider(
    id="ci",
    authorize_url="http://127.0.0.1:9/authorize",
    token_url="http://127.0.0.1:9/token",
    client_id="client",
    client_secret="secret",
    scopes=("builds:read",),
    title="Demo CI",
)


SECURITY_HEADERS = {
    "x-frame-options": "DENY",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
}
SESSION_COOKIE = "mcp-elicit-session"  # the loopback development name (no __Host-, no Secure)


class FakeClock:
    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def principal(user: str, idp: OidcProvider) -> Principal:
    return Principal(idp.issuer, user)


@dataclass
class Harness:
    """One running app and what it was built with."""

    base: str
    app: ConnectPages
    flows: SQLiteFlowStore
    vault: Vault
    keys: KeyRing
    idp: OidcProvider
    third_party: OidcProvider
    clock: FakeClock
    sessions: dict[str, Session] = field(default_factory=dict)

    def principal(self, user: str) -> Principal:
        return principal(user, self.idp)

    def session(self, user: str) -> Session:
        """A session for ``user`` as the sign-in would make it (planted, for protocol tests)."""
        if user not in self.sessions:
            cookies = SessionCookies(
                CookieSealer(self.keys, clock=self.clock), CookiePolicy(False), 3600, self.clock
            )
            self.sessions[user] = cookies.new(
                self.principal(user), f"{user.title()} Example", f"{user}@example.test"
            )
        return self.sessions[user]

    def cookie(self, user: str) -> str:
        cookies = SessionCookies(
            CookieSealer(self.keys, clock=self.clock), CookiePolicy(False), 3600, self.clock
        )
        header = cookies.set_cookie(self.session(user))[1].decode()
        return header.split(";", 1)[0]

    def token(self, user: str, route: str, flow_id: str) -> str:
        return csrf_token(self.session(user), route, flow_id)

    async def connect_flow(self, user: str = "alice", **extra: Any) -> PendingFlow:
        return await self.flows.create(self.principal(user), "connect", "github", ["repo"], **extra)

    async def secret_flow(self, user: str = "alice") -> PendingFlow:
        return await self.flows.create(self.principal(user), "secret", "openai_api_key")


def offline_login(issuer: str) -> OidcLogin:
    """A sign-in at ``issuer`` for pages no test signs in to (configuration and production-page
    tests): nothing contacts it."""
    return OidcLogin(
        OAuthProvider(
            id="login",
            authorize_url=f"{issuer}/authorize",
            token_url=f"{issuer}/token",
            client_id="pages",
            issuer=issuer,
            openid=True,
            jwks_url=f"{issuer}/jwks",
        )
    )


def register(provider: OidcProvider, redirect_uri: str, **extra: Any) -> dict[str, Any]:
    return provider.register_client([redirect_uri], **extra)


def build_app(
    base: str,
    idp: OidcProvider,
    third_party: OidcProvider,
    flows: Any,
    vault: Vault,
    keys: KeyRing | KeyFile,
    clock: FakeClock,
    *,
    github_authorize_url: str | None = None,
    **options: Any,
) -> ConnectPages:
    """The pages signing in at ``idp`` and connecting to ``third_party`` as "github" (whose
    authorize URL may be replaced by ``github_authorize_url``, e.g. a host redirecting to it)."""
    login_client = register(idp, f"{base}/login/callback")
    login = OidcLogin(
        OAuthProvider(
            id="login",
            authorize_url=idp.endpoint("authorization"),
            token_url=idp.endpoint("token"),
            client_id=login_client["client_id"],
            client_secret=login_client["client_secret"],
            scopes=("openid", "profile", "email"),
            issuer=idp.issuer,
            iss_parameter_supported=True,
            openid=True,
            jwks_url=idp.jwks_url,
            userinfo_url=idp.endpoint("userinfo"),
            title="Test IdP",
        )
    )
    github_client = register(third_party, f"{base}/oauth/github/callback", scope="repo read:user")
    github = OAuthProvider(
        id="github",
        authorize_url=github_authorize_url or third_party.endpoint("authorization"),
        token_url=third_party.endpoint("token"),
        client_id=github_client["client_id"],
        client_secret=github_client["client_secret"],
        scopes=("repo",),
        issuer=third_party.issuer,
        iss_parameter_supported=True,
        revocation_url=third_party.endpoint("revocation"),
        title="GitHub (test)",
    )
    return ConnectPages(
        base_url=base,
        login=login,
        flows=flows,
        vault=vault,
        providers={"github": github},
        keys=keys,
        server_name="Tickets MCP",
        development=True,
        clock=clock,
        **options,
    )


@asynccontextmanager
async def running_pages(
    tmp_path: Path,
    idp: OidcProvider,
    third_party: OidcProvider,
    keys: KeyRing | KeyFile | None = None,
    **options: Any,
) -> AsyncIterator[Harness]:
    """The pages on uvicorn (127.0.0.1), with an SQLite flow store and vault in ``tmp_path``;
    ``keys`` for the pages (default: a new ring), ``options`` go to :class:`ConnectPages`."""
    pages_keys = KeyRing.from_secrets([KeyRing.generate_secret()]) if keys is None else keys
    keys = pages_keys.ring if isinstance(pages_keys, KeyFile) else pages_keys
    clock = FakeClock()
    flows = SQLiteFlowStore(tmp_path / "flows.db", clock=clock)
    vault = Vault.sqlite(tmp_path / "vault.db", keys=keys, clock=clock)
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = build_app(base, idp, third_party, flows, vault, pages_keys, clock, **options)
    try:
        async with InProcessServer(app, sock):  # in this loop: the app shares the test's stores
            yield Harness(base, app, flows, vault, keys, idp, third_party, clock)
    finally:
        await vault.close()
        await flows.close()
        sock.close()


def development_pages(
    base: str,
    login: DevelopmentLogin,
    *,
    development: bool = True,
    flows: SQLiteFlowStore | None = None,
    vault: Vault | None = None,
    keys: KeyRing | None = None,
) -> ConnectPages:
    """Pages behind the DEMO ONLY sign-in (:class:`DevelopmentLogin`), with in-memory stores
    unless given."""
    return ConnectPages(
        base_url=base,
        login=login,
        flows=flows or SQLiteFlowStore(":memory:"),
        vault=vault or Vault.sqlite(":memory:", keys=[KeyRing.generate_secret()]),
        providers={"ci": CI},
        keys=keys or KeyRing.from_secrets([KeyRing.generate_secret()]),
        server_name="Demo tracker",
        development=development,
    )


def form_value(page: str, name: str) -> str:
    match = re.search(rf'name="{re.escape(name)}" value="([^"]*)"', page)
    assert match, f"no field {name!r} in {page}"
    return unescape(match.group(1))


def set_cookies(response: httpx.Response) -> dict[str, str]:
    """``name -> full Set-Cookie line`` of a response."""
    return {line.split("=", 1)[0]: line for line in response.headers.get_list("set-cookie")}


def cookie_pair(line: str) -> str:
    return line.split(";", 1)[0]


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def form_token(page: str, action: str) -> str:
    """The CSRF token of the form posting to ``action``."""
    start = page.index(f'action="{action}"')
    return form_value(page[start:], "csrf")
