"""The DEMO ONLY sign-in (DevelopmentLogin) on the real pages, over HTTP on 127.0.0.1: labelled,
CSRF-protected, refused outside loopback development, and signing in as exactly the principal the
MCP side gets from the same DevelopmentIdentity (so the owner check passes unchanged)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jar_support import BrowserJar
from pages_support import SESSION_COOKIE, cookie_pair, development_pages, form_value, set_cookies
from tests.helpers import InProcessServer, bound_socket

from mcp_elicit.connect.flows import PendingFlow, SQLiteFlowStore
from mcp_elicit.connect.identity import DevelopmentIdentity, JWTIdentity
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.pages import DevelopmentLogin
from mcp_elicit.connect.pages.context import MAX_TRANSACTIONS
from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing


@dataclass
class DevSite:
    base: str
    flows: SQLiteFlowStore
    vault: Vault
    keys: KeyRing
    identity: DevelopmentIdentity
    http: httpx.AsyncClient

    async def flow(self) -> PendingFlow:
        return await self.flows.create(self.identity.principal, "connect", "ci", ["builds:read"])

    async def sign_in_page(self, flow: PendingFlow) -> tuple[httpx.Response, str, str]:
        """The sign-in page for ``flow``, its CSRF token and its login cookie (``name=value``)."""
        page = await self.http.get("/login", params={"next": f"/connect/{flow.id}"})
        assert page.status_code == 200
        (cookie,) = set_cookies(page).values()
        return page, form_value(page.text, "csrf"), cookie_pair(cookie)


@pytest.fixture
async def dev(tmp_path: Path) -> AsyncIterator[DevSite]:
    keys = KeyRing.from_secrets([KeyRing.generate_secret()])
    flows = SQLiteFlowStore(tmp_path / "flows.db")
    vault = Vault.sqlite(tmp_path / "vault.db", keys=keys)
    identity = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    sock = bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = development_pages(base, DevelopmentLogin(identity), flows=flows, vault=vault, keys=keys)
    jar = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))  # every test sends its own cookies
    async with (
        InProcessServer(app, sock),
        httpx.AsyncClient(base_url=base, cookies=jar, follow_redirects=False, timeout=15) as http,
    ):
        yield DevSite(base, flows, vault, keys, identity, http)
    await vault.close()
    await flows.close()
    sock.close()


async def _post(
    dev: DevSite, token: str | None, cookie: str | None, origin: str | None = None
) -> httpx.Response:
    headers = {"origin": origin or dev.base}
    if cookie:
        headers["cookie"] = cookie
    data = {"next": "/connect/x"} if token is None else {"csrf": token}  # a form either way
    return await dev.http.post("/login", data=data, headers=headers)


async def test_the_sign_in_page_is_labelled_and_changes_nothing(dev: DevSite) -> None:
    flow = await dev.flow()
    page, _, cookie = await dev.sign_in_page(flow)
    assert "DEMO ONLY sign-in: continue as demo-user" in page.text
    assert "urn:mcp-elicit:development" in page.text
    assert "Continue as demo-user</button>" in page.text
    assert not cookie.startswith(SESSION_COOKIE)  # a short-lived login cookie, not a session
    assert page.headers["cache-control"] == "no-store"
    assert (await dev.flows.get(flow.id)).status == "pending"
    # Signed out, the connect page links to this sign-in; both say DEMO ONLY before anything else.
    connect = await dev.http.get(f"/connect/{flow.id}")
    assert f'href="/login?next=/connect/{flow.id}"' in connect.text
    for shown in (page, connect):
        assert '<main><p class="demo"><strong>DEMO ONLY</strong>: development mode.' in shown.text
        assert "<title>DEMO ONLY · " in shown.text


async def test_the_session_is_the_development_identitys_principal(dev: DevSite) -> None:
    flow = await dev.flow()
    _, token, cookie = await dev.sign_in_page(flow)
    signed_in = await _post(dev, token, cookie)
    assert signed_in.status_code == 303
    assert signed_in.headers["location"] == f"/connect/{flow.id}"
    cookies = set_cookies(signed_in)
    assert "Max-Age=0" in cookies[cookie.split("=", 1)[0]]  # the login cookie is used once
    session = cookie_pair(cookies[SESSION_COOKIE])
    payload = CookieSealer(dev.keys).open(SESSION_COOKIE, session.split("=", 1)[1])
    assert payload is not None
    assert payload["p"] == dev.identity.principal.key == "urn:mcp-elicit:development|demo-user"
    # The real confirmation page: the owner check passes for the same principal.
    confirm = await dev.http.get(f"/connect/{flow.id}", headers={"cookie": session})
    assert confirm.status_code == 200
    assert "Signed in as <strong>Demo user</strong>" in confirm.text
    assert "Demo CI" in confirm.text
    assert "builds:read" in confirm.text
    # The same token cannot sign in again once its cookie is gone.
    assert (await _post(dev, token, None)).status_code == 403


async def test_reloading_the_sign_in_page_keeps_only_the_newest_few_login_cookies(dev: DevSite) -> None:
    """Each load sets a 10-minute cookie that only its POST removes: reloads must not pile them
    up until the Cookie header is too long to read."""
    flow = await dev.flow()
    jar = BrowserJar()
    tokens: list[str] = []
    for _ in range(2 * MAX_TRANSACTIONS):
        page = await dev.http.get("/login", params={"next": f"/connect/{flow.id}"}, headers=jar.header())
        assert page.status_code == 200
        jar.keep(page)
        tokens.append(form_value(page.text, "csrf"))
        assert len(jar.cookies) <= MAX_TRANSACTIONS
    assert (await _post(dev, tokens[0], jar.header()["cookie"])).status_code == 403  # cleared
    signed_in = await _post(dev, tokens[-1], jar.header()["cookie"])
    assert signed_in.status_code == 303
    assert SESSION_COOKIE in set_cookies(signed_in)


async def test_a_post_without_its_csrf_token_is_refused(dev: DevSite) -> None:
    flow = await dev.flow()
    _, token, cookie = await dev.sign_in_page(flow)
    other_flow = await dev.flow()
    _, other_token, _ = await dev.sign_in_page(other_flow)
    refused = [
        await _post(dev, None, cookie),  # no token
        await _post(dev, "", cookie),  # empty token
        await _post(dev, token[:-2] + "xx", cookie),  # wrong token
        await _post(dev, other_token, cookie),  # another page's token, without its cookie
        await _post(dev, token, None),  # the right token, from a browser without the cookie
        await _post(dev, token, cookie, origin="http://evil.example"),  # cross-site form
    ]
    for response in refused:
        assert response.status_code == 403
        assert SESSION_COOKIE not in set_cookies(response)
    assert (await dev.flows.get(flow.id)).status == "pending"


async def test_foreign_next_and_the_oidc_callback_are_refused(dev: DevSite) -> None:
    for target in ("https://evil.example/", "//evil.example/connect/x", "/done", ""):
        assert (await dev.http.get("/login", params={"next": target})).status_code == 400
    assert (await dev.http.get("/login/callback", params={"state": "s", "code": "c"})).status_code == 404
    assert (await dev.http.delete("/login")).status_code == 405


async def test_refused_outside_loopback_development() -> None:
    identity = DevelopmentIdentity(i_understand_this_is_not_secure=True)
    login = DevelopmentLogin(identity)
    with pytest.raises(ValueError, match="DevelopmentLogin"):
        development_pages("https://mcp.example.com", login, development=False)
    with pytest.raises(ValueError, match="development=True is only for a base_url on this machine"):
        development_pages("https://mcp.example.com", login, development=True)
    jwt = JWTIdentity(
        issuer="https://auth.example.com",
        jwks_url="https://auth.example.com/jwks",
        audience="https://mcp.example.com/mcp",
    )
    vault = Vault.sqlite(":memory:", keys=[KeyRing.generate_secret()])
    with pytest.raises(ValueError, match="DevelopmentLogin"):
        ConnectKit(base_url="https://mcp.example.com", identity=jwt, vault=vault, login=login)
    await vault.close()
    with pytest.raises(TypeError, match="DevelopmentIdentity"):
        DevelopmentLogin(jwt)  # type: ignore[arg-type]
    assert "DEMO ONLY" in repr(login)
