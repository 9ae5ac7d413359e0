"""The connect kit on a 2025-11-25 session when the call does not simply succeed.

A flow the user completed is said complete (``notifications/elicitation/complete`` for its
``elicitationId``, once) whatever the call does next: the granted scopes fall short, the handler
raises. A flow that did not complete (declined on the page) is never said complete.

Driven as test_kit_legacy.py drives them: a real site (uvicorn on 127.0.0.1, SQLite or
PostgreSQL stores), the hand-played 2025-11-25 session of ``tests/http_session_support.py``, the
browser step at the store level (``kit_support``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from kit_sites import Site, SiteFactory, Storage
from kit_support import ACCEPT, browser_enters_secret, flow_id_of
from tests.http_session_support import Session, answer_questions, initialize

from mcp_elicit import Context

URL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
COMPLETE = "notifications/elicitation/complete"
PageStep = Callable[[str], Awaitable[None]]


@pytest.fixture(params=["sqlite", "postgres"])
def storage(request: pytest.FixtureRequest) -> Storage | None:
    """The site's stores: SQLite beside the vault (``make_site``'s default), or PostgreSQL."""
    if request.param == "postgres":
        pg: Storage = request.getfixturevalue("pg_storage")
        return pg
    return None


async def opened(site: Site, http: httpx.AsyncClient, user: str = "alice") -> Session:
    session = Session(http, site.mcp_url, token=site.token(user))
    await session.open(initialize(capabilities=URL_CAPS))
    return session


async def agreed_call(
    session: Session, tool: str, page_step: PageStep
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """``tool`` called on ``session``; the user agrees to open the link and ``page_step(flow id)``
    plays what they do there. The question's params, the completions the client was sent (their
    params), and the call's response (which comes after them)."""
    steps: list[asyncio.Task[None]] = []

    def agree(params: dict[str, Any]) -> dict[str, Any]:
        steps.append(asyncio.ensure_future(page_step(flow_id_of(params["url"]))))
        return ACCEPT

    call = session.request("tools/call", {"name": tool, "arguments": {}})
    seen, final = await asyncio.wait_for(answer_questions(session, call, agree), 30)
    await asyncio.gather(*steps)
    (question,) = [m for m in seen if m.get("method") == "elicitation/create"]
    completions = [m for m in seen if m.get("method") == COMPLETE]
    assert final is not None, seen
    assert all(seen.index(m) < seen.index(final) for m in completions)
    return question["params"], [m["params"] for m in completions], final


# ------------------------------------------------------------------------------ completion


async def test_a_completed_connection_is_said_complete_though_the_scopes_fall_short(
    make_site: SiteFactory, http: httpx.AsyncClient, storage: Storage | None
) -> None:
    site = await make_site(hold=0.3, storage=storage)
    owner = site.auth.principal("alice")
    session = await opened(site, http)

    async def declined_on_the_page(flow_id: str) -> None:
        await site.flows.begin(flow_id, owner)
        await site.flows.fail(flow_id, None, owner=owner, declined=True)

    # A flow that did not complete is never said complete, even though the call is over.
    _, completions, final = await agreed_call(session, "scoped", declined_on_the_page)
    assert final["result"]["isError"] is True
    assert final["result"]["content"][0]["text"] == "You declined connecting your GitHub account."
    assert completions == []

    async def narrower_grant(flow_id: str) -> None:
        # The user unticked "gist" at the provider: the callback stores what was granted.
        await site.flows.begin(flow_id, owner)
        await site.vault.put_connection(owner, "github", access_token="gho_narrow", scopes=["repo"])
        await site.flows.complete(flow_id, owner=owner)

    question, completions, final = await agreed_call(session, "scoped", narrower_grant)
    assert final["result"]["isError"] is True
    assert final["result"]["content"][0]["text"].startswith("Your GitHub account was connected, but")
    assert completions == [{"elicitationId": question["elicitationId"]}]  # once, before the result


async def test_an_entered_secret_is_said_complete_though_the_handler_then_raises(
    make_site: SiteFactory, http: httpx.AsyncClient, storage: Storage | None
) -> None:
    site = await make_site(hold=0.3, storage=storage)

    # Registered before any request reaches the site (its server runs in another thread).
    @site.server.tool()
    async def summarize_then_fail(ctx: Context) -> str:
        await ctx.secret("openai_api_key", "Your OpenAI API key")
        raise RuntimeError("the upstream API is down")

    owner = site.auth.principal("alice")
    session = await opened(site, http)

    async def typed_on_the_page(flow_id: str) -> None:
        await asyncio.sleep(0.5)  # while the call waits for the page
        await browser_enters_secret(site.flows, site.vault, flow_id, owner, "openai_api_key", "sk-entered")

    question, completions, final = await agreed_call(session, "summarize_then_fail", typed_on_the_page)
    assert final["result"]["isError"] is True
    assert completions == [{"elicitationId": question["elicitationId"]}]
