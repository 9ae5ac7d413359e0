"""Helpers for the full-stack tests: the kit server as a real process (``kit_server.py``), raw MCP
calls over HTTP, sign-in on the pages over HTTP (httpx + the real idp) and in Chromium, and an
answerer for our MCP client that does the browser part of a URL question.

Everything listens on 127.0.0.1 only. Each server process (started by
:func:`tests.server_process.start_server`) logs to a file (its stdout and stderr), which the
tests read for SECURITY lines and search for leaked tokens.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import httpx
from tests.helpers import free_port
from tests.oidc_provider import OidcProvider, login_over_http, sign_in
from tests.server_process import PY, ServerProcess, start_server

from mcp_elicit.client.questions import Answer, FormQuestion, UrlQuestion
from mcp_elicit.connect.flows import FlowStore, PendingFlow
from mcp_elicit.connect.flows.postgres_store import PostgresFlowStore
from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore
from mcp_elicit.connect.vault import Vault
from mcp_elicit.wire.http import encode_header_value

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page

SCRIPT = Path(__file__).with_name("kit_server.py")
VERSION = "2026-07-28"
TIMEOUT_MS = 15_000
SESSION_COOKIE = "mcp-elicit-session"  # the loopback development name (no __Host-, no Secure)

# ------------------------------------------------------------------------------ the server process


@dataclass
class Storage:
    """Where a deployment keeps its vault and flows; the tests open their own objects on it."""

    kind: str  # "sqlite" | "postgres"
    dir: str = ""
    dsn: str = ""
    table: str = ""
    prefix: str = ""

    def config(self) -> dict[str, str]:
        if self.kind == "sqlite":
            return {"kind": "sqlite", "dir": self.dir}
        return {"kind": "postgres", "dsn": self.dsn, "table": self.table, "prefix": self.prefix}

    def vault(self, key: str) -> Vault:
        if self.kind == "sqlite":
            return Vault.sqlite(f"{self.dir}/vault.db", keys=[key])
        return Vault.postgres(self.dsn, keys=[key], table_prefix=self.prefix)

    def flows(self) -> FlowStore:
        if self.kind == "sqlite":
            return SQLiteFlowStore(f"{self.dir}/flows.db")
        return PostgresFlowStore(self.dsn, table=self.table)

    def close_open_flows(self) -> None:
        """Mark every open flow failed (tests share users; at most 3 open flows per user)."""
        update = "UPDATE {} SET status = 'failed' WHERE status IN ('pending', 'in_progress')"
        if self.kind == "sqlite":
            with sqlite3.connect(f"{self.dir}/flows.db") as conn:
                found = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mcp_elicit_flows'"
                if conn.execute(found).fetchone():  # the store creates it on first use
                    conn.execute(update.format("mcp_elicit_flows"))
            return
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            if conn.execute("SELECT to_regclass(%s)", (self.table,)).fetchone() != (None,):
                conn.execute(sql.SQL(update).format(sql.Identifier(self.table)))


@dataclass
class KitServer:
    """One running ``kit_server.py``."""

    running: ServerProcess
    base_url: str  # the public URL (shared by instances behind one name)

    @property
    def port(self) -> int:
        assert self.running.port is not None
        return self.running.port

    @property
    def own_url(self) -> str:
        return self.running.base

    @property
    def mcp_url(self) -> str:
        return self.running.url

    def log_text(self) -> str:
        return self.running.log_text()

    def advance_clock(self) -> None:
        """Move this process's wall clock 601 s ahead (see kit_server.py)."""
        self.running.process.send_signal(signal.SIGUSR1)
        time.sleep(0.2)

    def stop(self) -> None:
        self.running.stop()


