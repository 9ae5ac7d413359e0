"""The connect kit on a 2025-11-25 session: ``ctx.connection`` goes on by itself.

On 2026-07-28 a client that agreed to open the kit's page retries the call until the browser
step is done. A 2025-11-25 client is asked with a real ``elicitation/create`` (URL mode, with an
``elicitationId``); once it said yes, the call waits on the server while the user signs in: the
URL is not sent again, and when the flow completes the client gets
``notifications/elicitation/complete`` for that id, then the result, on the same stream (and
on no other session's, the same user's included). With
``Server(legacy_url_mode="error")`` the call ends with ``-32042`` naming the URL instead, and the
client's retry after the browser step finds the connection.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from kit_sites import SiteFactory, fp
from kit_support import browser_connects, browser_enters_secret, flow_id_of
from tests.http_session_support import Session, answer_questions, heard_on, initialize


async def test_the_call_goes_on_by_itself_when_the_browser_step_is_done(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site(hold=0.3)
    with_url = initialize(capabilities={"elicitation": {"form": {}, "url": {}}})
    session = Session(http, site.mcp_url, token=site.token("alice"))
    other = Session(http, site.mcp_url, token=site.token("alice"))  # alice in another window
    await session.open(with_url)
    await other.open(with_url)
    owner = site.auth.principal("alice")
    finishing: list[asyncio.Task[None]] = []

    def agree(params: dict[str, Any]) -> dict[str, Any]:
        assert params["mode"] == "url"

        # The user opens the page and finishes there a little later.
        async def in_the_browser() -> None:
            await asyncio.sleep(0.8)
            await browser_connects(site.flows, site.vault, flow_id_of(params["url"]), owner, "gho_alice")

        finishing.append(asyncio.ensure_future(in_the_browser()))
        return {"action": "accept"}

    call = session.request("tools/call", {"name": "list_repos", "arguments": {}})
    async with heard_on(other) as heard:
        seen, final = await asyncio.wait_for(answer_questions(session, call, agree), 30)
        await asyncio.gather(*finishing)
    assert heard == []  # the other session's stream heard nothing of this call
    questions = [m for m in seen if m.get("method") == "elicitation/create"]
    assert len(questions) == 1  # asked once: not again while the user was in the browser
    elicitation_id = questions[0]["params"]["elicitationId"]
    assert questions[0]["params"]["message"] == "Connect your GitHub account to list your repositories."
    completed = [m for m in seen if m.get("method") == "notifications/elicitation/complete"]
    assert [m["params"] for m in completed] == [{"elicitationId": elicitation_id}]
    assert seen.index(completed[0]) < seen.index(final)
    assert final is not None
    assert final["result"]["structuredContent"] == {
        "repos": ["alpha", "beta"],
        "token_fingerprint": fp("gho_alice"),
    }


async def test_with_url_mode_error_the_call_ends_with_32042_and_the_retry_finds_the_connection(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    site = await make_site(hold=0.3)
    site.server.legacy_url_mode = "error"
    session = Session(http, site.mcp_url, token=site.token("bob"))
    await session.open(initialize(capabilities={"elicitation": {"url": {}}}))
    call = session.request("tools/call", {"name": "list_repos", "arguments": {}})
    seen, final = await answer_questions(session, call, lambda params: {"action": "decline"})
    assert not [m for m in seen if m.get("method") == "elicitation/create"]
    assert final is not None
    error = final["error"]
    assert error["code"] == -32042
    (elicitation,) = error["data"]["elicitations"]
    assert elicitation["mode"] == "url"
    assert elicitation["elicitationId"]
    await browser_connects(
        site.flows, site.vault, flow_id_of(elicitation["url"]), site.auth.principal("bob"), "gho_bob"
    )
    again = session.request("tools/call", {"name": "list_repos", "arguments": {}})
    _, retried = await answer_questions(session, again, lambda params: {"action": "decline"})
    assert retried is not None
    assert retried["result"]["structuredContent"]["token_fingerprint"] == fp("gho_bob")


async def test_a_secret_is_asked_once_and_the_call_goes_on_when_it_is_entered(
    make_site: SiteFactory, http: httpx.AsyncClient
) -> None:
    """``ctx.secret`` on a 2025-11-25 session: one URL question (never a form: no secret in a
    form), the call waits while the user types the key on the page, then completes by itself;
    the secret is in no message the client gets."""
    site = await make_site(hold=0.3)
    session = Session(http, site.mcp_url, token=site.token("dora"))
    await session.open(initialize(capabilities={"elicitation": {"form": {}, "url": {}}}))
    owner = site.auth.principal("dora")
    value = "sk-legacy-very-secret-value"
    typing: list[asyncio.Task[None]] = []

    def agree(params: dict[str, Any]) -> dict[str, Any]:
        assert params["mode"] == "url"

        async def on_the_page() -> None:
            await asyncio.sleep(0.8)
            await browser_enters_secret(
                site.flows, site.vault, flow_id_of(params["url"]), owner, "openai_api_key", value
            )

        typing.append(asyncio.ensure_future(on_the_page()))
        return {"action": "accept"}

    call = session.request("tools/call", {"name": "summarize", "arguments": {"text": "hello world"}})
    seen, final = await asyncio.wait_for(answer_questions(session, call, agree), 30)
    await asyncio.gather(*typing)
    questions = [m for m in seen if m.get("method") == "elicitation/create"]
    assert [q["params"]["mode"] for q in questions] == ["url"]
    completed = [m for m in seen if m.get("method") == "notifications/elicitation/complete"]
    assert [m["params"] for m in completed] == [{"elicitationId": questions[0]["params"]["elicitationId"]}]
    assert final is not None
    assert final["result"]["content"][0]["text"] == f"summary of 11 characters with key {fp(value)}"
    assert value not in str(seen)
