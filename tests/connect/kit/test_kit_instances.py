"""Two server instances sharing a PostgreSQL flow store and vault (and state keys): a flow
started on one is held, re-issued and finished on the other; the pages' part runs on a third
set of store objects. Unique tables per test, dropped afterwards."""

from __future__ import annotations

import asyncio
import time

import httpx
from kit_sites import SiteFactory, Storage, fp
from kit_support import (
    ACCEPT,
    McpCaller,
    browser_connects,
    flow_id_of,
    text_of,
    url_request,
)


async def test_a_flow_moves_between_instances(
    make_site: SiteFactory, pg_storage: Storage, http: httpx.AsyncClient
) -> None:
    first_instance = await make_site(storage=pg_storage, hold=0.4)
    public = first_instance.kit.base_url  # both instances publish the same URL (a load balancer)
    second_instance = await make_site(storage=pg_storage, hold=8.0, base_url=public)
    assert second_instance.kit.resource == first_instance.kit.resource
    on_first = first_instance.caller(http, "alice")
    on_second = McpCaller(http, second_instance.mcp_url, on_first.token)  # same person, same token

    start = await on_first.call("list_repos")
    key0, url, _ = url_request(start)
    assert url.startswith(f"{public}/connect/")

    # Instance 1 holds, then re-issues the same URL.
    again = await on_first.call("list_repos", state=start["requestState"], responses={key0: ACCEPT})
    key1, url1, _ = url_request(again)
    assert url1 == url

    # Instance 2 holds the next retry; the browser finishes meanwhile (on the "pages" objects).
    began = time.monotonic()
    held = asyncio.ensure_future(
        on_second.call("list_repos", state=again["requestState"], responses={key1: ACCEPT})
    )
    await asyncio.sleep(0.5)
    assert not held.done()
    owner = first_instance.auth.principal("alice")
    await browser_connects(first_instance.flows, first_instance.vault, flow_id_of(url), owner, "gho_shared")
    done = await held
    assert time.monotonic() - began < 4.0
    assert done["structuredContent"]["token_fingerprint"] == fp("gho_shared")

    # Both instances now see the connection: no elicitation on either.
    for caller in (on_first, on_second):
        result = await caller.call("list_repos")
        assert result["resultType"] == "complete", result
    assert "gho_shared" not in text_of(done)
