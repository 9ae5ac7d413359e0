"""The ephemeral-key warning is for servers served over HTTP, where a state can come back to
another instance or after a restart. A stdio server is one process for its client's whole
session: it used to print the warning at every start, first in every server log a client shows
and first in the stderr the CLI quotes when a tool fails."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_elicit.client import Client
from mcp_elicit.client.answerers import ScriptedAnswerer
from mcp_elicit.client.stdio import StdioTransport

SERVER = """
from mcp_elicit import Context, Server

app = Server("plain")


@app.tool()
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return "yes" if answer.accepted and answer.data["ok"] else "no"


app.run()
"""


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    path = tmp_path / "plain.py"
    path.write_text(SERVER)
    return [sys.executable, str(path)]


def without_keys() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MCP_ELICIT_STATE_KEYS")}


async def test_a_stdio_server_without_keys_seals_and_says_nothing(
    server: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MCP_ELICIT_STATE_KEYS", "MCP_ELICIT_STATE_KEYS_FILE"):
        monkeypatch.delenv(name, raising=False)
    transport = StdioTransport(server, display="plain.py", stderr="capture")
    yes = ScriptedAnswerer([{"action": "accept", "content": {"ok": True}}], modes={"form"})
    async with Client.connect(transport, answerer=yes, protocol="2026-07-28") as client:
        # A round trip through a requestState sealed with the process's own key.
        assert (await client.call_tool("ask")).text == "yes"
    assert transport.stderr_text == ""


def test_the_same_server_started_by_hand_with_a_closed_stdin_is_silent(server: list[str]) -> None:
    done = subprocess.run(server, input=b"", capture_output=True, timeout=30, env=without_keys(), check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
