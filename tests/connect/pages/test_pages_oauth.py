"""Sign-in at the real MCP authorization server and connection to the real third-party provider,
over HTTP (no browser): sessions, callbacks, replays, declines, identity changes, tampering."""

from __future__ import annotations

import logging
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from pages_support import SESSION_COOKIE, Harness, cookie_pair, form_token, query_of, set_cookies
from tests.oidc_provider import login_over_http


def local(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


async def sign_in(pages: Harness, http: httpx.AsyncClient, user: str, next_path: str) -> str:
    """The whole sign-in; returns the ``name=value`` of the session cookie."""
    start = await http.get("/login", params={"next": next_path})
    assert start.status_code == 303
    assert start.headers["location"].startswith(pages.idp.endpoint("authorization"))
    (login_cookie,) = [v for n, v in set_cookies(start).items() if n.startswith("mcp-elicit-login-")]
    assert "HttpOnly" in login_cookie
    assert "SameSite=Lax" in login_cookie
    assert "Max-Age=600" in login_cookie
    callback = await login_over_http(start.headers["location"], user)
    assert callback.startswith(f"{pages.base}/login/callback?")
    done = await http.get(local(callback), headers={"cookie": cookie_pair(login_cookie)})
    assert done.status_code == 303, done.text
    assert done.headers["location"] == next_path
    cookies = set_cookies(done)
    assert "Max-Age=0" in next(v for n, v in cookies.items() if n.startswith("mcp-elicit-login-"))
    session = cookies[SESSION_COOKIE]
    assert "HttpOnly" in session
    assert "SameSite=Lax" in session
    assert "Path=/" in session
    return cookie_pair(session)


async def start_connect(
    pages: Harness, http: httpx.AsyncClient, session: str, flow_id: str
) -> tuple[str, str]:
    """POST "Continue" as the page's form would; returns (authorize URL, tx cookie pair)."""
    page = await http.get(f"/connect/{flow_id}", headers={"cookie": session})
    token = form_token(page.text, f"/connect/{flow_id}")
    response = await http.post(
        f"/connect/{flow_id}", data={"csrf": token}, headers={"cookie": session, "origin": pages.base}
    )
    assert response.status_code == 303, response.text
    (tx,) = [v for n, v in set_cookies(response).items() if n.startswith("mcp-elicit-tx-")]
    return response.headers["location"], cookie_pair(tx)


async def test_sign_in_then_connect_stores_the_connection(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    session = await sign_in(pages, http, "alice", f"/connect/{flow.id}")
    page = await http.get(f"/connect/{flow.id}", headers={"cookie": session})
    # Name and email come from userinfo (this provider keeps them out of the ID token).
    assert "Signed in as <strong>Alice Example · alice@example.test</strong>" in page.text
    assert "(alice)" in page.text
    authorize, tx = await start_connect(pages, http, session, flow.id)
    callback = await login_over_http(authorize, "alice")
    assert callback.startswith(f"{pages.base}/oauth/github/callback?")
    done = await http.get(local(callback), headers={"cookie": f"{session}; {tx}"})
    assert done.status_code == 303
    assert done.headers["location"] == "/done"
    assert "Max-Age=0" in next(v for n, v in set_cookies(done).items() if n.startswith("mcp-elicit-tx-"))
    connection = await pages.vault.get_connection(pages.principal("alice").key, "github")
    assert connection is not None
    assert connection.access_token
    assert connection.scopes == ("repo",)
    assert (await pages.flows.get(flow.id)).status == "completed"

    # The same callback again (back button, a leaked URL): refused, nothing changes.
    replay = await http.get(local(callback), headers={"cookie": session})
    assert replay.status_code == 400
    assert "Nothing was changed" in replay.text
    # With a copy of the (cleared) transaction cookie: the flow is no longer in progress, so the
    # code is never presented to the provider again (which would make it revoke the tokens it
    # issued for it, RFC 6749 §4.1.2): the stored connection stays as it was, and works.
    replay_with_cookie = await http.get(local(callback), headers={"cookie": f"{session}; {tx}"})
    assert replay_with_cookie.status_code == 409
    assert "already been used" in replay_with_cookie.text
    assert (await pages.flows.get(flow.id)).status == "completed"
    after = await pages.vault.get_connection(pages.principal("alice").key, "github")
    assert after is not None
    assert (after.access_token, after.refresh_token) == (connection.access_token, connection.refresh_token)
    github = pages.app._ctx.providers["github"]
    client = {"client_id": github.client_id, "client_secret": github.client_secret}
    for token in (after.access_token, after.refresh_token):
        assert (await pages.third_party.introspect(client, token))["active"] is True


async def test_login_callback_is_used_once_and_only_in_its_browser(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    start = await http.get("/login", params={"next": f"/connect/{flow.id}"})
    callback = await login_over_http(start.headers["location"], "alice")
    # Another browser (no login cookie): the login-CSRF shape. Refused, no session.
    forced = await http.get(local(callback))
    assert forced.status_code == 400
    assert SESSION_COOKIE not in set_cookies(forced)


@pytest.mark.parametrize(
    "next_value",
    [
        "https://evil.example/",
        "//evil.example/connect/" + "A" * 43,
        "/\\evil.example",
        "/connect/short",
        "/connect/" + "A" * 43 + "/../../x",
        "/connect/" + "A" * 43 + "?x=1",
        "/oauth/github/callback",
        "/done",
        "",
        "%2F%2Fevil.example",
        "javascript:alert(1)",
    ],
)
async def test_next_is_only_our_own_flow_pages(
    pages: Harness, http: httpx.AsyncClient, next_value: str
) -> None:
    response = await http.get("/login?" + urlencode({"next": next_value}))
    assert response.status_code == 400
    assert "location" not in response.headers
    assert "set-cookie" not in response.headers


async def test_declined_at_the_provider(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    session = pages.cookie("alice")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    state = query_of(authorize)["state"]
    query = urlencode(
        {
            "error": "access_denied",
            "error_description": "<script>alert(1)</script>",
            "state": state,
            "iss": pages.third_party.issuer,
        }
    )
    response = await http.get(f"/oauth/github/callback?{query}", headers={"cookie": f"{session}; {tx}"})
    assert response.status_code == 200
    assert "declined" in response.text
    assert "<script>" not in response.text
    assert (await pages.flows.get(flow.id)).status == "declined"
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None


async def test_provider_error_text_is_escaped_and_the_flow_fails(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    session = pages.cookie("alice")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    query = urlencode(
        {
            "error": "server_error",
            "error_description": '<img src=x onerror="alert(1)">' + "y" * 1000,
            "state": query_of(authorize)["state"],
            "iss": pages.third_party.issuer,
        }
    )
    response = await http.get(f"/oauth/github/callback?{query}", headers={"cookie": f"{session}; {tx}"})
    assert response.status_code == 502
    assert "&lt;img src=x" in response.text
    assert "<img" not in response.text
    assert "y" * 300 not in response.text  # capped
    failed = await pages.flows.get(flow.id)
    assert failed.status == "failed"
    assert failed.detail
    assert "<" not in failed.detail


async def test_callback_under_another_providers_path_is_refused(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    session = pages.cookie("alice")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    callback = await login_over_http(authorize, "alice")
    wrong = local(callback).replace("/oauth/github/", "/oauth/gitlab/")
    assert (await http.get(wrong, headers={"cookie": f"{session}; {tx}"})).status_code == 404
    assert (await pages.flows.get(flow.id)).status == "in_progress"
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None


async def test_identity_is_checked_again_at_the_callback(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.connect_flow("alice")
    authorize, tx = await start_connect(pages, http, pages.cookie("alice"), flow.id)
    callback = await login_over_http(authorize, "bob")  # and the browser is now signed in as bob
    with caplog.at_level(logging.WARNING):
        response = await http.get(local(callback), headers={"cookie": f"{pages.cookie('bob')}; {tx}"})
    assert response.status_code == 403
    assert "Nothing was stored" in response.text
    assert any("SECURITY" in r.getMessage() for r in caplog.records)
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None
    assert await pages.vault.get_connection(pages.principal("bob").key, "github") is None
    assert (await pages.flows.get(flow.id)).status == "failed"


async def test_tampered_cookies_are_not_accepted(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    session = pages.cookie("alice")
    name, value = session.split("=", 1)
    flipped = value[:-5] + ("A" if value[-5] != "A" else "B") + value[-4:]
    page = await http.get(f"/connect/{flow.id}", headers={"cookie": f"{name}={flipped}"})
    assert page.status_code == 200
    assert "Sign in" in page.text
    assert "Signed in as" not in page.text

    authorize, tx = await start_connect(pages, http, session, flow.id)
    tx_name, tx_value = tx.split("=", 1)
    callback = await login_over_http(authorize, "alice")
    # The tx cookie's value under the session cookie's name (cookie names are bound in the seal).
    assert (await http.get(f"/connect/{flow.id}", headers={"cookie": f"{name}={tx_value}"})).text.count(
        "Sign in"
    ) >= 1
    # The session's value under the tx cookie's name: not a transaction.
    refused = await http.get(local(callback), headers={"cookie": f"{session}; {tx_name}={value}"})
    assert refused.status_code == 400
    assert (await pages.flows.get(flow.id)).status == "in_progress"


async def test_the_callback_loaded_several_times_at_once_connects_exactly_once(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A reload or a double navigation while the first load is still being handled: exactly one
    load redeems the code; the others change nothing (before, a second load could revoke the
    connection the first had just stored as an "earlier" one, or mark the flow failed)."""
    import asyncio

    flow = await pages.connect_flow()
    session = await sign_in(pages, http, "alice", f"/connect/{flow.id}")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    callback = await login_over_http(authorize, "alice")
    with caplog.at_level(logging.INFO):
        loads = await asyncio.gather(
            *(http.get(local(callback), headers={"cookie": f"{session}; {tx}"}) for _ in range(4))
        )
    statuses = sorted(load.status_code for load in loads)
    assert statuses.count(303) == 1, statuses
    assert [load.headers.get("location") for load in loads if load.status_code == 303] == ["/done"]
    assert all("already been used" in load.text for load in loads if load.status_code != 303)
    assert (await pages.flows.get(flow.id)).status == "completed"
    connection = await pages.vault.get_connection(pages.principal("alice").key, "github")
    assert connection is not None
    assert connection.access_token
    assert "revoked" not in caplog.text


@pytest.mark.parametrize("iss", ["https://evil.example", "{issuer}/", "{ISSUER}", None])
async def test_a_decline_from_another_issuer_is_not_believed(
    pages: Harness, http: httpx.AsyncClient, iss: str | None
) -> None:
    """RFC 9207: the provider advertises ``iss``; an answer with another (or no) ``iss`` is not
    its answer, even with the right ``state``: the flow fails, it is not marked "declined", the
    forged text is not shown, and nothing is stored."""
    flow = await pages.connect_flow()
    session = pages.cookie("alice")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    issuer = pages.third_party.issuer
    params = {
        "error": "access_denied",
        "error_description": "Call +1 555 0100 to restore your account",
        "state": query_of(authorize)["state"],
    }
    if iss is not None:
        params["iss"] = iss.format(issuer=issuer, ISSUER=issuer.upper())
    response = await http.get(
        f"/oauth/github/callback?{urlencode(params)}", headers={"cookie": f"{session}; {tx}"}
    )
    assert response.status_code == 502
    assert "declined" not in response.text
    assert "555 0100" not in response.text
    assert "Max-Age=0" in next(v for n, v in set_cookies(response).items() if n.startswith("mcp-elicit-tx-"))
    assert (await pages.flows.get(flow.id)).status == "failed"
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None


async def test_a_connection_left_at_the_provider_can_be_continued_again_and_the_old_state_is_refused(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The reported dead end: Continue, then the provider's page left without Allow or Deny (a
    closed tab, Back). Reopening the link shows the form again; Continue makes a new attempt (new
    state, new PKCE verifier); the abandoned attempt's late callback is refused before its code is
    redeemed, and leaves the new attempt to finish."""
    flow = await pages.connect_flow()
    session = await sign_in(pages, http, "alice", f"/connect/{flow.id}")
    first, first_tx = await start_connect(pages, http, session, flow.id)

    reopened = await http.get(f"/connect/{flow.id}", headers={"cookie": session})
    assert reopened.status_code == 200, reopened.text
    assert "You already pressed Continue on this link" in reopened.text
    second, second_tx = await start_connect(pages, http, session, flow.id)
    assert query_of(second)["state"] != query_of(first)["state"]
    assert query_of(second)["code_challenge"] != query_of(first)["code_challenge"]
    assert second_tx != first_tx

    # The abandoned tab's provider page answered after all: its callback arrives late, in the
    # same browser (both transaction cookies are there).
    late = await login_over_http(first, "alice")
    both = f"{session}; {first_tx}; {second_tx}"
    with caplog.at_level(logging.INFO):
        refused = await http.get(local(late), headers={"cookie": both})
    assert refused.status_code == 409
    assert "this attempt no longer counts" in refused.text
    assert "Max-Age=0" in next(v for n, v in set_cookies(refused).items() if n.startswith("mcp-elicit-tx-"))
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None
    after = await pages.flows.get(flow.id)
    assert (after.status, after.attempt) == ("in_progress", 2)

    callback = await login_over_http(second, "alice")
    done = await http.get(local(callback), headers={"cookie": both})
    assert done.status_code == 303
    assert done.headers["location"] == "/done"
    assert (await pages.flows.get(flow.id)).status == "completed"
    connection = await pages.vault.get_connection(pages.principal("alice").key, "github")
    assert connection is not None
    assert connection.access_token
    # Nothing more to restart: the finished link is used.
    used = await http.get(f"/connect/{flow.id}", headers={"cookie": session})
    assert used.status_code == 409
    assert "already been used" in used.text


async def test_a_connection_in_progress_cannot_be_restarted_by_another_account(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Alice's link, left at the provider, forwarded to Bob: the same refusal as on first open,
    and his Continue makes no attempt, so Alice's own callback still works."""
    flow = await pages.connect_flow()
    session = await sign_in(pages, http, "alice", f"/connect/{flow.id}")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    bob = {"cookie": pages.cookie("bob")}
    with caplog.at_level(logging.WARNING):
        seen = await http.get(f"/connect/{flow.id}", headers=bob)
        posted = await http.post(
            f"/connect/{flow.id}",
            data={"csrf": pages.token("bob", "connect", flow.id)},
            headers={**bob, "origin": pages.base},
        )
    assert seen.status_code == posted.status_code == 403
    assert "created for another account" in posted.text
    assert "location" not in posted.headers
    assert sum("SECURITY" in r.getMessage() for r in caplog.records) >= 2
    assert (await pages.flows.get(flow.id)).attempt == 1
    signed_out = await http.get(f"/connect/{flow.id}")
    assert "Sign in" in signed_out.text
    assert 'name="csrf"' not in signed_out.text

    callback = await login_over_http(authorize, "alice")
    done = await http.get(local(callback), headers={"cookie": f"{session}; {tx}"})
    assert done.status_code == 303
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is not None


@pytest.mark.parametrize("attempt", [None, True, "1", 1.0])
async def test_a_transaction_cookie_without_a_usable_attempt_is_refused(
    pages: Harness, http: httpx.AsyncClient, attempt: object
) -> None:
    """A connection cookie sealed before attempts existed (or naming no whole number): the
    callback cannot tell which attempt it belongs to, so it is refused (fail closed)."""
    flow = await pages.connect_flow()
    session = await sign_in(pages, http, "alice", f"/connect/{flow.id}")
    authorize, tx = await start_connect(pages, http, session, flow.id)
    name, value = tx.split("=", 1)
    sealer = pages.app._ctx.sealer
    payload = sealer.open(name, value)
    assert payload is not None
    assert payload["attempt"] == 1
    payload = {k: v for k, v in payload.items() if k not in ("exp", "attempt")}
    if attempt is not None:
        payload["attempt"] = attempt
    forged = f"{name}={sealer.seal(name, payload, 600)}"
    callback = await login_over_http(authorize, "alice")
    refused = await http.get(local(callback), headers={"cookie": f"{session}; {forged}"})
    assert refused.status_code == 400
    assert "Nothing was changed" in refused.text
    assert (await pages.flows.get(flow.id)).status == "in_progress"
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None
