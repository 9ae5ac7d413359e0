"""The pages in a real browser (Debian Chromium via Playwright): sign-in at the real MCP
authorization server, connection at the real third-party provider, the CSP (its style hash, and
form-action allowing the 303 to the provider), and Alice's link opened in Bob's browser."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pytest
from pages_support import Harness
from tests.oidc_provider import sign_in

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

TIMEOUT = 15_000


async def open_page(browser: Browser) -> tuple[Page, list[str]]:
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    return page, problems


async def signed_in_at(page: Page, pages: Harness, path: str, user: str) -> None:
    await page.goto(pages.base + path)
    await page.get_by_role("link", name="Sign in").click()
    await sign_in(page, user)
    await page.wait_for_url(pages.base + path)


async def test_alice_connects_her_account(pages: Harness, browser: Browser) -> None:
    flow = await pages.connect_flow("alice", client="Claude Desktop")
    page, problems = await open_page(browser)
    await signed_in_at(page, pages, f"/connect/{flow.id}", "alice")
    text = await page.locator("main").inner_text()
    assert "Signed in as Alice Example · alice@example.test (alice)" in text
    assert "Claude Desktop" in text
    assert "Tickets MCP" in text
    assert "GitHub (test)" in text
    assert (await pages.flows.get(flow.id)).status == "pending"

    await page.get_by_role("button", name="Continue").click()
    await sign_in(page, "alice")  # at the third party: a separate account there
    await page.wait_for_url(f"{pages.base}/done")
    assert "You can close this tab" in await page.locator("main").inner_text()
    assert "code=" not in page.url

    connection = await pages.vault.get_connection(pages.principal("alice").key, "github")
    assert connection is not None
    assert connection.scopes == ("repo",)
    assert (await pages.flows.get(flow.id)).status == "completed"
    assert not [p for p in problems if "Content Security Policy" in p], problems


async def test_alices_link_in_bobs_browser_is_refused(
    pages: Harness, browser: Browser, caplog: pytest.LogCaptureFixture
) -> None:
    flow = await pages.connect_flow("alice")
    page, _ = await open_page(browser)
    with caplog.at_level(logging.WARNING, logger="mcp_elicit.connect.pages"):
        await signed_in_at(page, pages, f"/connect/{flow.id}", "bob")
    text = await page.locator("main").inner_text()
    assert "This link was created for another account" in text
    assert "Do not continue" in text
    assert await page.get_by_role("button", name="Continue").count() == 0
    assert any(
        pages.principal("alice").key in r.getMessage() and pages.principal("bob").key in r.getMessage()
        for r in caplog.records
    )
    assert (await pages.flows.get(flow.id)).status == "pending"
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None
    assert await pages.vault.get_connection(pages.principal("bob").key, "github") is None

    # "Not you? Sign out" returns to the sign-in page of the same link.
    await page.get_by_role("button", name="Sign out").click()
    await page.wait_for_url(f"{pages.base}/connect/{flow.id}")
    assert await page.get_by_role("link", name="Sign in").count() == 1


async def test_alice_enters_a_secret(pages: Harness, browser: Browser) -> None:
    flow = await pages.secret_flow("alice")
    page, problems = await open_page(browser)
    await signed_in_at(page, pages, f"/secret/{flow.id}", "alice")
    await page.locator('input[type="password"]').fill("sk-live-abcdef0123456789")
    await page.get_by_role("button", name="Save").click()
    await page.wait_for_url(f"{pages.base}/done")
    stored = await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key")
    assert stored is not None
    assert stored.value == "sk-live-abcdef0123456789"
    assert (await pages.flows.get(flow.id)).status == "completed"
    assert not [p for p in problems if "Content Security Policy" in p], problems
