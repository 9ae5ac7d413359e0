"""The conformance fixtures' 2025-11-25 handlers serve both eras: as a 2026-07-28 request
(``InputRequiredResult`` rounds, in process) and as a 2025-11-25 session over stdio (the example
as a real process; its questions come as real requests on stdout)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_elicit.client import Answer, Client
from tests.helpers import Script

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "conformance_server.py"
USER = {"username": "testuser", "email": "test@example.com"}


@pytest.fixture
def fixtures(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_server_example", EXAMPLE)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "conformance_server_example", module)  # for its dataclasses
    spec.loader.exec_module(module)
    return module


async def test_the_2026_era_asks_the_same_question_in_a_round(fixtures: ModuleType) -> None:
    person = Script(form=lambda question: Answer("accept", USER))
    async with Client.connect(fixtures.app, answerer=person) as client:
        assert client.era == "modern"
        done = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert done.text == f"User response: action=accept, content={json.dumps(USER)}"
    (question,) = person.asked
    assert question.message == "Who are you?"
    assert question.schema["required"] == ["username", "email"]


class Peer:
    """A 2025-11-25 client of the example over stdio."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        await self.process.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 10)
        assert line, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    peer = Peer(process)
    try:
        await peer.send(
            {
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"elicitation": {}, "sampling": {}},
                    "clientInfo": {"name": "tests", "version": "1"},
                },
            }
        )
        assert (await peer.receive())["result"]["protocolVersion"] == "2025-11-25"
        await peer.send({"method": "notifications/initialized"})
        yield peer
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def call(peer: Peer, request_id: int, tool: str, arguments: dict[str, Any], answer: Any = None) -> str:
    """Call ``tool``; answer the one request it sends the client with ``answer`` (if any)."""
    await peer.send(
        {"id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    message = await peer.receive()
    if answer is not None:
        assert "method" in message, message
        await peer.send({"id": message["id"], "result": answer(message["params"])})
        message = await peer.receive()
    assert message["id"] == request_id
    result: str = message["result"]["content"][0]["text"]
    return result


async def test_over_stdio_a_2025_client_is_asked_with_real_requests(peer: Peer) -> None:
    asked: list[dict[str, Any]] = []

    def answer_user(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": USER}

    reply = await call(peer, 1, "test_elicitation", {"message": "Who are you?"}, answer_user)
    assert reply == f"User response: action=accept, content={json.dumps(USER)}"
    assert asked[0]["message"] == "Who are you?"

    def defaults(params: dict[str, Any]) -> dict[str, Any]:
        props = params["requestedSchema"]["properties"]
        assert {name: prop["default"] for name, prop in props.items()} == {
            "name": "John Doe",
            "age": 30,
            "score": 95.5,
            "status": "active",
            "verified": True,
        }
        return {"action": "decline"}

    reply = await call(peer, 2, "test_elicitation_sep1034_defaults", {}, defaults)
    assert reply == "Elicitation completed: action=decline, content=null"

    def model(params: dict[str, Any]) -> dict[str, Any]:
        assert params["messages"][0]["content"] == {"type": "text", "text": "Say hi"}
        assert params["maxTokens"] == 100
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}

    assert await call(peer, 3, "test_sampling", {"prompt": "Say hi"}, model) == "LLM response: hi"
    # stdout is the whole connection: closing "the stream" changes nothing.
    assert await call(peer, 4, "test_reconnection", {}) == "Reconnection test completed successfully"
