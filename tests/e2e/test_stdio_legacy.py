"""stdio, 2025-11-25: the first request that says chooses the era of the process.

An ``initialize`` opens a 2025-11-25 session for the whole process: the server's questions are
then requests on stdout with ids of their own space, interleaved with the client's requests
still running, and answered by responses on stdin. A request with the 2026-07-28 envelope
makes the process 2026-07-28 instead. A real server process, driven line by line.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.e2e.test_stdio import StdioPeer, running_peer

LEGACY = "2025-11-25"


def initialize(version: str = LEGACY) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "by-hand", "version": "1"},
        },
    }


async def opened(peer: StdioPeer) -> dict[str, Any]:
    await peer.send(initialize())
    answer = await peer.receive()
    await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


async def test_initialize_makes_the_process_2025_11_25(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        answer = await opened(peer)
        assert answer["id"] == "init"
        assert answer["result"]["protocolVersion"] == LEGACY
        assert answer["result"]["serverInfo"]["name"] == "e2e"
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        listed = await peer.receive()
        assert "resultType" not in listed["result"]
        # A 2026-07-28 request on this process is refused (the era was chosen).
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
            }
        )
        refused = await peer.receive()
        assert refused["error"]["code"] == -32600
        assert "serves MCP 2025-11-25" in refused["error"]["message"]
        await peer.send({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}})
        assert (await peer.receive())["error"]["code"] == -32601  # a 2026-only method


async def test_a_2026_process_refuses_initialize(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        discover = await peer.call(1, "server/discover", {})
        assert discover["result"]["supportedVersions"] == ["2026-07-28"]
        await peer.send(initialize())
        refused = await peer.receive()
        assert refused["error"]["code"] == -32022
        assert refused["error"]["data"]["requested"] == LEGACY


async def test_questions_are_requests_interleaved_with_the_clients(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
        first = await peer.receive()
        assert first["method"] == "elicitation/create"
        assert first["params"]["message"] == "First name?"
        # While the call waits, the client's other requests are answered.
        await peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await peer.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        # A response for an id the server never sent changes nothing.
        await peer.send(
            {"jsonrpc": "2.0", "id": 999, "result": {"action": "accept", "content": {"name": "X"}}}
        )
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": first["id"],
                "result": {"action": "accept", "content": {"name": "Grace"}},
            }
        )
        second = await peer.receive()
        assert second["method"] == "elicitation/create"
        assert second["id"] != first["id"]
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": second["id"],
                "result": {"action": "accept", "content": {"name": "Hopper"}},
            }
        )
        final = await peer.receive()
        assert final == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"content": [{"type": "text", "text": "Hello, Grace Hopper!"}], "isError": False},
        }


async def test_a_cancelled_call_withdraws_its_question(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "greet"}})
        question = await peer.receive()
        assert question["method"] == "elicitation/create"
        await peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        withdrawn = await peer.receive()
        assert withdrawn["method"] == "notifications/cancelled"
        assert withdrawn["params"]["requestId"] == question["id"]
        # Nothing is answered for the cancelled call; the process goes on.
        await peer.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})
        assert (await peer.receive())["id"] == 8


async def test_eof_ends_a_call_waiting_for_an_answer_at_once(tmp_path: Path) -> None:
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
        assert (await peer.receive())["method"] == "elicitation/create"
        assert peer.process.stdin is not None
        peer.process.stdin.close()
        code = await asyncio.wait_for(peer.process.wait(), 10)
        assert code == 0
        assert peer.process.stdout is not None
        rest = (await peer.process.stdout.read()).decode()
        for line in rest.splitlines():
            message = json.loads(line)
            assert message.get("id") == 1  # at most the call's own error, nothing else


async def test_logging_set_level_takes_only_the_levels_of_the_spec(tmp_path: Path) -> None:
    levels = "debug, info, notice, warning, error, critical, alert, emergency"
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        for number, level in enumerate(("loud", 3, None, "notice")):
            await peer.send(
                {"jsonrpc": "2.0", "id": number, "method": "logging/setLevel", "params": {"level": level}}
            )
            answer = await peer.receive()
            if level == "notice":
                assert answer["result"] == {}
            else:
                assert answer["error"]["code"] == -32602
                assert levels in answer["error"]["message"]
