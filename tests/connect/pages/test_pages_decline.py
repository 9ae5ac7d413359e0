"""Decline on the owner's page (``POST /connect/<id>`` or ``/secret/<id>`` with
``choice=decline``): the flow ends declined, which the client's retry reads as a decline; the
same CSRF and origin checks as Continue; a replayed or cross-site Decline, another account's,
or one after Continue changes nothing; a declined flow cannot be continued."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from pages_support import Harness, set_cookies

from mcp_elicit.connect.flows import Failed, FlowStateConflict, check_for_retry

SECRET = "sk-test-NEVER-SHOWN-0123456789"


def post_headers(pages: Harness, user: str, **extra: str) -> dict[str, str]:
    return {"cookie": pages.cookie(user), "origin": pages.base, **extra}


async def post(
    pages: Harness, http: httpx.AsyncClient, kind: str, flow_id: str, choice: str | None, user: str = "alice"
) -> httpx.Response:
    data = {"csrf": pages.token(user, kind, flow_id)}
    if choice is not None:
        data["choice"] = choice
    return await http.post(f"/{kind}/{flow_id}", data=data, headers=post_headers(pages, user))


async def test_decline_ends_the_flow_declined_and_the_retry_reads_a_decline(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    response = await post(pages, http, "connect", flow.id, "decline")
    assert response.status_code == 200
    assert "<h1>Declined</h1>" in response.text
    assert "You declined connecting your GitHub (test) account. Nothing was connected." in response.text
    assert "location" not in response.headers  # never sent to the provider
    assert not [n for n in set_cookies(response) if n.startswith("mcp-elicit-tx-")]
    declined = await pages.flows.get(flow.id)
    assert declined.status == "declined"
    outcome = check_for_retry(declined, pages.principal("alice"), pages.clock())
    assert isinstance(outcome, Failed)
    assert outcome.reason == "declined"
    assert outcome.message == "You declined connecting your github account."


@pytest.mark.parametrize(
    ("case", "data", "headers"),
    [
        ("no token", {"choice": "decline"}, {}),
        ("wrong token", {"csrf": "A" * 43, "choice": "decline"}, {}),
        ("cross origin", None, {"origin": "https://evil.example"}),
        ("null origin", None, {"origin": "null"}),
        ("cross site", None, {"sec-fetch-site": "cross-site"}),
        ("same site, another origin", None, {"sec-fetch-site": "same-site"}),
    ],
)
async def test_a_decline_failing_the_csrf_or_origin_check_is_403_and_changes_nothing(
    pages: Harness, http: httpx.AsyncClient, case: str, data: dict[str, str] | None, headers: dict[str, str]
) -> None:
    flow = await pages.connect_flow()
    body = {"csrf": pages.token("alice", "connect", flow.id), "choice": "decline"} if data is None else data
    response = await http.post(
        f"/connect/{flow.id}", data=body, headers={**post_headers(pages, "alice"), **headers}
    )
    assert response.status_code == 403, case
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_a_decline_token_is_bound_to_session_route_and_flow(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    other = await pages.connect_flow()
    for token in (
        pages.token("alice", "connect", other.id),
        pages.token("alice", "secret", flow.id),
        pages.token("bob", "connect", flow.id),
    ):
        response = await http.post(
            f"/connect/{flow.id}",
            data={"csrf": token, "choice": "decline"},
            headers=post_headers(pages, "alice"),
        )
        assert response.status_code == 403
    signed_out = await http.post(
        f"/connect/{flow.id}",
        data={"csrf": pages.token("alice", "connect", flow.id), "choice": "decline"},
        headers={"origin": pages.base},
    )
    assert signed_out.status_code == 403
    for f in (flow, other):
        assert (await pages.flows.get(f.id)).status == "pending"


async def test_a_replayed_decline_and_a_later_continue_change_nothing(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    flow = await pages.connect_flow()
    assert (await post(pages, http, "connect", flow.id, "decline")).status_code == 200
    for choice in ("decline", "continue", None):  # replayed, then Continue (and the old form)
        again = await post(pages, http, "connect", flow.id, choice)
        assert again.status_code == 409, choice
        assert "This request was declined" in again.text
        assert "location" not in again.headers
        assert not [n for n in set_cookies(again) if n.startswith("mcp-elicit-tx-")]
    page = await http.get(f"/connect/{flow.id}", headers={"cookie": pages.cookie("alice")})
    assert page.status_code == 409
    assert "This request was declined" in page.text
    assert 'value="decline"' not in page.text
    assert (await pages.flows.get(flow.id)).status == "declined"


async def test_a_decline_after_continue_ends_it_unless_a_callback_runs(
    pages: Harness, http: httpx.AsyncClient
) -> None:
    """Back from the provider without an answer, the page offers Decline again, and it ends the
    flow; once the callback has claimed the flow (it is redeeming a code) Decline changes
    nothing, and neither does it after completion."""
    left = await pages.connect_flow()
    assert (await post(pages, http, "connect", left.id, "continue")).status_code == 303
    assert (await post(pages, http, "connect", left.id, "decline")).status_code == 200
    assert (await pages.flows.get(left.id)).status == "declined"

    flow = await pages.connect_flow()
    assert (await post(pages, http, "connect", flow.id, "continue")).status_code == 303
    await pages.flows.claim(flow.id, pages.principal("alice"), 1)
    late = await post(pages, http, "connect", flow.id, "decline")
    assert late.status_code == 409
    assert "being finished right now" in late.text
    assert (await pages.flows.get(flow.id)).status == "redeeming"
    await pages.flows.complete(flow.id)
    after = await post(pages, http, "connect", flow.id, "decline")
    assert after.status_code == 409
    assert "already been used" in after.text
    assert (await pages.flows.get(flow.id)).status == "completed"


async def test_continue_and_decline_racing_end_in_one_state(pages: Harness, http: httpx.AsyncClient) -> None:
    """Decline always ends it: after Continue, the Continue's attempt can no longer be claimed
    (its callback is refused); before Continue, Continue is refused (declined is final)."""
    for _ in range(5):
        flow = await pages.connect_flow()
        continued, declined = await asyncio.gather(
            post(pages, http, "connect", flow.id, "continue"),
            post(pages, http, "connect", flow.id, "decline"),
        )
        assert declined.status_code == 200
        assert continued.status_code in (303, 409), continued.text
        after = await pages.flows.get(flow.id)
        assert after.status == "declined"
        with pytest.raises(FlowStateConflict):  # the callback of the Continue's attempt, if any
            await pages.flows.claim(flow.id, pages.principal("alice"), 1)


async def test_bob_declining_alices_flow_is_refused_and_logged(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.connect_flow("alice")
    with caplog.at_level(logging.WARNING):
        response = await post(pages, http, "connect", flow.id, "decline", user="bob")  # his own token
    assert response.status_code == 403
    assert "created for another account" in response.text
    assert any(
        "decline" in r.getMessage()
        and pages.principal("alice").key in r.getMessage()
        and pages.principal("bob").key in r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
    )
    assert (await pages.flows.get(flow.id)).status == "pending"


@pytest.mark.parametrize("choice", ["", "Decline", "allow", "continue,decline"])
async def test_an_unknown_choice_is_refused_before_anything(
    pages: Harness, http: httpx.AsyncClient, choice: str
) -> None:
    flow = await pages.connect_flow()
    response = await post(pages, http, "connect", flow.id, choice)
    assert response.status_code == 400
    assert (await pages.flows.get(flow.id)).status == "pending"


async def test_declining_a_secret_stores_nothing_and_never_shows_the_value(
    pages: Harness, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.secret_flow()
    with caplog.at_level(logging.DEBUG):
        response = await http.post(
            f"/secret/{flow.id}",
            data={"csrf": pages.token("alice", "secret", flow.id), "choice": "decline", "value": SECRET},
            headers=post_headers(pages, "alice"),
        )
    assert response.status_code == 200
    assert "You declined the request for “openai_api_key”. Nothing was stored." in response.text
    assert SECRET not in response.text
    assert SECRET not in caplog.text
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None
    assert (await pages.flows.get(flow.id)).status == "declined"
    # Save after Decline: refused, nothing stored.
    saved = await http.post(
        f"/secret/{flow.id}",
        data={"csrf": pages.token("alice", "secret", flow.id), "value": SECRET},
        headers=post_headers(pages, "alice"),
    )
    assert saved.status_code == 409
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None
