"""POST /connect/<id>, /secret/<id> and /logout: CSRF, Origin, body rules, the owner check, one
winner of two tabs, and the secret's storage. A refused POST never changes the flow."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pages_support import SESSION_COOKIE, Harness, query_of, set_cookies

from mcp_elicit.connect.pages import request as request_module

SECRET = "sk-test-VERY-SECRET-0123456789"


def post_headers(pages: Harness, user: str, **extra: str) -> dict[str, str]:
    return {"cookie": pages.cookie(user), "origin": pages.base, **extra}


async def test_continue_begins_the_flow_and_redirects_to_the_provider(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    response = await http.post(
        f"/connect/{flow.id}",
        data={"csrf": pages.token("alice", "connect", flow.id)},
        headers=post_headers(pages, "alice", **{"sec-fetch-site": "same-origin"}),
    )
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith(pages.third_party.endpoint("authorization") + "?")
    params = query_of(location)
    assert params["redirect_uri"] == f"{pages.base}/oauth/github/callback"
    assert params["code_challenge_method"] == "S256"
    assert params["scope"] == "repo"
    (name, line), *_ = [(n, v) for n, v in set_cookies(response).items() if n.startswith("mcp-elicit-tx-")]
    assert "HttpOnly" in line
    assert "SameSite=Lax" in line
    assert "Path=/" in line
    assert "alice" not in name
    assert flow.id not in line
    assert (await pages.flows.get(flow.id)).status == "in_progress"


@pytest.mark.parametrize(
    ("case", "data", "headers"),
    [
        ("no token", {"other": "1"}, {}),
        ("empty token", {"csrf": ""}, {}),
        ("wrong token", {"csrf": "A" * 43}, {}),
        ("cross origin", None, {"origin": "https://evil.example"}),
        ("null origin", None, {"origin": "null"}),
        ("null origin, cross site", None, {"origin": "null", "sec-fetch-site": "cross-site"}),
        ("same origin, but cross site", None, {"sec-fetch-site": "same-site"}),
        ("cross site", None, {"sec-fetch-site": "cross-site"}),
    ],
)
async def test_csrf_and_origin_failures_are_403_and_change_nothing(
    pages: Harness, http: httpx.AsyncClient, case: str, data: dict[str, str] | None, headers: dict[str, str]
) -> None:
    flow = await pages.connect_flow()
    body = {"csrf": pages.token("alice", "connect", flow.id)} if data is None else data
    response = await http.post(
        f"/connect/{flow.id}", data=body, headers={**post_headers(pages, "alice"), **headers}
    )
    assert response.status_code == 403, case
    assert "set-cookie" not in response.headers
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_null_origin_from_our_own_no_referrer_page_is_accepted(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    # What Chromium sends for our form under Referrer-Policy: no-referrer (see the browser tests).
    flow = await pages.connect_flow()
    response = await http.post(
        f"/connect/{flow.id}",
        data={"csrf": pages.token("alice", "connect", flow.id)},
        headers={**post_headers(pages, "alice"), "origin": "null", "sec-fetch-site": "same-origin"},
    )
    assert response.status_code == 303


async def test_tokens_are_bound_to_session_route_and_flow(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    other = await pages.connect_flow()
    secret = await pages.secret_flow()
    for token in (
        pages.token("alice", "connect", other.id),  # another flow
        pages.token("alice", "secret", flow.id),  # another route
        pages.token("bob", "connect", flow.id),  # another session
    ):
        response = await http.post(
            f"/connect/{flow.id}", data={"csrf": token}, headers=post_headers(pages, "alice")
        )
        assert response.status_code == 403
    response = await http.post(
        f"/secret/{secret.id}",
        data={"csrf": pages.token("alice", "connect", secret.id), "value": SECRET},
        headers=post_headers(pages, "alice"),
    )
    assert response.status_code == 403
    for f in (flow, other, secret):
        assert (await pages.flows.get(f.id)).status == "pending"


async def test_post_without_a_session_is_403(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    response = await http.post(f"/connect/{flow.id}", data={"csrf": pages.token("alice", "connect", flow.id)})
    assert response.status_code == 403
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_body_rules(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    token = pages.token("alice", "connect", flow.id)
    headers = post_headers(pages, "alice")
    as_json = await http.post(f"/connect/{flow.id}", json={"csrf": token}, headers=headers)
    assert as_json.status_code == 415
    multipart = await http.post(f"/connect/{flow.id}", files={"csrf": (None, token)}, headers=headers)
    assert multipart.status_code == 415
    big = await http.post(f"/connect/{flow.id}", data={"csrf": token, "pad": "x" * 20000}, headers=headers)
    assert big.status_code == 413

    async def chunks():  # no Content-Length: the cap holds while reading
        yield f"csrf={token}&pad=".encode()
        for _ in range(40):
            yield b"x" * 1024

    chunked = await http.post(
        f"/connect/{flow.id}",
        content=chunks(),
        headers={**headers, "content-type": "application/x-www-form-urlencoded"},
    )
    assert chunked.status_code == 413
    repeated = await http.post(
        f"/connect/{flow.id}",
        content=f"csrf={token}&csrf={token}",
        headers={**headers, "content-type": "application/x-www-form-urlencoded"},
    )
    assert repeated.status_code == 400
    latin = await http.post(
        f"/connect/{flow.id}",
        content=b"csrf=\xff",
        headers={**headers, "content-type": "application/x-www-form-urlencoded"},
    )
    assert latin.status_code == 400
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_a_form_that_trickles_in_is_refused_with_408(
    pages: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client that sends part of its body and then waits must not hold a page open (the MCP
    # endpoint has the same bound, body_timeout); the bound is shortened here from its 30 s.
    monkeypatch.setattr(request_module, "FORM_TIMEOUT", 0.3)
    flow = await pages.connect_flow()
    body = f"csrf={pages.token('alice', 'connect', flow.id)}&pad=".encode()
    url = urlsplit(pages.base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    try:
        head = (
            f"POST /connect/{flow.id} HTTP/1.1\r\nhost: {url.netloc}\r\norigin: {pages.base}\r\n"
            f"cookie: {pages.cookie('alice')}\r\ncontent-type: application/x-www-form-urlencoded\r\n"
            f"content-length: {len(body) + 100}\r\n\r\n"
        )
        writer.write(head.encode() + body)  # and the last 100 bytes never come
        await writer.drain()
        started = time.monotonic()
        response = await asyncio.wait_for(reader.read(), timeout=10)
    finally:
        writer.close()
    assert response.startswith(b"HTTP/1.1 408 "), response[:300]
    assert time.monotonic() - started < 5
    assert b"took too long to arrive" in response
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_bob_posting_to_alices_flow_is_refused_and_logged(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.connect_flow("alice")
    with caplog.at_level(logging.WARNING):
        response = await http.post(
            f"/connect/{flow.id}",
            data={"csrf": pages.token("bob", "connect", flow.id)},  # Bob's own, valid token
            headers=post_headers(pages, "bob"),
        )
    assert response.status_code == 403
    assert "created for another account" in response.text
    assert any(
        pages.principal("alice").key in r.getMessage() and pages.principal("bob").key in r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
    )
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_four_tabs_pressing_continue_at_once_make_four_attempts_one_of_which_counts(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    """Each Continue is a new attempt (the one pressed last counts, see test_pages_reopen): every
    tab goes to the provider with its own state, and the flow holds exactly one attempt number."""
    flow = await pages.connect_flow()
    data = {"csrf": pages.token("alice", "connect", flow.id)}
    responses = await asyncio.gather(
        *(http.post(f"/connect/{flow.id}", data=data, headers=post_headers(pages, "alice")) for _ in range(4))
    )
    assert [r.status_code for r in responses] == [303] * 4
    assert len({query_of(r.headers["location"])["state"] for r in responses}) == 4
    after = await pages.flows.get(flow.id)
    assert (after.status, after.attempt) == ("in_progress", 4)


async def test_secret_is_stored_for_the_owner_and_never_echoed_or_logged(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.secret_flow()
    with caplog.at_level(logging.DEBUG):
        response = await http.post(
            f"/secret/{flow.id}",
            data={"csrf": pages.token("alice", "secret", flow.id), "value": f"  {SECRET}\n"},
            headers=post_headers(pages, "alice"),
        )
    assert response.status_code == 303
    assert response.headers["location"] == "/done"
    stored = await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key")
    assert stored is not None
    assert stored.value == SECRET
    assert (await pages.flows.get(flow.id)).status == "completed"
    assert SECRET not in caplog.text
    # Used once: a second POST (a replay, a second tab) stores nothing new.
    again = await http.post(
        f"/secret/{flow.id}",
        data={"csrf": pages.token("alice", "secret", flow.id), "value": "other"},
        headers=post_headers(pages, "alice"),
    )
    assert again.status_code == 409
    stored = await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key")
    assert stored is not None
    assert stored.value == SECRET


async def test_four_tabs_saving_a_secret_at_once_store_exactly_one_value(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    """A secret has no second attempt (nothing to restart, unlike a connection): of four Saves
    at once exactly one stores its value; the others are told the link is in use or used."""
    flow = await pages.secret_flow()
    values = [f"{SECRET}-{tab}" for tab in range(4)]
    responses = await asyncio.gather(
        *(
            http.post(
                f"/secret/{flow.id}",
                data={"csrf": pages.token("alice", "secret", flow.id), "value": value},
                headers=post_headers(pages, "alice"),
            )
            for value in values
        )
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [303, 409, 409, 409], statuses
    (won,) = [value for value, r in zip(values, responses, strict=True) if r.status_code == 303]
    stored = await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key")
    assert stored is not None
    assert stored.value == won
    assert (await pages.flows.get(flow.id)).status == "completed"
    assert all(SECRET not in r.text for r in responses)


async def test_a_secret_page_left_without_save_opens_again_and_saves(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    """The secret page has no dead end like a connection left at its provider had: nothing
    changes until Save, which stores and completes in one request, so a page closed (or reloaded)
    without Save leaves the link as it was."""
    flow = await pages.secret_flow()
    cookie = {"cookie": pages.cookie("alice")}
    for _ in range(2):  # opened, closed without Save, opened again
        page = await http.get(f"/secret/{flow.id}", headers=cookie)
        assert page.status_code == 200
        assert 'type="password"' in page.text
        assert (await pages.flows.get(flow.id)).status == "pending"
    saved = await http.post(
        f"/secret/{flow.id}",
        data={"csrf": pages.token("alice", "secret", flow.id), "value": SECRET},
        headers=post_headers(pages, "alice"),
    )
    assert saved.status_code == 303
    assert (await pages.flows.get(flow.id)).status == "completed"


@pytest.mark.parametrize(
    "value",
    # Empty, too long, and characters a key never holds: a control (C0, C1), a zero-width space,
    # a bidi override, a BOM, a line separator (pasted along, they were stored inside the key).
    [
        "",
        "   ",
        "x" * 5000,
        "a\x00b",
        "sk-a\x85b",
        "sk-\u200bhidden",
        "sk-\u202eabc",
        "\ufeffsk-abc",
        "sk\u2028abc",
    ],
)
async def test_bad_secret_values_keep_the_flow_pending(
    pages: Harness, http: httpx.AsyncClient, value: str
) -> None:
    flow = await pages.secret_flow()
    response = await http.post(
        f"/secret/{flow.id}",
        data={"csrf": pages.token("alice", "secret", flow.id), "value": value},
        headers=post_headers(pages, "alice"),
    )
    assert response.status_code == 400
    assert 'type="password"' in response.text
    if value.strip():
        assert value not in response.text
    assert (await pages.flows.get(flow.id)).status == "pending"
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None


@pytest.mark.parametrize("kind", ["connect", "secret"])
async def test_a_link_whose_request_failed_says_it_was_closed_not_used(
    pages: Harness, http: httpx.AsyncClient, kind: str
) -> None:
    """Dismissed in the client (or a provider error, a secret not stored): the link is not
    "already used", since nothing was connected; the owner is sent back to the app for a new one,
    whether the page is opened or its form posted."""
    flow = await (pages.connect_flow() if kind == "connect" else pages.secret_flow())
    await pages.flows.fail(flow.id, "Dismissed in the client.", owner=pages.principal("alice"))
    opened = await http.get(f"/{kind}/{flow.id}", headers={"cookie": pages.cookie("alice")})
    data = {"csrf": pages.token("alice", kind, flow.id)}
    if kind == "secret":
        data["value"] = SECRET
    posted = await http.post(f"/{kind}/{flow.id}", data=data, headers=post_headers(pages, "alice"))
    for page in (opened, posted):
        assert page.status_code == 409
        assert "closed before anything was connected or stored" in page.text
        assert "run the tool again for a new link" in page.text
        assert "already been used" not in page.text
        assert 'name="csrf"' not in page.text
    assert (await pages.flows.get(flow.id)).status == "failed"
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None


async def test_bob_cannot_save_a_secret_into_alices_flow(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.secret_flow("alice")
    response = await http.post(
        f"/secret/{flow.id}",
        data={"csrf": pages.token("bob", "secret", flow.id), "value": SECRET},
        headers=post_headers(pages, "bob"),
    )
    assert response.status_code == 403
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None
    assert await pages.vault.get_secret(pages.principal("bob").key, "openai_api_key") is None
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_expired_flow_is_refused_on_post(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    pages.clock.now += 601
    response = await http.post(
        f"/connect/{flow.id}",
        data={"csrf": pages.token("alice", "connect", flow.id)},
        headers=post_headers(pages, "alice"),
    )
    assert response.status_code == 404


async def test_logout_clears_the_session_with_csrf(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    refused = await http.post(
        "/logout", data={"csrf": "bad", "next": f"/connect/{flow.id}"}, headers=post_headers(pages, "alice")
    )
    assert refused.status_code == 403
    assert "set-cookie" not in refused.headers
    response = await http.post(
        "/logout",
        data={"csrf": pages.token("alice", "logout", ""), "next": f"/connect/{flow.id}"},
        headers=post_headers(pages, "alice"),
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"/connect/{flow.id}"
    assert "Max-Age=0" in set_cookies(response)[SESSION_COOKIE]
    evil = await http.post(
        "/logout",
        data={"csrf": pages.token("alice", "logout", ""), "next": "https://evil.example/"},
        headers=post_headers(pages, "alice"),
    )
    assert evil.status_code == 200
    assert "location" not in evil.headers


@pytest.mark.parametrize("length", ["\u00b2", "\u00b9\u00b3", "1 0", "-1", ""])
async def test_a_content_length_that_is_not_ascii_digits_is_a_400(pages: Harness, length: str) -> None:
    """HTTP servers differ in how strictly they check ``Content-Length`` before the app sees it
    (uvicorn refuses these itself), so the app is called as ASGI directly, as a lenient server
    would. Before, a Latin-1 superscript digit (``"²".isdigit()`` is true, ``int("²")`` raises)
    was a 500 with a traceback in the log."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [
        (b"origin", pages.base.encode("ascii")),
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", length.encode("latin-1")),
    ]
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/logout",
        "headers": headers,
        "client": ("127.0.0.1", 1),
    }
    await pages.app(scope, receive, send)
    assert sent[0]["status"] == 400
    assert b"The request has an invalid Content-Length." in sent[1]["body"]
