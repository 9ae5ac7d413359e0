"""The URL-mode guides run as written: their ``python`` blocks build a real server, served on
127.0.0.1, called with our client, with the browser part done by Debian Chromium (Playwright).

``docs/connect-account.md`` connects the demo CI service (a real OAuth server, DEMO ONLY) and
``docs/ask-for-api-key.md`` captures a key on the secret page. Each guide's ``mcp-elicit call``
command runs too, in a real terminal, with the browser part done at the address it prints. The
other ``py`` blocks (production settings against real services) are compiled, not run.
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
from tests.client.answerers._pty import Terminal
from tests.docs.doc_shell import in_terminal, reader_env, run_shell
from tests.docs.markdown_blocks import blocks, run_python_blocks
from tests.helpers import InProcessServer, bound_socket, free_port
from tests.server_process import running_server

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
        await through_the_pages(self.context, question.url, self.walk)
        return Answer("accept")


async def through_the_pages(context: Any, url: str, walk: Any) -> None:
    """Open ``url`` in a new page of ``context``, sign in as the demo user, ``walk`` the pages
    of the step itself, and end on ``/done`` (with no OAuth code left in the address)."""
    page = await context.new_page()
    try:
        await page.goto(url)
        await page.get_by_role("link", name="Sign in").click()
        await page.get_by_role("button", name="Continue as demo-user").click()
        await walk(page)
        await page.wait_for_url(re.compile(r"/done$"))
        assert "code=" not in page.url
    finally:
        await page.close()


async def consent_to_ci(page: Any) -> None:
    """The connect guide's step: confirm on the kit's page, then allow at the demo CI service."""
    await page.get_by_role("button", name="Continue").click()
    await page.get_by_role("button", name="Allow").click()


def save_key(typed: str) -> Any:
    """The API-key guide's step: type ``typed`` into the key field and save it."""

    async def save(page: Any) -> None:
        await page.get_by_label(re.compile("model provider", re.IGNORECASE)).fill(typed)
        await page.get_by_role("button", name="Save").click()

    return save


@pytest.fixture
def ci_provider() -> Iterator[tuple[DemoCIProvider, socket.socket, str]]:
    """The demo CI service on its own port, with the guide's client registered once the
    server's address is known."""
    sock, base = _socket()
    provider = DemoCIProvider(base)
    with InProcessServer(provider, sock=sock):
        yield provider, sock, base


