"""The URL-mode guides run as written: their ``python`` blocks build a real server, served on
127.0.0.1, called with our client, with the browser part done by Debian Chromium (Playwright).

``docs/connect-account.md`` connects the demo CI service (a real OAuth server, DEMO ONLY) and
``docs/ask-for-api-key.md`` captures a key on the secret page. Blocks fenced as ``py`` or
``text`` are illustrations (production settings, shell commands) and are not run.
"""

from __future__ import annotations

import re
import socket
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.client import Answer, Client
from mcp_elicit.client.questions import FormQuestion, UrlQuestion
from mcp_elicit.demo.ci_provider import DemoCIProvider, DemoClient
from tests.docs.markdown_blocks import run_python_blocks
from tests.helpers import InProcessServer, bound_socket

DOCS = Path(__file__).resolve().parents[2] / "docs"
BEARER = {"Authorization": "Bearer example-token"}


def load(guide: str, monkeypatch: pytest.MonkeyPatch, **env: str) -> types.ModuleType:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return run_python_blocks(guide)


def _socket() -> tuple[socket.socket, str]:
    """A socket for a server on 127.0.0.1, and the base URL it will serve at."""
    sock = bound_socket()
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


class BrowserAnswerer:
    """Answers URL questions the way a person would: opens the link in a real browser and clicks
    through the kit's pages (DEMO ONLY sign-in, confirmation, the provider, /done)."""

    modes = frozenset({"url"})

    def __init__(self, context: Any, walk: Any) -> None:
        self.context = context
        self.walk = walk
        self.urls: list[str] = []

    async def answer_form(self, question: FormQuestion) -> Answer:
        raise AssertionError(f"no form expected: {question.message}")

    async def answer_url(self, question: UrlQuestion) -> Answer:
        self.urls.append(question.url)
        page = await self.context.new_page()
        try:
            await page.goto(question.url)
            await page.get_by_role("link", name="Sign in").click()
            await page.get_by_role("button", name="Continue as demo-user").click()
            await self.walk(page)
            await page.wait_for_url(re.compile(r"/done$"))
            assert "code=" not in page.url
        finally:
            await page.close()
        return Answer("accept")


@pytest.fixture
def ci_provider() -> Iterator[tuple[DemoCIProvider, socket.socket, str]]:
    """The demo CI service on its own port, with the guide's client registered once the
    server's address is known."""
    sock, base = _socket()
    provider = DemoCIProvider(base)
    with InProcessServer(provider, sock=sock):
        yield provider, sock, base


async def test_connect_account_guide_runs_in_a_real_browser(
    monkeypatch: pytest.MonkeyPatch, browser: Any, ci_provider: tuple[DemoCIProvider, socket.socket, str]
) -> None:
    provider, _, ci = ci_provider
    sock, base = _socket()
    provider.add_client(DemoClient("example-client", "example-secret", (f"{base}/oauth/ci/callback",)))
    guide = load("connect-account.md", monkeypatch, EXAMPLE_BASE_URL=base, EXAMPLE_CI_URL=ci)

    async def consent(page: Any) -> None:
        await page.get_by_role("button", name="Continue").click()
        await page.get_by_role("button", name="Allow").click()

    context = await browser.new_context()
    answerer = BrowserAnswerer(context, consent)
    with InProcessServer(guide.app.asgi(), sock=sock):
        async with Client.connect(f"{base}/mcp", headers=BEARER, answerer=answerer) as client:
            first = await client.call_tool("latest_build")
            assert not first.is_error, first.text
            assert first.text == "Build #812 passed (account demo-user)"
            assert len(answerer.urls) == 1
            assert answerer.urls[0].startswith(f"{base}/connect/")
            again = await client.call_tool("latest_build")
            assert again.text == first.text
            assert len(answerer.urls) == 1  # the connection is reused: no second link
            connection = await guide.kit.vault.get_connection("urn:mcp-elicit:development|demo-user", "ci")
            assert connection is not None
            assert connection.access_token not in first.text
            assert (await client.call_tool("disconnect_ci")).text == "Disconnected."
            # Revoked upstream, not only forgotten here.
            async with httpx.AsyncClient() as http:
                reply = await http.get(
                    f"{ci}/api/builds", headers={"Authorization": f"Bearer {connection.access_token}"}
                )
            assert reply.status_code == 401
    await context.close()
    await guide.kit.aclose()


async def test_api_key_guide_runs_in_a_real_browser(monkeypatch: pytest.MonkeyPatch, browser: Any) -> None:
    sock, base = _socket()
    guide = load("ask-for-api-key.md", monkeypatch, EXAMPLE_BASE_URL=base)
    typed = "sk-test-" + "x" * 24

    async def save(page: Any) -> None:
        await page.get_by_label(re.compile("model provider", re.IGNORECASE)).fill(typed)
        await page.get_by_role("button", name="Save").click()

    context = await browser.new_context()
    answerer = BrowserAnswerer(context, save)
    with InProcessServer(guide.app.asgi(), sock=sock):
        async with Client.connect(f"{base}/mcp", headers=BEARER, answerer=answerer) as client:
            first = await client.call_tool("summarize", {"text": "a b c"})
            assert first.text == f"Summary of 3 words, made with a key of {len(typed)} characters."
            assert answerer.urls[0].startswith(f"{base}/secret/")
            second = await client.call_tool("summarize", {"text": "d e"})
            assert second.text == f"Summary of 2 words, made with a key of {len(typed)} characters."
            assert len(answerer.urls) == 1
            assert (await client.call_tool("forget_key")).text == "Key deleted."
            assert (await client.call_tool("forget_key")).text == "No key was stored."
    await context.close()
    await guide.kit.aclose()
