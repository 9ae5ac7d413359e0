"""stdio end to end: the server is a real subprocess; one JSON-RPC message per line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_for_text

SERVER = Path(__file__).with_name("e2e_server.py")
LIMIT_4096 = ("--max-message-bytes", "4096")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


class StdioPeer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send_raw(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(message).encode())

    async def receive(self, wait: float = 10) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), wait)
        assert line, "the server closed stdout"
        return json.loads(line)

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": META, **params}}
        )
        return await self.receive()


@pytest.fixture
async def peer(tmp_path: Path) -> AsyncIterator[StdioPeer]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        "--stdio",
        "--marker-dir",
        str(tmp_path),
        *LIMIT_4096,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    yield StdioPeer(process)
    if process.returncode is None:
        process.kill()
        await process.wait()


async def test_discover_and_a_two_round_flow(peer: StdioPeer) -> None:
    discover = await peer.call(1, "server/discover", {})
    assert discover["id"] == 1
    assert discover["result"]["supportedVersions"] == ["2026-07-28"]
    first = (await peer.call(2, "tools/call", {"name": "greet", "arguments": {}}))["result"]
    second = (
        await peer.call(
            3,
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "requestState": first["requestState"],
                "inputResponses": {"first": {"action": "accept", "content": {"name": "Grace"}}},
            },
        )
    )["result"]
    final = await peer.call(
        4,
        "tools/call",
        {
            "name": "greet",
            "arguments": {},
            "requestState": second["requestState"],
            "inputResponses": {"last": {"action": "accept", "content": {"name": "Hopper"}}},
        },
    )
    assert final["id"] == 4
    assert final["result"]["content"][0]["text"] == "Hello, Grace Hopper!"


async def test_cancelled_notification_stops_the_handler_and_nothing_is_sent_for_it(
    peer: StdioPeer, tmp_path: Path
) -> None:
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": 10,
            "method": "tools/call",
            "params": {"_meta": META, "name": "slow", "arguments": {"label": "stdio"}},
        }
    )
    await asyncio.sleep(0.3)
    await peer.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10, "reason": "user"}}
    )
    assert await wait_for_text(tmp_path / "cancelled-stdio", "cancelled") == "cancelled"
    answer = await peer.call(11, "tools/list", {})
    assert answer["id"] == 11  # the next line is this answer, not anything for id 10


async def test_bad_lines_get_errors_and_the_server_keeps_going(peer: StdioPeer) -> None:
    await peer.send_raw(b"{not json")
    error = await peer.receive()
    assert error == {"jsonrpc": "2.0", "id": None, "error": error["error"]}
    assert error["error"]["code"] == -32700
    await peer.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}')
    assert (await peer.receive())["error"]["code"] == -32600
    await peer.send_raw(
        b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"pad":"' + b"x" * 10000 + b'"}}'
    )
    too_big = await peer.receive()
    assert too_big["error"]["code"] == -32600
    assert "limit of 4096 bytes" in too_big["error"]["message"]
    missing_meta = await peer.call(7, "tools/list", {"_meta": None})
    assert missing_meta["error"]["code"] == -32602
    assert (await peer.call(8, "tools/list", {}))["id"] == 8


async def test_logs_and_stray_prints_go_to_stderr_only(peer: StdioPeer) -> None:
    result = await peer.call(1, "tools/call", {"name": "noisy", "arguments": {}})
    assert result["result"]["content"][0]["text"] == "quiet on stdout"
    assert peer.process.stdin is not None
    assert peer.process.stdout is not None
    assert peer.process.stderr is not None
    peer.process.stdin.close()
    assert await asyncio.wait_for(peer.process.wait(), 10) == 0
    assert await peer.process.stdout.read() == b""  # nothing but the one answer on stdout
    stderr = await peer.process.stderr.read()
    assert b"this goes to stderr" in stderr
    assert b"a stray print to stdout" in stderr
    assert b"a raw write to file descriptor 1" in stderr


async def test_a_boolean_request_id_cancels_nothing(peer: StdioPeer, tmp_path: Path) -> None:
    slow = {"_meta": META, "name": "slow", "arguments": {"label": "bool"}}
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": slow})
    await asyncio.sleep(0.2)
    await peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": True}})
    assert (await peer.call(2, "tools/list", {}))["id"] == 2  # the notification has been handled
    await asyncio.sleep(0.2)
    assert not (tmp_path / "cancelled-bool").exists()  # true is not request 1
    await peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    assert await wait_for_text(tmp_path / "cancelled-bool", "cancelled") == "cancelled"


def _run_with_stdin(stdin_path: Path, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    with stdin_path.open("rb") as stdin:
        return subprocess.run(
            [sys.executable, str(SERVER), "--stdio", "--marker-dir", str(tmp_path), *LIMIT_4096],
            stdin=stdin,
            capture_output=True,
            timeout=30,
            check=False,
        )


def test_stdin_from_dev_null_ends_the_server_cleanly(tmp_path: Path) -> None:
    done = _run_with_stdin(Path(os.devnull), tmp_path)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr.decode()
    assert b"Traceback" not in done.stderr


def test_stdin_from_a_regular_file_is_served_line_by_line(tmp_path: Path) -> None:
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}),
        # over the limit: one error, and none of its bytes may be read as further lines
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"pad": "x\\n" * 5000}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}),
    ]
    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(lines))  # the last line has no newline: EOF ends it
    done = _run_with_stdin(requests, tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {answer["id"]: answer for answer in answers}  # requests may finish in any order
    assert (len(answers), sorted(by_id, key=str)) == (3, sorted([1, None, 3], key=str))
    assert "limit of 4096 bytes" in by_id[None]["error"]["message"]
    assert by_id[1]["result"]["tools"] == by_id[3]["result"]["tools"] != []


async def test_eof_ends_the_process_cleanly_even_with_a_request_running(peer: StdioPeer) -> None:
    await peer.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"_meta": META, "name": "slow", "arguments": {"label": "eof"}},
        }
    )
    await asyncio.sleep(0.2)
    assert peer.process.stdin is not None
    peer.process.stdin.close()
    assert await asyncio.wait_for(peer.process.wait(), 10) == 0
