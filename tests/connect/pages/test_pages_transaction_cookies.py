"""Transaction cookies do not pile up, and a long ``Cookie`` header does not sign anyone out.

Each sign-in (``GET /login``) and each "Continue" sets a 10-minute cookie that only its callback
removes. Before, abandoned ones piled up (a page can send the browser to ``/login`` again and
again) until the header passed 16 KiB, and then the pages read no cookie at all: the owner showed
as signed out and could not sign in again either. Over real HTTP (uvicorn on 127.0.0.1) with the
real OpenID provider, following the cookies as a browser keeps them.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
from jar_support import BrowserJar
from pages_support import SESSION_COOKIE, Harness, form_token, running_pages
from tests.oidc_provider import OidcProvider, login_over_http

from mcp_elicit.connect.pages.context import MAX_TRANSACTIONS

LOGIN = "mcp-elicit-login-"
TX = "mcp-elicit-tx-"


def local(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def signed_in(response: httpx.Response) -> bool:
    assert response.status_code == 200, response.text
    return "Signed in as" in response.text


async def test_abandoned_sign_ins_leave_only_the_newest_few_login_cookies(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    path = f"/connect/{flow.id}"
    jar = BrowserJar(pages.cookie("alice"))
    started: list[tuple[str, str]] = []  # (cookie name, authorize URL), oldest first
    for _ in range(3 * MAX_TRANSACTIONS):
        start = await http.get("/login", params={"next": path}, headers=jar.header())
        assert start.status_code == 303
        (name,) = jar.keep(start)
        started.append((name, start.headers["location"]))
        assert len(jar.named(LOGIN)) <= MAX_TRANSACTIONS
    assert jar.named(LOGIN) == [name for name, _ in started[-MAX_TRANSACTIONS:]]  # the newest
    assert signed_in(await http.get(path, headers=jar.header()))

    # The newest sign-in completes; the oldest, its cookie cleared, is refused as stale.
    newest, oldest = started[-1][1], started[0][1]
    done = await http.get(local(await login_over_http(newest, "alice")), headers=jar.header())
    assert done.status_code == 303, done.text
    assert done.headers["location"] == path
    jar.keep(done)
    assert SESSION_COOKIE in jar.cookies
    stale = await http.get(local(await login_over_http(oldest, "alice")), headers=jar.header())
    assert stale.status_code == 400
    assert "set-cookie" not in stale.headers


async def test_each_continue_keeps_only_the_newest_few_connection_cookies(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    alice = pages.principal("alice").key
    jar = BrowserJar(pages.cookie("alice"))
    flow = await pages.connect_flow()
    jar.keep(await http.get("/login", params={"next": f"/connect/{flow.id}"}))  # a sign-in left open
    (login_cookie,) = jar.named(LOGIN)

    async def click_continue(flow_id: str) -> tuple[str, str]:
        page = await http.get(f"/connect/{flow_id}", headers=jar.header())
        token = form_token(page.text, f"/connect/{flow_id}")
        response = await http.post(
            f"/connect/{flow_id}", data={"csrf": token}, headers={**jar.header(), "origin": pages.base}
        )
        assert response.status_code == 303, response.text
        (name,) = jar.keep(response)
        return name, response.headers["location"]

    started = [await click_continue(flow.id)]
    for _ in range(MAX_TRANSACTIONS + 1):
        # Left at the provider; its flow ends meanwhile (an owner has at most 3 open flows).
        await pages.flows.fail(flow.id, "abandoned", owner=alice)
        flow = await pages.connect_flow()
        started.append(await click_continue(flow.id))
        assert len(jar.named(TX)) <= MAX_TRANSACTIONS
    assert jar.named(TX) == [name for name, _ in started[-MAX_TRANSACTIONS:]]  # the newest
    assert jar.named(LOGIN) == [login_cookie]  # a connection clears only connection cookies

    callback = await login_over_http(started[-1][1], "alice")
    done = await http.get(local(callback), headers=jar.header())
    assert done.status_code == 303, done.text
    assert done.headers["location"] == "/done"
    assert (await pages.flows.get(flow.id)).status == "completed"


async def test_a_cookie_header_too_long_to_read_whole_still_shows_the_session(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    """Other applications' cookies on this host (more than 64, over 16 KiB) come before ours."""
    flow = await pages.connect_flow()
    others = "; ".join(f"other-app-{i}={'x' * 200}" for i in range(120))
    assert len(others) > 16384
    session = pages.cookie("alice")
    assert signed_in(await http.get(f"/connect/{flow.id}", headers={"cookie": f"{others}; {session}"}))
    # Bounded all the same: what lies past the first 64 KiB is not read (and is no error).
    far = "; ".join(f"other-app-{i}={'x' * 200}" for i in range(400))
    assert not signed_in(await http.get(f"/connect/{flow.id}", headers={"cookie": f"{far}; {session}"}))
    assert signed_in(await http.get(f"/connect/{flow.id}", headers={"cookie": f"{session}; {far}"}))


async def test_display_claims_lose_bidi_overrides_and_zero_width_characters(
    tmp_path: Path, third_party: OidcProvider
) -> None:
    """The ID token's ``name`` and ``email`` are shown as "Signed in as ...": a right-to-left
    override would make "Alice \\u202emoc.live@" read as "Alice @evil.com"-style text. They are
    cleaned as the flows' labels are (before, only C0/C1 controls were refused)."""
    accounts = {"mallory": {"name": "Alice \u202emoc.live@", "email": "mallory\u200b@example.test"}}
    with OidcProvider(name="Tricky IdP", accounts=accounts) as idp:
        async with (
            running_pages(tmp_path, idp, third_party) as pages,
            httpx.AsyncClient(
                base_url=pages.base, cookies=BrowserJar.no_jar(), follow_redirects=False, timeout=15
            ) as http,
        ):
            flow = await pages.connect_flow("mallory")
            path = f"/connect/{flow.id}"
            jar = BrowserJar()
            start = await http.get("/login", params={"next": path})
            jar.keep(start)
            done = await http.get(
                local(await login_over_http(start.headers["location"], "mallory")), headers=jar.header()
            )
            assert done.status_code == 303, done.text
            jar.keep(done)
            page = await http.get(path, headers=jar.header())
    assert signed_in(page)
    assert "\u202e" not in page.text
    assert "\u200b" not in page.text
    assert "Signed in as <strong>Alice moc.live@ · mallory@example.test</strong>" in page.text
