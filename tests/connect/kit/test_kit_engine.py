"""The engine side of the kit, driven in-process (``Client.connect`` to the server's ``/mcp``, the
user given as a validated token would name them): no principal, store outages, disconnect,
programming errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kit_sites import VAULT_KEY, build_server, offline_kit
from tests.helpers import Script, signed_in

from mcp_elicit import Context
from mcp_elicit.client import Client, McpClientError, ToolResult
from mcp_elicit.connect.kit import ConnectKit
from mcp_elicit.connect.vault import Connection
from mcp_elicit.server.app import Server

ALICE = "https://auth.example.com|alice"


@pytest.fixture
async def kit(tmp_path: Path) -> AsyncIterator[ConnectKit]:
    made = offline_kit(tmp_path)
    revoked: list[Connection] = []

    async def revoke(connection: Connection) -> None:
        revoked.append(connection)

    made.oauth_provider(
        "github",
        authorize_url="https://github.example/authorize",
        token_url="https://github.example/token",
        client_id="c",
        revoker=revoke,
    )
    made.oauth_provider(
        "plain",
        authorize_url="https://plain.example/authorize",
        token_url="https://plain.example/token",
        client_id="c",
    )
    made.revoked = revoked  # type: ignore[attr-defined]
    try:
        yield made
    finally:
        await made.aclose()


@pytest.fixture
def server(kit: ConnectKit) -> Server:
    return build_server(kit)


async def call(
    server: Server, tool: str, arguments: dict[str, str] | None = None, *, user: str | None = ALICE
) -> ToolResult:
    """``tool`` called by ``user`` (None: nobody signed in), whose client answers nothing."""
    async with Client.connect(signed_in(server, user), answerer=Script()) as client:
        return await client.call_tool(tool, arguments)


async def refused(server: Server, tool: str, arguments: dict[str, str] | None = None) -> McpClientError:
    with pytest.raises(McpClientError) as info:
        await call(server, tool, arguments)
    return info.value


async def test_no_principal_is_a_tool_error(server: Server) -> None:
    for tool, arguments in (("list_repos", {}), ("summarize", {"text": "x"})):
        result = await call(server, tool, arguments, user=None)
        assert result.is_error is True
        assert "needs a signed-in user" in result.text
        assert "configure identity" in result.text


async def test_flow_store_outage_is_a_retryable_server_error(server: Server, kit: ConnectKit) -> None:
    await kit.flows.close()
    error = await refused(server, "list_repos")
    assert error.code == -32603
    assert error.data == {"reason": "connect_store_unavailable", "retryable": True}
    assert "retry" in error.message


async def test_vault_outage_is_a_retryable_server_error(server: Server, kit: ConnectKit) -> None:
    await kit.vault.close()
    error = await refused(server, "summarize", {"text": "x"})
    assert error.code == -32603
    assert error.data is not None
    assert error.data["retryable"] is True


async def test_disconnect_revokes_then_deletes(kit: ConnectKit) -> None:
    await kit.vault.put_connection(ALICE, "github", access_token="gho_x", refresh_token="ghr_x")
    assert await kit.disconnect(ALICE, "github") is True
    assert [c.provider for c in kit.revoked] == ["github"]  # type: ignore[attr-defined]
    assert await kit.vault.get_connection(ALICE, "github") is None
    assert await kit.disconnect(ALICE, "github") is False
    # The standard revoker: a provider without a revocation endpoint is only deleted here.
    await kit.vault.put_connection(ALICE, "plain", access_token="tok")
    assert await kit.disconnect(ALICE, "plain") is True
    assert await kit.vault.get_connection(ALICE, "plain") is None


async def test_an_invalid_secret_name_is_a_clear_error(kit: ConnectKit) -> None:
    app = Server("names", state_keys=[VAULT_KEY], connect=kit)

    @app.tool()
    async def bad(ctx: Context) -> str:
        return await ctx.secret("no spaces allowed", "A key")

    @app.tool()
    async def underscored(ctx: Context) -> str:
        return await ctx.secret("_key", "A key")  # only allowed characters, but not first

    result = await call(app, "bad")
    assert result.is_error is True
    assert "not a valid secret name" in result.text
    result = await call(app, "underscored")
    assert result.is_error is True
    assert result.text.endswith("'-', starting with a letter or digit)")


@pytest.mark.parametrize(
    ("scopes", "needle"),
    [
        (["bad scope"], "not an OAuth scope token (RFC 6749 §3.3): 'bad scope'"),
        ("repo", "scopes must be a sequence of scope tokens, not a str"),
    ],
)
async def test_invalid_scopes_are_a_clear_error(kit: ConnectKit, scopes: object, needle: str) -> None:
    app = Server("scopes", state_keys=[VAULT_KEY], connect=kit)

    @app.tool()
    async def bad(ctx: Context) -> str:
        connection = await ctx.connection("github", scopes=scopes)  # type: ignore[arg-type]
        return connection.access_token

    result = await call(app, "bad")
    assert result.is_error is True
    assert f"ctx.connection('github'): scopes: {needle}" in result.text
