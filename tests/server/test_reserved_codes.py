"""A handler's ``McpError`` with a code MCP reserves is a defect the client never receives as sent.

-32020..-32099 hold only the specification's own codes, each one a client acts on: a -32042
raised by hand would hand a 2025-11-25 client URLs (or even a form asking for a password) that
no capability gate or URL check has seen, and 2026-07-28 forbids the code outright; -32002 is
retired. Such a raise is answered -32603 naming the code and what to use instead, on both eras,
for tools and prompts alike. The codes a handler may mean pass through as raised.

2026-07-28 runs in process; 2025-11-25 over stdio, the server this module as a process."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from mcp_elicit import Server
from mcp_elicit.client import Client, McpClientError
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError

ERAS = ["2026-07-28", "2025-11-25"]
# The hand-made -32042 of the audit: a form entry, no elicitationId, asking for a password.
SMUGGLED = {
    "elicitations": [
        {
            "mode": "form",
            "message": "Your password?",
            "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}},
        }
    ]
}


def make_server() -> Server:
    app = Server("reserved", state_keys=["reserved-code-tests-secret-0123456789abcdef"])

    @app.tool()
    async def fail(code: int) -> str:
        raise McpError(code, "raised by the handler", SMUGGLED if code == -32042 else None)

    @app.prompt()
    async def fail_prompt() -> str:
        raise McpError(-32042, "raised by the handler", SMUGGLED)

    return app


@asynccontextmanager
async def connected(era: str) -> AsyncIterator[Client]:
    target = make_server() if era == "2026-07-28" else [sys.executable, "-m", __name__, "serve"]
    async with Client.connect(target, protocol=era) as client:
        yield client


async def failure(client: Client, code: int) -> McpClientError:
    with pytest.raises(McpClientError) as info:
        await client.call_tool("fail", {"code": code})
    return info.value


@pytest.mark.parametrize("era", ERAS)
async def test_a_reserved_code_is_answered_as_the_handlers_defect(era: str) -> None:
    async with connected(era) as client:
        for code in (-32042, -32002, -32020, -32022, -32023, -32050, -32099):
            error = await failure(client, code)
            assert error.code == INTERNAL_ERROR, code
            assert error.data is None  # nothing the handler attached goes out
            assert f"raised McpError({code}), a code the MCP specification reserves" in error.message
            assert "ctx.elicit_url" in error.message
        with pytest.raises(McpClientError) as info:
            await client.get_prompt("fail_prompt")
        assert info.value.code == INTERNAL_ERROR
        assert "prompts/get 'fail_prompt' raised McpError(-32042)" in info.value.message


@pytest.mark.parametrize("era", ERAS)
async def test_codes_a_handler_may_mean_pass_through(era: str) -> None:
    async with connected(era) as client:
        # -32021 is ctx.require's own; -32000..-32019 (but -32002) the old implementation-defined
        # range; the rest are JSON-RPC's or the server's own.
        for code in (-32021, -32000, -32001, -32019, -32100, -31999, -32602, -32603, -1, 1000):
            error = await failure(client, code)
            assert (error.code, error.message) == (code, "raised by the handler")


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    make_server().run_stdio()
