"""The demo end to end with a person in Chromium: our client calls ``file_issue`` on the served
demo site, the forms are answered as the scripted walk-through does, and the link is opened in
the browser. Every page on the way says DEMO ONLY first; the confirmation names the app as it
calls itself (a hostile ``clientInfo`` is shown inert), the server, the provider and the host
Continue goes to, and Continue goes there; Decline there reaches the tool as a decline on the
client's next retry."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from mcp_elicit.cli.demo import ScriptedWalkThrough
from mcp_elicit.client import Client
from mcp_elicit.client.questions import Answer, UrlQuestion
from mcp_elicit.demo.site import DemoSite

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

TIMEOUT = 15_000
BANNER = "DEMO ONLY: development mode."
CONNECTED = "CI service connected as demo-user; last build #812 passed."
HOSTILE_TITLE = '<img src=x onerror=alert(1)>\u202eIDE\u2066 <script>alert("x")</script>' + " Evil" * 100

Walk = Callable[["Page", UrlQuestion], Awaitable[None]]


@pytest.fixture
async def served() -> AsyncIterator[DemoSite]:
    site = DemoSite.create()
    async with site.running():
        yield site


class InChromium(ScriptedWalkThrough):
    """The forms as the scripted walk-through answers them; the link opened in Chromium and
    walked by ``walk``, then answered ``accept`` (the person agreed to open it)."""

    def __init__(self, page: Page, walk: Walk) -> None:
        super().__init__()
        self.page = page
        self.walk = walk
        self.urls: list[str] = []

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.urls.append(question.url)
        if len(self.urls) == 1:
            await self.walk(self.page, question)
        return Answer("accept")


async def open_page(browser: Browser) -> tuple[Page, list[str]]:
    page = await (await browser.new_context()).new_page()
    page.set_default_timeout(TIMEOUT)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    return page, dialogs


async def labelled(page: Page) -> str:
    """The page's text, which must open with the DEMO ONLY label (visible, above the heading)."""
    main = page.locator("main, body").first
    text = await main.inner_text()
    assert text.lstrip().startswith("DEMO ONLY"), (page.url, text)
    assert await page.get_by_text("DEMO ONLY", exact=False).first.is_visible()
    assert (await page.title()).startswith("DEMO ONLY · "), page.url
    return text


async def signed_in_confirmation(page: Page, url: str) -> str:
    await page.goto(url)
    assert BANNER in await labelled(page)  # "Sign in to continue": labelled too
    await page.get_by_role("link", name="Sign in").click()
    assert "no real sign-in" in await labelled(page)  # the development sign-in
    await page.get_by_role("button", name="Continue as demo-user").click()
    await page.get_by_role("heading", name="Connect Demo CI service (demo only)").wait_for()
    return await labelled(page)


async def call(site: DemoSite, answerer: InChromium, **client: Any) -> Any:
    headers = {"Authorization": f"Bearer {site.bearer}"}
    async with Client.connect(site.mcp_url, answerer=answerer, headers=headers, **client) as connected:
        return await connected.call_tool("file_issue", {"title": "Login button"})


async def test_every_page_says_demo_only_and_continue_goes_where_the_page_said(
    served: DemoSite, browser: Browser
) -> None:
    page, dialogs = await open_page(browser)
    seen: dict[str, str] = {}

    async def connect(page: Page, question: UrlQuestion) -> None:
        text = await signed_in_confirmation(page, question.url)
        assert (
            "An app that calls itself “mcp-elicit” (self-reported: not verified) asks you, through "
            "the server Demo issue tracker (mcp-elicit), to connect your Demo CI service (demo only) "
            "account."
        ) in text
        ci_host = urlsplit(served.ci_url).netloc
        assert (
            f"Continue takes you to {ci_host}, where Demo CI service (demo only) asks you to approve." in text
        )
        assert await page.get_by_role("button", name="Decline").is_visible()
        await page.get_by_role("button", name="Continue").click()
        await page.get_by_role("button", name="Allow").wait_for()
        assert urlsplit(page.url).netloc == ci_host  # where the confirmation said
        seen["consent"] = await labelled(page)
        await page.get_by_role("button", name="Allow").click()
        await page.wait_for_url(f"{served.base_url}/done")
        seen["done"] = await labelled(page)

    answerer = InChromium(page, connect)
    result = await call(served, answerer)
    assert not result.is_error, result.text
    assert result.text.endswith(CONNECTED)
    # The CI service's consent names the application by its registered name, not "An application".
    assert "The application Demo issue tracker (mcp-elicit) (client " in seen["consent"]
    assert "asks for builds:read access to your demo CI account" in seen["consent"]
    assert "You can close this tab" in seen["done"]
    assert dialogs == []


async def test_decline_on_the_page_reaches_the_tool_and_a_hostile_client_name_stays_inert(
    served: DemoSite, browser: Browser
) -> None:
    page, dialogs = await open_page(browser)
    flows: list[str] = []

    async def decline(page: Page, question: UrlQuestion) -> None:
        flows.append(question.url.rsplit("/", 1)[1])
        text = await signed_in_confirmation(page, question.url)
        name = await page.locator("strong.named").inner_text()
        # The client's own title, as text: cut short, the bidi controls gone, no element made of it.
        assert name.startswith('“<img src=x onerror=alert(1)>IDE <script>alert("x")</script> Ev')
        assert name.endswith("…”")
        assert len(name) <= 66
        assert "(self-reported: not verified)" in text
        assert "\u202e" not in text
        assert await page.locator("main img, main script").count() == 0
        await page.get_by_role("button", name="Decline").click()
        await page.get_by_role("heading", name="Declined").wait_for()
        declined = await labelled(page)
        assert "You declined connecting your Demo CI service (demo only) account. Nothing was connected." in (
            declined
        )
        assert page.url.startswith(served.base_url)  # never at the CI service

    answerer = InChromium(page, decline)
    result = await call(served, answerer, client_info={"name": "evil-client", "title": HOSTILE_TITLE})
    # The client's retry after the Decline: the tool's ctx.connection got the decline (the demo
    # tool files the issue all the same and says why CI is not connected).
    assert not result.is_error, result.text
    assert "Filed issue #101" in result.text
    assert "CI service not connected: You declined connecting your Demo CI service (demo only) account." in (
        result.text
    )
    assert len(answerer.urls) == 1  # declined once: not asked again
    (flow_id,) = flows
    assert (await served.kit.flows.get(flow_id)).status == "declined"
    assert await served.kit.vault.get_connection(served.identity.principal.key, "ci") is None
    assert dialogs == []