async def test_the_guides_disconnect_says_so_when_the_provider_cannot_revoke(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CI service down (nothing listens at its address): disconnect_ci failed with "an
    unexpected error" (RevocationFailed uncaught); the guide's tool now says what happened, and
    the grant is kept for a later try."""
    sock, base = _socket()
    dead = f"http://127.0.0.1:{free_port()}"
    guide = load("connect-account.md", monkeypatch, EXAMPLE_BASE_URL=base, EXAMPLE_CI_URL=dead)
    owner = "urn:mcp-elicit:development|demo-user"
    await guide.kit.vault.put_connection(owner, "ci", access_token="ci-token-0123456789")
    with InProcessServer(guide.app.asgi(), sock=sock):
        async with Client.connect(f"{base}/mcp", headers=BEARER) as client:
            result = await client.call_tool("disconnect_ci")
    assert result.is_error
    assert result.text == "The CI service could not revoke the access now; try again later."
    assert await guide.kit.vault.get_connection(owner, "ci") is not None
    await guide.kit.aclose()


async def test_connect_account_guide_runs_in_a_real_browser(
    monkeypatch: pytest.MonkeyPatch, browser: Any, ci_provider: tuple[DemoCIProvider, socket.socket, str]
) -> None:
    provider, _, ci = ci_provider
    sock, base = _socket()
    provider.add_client(DemoClient("example-client", "example-secret", (f"{base}/oauth/ci/callback",)))
    guide = load("connect-account.md", monkeypatch, EXAMPLE_BASE_URL=base, EXAMPLE_CI_URL=ci)

    context = await browser.new_context()
    answerer = BrowserAnswerer(context, consent_to_ci)
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

    context = await browser.new_context()
    answerer = BrowserAnswerer(context, save_key(typed))
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


def guide_command(guide: str, base: str) -> str:
    """The guide's ``mcp-elicit call`` command, pointed at ``base`` (the guide's fixed port may be
    taken on a test machine; nothing else is changed)."""
    [command] = [b.code for b in blocks(DOCS / guide, "sh") if b.code.startswith("mcp-elicit call ")]
    return re.sub(r"http://127\.0\.0\.1:\d+", base, command)


async def run_guide_command(command: str, tmp_path: Path, browse: Any, printed: str) -> Terminal:
    """The command as the guide says to run it, in a terminal: open the link (consenting to the
    loopback address, as ``--allow-loopback-http`` allows), do the browser part at the address
    it prints (no browser is launched from a test: CI, or no display), press Enter for done,
    and wait for ``printed``."""
    terminal = in_terminal(command, tmp_path)
    try:
        terminal.expect("Open in browser")
        terminal.type("o")
        terminal.expect("Open it anyway?")
        terminal.type("y")
        # The line before it names the reason (longer under CI=true), so where it wraps varies.
        terminal.expect("yourself:")
        terminal.expect("\n", timeout=5)
        url = next(
            line.strip()
            for line in reversed(terminal.screen.history() + terminal.screen.display())
            if line.strip().startswith("http://127.0.0.1:")
        )
        await browse(url)
        terminal.type("\r")
        terminal.expect(printed, timeout=30)
    finally:
        status = terminal.close()
    assert status == 0, terminal.seen[-3000:]
    return terminal


async def test_the_api_key_guides_command_in_a_terminal(
    monkeypatch: pytest.MonkeyPatch, browser: Any, tmp_path: Path
) -> None:
    """docs/ask-for-api-key.md's ``sh`` block, run as written against the guide's server."""
    sock, base = _socket()
    guide = load("ask-for-api-key.md", monkeypatch, EXAMPLE_BASE_URL=base)
    typed = "sk-test-" + "y" * 30
    context = await browser.new_context()

    async def browse(url: str) -> None:
        await through_the_pages(context, url, save_key(typed))

    command = guide_command("ask-for-api-key.md", base)
    with InProcessServer(guide.app.asgi(), sock=sock):
        await run_guide_command(
            command, tmp_path, browse, f"Summary of 3 words, made with a key of {len(typed)} characters."
        )
        again = run_shell(command, tmp_path)  # "The second call does not ask."
    await context.close()
    await guide.kit.aclose()
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"Summary of 3 words, made with a key of {len(typed)} characters.\n"
    assert "asks" not in again.stderr


async def test_the_connect_guides_commands_in_a_terminal(
    monkeypatch: pytest.MonkeyPatch, browser: Any, tmp_path: Path
) -> None:
    """docs/connect-account.md's two ``sh`` blocks, run as written: the demo CI service started by
    its command (on free ports instead of the guide's 8771 and 8770), then the guide's server
    called with its ``mcp-elicit call`` command."""
    sock, base = _socket()
    ci_port = free_port()
    ci = f"http://127.0.0.1:{ci_port}"
    [start] = [b.code for b in blocks(DOCS / "connect-account.md", "sh") if "demo.ci_provider" in b.code]
    start = start.replace("--port 8771", f"--port {ci_port}").replace("http://127.0.0.1:8770", base)
    guide = load("connect-account.md", monkeypatch, EXAMPLE_BASE_URL=base, EXAMPLE_CI_URL=ci)
    context = await browser.new_context()

    async def browse(url: str) -> None:
        await through_the_pages(context, url, consent_to_ci)

    command = guide_command("connect-account.md", base)
    with (
        running_server(["bash", "-c", start], log=tmp_path / "ci.log", port=ci_port, env=reader_env()),
        InProcessServer(guide.app.asgi(), sock=sock),
    ):
        await run_guide_command(command, tmp_path, browse, "Build #812 passed (account demo-user)")
        again = run_shell(command, tmp_path)  # "Call it again: no link this time"
    await context.close()
    await guide.kit.aclose()
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Build #812 passed (account demo-user)\n"
    assert "asks" not in again.stderr
