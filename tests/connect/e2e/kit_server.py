"""A full-stack MCP server with the URL-mode kit, run as a real process by the e2e tests.

``python kit_server.py '<json config>'`` serves, with uvicorn (``Server.run_http``) on
``127.0.0.1:<port>``: ``/mcp`` behind :class:`JWTIdentity` (tokens of the real ``idp``), the RFC
9728 metadata, and the pages signing in at the ``idp`` (:class:`OidcLogin`) and connecting to the
real ``third_party`` provider. Config keys (all strings unless said):

* ``port`` (int), ``base_url`` (the public URL; several instances may share one),
* ``idp``, ``third_party``: issuers (both discovered at start-up, then pinned),
* ``login_client``, ``github_client``, ``gitlab_client``: ``{"client_id", "client_secret"}``
  registered at the idp (``<base>/login/callback``) and the third party
  (``<base>/oauth/<id>/callback``); ``gitlab`` is a second provider at the same issuer, for
  the mix-up test,
* ``state_key``, ``vault_key``: shared by every instance,
* ``storage``: ``{"kind": "sqlite", "dir": ...}`` or ``{"kind": "postgres", "dsn", "table",
  "prefix"}``,
* ``hold`` (float): seconds a retry waits for the browser step.

``SIGUSR1`` moves this process's wall clock 601 seconds ahead (every flow, transaction cookie
and sealed state then looks expired): the expiry tests use it on an instance of their own.
Logs go to stderr at INFO, so that tests can look for SECURITY lines and for leaked tokens.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import time
from typing import Any

# Before mcp_elicit is imported: its default ``clock=time.time`` arguments bind this function.
_real_time = time.time
_offset = [0.0]


def _shifted_time() -> float:
    return _real_time() + _offset[0]


def _advance(signum: int, frame: object) -> None:
    _offset[0] += 601.0


time.time = _shifted_time
signal.signal(signal.SIGUSR1, _advance)

import asyncio  # noqa: E402

import httpx  # noqa: E402

from mcp_elicit import Context, Server  # noqa: E402
from mcp_elicit.connect.flows import FlowStore  # noqa: E402
from mcp_elicit.connect.flows.postgres_store import PostgresFlowStore  # noqa: E402
from mcp_elicit.connect.flows.sqlite_store import SQLiteFlowStore  # noqa: E402
from mcp_elicit.connect.identity import JWTIdentity  # noqa: E402
from mcp_elicit.connect.kit import ConnectKit  # noqa: E402
from mcp_elicit.connect.oauth.discovery import discover  # noqa: E402
from mcp_elicit.connect.oauth.provider import OAuthProvider  # noqa: E402
from mcp_elicit.connect.pages import OidcLogin  # noqa: E402
from mcp_elicit.connect.vault import Vault  # noqa: E402
from mcp_elicit.server.errors import ToolError  # noqa: E402


async def _providers(config: dict[str, Any]) -> tuple[OAuthProvider, OAuthProvider, OAuthProvider]:
    login = await discover(
        config["idp"],
        id="login",
        client_id=config["login_client"]["client_id"],
        client_secret=config["login_client"]["client_secret"],
        scopes=("openid", "profile", "email"),
        title="Test IdP",
    )
    github = await discover(
        config["third_party"],
        id="github",
        client_id=config["github_client"]["client_id"],
        client_secret=config["github_client"]["client_secret"],
        scopes=("openid", "repo"),
        title="GitHub (test)",
    )
    gitlab = await discover(
        config["third_party"],
        id="gitlab",
        client_id=config["gitlab_client"]["client_id"],
        client_secret=config["gitlab_client"]["client_secret"],
        scopes=("openid", "repo"),
        title="GitLab (test)",
    )
    return login, github, gitlab


def _storage(config: dict[str, Any]) -> tuple[Vault, FlowStore]:
    storage = config["storage"]
    keys = [config["vault_key"]]
    if storage["kind"] == "postgres":
        vault = Vault.postgres(storage["dsn"], keys=keys, table_prefix=storage["prefix"])
        return vault, PostgresFlowStore(storage["dsn"], table=storage["table"])
    directory = storage["dir"]
    return Vault.sqlite(f"{directory}/vault.db", keys=keys), SQLiteFlowStore(f"{directory}/flows.db")


def build(config: dict[str, Any]) -> Server:
    base = config["base_url"]
    login, github, gitlab = asyncio.run(_providers(config))
    vault, flows = _storage(config)
    kit = ConnectKit(
        base_url=base,
        identity=JWTIdentity(issuer=config["idp"], jwks_url=login.jwks_url, audience=base + "/mcp"),
        login=OidcLogin(login),
        vault=vault,
        flows=flows,
        hold=float(config.get("hold", 10.0)),
        development=True,
    )
    kit.oauth_provider(github)
    kit.oauth_provider(gitlab)
    userinfo = github.userinfo_url
    assert userinfo is not None
    server = Server("e2e-kit", title="E2E Tickets", state_keys=[config["state_key"]], connect=kit)

    @server.tool()
    async def whoami_on_github(ctx: Context) -> str:
        """Which GitHub (test) account the user connected: calls its API with the token."""
        github_connection = await ctx.connection("github", reason="look up your account")
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.get(
                userinfo, headers={"Authorization": f"Bearer {github_connection.access_token}"}
            )
        if response.status_code != 200:
            raise ToolError(f"the GitHub (test) API refused the token ({response.status_code})")
        return f"GitHub (test) account: {response.json()['sub']}"

    @server.tool()
    async def store_key(ctx: Context) -> str:
        """Asks for an API key on the secret page; reports only its length."""
        key = await ctx.secret("api_key", "Your test API key")
        return f"Stored an API key of {len(key)} characters."

    return server


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s", force=True
    )
    server = build(config)
    print("READY", flush=True)  # providers discovered; uvicorn binds next
    server.run_http(host="127.0.0.1", port=int(config["port"]))


if __name__ == "__main__":
    main()
