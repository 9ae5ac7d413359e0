"""Signing out on the pages voids the session server-side (a copied cookie dies with it), and an
operator can sign a user out everywhere; over real HTTP (uvicorn on 127.0.0.1) with the SQLite
flow store that keeps the sign-outs."""

from __future__ import annotations

import logging

import httpx
import pytest
from pages_support import SESSION_COOKIE, Harness, set_cookies

from mcp_elicit.connect.pages.sealing import CookieSealer


def signed_in(response: httpx.Response) -> bool:
    assert response.status_code == 200, response.text
    return "Signed in as" in response.text


async def test_signing_out_voids_every_copy_of_the_cookie(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.connect_flow("alice")
    copy = pages.cookie("alice")  # what a thief or a second tab holds
    assert signed_in(await http.get(f"/connect/{flow.id}", headers={"cookie": copy}))
    response = await http.post(
        "/logout",
        data={"csrf": pages.token("alice", "logout", ""), "next": f"/connect/{flow.id}"},
        headers={"cookie": copy, "origin": pages.base},
    )
    assert response.status_code == 303
    assert "Max-Age=0" in set_cookies(response)[SESSION_COOKIE]
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.pages"):
        after = await http.get(f"/connect/{flow.id}", headers={"cookie": copy})
    assert not signed_in(after)
    assert "Sign in" in after.text
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcp_elicit.connect.pages"]
    assert any("signed-out session" in w and pages.principal("alice").key in w for w in warnings)
    # The copy cannot act either: a POST with it is "not signed in", and the flow is untouched.
    post = await http.post(
        f"/connect/{flow.id}",
        data={"csrf": pages.token("alice", "connect", flow.id)},
        headers={"cookie": copy, "origin": pages.base},
    )
    assert post.status_code == 403
    assert "not signed in" in post.text
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_signing_out_everywhere_ends_every_session_of_that_user_only(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    alice_flow = await pages.connect_flow("alice")
    bob_flow = await pages.connect_flow("bob")
    alice = {"cookie": pages.cookie("alice")}
    bob = {"cookie": pages.cookie("bob")}
    assert signed_in(await http.get(f"/connect/{alice_flow.id}", headers=alice))
    await pages.app.sign_out_everywhere(pages.principal("alice"))
    assert not signed_in(await http.get(f"/connect/{alice_flow.id}", headers=alice))
    assert signed_in(await http.get(f"/connect/{bob_flow.id}", headers=bob))
    # Signing in again afterwards works: only sessions created until the sign-out are void.
    pages.clock.now += 1
    pages.sessions.pop("alice")
    again = {"cookie": pages.cookie("alice")}
    assert signed_in(await http.get(f"/connect/{alice_flow.id}", headers=again))


async def test_a_session_cookie_of_the_previous_format_reads_as_signed_out(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow("alice")
    session = pages.session("alice")
    old = {  # version 1: no session id, so it could never be signed out server-side
        "v": 1,
        "p": session.principal.key,
        "n": session.name,
        "e": session.email,
        "c": "A" * 43 + "=",
        "iat": session.created,
    }
    value = CookieSealer(pages.keys, clock=pages.clock).seal(SESSION_COOKIE, old, 3600)
    response = await http.get(f"/connect/{flow.id}", headers={"cookie": f"{SESSION_COOKIE}={value}"})
    assert not signed_in(response)


async def test_without_the_flow_store_no_session_is_believed(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow("alice")
    cookie = {"cookie": pages.cookie("alice")}
    await pages.flows.close()  # the store that holds the sign-outs is gone: fail closed
    response = await http.get(f"/connect/{flow.id}", headers=cookie)
    assert response.status_code == 503
    assert "Signed in as" not in response.text
