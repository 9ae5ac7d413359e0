"""Elicitation on the 2026-07-28 wire, against a real stdio server process (``spec_server.py``).

Statements of the spec page proved here, end to end over stdio:

* "Capabilities": ``{}`` means form only; a server must not send a mode the request did not
  declare, and a request that needs one gets -32021 naming it.
* "URL mode" in 2026-07-28: the entry is ``{method, params: {mode, message, url}}`` (no
  ``elicitationId``, no JSON-RPC envelope), ``accept`` carries no content, and the server never
  sends a request or a completion notification of its own (both removed from this revision).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcp_elicit.wire.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from tests.server_process import PY, piped_server

SERVER = Path(__file__).with_name("spec_server.py")
CONNECT_URL = "https://mcp.example.com/connect/3f9a2c7e1b"
FORM_AND_URL: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


class Peer:
    """A raw 2026-07-28 client over the server's stdin/stdout: one JSON-RPC message per line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = itertools.count(1)

    async def call(self, tool: str, capabilities: dict[str, Any], **extra: Any) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }
        request_id = next(self._ids)
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"_meta": meta, "name": tool, "arguments": {}, **extra},
        }
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        line = await asyncio.wait_for(self.process.stdout.readline(), 10)
        reply: dict[str, Any] = json.loads(line)
        assert reply["id"] == request_id, reply  # nothing else came first (no request of its own)
        return reply

    async def rest_of_stdout(self) -> list[dict[str, Any]]:
        """Close stdin (the server exits at EOF) and read what else it wrote."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        rest = await asyncio.wait_for(self.process.stdout.read(), 10)
        await asyncio.wait_for(self.process.wait(), 10)
        return [json.loads(line) for line in rest.splitlines() if line.strip()]


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    async with piped_server([PY, str(SERVER)]) as process:
        yield Peer(process)


def text_of(reply: dict[str, Any]) -> str:
    result = reply["result"]
    assert result["resultType"] == "complete", result
    return "".join(block["text"] for block in result["content"])


async def test_url_mode_entry_has_the_2026_shape_and_accept_is_consent_without_content(peer: Peer) -> None:
    first = (await peer.call("connect_account", FORM_AND_URL))["result"]
    assert first["resultType"] == "input_required"
    # Exactly {method, params}: no elicitationId (removed in 2026-07-28), no jsonrpc/id.
    assert first["inputRequests"] == {
        "link": {
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Connect your account", "url": CONNECT_URL},
        }
    }
    # A client that (wrongly) sends content with a URL-mode accept: the server ignores it.
    retry = await peer.call(
        "connect_account",
        FORM_AND_URL,
        inputResponses={"link": {"action": "accept", "content": {"api_key": "sk-should-be-ignored"}}},
        requestState=first["requestState"],
    )
    assert text_of(retry) == "accept content=None"
    # Nothing else ever went out: no notifications/elicitation/complete, no server-side request.
    assert await peer.rest_of_stdout() == []


@pytest.mark.parametrize(
    ("tool", "capabilities", "required"),
    [
        ("ask_name", {}, {"elicitation": {"form": {}}}),  # no elicitation capability at all
        ("ask_name", {"sampling": {}}, {"elicitation": {"form": {}}}),
        ("ask_name", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),  # URL-only client
        ("connect_account", {"elicitation": {}}, {"elicitation": {"url": {}}}),  # {} is form only
        ("connect_account", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
    ],
)
async def test_an_undeclared_mode_is_never_sent_and_the_error_names_it(
    peer: Peer, tool: str, capabilities: dict[str, Any], required: dict[str, Any]
) -> None:
    reply = await peer.call(tool, capabilities)
    assert "result" not in reply
    assert reply["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert reply["error"]["data"] == {"requiredCapabilities": required}


@pytest.mark.parametrize(
    ("capabilities", "outcome"),
    [
        ({"elicitation": {}}, "fallback"),
        ({"elicitation": {"form": {}}}, "fallback"),
        ({"elicitation": {"url": {}}}, "url"),
        (FORM_AND_URL, "url"),
    ],
)
async def test_a_handler_sees_exactly_the_modes_declared(
    peer: Peer, capabilities: dict[str, Any], outcome: str
) -> None:
    result = (await peer.call("connect_or_fallback", capabilities))["result"]
    if outcome == "fallback":
        assert text_of({"result": result}) == "fallback: no URL mode declared"
    else:
        assert [entry["params"]["mode"] for entry in result["inputRequests"].values()] == ["url"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_handler_and_content_is_ignored(peer: Peer, action: str) -> None:
    first = (await peer.call("ask_name", {"elicitation": {}}))["result"]
    assert first["inputRequests"]["name"]["params"]["mode"] == "form"
    retry = await peer.call(
        "ask_name",
        {"elicitation": {}},
        inputResponses={"name": {"action": action, "content": {"name": "Mallory"}}},
        requestState=first["requestState"],
    )
    assert text_of(retry) == action


async def test_a_low_level_url_entry_never_carries_2025_members(peer: Peer) -> None:
    reply = await peer.call("legacy_url_entry", FORM_AND_URL)
    entry = reply["result"]["inputRequests"]["link"]
    assert set(entry) == {"method", "params"}
    assert entry["params"] == {
        "mode": "url",
        "message": "Connect",
        "url": "https://mcp.example.com/connect/1",
    }
