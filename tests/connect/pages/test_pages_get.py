"""GET /connect/<id> and /secret/<id>: what each visitor sees, and that looking changes nothing."""

from __future__ import annotations

import logging
from urllib.parse import quote

import httpx
import pytest
from pages_support import Harness, form_token


async def test_signed_out_visitor_gets_a_sign_in_button_and_nothing_changes(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    for _ in range(3):  # a link unfurler, a scanner, the user
        response = await http.get(f"/connect/{flow.id}")
        assert response.status_code == 200
        assert f'href="/login?next={quote(f"/connect/{flow.id}")}"' in response.text
        assert "Sign in" in response.text
        assert "set-cookie" not in response.headers
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_owner_sees_who_asks_for_what_and_a_post_form(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow(client="Claude <Desktop>", description="To file issues for you")
    response = await http.get(f"/connect/{flow.id}", headers={"cookie": pages.cookie("alice")})
    assert response.status_code == 200
    page = response.text
    assert "Signed in as <strong>Alice Example · alice@example.test</strong>" in page
    assert "(alice)" in page
    assert "Claude &lt;Desktop&gt;" in page
    assert "<Desktop>" not in page
    assert "Tickets MCP" in page
    assert "GitHub (test)" in page
    assert "<code>repo</code>" in page
    assert "To file issues for you" in page
    assert f'<form method="post" action="/connect/{flow.id}">' in page
    assert form_token(page, f"/connect/{flow.id}") == pages.token("alice", "connect", flow.id)
    assert "Not you?" in page
    assert 'action="/logout"' in page
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_secret_page_shows_a_password_field(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.flows.create(pages.principal("alice"), "secret", "openai_api_key")
    page = (await http.get(f"/secret/{flow.id}", headers={"cookie": pages.cookie("alice")})).text
    assert 'type="password"' in page
    assert 'autocomplete="off"' in page
    assert "openai_api_key" in page
    assert "Save" in page
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_unknown_expired_and_wrong_kind_are_one_404(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    cookie = {"cookie": pages.cookie("alice")}
    unknown = await http.get(f"/connect/{'B' * 43}", headers=cookie)
    wrong_kind = await http.get(f"/secret/{flow.id}", headers=cookie)
    pages.clock.now += 601
    expired = await http.get(f"/connect/{flow.id}", headers=cookie)
    expired_anonymous = await http.get(f"/connect/{flow.id}")
    assert {r.status_code for r in (unknown, wrong_kind, expired, expired_anonymous)} == {404}
    assert unknown.text == wrong_kind.text == expired.text == expired_anonymous.text


@pytest.mark.parametrize("kind", ["connect", "secret"])
async def test_alices_link_opened_by_bob_is_refused_and_logged(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    flow = await (pages.connect_flow("alice") if kind == "connect" else pages.secret_flow("alice"))
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.pages"):
        response = await http.get(f"/{kind}/{flow.id}", headers={"cookie": pages.cookie("bob")})
    assert response.status_code == 403
    assert "created for another account" in response.text
    assert "Do not continue" in response.text
    assert "Signed in as <strong>Bob Example" in response.text
    assert 'method="post" action="/connect' not in response.text  # no continue-anyway
    assert 'type="password"' not in response.text
    (record,) = [r for r in caplog.records if r.name == "mcp_elicit.connect.pages"]
    assert record.levelno == logging.WARNING
    assert pages.principal("alice").key in record.getMessage()
    assert pages.principal("bob").key in record.getMessage()
    assert flow.id not in record.getMessage()  # ids are not logged (they are the link)
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_other_owner_gets_the_same_refusal_whatever_the_status(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    pending = await pages.connect_flow("alice")
    done = await pages.connect_flow("alice")
    await pages.flows.begin(done.id, pages.principal("alice"))
    await pages.flows.complete(done.id)
    cookie = {"cookie": pages.cookie("bob")}
    first = await http.get(f"/connect/{pending.id}", headers=cookie)
    second = await http.get(f"/connect/{done.id}", headers=cookie)
    pages.clock.now += 601
    third = await http.get(f"/connect/{pending.id}", headers=cookie)
    assert first.status_code == second.status_code == third.status_code == 403


async def test_owner_is_told_when_the_link_is_in_use_or_used(pages: Harness, http: httpx.AsyncClient) -> None:
    flow = await pages.connect_flow()
    cookie = {"cookie": pages.cookie("alice")}
    await pages.flows.begin(flow.id, pages.principal("alice"))
    # Continue pressed, the provider's page left: the form again, saying so (see test_pages_reopen).
    again = await http.get(f"/connect/{flow.id}", headers=cookie)
    assert again.status_code == 200
    assert "You already pressed Continue on this link" in again.text
    await pages.flows.claim(flow.id, pages.principal("alice"), 1)  # a callback is running
    in_use = await http.get(f"/connect/{flow.id}", headers=cookie)
    assert in_use.status_code == 409
    assert "being finished right now in another tab" in in_use.text
    assert 'name="csrf"' not in in_use.text
    await pages.flows.complete(flow.id)
    used = await http.get(f"/connect/{flow.id}", headers=cookie)
    assert used.status_code == 409
    assert "already been used" in used.text


async def test_done_is_static(pages: Harness, http: httpx.AsyncClient) -> None:
    plain = await http.get("/done")
    probing = await http.get("/done?client=<script>x</script>&next=https://evil.example")
    assert plain.status_code == probing.status_code == 200
    assert plain.text == probing.text
    assert "You can close this tab" in plain.text