@dataclass
class Deployment:
    """What every instance of one deployment shares: public URL, keys, clients, storage."""

    idp: OidcProvider
    third_party: OidcProvider
    base_url: str
    storage: Storage
    state_key: str
    vault_key: str
    clients: dict[str, dict[str, Any]]
    log_dir: Path
    servers: list[KitServer] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        idp: OidcProvider,
        third_party: OidcProvider,
        storage: Storage,
        log_dir: Path,
        *,
        port: int | None = None,
    ) -> tuple[Deployment, int]:
        from mcp_elicit.state import KeyRing

        port = port or free_port()
        base = f"http://127.0.0.1:{port}"
        clients = {
            "login": idp.register_client([f"{base}/login/callback"], client_name="E2E pages"),
            "github": third_party.register_client(
                [f"{base}/oauth/github/callback"], scope="openid repo", client_name="E2E github"
            ),
            "gitlab": third_party.register_client(
                [f"{base}/oauth/gitlab/callback"], scope="openid repo", client_name="E2E gitlab"
            ),
        }
        deployment = cls(
            idp,
            third_party,
            base,
            storage,
            KeyRing.generate_secret(),
            KeyRing.generate_secret(),
            clients,
            log_dir,
        )
        return deployment, port

    @property
    def resource(self) -> str:
        return self.base_url + "/mcp"

    def principal(self, user: str) -> str:
        return f"{self.idp.issuer}|{user}"

    def start(self, port: int, *, hold: float = 10.0) -> KitServer:
        """Start one instance on ``port`` publishing :attr:`base_url`."""

        def pair(name: str) -> dict[str, str]:
            return {k: self.clients[name][k] for k in ("client_id", "client_secret")}

        config = {
            "port": port,
            "base_url": self.base_url,
            "idp": self.idp.issuer,
            "third_party": self.third_party.issuer,
            "login_client": pair("login"),
            "github_client": pair("github"),
            "gitlab_client": pair("gitlab"),
            "state_key": self.state_key,
            "vault_key": self.vault_key,
            "storage": self.storage.config(),
            "hold": hold,
        }
        log = self.log_dir / f"kit-server-{port}.log"
        running = start_server([PY, str(SCRIPT), json.dumps(config)], log=log, port=port)
        server = KitServer(running, self.base_url)
        self.servers.append(server)
        return server

    def stop(self) -> None:
        for server in self.servers:
            server.stop()

    def logs(self) -> str:
        return "\n".join(server.log_text() for server in self.servers)

    def vault(self) -> Vault:
        return self.storage.vault(self.vault_key)

    def flows(self) -> FlowStore:
        return self.storage.flows()

    async def token(self, user: str) -> str:
        """A real MCP access token from the idp (``aud`` = this deployment's ``/mcp``)."""
        from tests.oidc_provider import mcp_access_token

        return await mcp_access_token(self.idp, user, self.resource)


# ------------------------------------------------------------------------------ raw MCP over HTTP


_ids = iter(range(1, 1_000_000))


