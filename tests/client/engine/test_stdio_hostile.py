"""The stdio transport against real server processes that misbehave: an error whose id the server
could not read, a server killed by a signal."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest

from mcp_elicit.client import Client, McpClientError, ServerExitedError
from mcp_elicit.client.stdio import StdioTransport

# Our own server with a small message limit: a request over it gets -32600 with a null id
# (the server never read the id), one line per message.
SMALL_LIMIT_SERVER = textwrap.dedent(
    """
    from mcp_elicit import Server

    app = Server("small", state_keys=["stdio-hostile-tests-only-key-0123456789abcdefghij"],
                 max_message_bytes=4096)

    @app.tool()
    async def echo(text: str) -> str:
        return f"got {len(text)} characters"

    app.run()
    """
)

KILLS_ITSELF = textwrap.dedent(
    """
    import json, os, signal, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message["method"] == "server/discover":
            result = {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                      "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    """
)


def spawn(program: str) -> StdioTransport:
    return StdioTransport([sys.executable, "-c", program], display="test server", stderr="capture")


async def test_an_error_with_a_null_id_fails_the_one_request_in_flight_at_once() -> None:
    """Without it, the call waited for an answer that had already come, until max_total_seconds
    (30 minutes by default)."""
    async with await Client.connect(spawn(SMALL_LIMIT_SERVER)) as client:
        started = time.monotonic()
        with pytest.raises(McpClientError, match="longer than the limit of 4096 bytes") as caught:
            await client.call_tool("echo", {"text": "x" * 10_000})
        assert caught.value.code == -32600
        assert time.monotonic() - started < 5
        assert (await client.call_tool("echo", {"text": "short"})).text == "got 5 characters"


async def test_a_server_killed_by_a_signal_is_named_so() -> None:
    async with await Client.connect(spawn(KILLS_ITSELF)) as client:
        with pytest.raises(ServerExitedError, match=r"killed by signal SIGKILL") as caught:
            await client.call_tool("anything")
    assert caught.value.returncode == -9


STOPS_MID_MESSAGE = textwrap.dedent(
    """
    import sys
    sys.stdin.readline()
    sys.stdout.write('{"jsonrpc": "2.0", "id": ')
    sys.stdout.flush()
    """
)


async def test_a_server_that_exits_mid_message_is_one_error_that_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One line for the person (the client tries twice: a server may exit on a request it does
    not know before initialize), not a warning per attempt and then the error."""
    caplog.set_level("INFO", logger="mcp_elicit")
    with pytest.raises(ServerExitedError, match="exited in the middle of writing a message") as caught:
        await Client.connect(spawn(STOPS_MID_MESSAGE))
    assert caught.value.returncode == 0
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
