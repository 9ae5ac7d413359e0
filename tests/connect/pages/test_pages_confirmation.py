"""What the confirmation page tells the person, and the DEMO ONLY label.

The page names the MCP client as the client calls itself (marked self-reported; only the OAuth
client id of a validated token is stated as fact), the server, the provider and the host Continue
goes to, and offers Decline. A client's name is attacker-controlled: HTML, bidi controls and very
long names are shown inert and cut short. Every page of a development-mode site says DEMO ONLY
first; no page of a production site does."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pages_support import Harness, form_token, offline_login

from mcp_elicit.connect.client_label import client_label
from mcp_elicit.connect.flows import PendingFlow, SQLiteFlowStore
from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.connect.oauth.provider import OAuthProvider
from mcp_elicit.connect.pages import ConnectPages
from mcp_elicit.connect.pages.cookies import CookiePolicy
from mcp_elicit.connect.pages.csrf import csrf_token
from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.connect.pages.session import SessionCookies
from mcp_elicit.connect.pages.views import NAME_SHOWN
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing

BANNER = '<main><p class="demo"><strong>DEMO ONLY</strong>: development mode.'
HOSTILE = (
    '&amp;<script>alert("x")</script><img src=x onerror=alert(1)>\u202eexe.gnp\u2066 '
    + "Claude Desktop " * 40
)


def labelled(response: httpx.Response) -> bool:
    text = response.text
    return BANNER in text and "<title>DEMO ONLY · " in text


async def confirmation(pages: Harness, http: httpx.AsyncClient, flow: PendingFlow) -> str:
    response = await http.get(f"/connect/{flow.id}", headers={"cookie": pages.cookie("alice")})
    assert response.status_code == 200
    return response.text


def provider_host(pages: Harness) -> str:
    return urlsplit(pages.third_party.endpoint("authorization")).netloc


async def test_it_names_the_app_as_it_calls_itself_the_server_the_provider_and_the_host(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow(client=client_label("Claude Desktop", "claude-app"))
    page = await confirmation(pages, http, flow)
    assert (
        'An app that calls itself <strong class="named">“<bdi>Claude Desktop</bdi>”</strong> '
        '<span class="small">(self-reported: not verified)</span>, using an access token issued to '
        'the OAuth client <code class="named">claude-app</code>, asks you, through the server '
        "<strong>Tickets MCP</strong>, to connect your <strong>GitHub (test)</strong> account.</p>"
    ) in page
    assert f'Continue takes you to <strong class="host">{provider_host(pages)}</strong>, where GitHub' in page
    # One form, its CSRF token, two answers.
    (form,) = re.findall(r'<form method="post" action="/connect/[^"]+">.*?</form>', page)
    assert form_token(page, f"/connect/{flow.id}") == pages.token("alice", "connect", flow.id)
    assert 'name="choice" value="continue">Continue</button>' in form
    assert 'name="choice" value="decline" formnovalidate>Decline</button>' in form
    assert "The app mcp-elicit" not in page


@pytest.mark.parametrize(
    ("label", "who"),
    [
        (client_label("mcp-elicit", None), "An app that calls itself"),
        (None, "An app that gave no name asks you"),
        (client_label(None, "claude-app"), "An app that gave no name, using an access token issued"),
    ],
)
async def test_without_a_checked_id_nothing_is_stated_as_fact(
    pages: Harness, http: httpx.AsyncClient, label: str | None, who: str
) -> None:
    flow = await pages.connect_flow(client=label)
    page = await confirmation(pages, http, flow)
    assert who in page
    assert ("OAuth client" in page) == (label is not None and label.startswith("oauth:"))


async def test_a_label_of_another_shape_is_shown_whole_as_self_reported(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    # Written as older versions did, or by a server calling the store itself.
    flow = await pages.connect_flow(client="Evil <b> (OAuth client trusted-app)")
    page = await confirmation(pages, http, flow)
    assert 'calls itself <strong class="named">“<bdi>Evil &lt;b&gt; (OAuth client trusted-app)</bdi>”' in page
    assert "using an access token" not in page


async def test_a_hostile_client_name_is_shown_inert_and_cut_short(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow(client=client_label(HOSTILE, None))
    page = await confirmation(pages, http, flow)
    for raw in ("<script", "<img", "\u202e", "\u2066", 'alert("x")'):
        assert raw not in page
    (shown,) = re.findall(r'calls itself <strong class="named">“<bdi>(.*?)</bdi>”', page)
    # An entity in the name is text, not markup; tags are text; the bidi controls are gone.
    assert shown.startswith(
        "&amp;amp;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror="
    )
    assert "&gt;exe" in shown
    assert shown.endswith("…")
    assert len(html.unescape(shown)) == NAME_SHOWN


async def test_every_page_of_a_development_site_says_demo_only_first(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    alice = {"cookie": pages.cookie("alice")}
    connect = await pages.connect_flow()
    secret = await pages.secret_flow()
    busy = await pages.connect_flow()
    await pages.flows.begin(busy.id, pages.principal("alice"))
    token = pages.token("alice", "connect", connect.id)
    post = {**alice, "origin": pages.base}
    responses = {
        "sign in": await http.get(f"/connect/{connect.id}"),
        "confirmation": await http.get(f"/connect/{connect.id}", headers=alice),
        "secret": await http.get(f"/secret/{secret.id}", headers=alice),
        "not for you": await http.get(f"/connect/{connect.id}", headers={"cookie": pages.cookie("bob")}),
        "in use": await http.get(f"/connect/{busy.id}", headers=alice),
        "not found": await http.get(f"/connect/{'B' * 43}"),
        "done": await http.get("/done"),
        "not allowed": await http.put("/done"),
        "expired callback": await http.get("/oauth/github/callback?state=abc&code=x"),
        "refused post": await http.post(f"/connect/{connect.id}", data={"csrf": "bad"}, headers=post),
        "declined": await http.post(
            f"/connect/{connect.id}", data={"csrf": token, "choice": "decline"}, headers=post
        ),
        "declined before": await http.get(f"/connect/{connect.id}", headers=alice),
        "signed out": await http.post(
            "/logout", data={"csrf": pages.token("alice", "logout", "")}, headers=post
        ),
    }
    assert responses["sign in"].status_code == 200
    assert responses["declined"].status_code == 200
    for name, response in responses.items():
        assert labelled(response), (name, response.status_code, response.text)


# ------------------------------------------------------------------ production: never labelled

BASE = "https://mcp.example.com"
IDP = "https://id.example.com"


async def call(
    app: ConnectPages, method: str, path: str, cookie: str = "", body: bytes = b""
) -> tuple[int, str]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"origin", BASE.encode()), (b"sec-fetch-site", b"same-origin")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    if body:
        headers.append((b"content-type", b"application/x-www-form-urlencoded"))
    scope = {"type": "http", "method": method, "path": path, "query_string": b"", "headers": headers}
    await app(scope, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]).decode()


async def test_no_page_of_a_production_site_says_demo_only(tmp_path: Path) -> None:
    keys = KeyRing.from_secrets([KeyRing.generate_secret()])
    login = offline_login(IDP)
    ci = OAuthProvider(
        id="ci",
        authorize_url="https://ci.example.com/oauth/authorize",
        token_url="https://ci.example.com/oauth/token",
        client_id="tracker",
        title="CI service",
    )
    async with SQLiteFlowStore(tmp_path / "f.db") as flows:
        vault = Vault.sqlite(tmp_path / "v.db", keys=keys)
        app = ConnectPages(
            base_url=BASE,
            login=login,
            flows=flows,
            vault=vault,
            providers={"ci": ci},
            keys=keys,
            server_name="Production tracker",
            rate_limit=None,
        )
        alice = Principal(IDP, "alice")
        sessions = SessionCookies(CookieSealer(keys), CookiePolicy(secure=True), 3600, time.time)
        session = sessions.new(alice, "Alice", None)
        cookie = sessions.set_cookie(session)[1].decode().split(";", 1)[0]
        assert cookie.startswith("__Host-")
        flow = await flows.create(alice, "connect", "ci", ["builds:read"], client=client_label("App", None))
        declined = await flows.create(alice, "connect", "ci")
        decline = f"csrf={csrf_token(session, 'connect', declined.id)}&choice=decline".encode()
        pages = {
            "sign in": await call(app, "GET", f"/connect/{flow.id}"),
            "confirmation": await call(app, "GET", f"/connect/{flow.id}", cookie),
            "not found": await call(app, "GET", f"/connect/{'B' * 43}"),
            "done": await call(app, "GET", "/done"),
            "declined": await call(app, "POST", f"/connect/{declined.id}", cookie, decline),
            "declined before": await call(app, "GET", f"/connect/{declined.id}", cookie),
        }
        await vault.close()
    assert [status for status, _ in pages.values()] == [200, 200, 404, 200, 200, 409]
    assert "calls itself" in pages["confirmation"][1]
    assert 'Continue takes you to <strong class="host">ci.example.com</strong>' in pages["confirmation"][1]
    assert "You declined connecting" in pages["declined"][1]
    for name, (_, text) in pages.items():
        assert "DEMO ONLY" not in text, name
        assert 'class="demo"' not in text, name
