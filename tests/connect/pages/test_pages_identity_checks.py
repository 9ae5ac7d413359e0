"""Identity comes from the session only, compared as (issuer, subject): the same subject at
another issuer is another person, and nothing in the URL (``?user=``, ``?sub=``, ``?provider=``,
``?next=``, ``?redirect_uri=``) changes who is checked, which provider is used or where the
browser goes. Over real HTTP (uvicorn on 127.0.0.1)."""

from __future__ import annotations

from urllib.parse import urlencode

import httpx
from pages_support import Harness, query_of

from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.connect.pages.cookies import CookiePolicy
from mcp_elicit.connect.pages.csrf import csrf_token
from mcp_elicit.connect.pages.sealing import CookieSealer
from mcp_elicit.connect.pages.session import SessionCookies

TAMPERING = urlencode(
    {
        "user": "bob",
        "sub": "bob",
        "iss": "https://evil.example",
        "provider": "gitlab",
        "next": "https://evil.example/",
        "redirect_uri": "https://evil.example/cb",
    }
)


async def test_the_same_subject_at_another_issuer_is_refused(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow("alice")
    cookies = SessionCookies(
        CookieSealer(pages.keys, clock=pages.clock), CookiePolicy(False), 3600, pages.clock
    )
    impostor = cookies.new(
        Principal("https://other-idp.example", "alice"), "Alice Example", "alice@example.test"
    )
    cookie = cookies.set_cookie(impostor)[1].decode().split(";", 1)[0]
    page = await http.get(f"/connect/{flow.id}", headers={"cookie": cookie})
    assert page.status_code == 403
    assert "created for another account" in page.text
    posted = await http.post(
        f"/connect/{flow.id}",
        data={"csrf": csrf_token(impostor, "connect", flow.id)},
        headers={"cookie": cookie, "origin": pages.base},
    )
    assert posted.status_code == 403
    assert "location" not in posted.headers
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_url_parameters_change_nothing(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow("alice")
    plain = await http.get(f"/connect/{flow.id}", headers={"cookie": pages.cookie("alice")})
    tampered = await http.get(f"/connect/{flow.id}?{TAMPERING}", headers={"cookie": pages.cookie("alice")})
    assert tampered.status_code == plain.status_code == 200
    assert tampered.text == plain.text
    as_bob = await http.get(f"/connect/{flow.id}?{TAMPERING}", headers={"cookie": pages.cookie("bob")})
    assert as_bob.status_code == 403  # ?user=bob does not make Bob the owner

    posted = await http.post(
        f"/connect/{flow.id}?{TAMPERING}",
        data={"csrf": pages.token("alice", "connect", flow.id)},
        headers={"cookie": pages.cookie("alice"), "origin": pages.base},
    )
    assert posted.status_code == 303
    location = posted.headers["location"]
    assert location.startswith(pages.third_party.endpoint("authorization") + "?")  # the flow's provider
    assert query_of(location)["redirect_uri"] == f"{pages.base}/oauth/github/callback"
    assert "evil" not in location
    assert (await pages.flows.get(flow.id)).status == "in_progress"
