"""The pages in a real browser (Debian Chromium via Playwright): sign-in at the real MCP
authorization server, connection at the real third-party provider, the CSP (its style hash, and
form-action allowing the 303 to the provider), Alice's link opened in Bob's browser, the
confirmation's facts and its Decline, and a hostile client name shown as inert text."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from pages_support import Harness
from tests.oidc_provider import sign_in

from mcp_elicit.connect.client_label import client_label

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


async def test_back_from_the_provider_then_continue_again_connects_and_the_abandoned_tab_is_refused(
    pages: Harness, browser: Browser
) -> None:
    """The reported dead end, in Chromium: Continue, then Back from the provider's sign-in
    without an answer. The link's page offers Continue again (it used to be a 409 until the flow
    expired); meanwhile a second tab still shows the first attempt's provider page: once the new
    attempt has started, finishing there is refused and changes nothing, and the new one
    connects."""
    flow = await pages.connect_flow("alice")
    page, problems = await open_page(browser)
    link = f"{pages.base}/connect/{flow.id}"
    await signed_in_at(page, pages, f"/connect/{flow.id}", "alice")
    await page.get_by_role("button", name="Continue").click()
    await page.locator("form#login-form").wait_for()  # at the third party
    abandoned = await page.context.new_page()  # the first attempt, still open in another tab
    abandoned.set_default_timeout(TIMEOUT)
    await abandoned.goto(page.url)

    await page.go_back()
    await page.wait_for_url(link)
    text = await page.locator("main").inner_text()
    assert "You already pressed Continue on this link" in text
    await page.get_by_role("button", name="Continue").click()
    await page.locator("form#login-form").wait_for()
    assert (await pages.flows.get(flow.id)).attempt == 2

    await sign_in(abandoned, "alice")
    await abandoned.get_by_text("this attempt no longer counts").wait_for()
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None
    assert (await pages.flows.get(flow.id)).status == "in_progress"

    await sign_in(page, "alice")
    await page.wait_for_url(f"{pages.base}/done")
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is not None
    assert (await pages.flows.get(flow.id)).status == "completed"
    assert not [p for p in problems if "Content Security Policy" in p], problems


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


async def test_a_pasted_key_too_long_is_refused_not_cut_short(pages: Harness, browser: Browser) -> None:
    """The field had maxlength=4096: Chromium cut a longer paste to it without a word, and the
    key was stored cut short, as if whole. The server's refusal now reaches the person."""
    flow = await pages.secret_flow("alice")
    page, _ = await open_page(browser)
    await signed_in_at(page, pages, f"/secret/{flow.id}", "alice")
    await page.locator('input[type="password"]').fill("k" * 5000)
    await page.get_by_role("button", name="Save").click()
    await page.get_by_text("That is too long (at most 4096 characters).").wait_for()
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None
    assert (await pages.flows.get(flow.id)).status == "pending"


# ------------------------------------------------------------------ the confirmation, and Decline


async def test_the_confirmation_says_who_asks_and_where_continue_goes_and_decline_ends_it(
    pages: Harness, browser: Browser
) -> None:
    flow = await pages.connect_flow("alice", client=client_label("Claude Desktop", None))
    page, problems = await open_page(browser)
    await signed_in_at(page, pages, f"/connect/{flow.id}", "alice")
    second = await page.context.new_page()  # a second tab on the same confirmation
    await second.goto(f"{pages.base}/connect/{flow.id}")
    main = page.locator("main")
    text = await main.inner_text()
    host = urlsplit(pages.third_party.endpoint("authorization")).netloc
    assert text.startswith("DEMO ONLY: development mode.")  # the label comes first
    assert await main.locator("p.demo").is_visible()
    assert (
        "An app that calls itself “Claude Desktop” (self-reported: not verified) asks you, through the "
        "server Tickets MCP, to connect your GitHub (test) account."
    ) in text
    assert f"Continue takes you to {host}, where GitHub (test) asks you to approve." in text
    assert await page.get_by_role("button", name="Continue").is_visible()

    await page.get_by_role("button", name="Decline").click()
    await page.get_by_role("heading", name="Declined").wait_for()
    assert page.url == f"{pages.base}/connect/{flow.id}"  # answered here: never at the provider
    assert "Nothing was connected" in await main.inner_text()
    assert (await pages.flows.get(flow.id)).status == "declined"

    # Continue in the other tab, after the Decline: refused, and the browser stays here.
    await second.get_by_role("button", name="Continue").click()
    await second.get_by_role("heading", name="Request declined").wait_for()
    assert second.url.startswith(pages.base)
    assert (await pages.flows.get(flow.id)).status == "declined"
    assert await pages.vault.get_connection(pages.principal("alice").key, "github") is None
    assert not [p for p in problems if "Content Security Policy" in p], problems


async def test_a_hostile_client_name_is_inert_and_cut_short_in_chromium(
    pages: Harness, browser: Browser
) -> None:
    hostile = (
        '<script>alert("x")</script><img src=x onerror=alert(1)>\u202eexe.gnp\u2066' + " Claude Desktop" * 40
    )
    flow = await pages.connect_flow("alice", client=client_label(hostile, None))
    page, _ = await open_page(browser)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await signed_in_at(page, pages, f"/connect/{flow.id}", "alice")
    name = page.locator("strong.named")
    shown = await name.inner_text()
    assert shown.startswith('“<script>alert("x")</script><img src=x onerror=alert(1)>exe.gnp')
    assert shown.endswith("…”")
    assert len(shown) <= 64 + 2  # the cut name and its quotes
    assert await page.locator("main script, main img").count() == 0  # text, not elements
    text = await page.locator("main").inner_text()
    assert "\u202e" not in text
    assert "\u2066" not in text
    # The long name wraps inside the page instead of pushing it wider.
    box, frame = await name.bounding_box(), await page.locator("main").bounding_box()
    assert box is not None
    assert frame is not None
    assert box["x"] + box["width"] <= frame["x"] + frame["width"] + 1
    assert dialogs == []


async def test_decline_on_the_secret_page_needs_nothing_typed(pages: Harness, browser: Browser) -> None:
    flow = await pages.secret_flow("alice")
    page, _ = await open_page(browser)
    await signed_in_at(page, pages, f"/secret/{flow.id}", "alice")
    # The password field is required for Save; Decline skips that check (formnovalidate).
    await page.get_by_role("button", name="Decline").click()
    await page.get_by_role("heading", name="Declined").wait_for()
    assert "Nothing was stored" in await page.locator("main").inner_text()
    assert (await pages.flows.get(flow.id)).status == "declined"
    assert await pages.vault.get_secret(pages.principal("alice").key, "openai_api_key") is None