async def mcp_rpc(
    http: httpx.AsyncClient,
    mcp_url: str,
    token: str,
    tool: str,
    *,
    state: str | None = None,
    responses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``tools/call`` round; the whole JSON-RPC response."""
    params: dict[str, Any] = {
        "name": tool,
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
            "io.modelcontextprotocol/clientInfo": {
                "name": "e2e-raw",
                "title": "E2E raw client",
                "version": "1",
            },
        },
    }
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    message = {"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params}
    response = await http.post(
        mcp_url,
        content=json.dumps(message),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
            "mcp-method": "tools/call",
            "mcp-name": encode_header_value(tool),
            "authorization": f"Bearer {token}",
        },
        timeout=30,
    )
    data: dict[str, Any] = response.json()
    return data


async def mcp_call(
    http: httpx.AsyncClient,
    mcp_url: str,
    token: str,
    tool: str,
    *,
    state: str | None = None,
    responses: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``tools/call`` round; the JSON-RPC result (fails on a JSON-RPC error)."""
    data = await mcp_rpc(http, mcp_url, token, tool, state=state, responses=responses)
    assert "result" in data, data
    result: dict[str, Any] = data["result"]
    return result


def url_question(result: dict[str, Any]) -> tuple[str, str]:
    """(key, url) of the one URL elicitation of an input-required result."""
    assert result["resultType"] == "input_required", result
    ((key, request),) = result["inputRequests"].items()
    assert request["params"]["mode"] == "url", request
    return key, str(request["params"]["url"])


def result_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content", []))


def flow_id_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[1]


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


# ------------------------------------------------------------------------------ pages over HTTP


def set_cookies(response: httpx.Response) -> dict[str, str]:
    """``name -> name=value`` of the cookies a response sets (attributes dropped)."""
    found: dict[str, str] = {}
    for line in response.headers.get_list("set-cookie"):
        pair = line.split(";", 1)[0]
        found[pair.split("=", 1)[0]] = pair
    return found


def form_csrf(page: str, action: str) -> str:
    start = page.index(f'action="{action}"')
    match = re.search(r'name="csrf" value="([^"]*)"', page[start:])
    assert match, page
    return unescape(match.group(1))


async def http_sign_in(http: httpx.AsyncClient, server: KitServer, user: str, next_path: str) -> str:
    """Sign in on the server's pages as ``user`` at the real idp, over HTTP; the session cookie
    (``name=value``)."""
    start = await http.get(f"{server.own_url}/login?{urlencode({'next': next_path})}")
    assert start.status_code == 303, start.text
    (login_cookie,) = [v for n, v in set_cookies(start).items() if n.startswith("mcp-elicit-login-")]
    callback = await login_over_http(start.headers["location"], user)
    done = await http.get(server.own_url + path_of(callback), headers={"cookie": login_cookie})
    assert done.status_code == 303, done.text
    return set_cookies(done)[SESSION_COOKIE]


async def http_continue(
    http: httpx.AsyncClient, server: KitServer, session: str, flow_id: str
) -> tuple[str, str]:
    """Load the confirmation page and POST its "Continue"; (provider authorize URL, tx cookie)."""
    page = await http.get(f"{server.own_url}/connect/{flow_id}", headers={"cookie": session})
    assert page.status_code == 200, page.text
    token = form_csrf(page.text, f"/connect/{flow_id}")
    response = await http.post(
        f"{server.own_url}/connect/{flow_id}",
        data={"csrf": token},
        headers={"cookie": session, "origin": server.base_url},
    )
    assert response.status_code == 303, response.text
    (tx,) = [v for n, v in set_cookies(response).items() if n.startswith("mcp-elicit-tx-")]
    return response.headers["location"], tx


# ------------------------------------------------------------------------------ the browser


async def new_page(context: BrowserContext) -> Page:
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    return page


async def open_signed_in(page: Page, url: str, user: str) -> str:
    """Open a flow URL, sign in at the idp as ``user`` if asked, and return the page's text."""
    await page.goto(url)
    sign_in_link = page.get_by_role("link", name="Sign in")
    if await sign_in_link.count():
        await sign_in_link.click()
        await sign_in(page, user)
        await page.wait_for_url(url)
    return await page.locator("main").inner_text()


async def continue_at_provider(page: Page, base_url: str, user: str) -> None:
    """Press "Continue" on the confirmation page and sign in at the third party as ``user``;
    returns on ``/done``."""
    await page.get_by_role("button", name="Continue").click()
    await sign_in(page, user)
    await page.wait_for_url(f"{base_url}/done")


TokenFor = Callable[[str], Awaitable[str]]
"""``await token_for("alice")``: a real MCP access token (the ``token_for`` fixture)."""
BrowserStep = Callable[[UrlQuestion], Awaitable[str]]


class BrowserAnswerer:
    """An answerer for our MCP client whose URL questions are done by ``step`` (which drives
    Chromium) before answering ``accept``. A URL asked again (the same URL re-issued while the
    browser step was still running) is accepted without a second browser step."""

    def __init__(self, step: BrowserStep) -> None:
        self._step = step
        self.questions: list[UrlQuestion] = []
        self.outcomes: list[str] = []

    @property
    def modes(self) -> frozenset[str]:
        return frozenset({"url"})

    async def answer_form(self, question: FormQuestion) -> Answer:
        raise AssertionError(f"no form question expected: {question.message}")

    async def answer_url(self, question: UrlQuestion) -> Answer:
        seen = any(q.url == question.url for q in self.questions)
        self.questions.append(question)
        if not seen:
            self.outcomes.append(await self._step(question))
        return Answer("accept")


async def eventually(check: Callable[[], Awaitable[bool]], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.05)
    return False


async def flow_status(flows: FlowStore, flow_id: str) -> str:
    flow: PendingFlow = await flows.get(flow_id)
    return flow.status
