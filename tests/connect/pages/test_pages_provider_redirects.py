"""A provider whose authorize endpoint sends the browser on to another origin (an API host that
redirects to the sign-in host): "Continue" must still reach it in Chromium.

Chromium applies ``form-action`` to every redirect after a form POST, the provider's own ones
included. Before, the confirmation page allowed only ``'self'`` and the providers' configured
origins: the click did nothing visible (a CSP violation in the console) while the POST had
already moved the flow to "in progress", so the link was stuck until it expired. Real Chromium,
the pages on uvicorn (127.0.0.1), the real third-party provider behind a redirecting host.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from jar_support import BrowserJar
from pages_support import FakeClock, Harness, build_app
from tests.helpers import InProcessServer, bound_socket
from tests.oidc_provider import OidcProvider, sign_in

from mcp_elicit.connect.flows import SQLiteFlowStore
from mcp_elicit.connect.vault import Vault
from mcp_elicit.state import KeyRing

if TYPE_CHECKING:
    from playwright.async_api import Browser

TIMEOUT = 15_000


class RedirectingHost:
    """``GET /authorize?...`` → 302 to the real provider's authorization endpoint, same query."""

    def __init__(self, target: str) -> None:
        self.target = target

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        location = f"{self.target}?{scope['query_string'].decode('ascii')}"
        headers = [(b"location", location.encode("ascii")), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 302, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
async def redirected(
    tmp_path: Path, idp: OidcProvider, third_party: OidcProvider
) -> AsyncIterator[tuple[Harness, str]]:
    """The pages with github's authorize URL on ``localhost`` (another origin than the provider's
    ``127.0.0.1``), which redirects to the provider."""
    keys = KeyRing.from_secrets([KeyRing.generate_secret()])
    clock = FakeClock()
    flows = SQLiteFlowStore(tmp_path / "flows.db", clock=clock)
    vault = Vault.sqlite(tmp_path / "vault.db", keys=keys, clock=clock)
    hop = RedirectingHost(third_party.endpoint("authorization"))
    hop_sock, sock = bound_socket(), bound_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    hop_origin = f"http://localhost:{hop_sock.getsockname()[1]}"
    app = build_app(
        base, idp, third_party, flows, vault, keys, clock, github_authorize_url=f"{hop_origin}/authorize"
    )
    try:
        async with InProcessServer(hop, hop_sock), InProcessServer(app, sock):
            yield Harness(base, app, flows, vault, keys, idp, third_party, clock), hop_origin
    finally:
        await vault.close()
        await flows.close()
        sock.close()
        hop_sock.close()


async def test_continue_follows_the_providers_own_redirect_to_another_origin(
    redirected: tuple[Harness, str], browser: Browser
) -> None:
    pages, _ = redirected
    flow = await pages.connect_flow("alice")
    context = await browser.new_context()
    await context.add_cookies([{"url": pages.base, **_cookie(pages.cookie("alice"))}])
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    await page.goto(f"{pages.base}/connect/{flow.id}")
    await page.get_by_role("button", name="Continue").click()
    await page.locator("form#login-form").wait_for(timeout=5_000)  # the provider's sign-in page
    assert not [p for p in problems if "Content Security Policy" in p], problems
    await sign_in(page, "alice")
    await page.wait_for_url(f"{pages.base}/done")
    connection = await pages.vault.get_connection(pages.principal("alice").key, "github")
    assert connection is not None
    assert (await pages.flows.get(flow.id)).status == "completed"


async def test_only_the_confirmation_page_lets_a_form_end_off_site(
    redirected: tuple[Harness, str],
) -> None:
    pages, hop_origin = redirected
    connect = await pages.connect_flow("alice")
    secret = await pages.secret_flow("alice")
    cookie = {"cookie": pages.cookie("alice")}
    async with httpx.AsyncClient(base_url=pages.base, cookies=BrowserJar.no_jar(), timeout=15) as http:
        confirm = await http.get(f"/connect/{connect.id}", headers=cookie)
        others = [
            await http.get(f"/secret/{secret.id}", headers=cookie),  # a password form: never off-site
            await http.get(f"/connect/{connect.id}"),  # signed out: a sign-in link, no form
            await http.get(f"/connect/{connect.id}", headers={"cookie": pages.cookie("bob")}),
            await http.get("/done"),
        ]
    assert confirm.status_code == 200
    assert "Continue" in confirm.text
    assert _form_action(confirm) == f"'self' {hop_origin} https: http:"
    for response in others:
        assert _form_action(response) == "'self'", response.request.url


def _cookie(pair: str) -> dict[str, str]:
    name, _, value = pair.partition("=")
    return {"name": name, "value": value}


def _form_action(response: httpx.Response) -> str:
    (directive,) = [
        part.strip()
        for part in response.headers["content-security-policy"].split(";")
        if part.strip().startswith("form-action ")
    ]
    return directive.removeprefix("form-action ")
