"""Whatever a client writes on stdin, the stdio server answers it and keeps running.

One real server process (``any_input_server.py``) per test; hypothesis writes lines to it --
bytes, JSON, JSON-RPC requests and notifications with any method, id and params, ``initialize``
(which turns the process to 2025-11-25) among them. After each line a request with an id no
example uses follows, and everything the server wrote up to its answer is read: every line must
be one JSON-RPC message (a response with a known error code and a message, or in 2025-11-25 a
request or notification of the server's own). At the end the process still runs, and its stderr
holds no traceback.

The last test is a 2025-11-25 client that answers the server's questions with anything (an
ElicitResult with any values, an error, any JSON as the result): every call must still end.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.e2e.test_http_any_input import (
    CODES,
    elicit_results,
    good_ids,
    honest_meta,
    methods,
    request_params,
)
from tests.server_process import PY, piped_server
from tests.strategies import json_values

SERVER = Path(__file__).with_name("any_input_server.py")
WITHIN = 10.0
_sync_ids = itertools.count()


class Peer:
    """The test's end of the server's stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def exchange(self, line: bytes) -> list[dict[str, Any]]:
        """Write ``line``, then a request no example can be mistaken for; return every message
        the server wrote before answering that request (checked as JSON-RPC)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        sync = f"sync-{next(_sync_ids)}-\x00"  # hypothesis's ids never hold NUL
        marker = {"jsonrpc": "2.0", "id": sync, "method": "ping", "params": {"_meta": honest_meta}}
        self.process.stdin.write(line + b"\n" + json.dumps(marker).encode() + b"\n")
        await self.process.stdin.drain()
        written: list[dict[str, Any]] = []
        while True:
            raw = await asyncio.wait_for(self.process.stdout.readline(), WITHIN)
            assert raw, "the server closed stdout"
            message = json.loads(raw)
            checked(message)
            if message.get("id") == sync and "method" not in message:
                return written
            written.append(message)


def checked(message: Any) -> None:
    """One message a server may write: a response, or a request or notification of its own."""
    assert isinstance(message, dict), message
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        assert isinstance(message["method"], str), message
        event(f"server sent {message['method']}")
        return
    assert ("result" in message) != ("error" in message), message
    if "error" in message:
        assert message["error"]["code"] in CODES, message
        assert isinstance(message["error"]["message"], str), message
        assert message["error"]["message"].strip(), message
        event(f"code {message['error']['code']}")
    else:
        event("result")


@asynccontextmanager
async def serving() -> AsyncIterator[asyncio.subprocess.Process]:
    """The server process; afterwards, it must still have been running, end when its stdin
    closes, and have written no traceback on stderr."""
    async with piped_server([PY, str(SERVER)], limit=2**20) as process:
        yield process
        assert process.returncode is None, "the server exited"
        assert process.stdin is not None
        assert process.stderr is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), WITHIN)
        stderr = (await process.stderr.read()).decode(errors="replace")
        assert "Traceback" not in stderr, stderr


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    async with serving() as process:
        yield Peer(process)


# The one process is shared by a test's examples (what one client's session could send in turn).
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")))
async def test_any_line_of_bytes_gets_an_answer_or_nothing(peer: Peer, line: bytes) -> None:
    await peer.exchange(line)


@SETTINGS
@given(json_values)
async def test_any_json_gets_an_answer_or_nothing(peer: Peer, document: Any) -> None:
    await peer.exchange(json.dumps(document).encode())


@SETTINGS
@given(
    good_ids | st.none(),
    methods,
    request_params | json_values,
)
async def test_any_request_or_notification_gets_an_answer(
    peer: Peer, request_id: Any, method: str, params: Any
) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    await peer.exchange(json.dumps(message).encode())


# -- 2025-11-25: a client that answers the server's questions with anything ---------------------

answers_to_questions = st.one_of(
    elicit_results.map(lambda result: {"result": result}),
    st.fixed_dictionaries(
        {"code": st.integers(-32800, -32000) | json_values, "message": st.text(max_size=20) | json_values},
        optional={"data": json_values},
    ).map(lambda error: {"error": error}),
    json_values.map(lambda result: {"result": result}),
)


class LegacyPeer(Peer):
    """A 2025-11-25 session on the server's stdio: opened once, then one call at a time."""

    opened = False

    async def open(self) -> None:
        if self.opened:
            return
        capabilities = {"elicitation": {"form": {}, "url": {}}}
        await self.write(
            {
                "jsonrpc": "2.0",
                "id": "open",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "t"},
                },
            }
        )
        assert "result" in await self.read(), "initialize failed"
        await self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.opened = True

    async def write(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        raw = await asyncio.wait_for(self.process.stdout.readline(), WITHIN)
        assert raw, "the server closed stdout"
        message: dict[str, Any] = json.loads(raw)
        checked(message)
        return message

    async def call(self, replies: list[dict[str, Any]]) -> dict[str, Any]:
        """One tools/call of the tool that asks two forms; each question the server sends is
        answered with the next of ``replies`` (a decline once they run out). The call's response."""
        call_id = f"call-{next(_sync_ids)}"
        arguments = {"summary": "any answer"}
        await self.write(
            {
                "jsonrpc": "2.0",
                "id": call_id,
                "method": "tools/call",
                "params": {"name": "file_ticket", "arguments": arguments},
            }
        )
        pending = list(replies)
        while True:
            message = await self.read()
            if message.get("id") == call_id and "method" not in message:
                return message
            if "method" not in message or "id" not in message:
                continue  # a notification (a question withdrawn, a log)
            reply = pending.pop(0) if pending else {"result": {"action": "decline"}}
            await self.write({"jsonrpc": "2.0", "id": message["id"], **reply})


@pytest.fixture
async def legacy_peer() -> AsyncIterator[LegacyPeer]:
    async with serving() as process:
        yield LegacyPeer(process)


@SETTINGS
@given(st.lists(answers_to_questions, max_size=6))
async def test_any_answer_to_the_servers_questions_ends_the_call(
    legacy_peer: LegacyPeer, replies: list[dict[str, Any]]
) -> None:
    await legacy_peer.open()
    response = await legacy_peer.call(replies)
    if "error" in response:
        event(f"call ended with {response['error']['code']}")
    else:
        assert response["result"]["content"][0]["type"] == "text", response
        event("a tool error" if response["result"].get("isError") else "a result")
