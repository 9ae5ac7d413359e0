"""The whole stack with a person in Chromium: our MCP client (a real access token from the idp)
calls a tool on the kit server process; its answerer opens the URL question in the browser,
which signs in at the real idp and connects at the real third party; the client's retry
completes the tool. Also: Alice's link in Bob's browser, two tabs racing, a secret, and a
callback stripped of ``iss`` by the network on its way back."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from e2e_support import (
    BrowserAnswerer,
    Deployment,
    KitServer,
    TokenFor,
    continue_at_provider,
    flow_id_of,
    flow_status,
    new_page,
    open_signed_in,
)
from tests.oidc_provider import login_over_http, redirect_params, sign_in

from mcp_elicit.client import Client, UrlQuestion
from mcp_elicit.connect.flows import FlowStore
from mcp_elicit.connect.vault import Vault

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_happy_path_from_tool_call_to_result(
    deployment: Deployment, kit_server: KitServer, browser: Browser, vault: Vault, token_for: TokenFor
) -> None:
    token = await token_for("alice")
    page = await new_page(await browser.new_context())
    seen: dict[str, str] = {}

    async def alice_in_her_browser(question: UrlQuestion) -> str:
        assert question.url.startswith(f"{deployment.base_url}/connect/")
        assert "GitHub (test)" in question.message
        seen["confirm"] = await open_signed_in(page, question.url, "alice")
        await continue_at_provider(page, deployment.base_url, "alice")
        seen["done"] = await page.locator("main").inner_text()
        return page.url

    answerer = BrowserAnswerer(alice_in_her_browser)
    async with Client.connect(kit_server.mcp_url, headers=auth(token), answerer=answerer) as client:
        first = await client.call_tool("whoami_on_github")
        assert not first.is_error, first.raw
        assert first.text == "GitHub (test) account: alice"  # the stored token works at the API
        assert len({q.url for q in answerer.questions}) == 1
        # The confirmation page said who is signed in and what for; /done kept no code.
        assert "(alice)" in seen["confirm"]
        assert "E2E Tickets" in seen["confirm"]
        assert "GitHub (test)" in seen["confirm"]
        assert answerer.outcomes == [f"{deployment.base_url}/done"]
        assert "You can close this tab" in seen["done"]

        asked = len(answerer.questions)
        second = await client.call_tool("whoami_on_github")  # the connection is reused
        assert second.text == "GitHub (test) account: alice"
        assert len(answerer.questions) == asked

    connection = await vault.get_connection(deployment.principal("alice"), "github")
    assert connection is not None
    assert connection.provider_account_id == "alice"
    logs = deployment.logs()
    for value in (connection.access_token, connection.refresh_token, token):
        assert value
        assert value not in logs
        assert value not in first.text
        assert value not in str(first.raw)


async def test_alices_link_in_bobs_browser_is_refused(
    deployment: Deployment,
    kit_server: KitServer,
    browser: Browser,
    vault: Vault,
    flows: FlowStore,
    token_for: TokenFor,
) -> None:
    token = await token_for("alice")
    bobs_page = await new_page(await browser.new_context())
    alices_page = await new_page(await browser.new_context())
    alice, bob = deployment.principal("alice"), deployment.principal("bob")

    async def phished_then_done_by_alice(question: UrlQuestion) -> str:
        flow_id = flow_id_of(question.url)
        text = await open_signed_in(bobs_page, question.url, "bob")
        assert "This link was created for another account" in text
        assert "Do not continue" in text
        assert await bobs_page.get_by_role("button", name="Continue").count() == 0
        # The refusal is logged naming both accounts; nothing was stored, the flow is untouched.
        assert any(
            "SECURITY" in line and alice in line and bob in line for line in deployment.logs().splitlines()
        )
        assert await vault.get_connection(alice, "github") is None
        assert await vault.get_connection(bob, "github") is None
        assert await flow_status(flows, flow_id) == "pending"
        # By design the flow stays Alice's to finish: a refused view changes nothing.
        await open_signed_in(alices_page, question.url, "alice")
        await continue_at_provider(alices_page, deployment.base_url, "alice")
        return "done by alice"

    answerer = BrowserAnswerer(phished_then_done_by_alice)
    async with Client.connect(kit_server.mcp_url, headers=auth(token), answerer=answerer) as client:
        result = await client.call_tool("whoami_on_github")
    assert answerer.outcomes == ["done by alice"]
    assert result.text == "GitHub (test) account: alice"
    assert await vault.get_connection(bob, "github") is None


async def test_two_tabs_racing_both_reach_the_provider_and_exactly_one_connects(
    deployment: Deployment, kit_server: KitServer, browser: Browser, vault: Vault, token_for: TokenFor
) -> None:
    """Continue pressed in two tabs at once: each is an attempt of its own (a tab whose provider
    page was left must be able to start again), the one the server saw last counts. Finishing at
    the provider in both tabs connects exactly once: the other tab is refused, before its code is
    redeemed."""
    token = await token_for("alice")
    context = await browser.new_context()
    first, second = await new_page(context), await new_page(context)
    provider_origin = deployment.third_party.issuer
    done_url = f"{deployment.base_url}/done"

    async def finish(tab: Page) -> str:
        """Sign in at the provider; where the tab ends: /done, or our refusal."""
        await sign_in(tab, "alice")
        refused = tab.get_by_text("this attempt no longer counts").or_(tab.get_by_text("already been used"))
        await tab.wait_for_url(f"{deployment.base_url}/**")
        if tab.url == done_url:
            return "done"
        await refused.wait_for()
        return "refused"

    async def two_tabs(question: UrlQuestion) -> str:
        await open_signed_in(first, question.url, "alice")
        assert "Continue" in await open_signed_in(second, question.url, "alice")  # same session
        await asyncio.gather(*(tab.get_by_role("button", name="Continue").click() for tab in (first, second)))
        for tab in (first, second):
            await tab.locator("form#login-form").wait_for()
            assert tab.url.startswith(provider_origin)
        outcomes = [await finish(first), await finish(second)]
        assert sorted(outcomes) == ["done", "refused"], outcomes
        return "one tab"

    answerer = BrowserAnswerer(two_tabs)
    async with Client.connect(kit_server.mcp_url, headers=auth(token), answerer=answerer) as client:
        result = await client.call_tool("whoami_on_github")
    assert answerer.outcomes == ["one tab"]
    assert result.text == "GitHub (test) account: alice"
    assert len(await vault.list_connections(deployment.principal("alice"))) == 1


async def test_secret_capture_end_to_end(
    deployment: Deployment, kit_server: KitServer, browser: Browser, vault: Vault, token_for: TokenFor
) -> None:
    token = await token_for("alice")
    page = await new_page(await browser.new_context())
    value = "sk-test-0123456789abcdef"

    async def enter_key(question: UrlQuestion) -> str:
        assert question.url.startswith(f"{deployment.base_url}/secret/")
        text = await open_signed_in(page, question.url, "alice")
        assert "Your test API key" in text
        await page.locator('input[type="password"]').fill(value)
        await page.get_by_role("button", name="Save").click()
        await page.wait_for_url(f"{deployment.base_url}/done")
        return "saved"

    answerer = BrowserAnswerer(enter_key)
    async with Client.connect(kit_server.mcp_url, headers=auth(token), answerer=answerer) as client:
        result = await client.call_tool("store_key")
        assert result.text == f"Stored an API key of {len(value)} characters."
        again = await client.call_tool("store_key")  # stored: no second question
        assert again.text == result.text
    assert len(answerer.questions) == 1
    stored = await vault.get_secret(deployment.principal("alice"), "api_key")
    assert stored is not None
    assert stored.value == value
    assert value not in deployment.logs()
    assert value not in str(result.raw)


async def test_callback_without_iss_is_refused_in_the_browser(
    deployment: Deployment,
    kit_server: KitServer,
    browser: Browser,
    vault: Vault,
    flows: FlowStore,
    token_for: TokenFor,
) -> None:
    """The third party advertises ``authorization_response_iss_parameter_supported``. The
    browser's real authorization request is answered (over HTTP, as alice) and the callback,
    with ``iss`` removed, is opened in the browser with its own session and transaction cookies:
    refused, the flow fails, nothing is stored, and the tool reports it."""
    assert deployment.third_party.metadata["authorization_response_iss_parameter_supported"] is True
    token = await token_for("alice")
    page = await new_page(await browser.new_context())
    authorize_endpoint = deployment.third_party.endpoint("authorization")
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    seen: dict[str, str] = {}

    async def without_iss(question: UrlQuestion) -> str:
        await open_signed_in(page, question.url, "alice")
        await page.get_by_role("button", name="Continue").click()
        await page.locator("form#login-form").wait_for()  # at the third party now
        (authorize,) = [url for url in requested if url.startswith(authorize_endpoint + "?")]
        callback = await login_over_http(authorize, "alice")
        assert callback.startswith(f"{deployment.base_url}/oauth/github/callback?")
        params = redirect_params(callback)
        assert params["iss"] == deployment.third_party.issuer
        del params["iss"]
        seen["callback"] = callback
        await page.goto(f"{deployment.base_url}/oauth/github/callback?{urlencode(params)}")
        text = await page.locator("main").inner_text()
        assert "Something went wrong" in text
        assert await flow_status(flows, flow_id_of(question.url)) == "failed"
        return text

    answerer = BrowserAnswerer(without_iss)
    async with Client.connect(kit_server.mcp_url, headers=auth(token), answerer=answerer) as client:
        result = await client.call_tool("whoami_on_github")
    assert len(answerer.outcomes) == 1
    assert result.is_error
    assert "Connecting your GitHub (test) account did not complete" in result.text
    assert await vault.get_connection(deployment.principal("alice"), "github") is None
    logs = deployment.logs()
    assert "authorization with provider 'github' failed: iss-missing" in logs
    assert seen["callback"] not in logs  # the code is not logged either
