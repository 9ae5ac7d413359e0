"""Two kit server processes behind one public URL, sharing a PostgreSQL vault and flow store and
the same state keys: the flow starts on instance A (its URL names A), the browser finishes it on
A, and our MCP client's retry, sent to instance B, is held there and completes from the shared
store. Unique tables per run, dropped afterwards."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import httpx
import pytest
from e2e_support import (
    BrowserAnswerer,
    Deployment,
    Storage,
    TokenFor,
    continue_at_provider,
    new_page,
    open_signed_in,
)
from playwright.async_api import Browser
from tests.helpers import find_pg_dsn, free_port
from tests.oidc_provider import OidcProvider
from tests.store_support import flow_tables

from mcp_elicit.client import Client, UrlQuestion
from mcp_elicit.connect.vault import Vault


def drop_tables(dsn: str, table: str, prefix: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        names = [*flow_tables(table)] + [
            str(row[0])
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE %s",
                (prefix.replace("_", r"\_") + "%",),
            ).fetchall()
        ]
        for name in names:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def deployment(
    idp: OidcProvider, third_party: OidcProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """Instance A (``servers[0]``, whose address is the public URL) and instance B
    (``servers[1]``, another port, the same public URL, storage and keys)."""
    dsn = find_pg_dsn("a flow moving between kit server instances")
    run = uuid.uuid4().hex[:10]
    storage = Storage("postgres", dsn=dsn, table=f"e2e_kit_flows_{run}", prefix=f"e2e_kit_vault_{run}_")
    made, port = Deployment.create(idp, third_party, storage, tmp_path_factory.mktemp("kit-e2e-pg"))
    try:
        made.start(port)
        made.start(free_port(), hold=10.0)
        yield made
    finally:
        made.stop()
        drop_tables(dsn, storage.table, storage.prefix)


class Switch(httpx.AsyncBaseTransport):
    """Sends the MCP client's requests to one instance or the other (a load balancer's choice)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sent: list[tuple[int, str]] = []  # (instance port, MCP method)
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(port=self.port)
        self.sent.append((self.port, request.headers.get("mcp-method", "")))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_flow_started_on_one_instance_finishes_on_another(
    deployment: Deployment, browser: Browser, vault: Vault, token_for: TokenFor
) -> None:
    first, second = deployment.servers
    assert first.base_url == second.base_url == first.own_url
    token = await token_for("alice")
    page = await new_page(await browser.new_context())
    switch = Switch(first.port)
    browsing: list[asyncio.Task[None]] = []

    async def in_the_browser(url: str) -> None:
        await open_signed_in(page, url, "alice")
        await continue_at_provider(page, deployment.base_url, "alice")

    async def browse_while_b_holds(question: UrlQuestion) -> str:
        assert question.url.startswith(f"{first.own_url}/connect/")
        switch.port = second.port  # the retry goes to B...
        browsing.append(asyncio.create_task(in_the_browser(question.url)))  # ...while A's pages work
        return "accepted before the browser finished"

    answerer = BrowserAnswerer(browse_while_b_holds)
    async with (
        httpx.AsyncClient(transport=switch, timeout=30) as http,
        Client.connect(
            first.mcp_url, headers={"Authorization": f"Bearer {token}"}, answerer=answerer, http_client=http
        ) as client,
    ):
        result = await client.call_tool("whoami_on_github")
        assert result.text == "GitHub (test) account: alice", result.raw
        await browsing[0]
        calls = [port for port, method in switch.sent if method == "tools/call"]
        assert calls[0] == first.port
        assert set(calls[1:]) == {second.port}
        assert len({q.url for q in answerer.questions}) == 1

        # Both instances now see the connection: no question on either.
        asked = len(answerer.questions)
        for port in (second.port, first.port):
            switch.port = port
            again = await client.call_tool("whoami_on_github")
            assert again.text == "GitHub (test) account: alice"
        assert len(answerer.questions) == asked

    logs_a, logs_b = first.log_text(), second.log_text()
    assert "sent to provider" in logs_a  # the pages' part ran on A
    assert "completed; finishing whoami_on_github" in logs_b  # B saw it in the shared store
    connection = await vault.get_connection(deployment.principal("alice"), "github")
    assert connection is not None
    for value in (connection.access_token, connection.refresh_token, token):
        assert value
        assert value not in logs_a
        assert value not in logs_b
