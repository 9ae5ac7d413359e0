"""stdio end to end: the server is a real subprocess; one JSON-RPC message per line."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_for_text
from tests.server_process import PY, piped_server

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


@asynccontextmanager
async def running_peer(marker_dir: Path, *options: str, line_limit: int = 2**16) -> AsyncIterator[StdioPeer]:
    """``e2e_server.py --stdio`` with ``options``, killed afterwards if still running;
    ``line_limit``: the longest answer line this side reads."""
    argv = [PY, str(SERVER), "--stdio", "--marker-dir", str(marker_dir), *options]
    async with piped_server(argv, limit=line_limit) as process:
        yield StdioPeer(process)


@pytest.fixture
async def peer(tmp_path: Path) -> AsyncIterator[StdioPeer]:
    async with running_peer(tmp_path, *LIMIT_4096) as running:
        yield running


async def test_the_server_runs_on_the_loop_of_this_module_run(peer: StdioPeer, server_loop: str) -> None:
    result = (await peer.call(1, "tools/call", {"name": "event_loop", "arguments": {}}))["result"]
    assert result["content"][0]["text"] == server_loop


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
    assert await wait_for_text(tmp_path / "started-stdio", "started") == "started"
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
    assert await wait_for_text(tmp_path / "started-bool", "started") == "started"
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


async def test_a_cancelled_request_gets_nothing_even_when_its_handler_answers(
    peer: StdioPeer, tmp_path: Path
) -> None:
    """The spec: after notifications/cancelled the server MUST NOT send anything further for it."""
    params = {"_meta": {**META, "progressToken": "t"}, "name": "stubborn", "arguments": {"label": "s"}}
    await peer.send({"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": params})
    assert await wait_for_text(tmp_path / "started-s", "started") == "started"
    await peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 20}})
    assert await wait_for_text(tmp_path / "swallowed-s", "swallowed") == "swallowed"
    await asyncio.sleep(0.2)  # the handler's progress and answer would have been written by now
    answer = await peer.call(21, "tools/list", {})
    assert answer["id"] == 21


async def test_sys_exit_in_a_handler_fails_that_request_only(peer: StdioPeer) -> None:
    slow = {"_meta": META, "name": "in_a_thread", "arguments": {"seconds": 0.5}}
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": slow})
    failed = await peer.call(2, "tools/call", {"name": "exits", "arguments": {}})
    assert failed["id"] == 2
    assert failed["error"]["code"] == -32603
    finished = await peer.receive()
    assert finished["id"] == 1
    assert finished["result"]["content"][0]["text"] == "thread done"
    assert (await peer.call(3, "tools/list", {}))["id"] == 3


async def test_a_handler_failing_with_cancelled_error_or_unsendable_error_data_gets_an_answer(
    peer: StdioPeer,
) -> None:
    cancelled = await peer.call(1, "tools/call", {"name": "awaits_cancelled", "arguments": {}})
    assert cancelled["id"] == 1
    assert cancelled["result"]["isError"] is True
    assert "unexpected error" in cancelled["result"]["content"][0]["text"]
    unsendable = await peer.call(2, "tools/call", {"name": "unsendable_error", "arguments": {}})
    assert unsendable["id"] == 2
    assert unsendable["error"]["code"] == -32603
    assert "cannot be sent as JSON" in unsendable["error"]["message"]
    assert (await peer.call(3, "tools/list", {}))["id"] == 3


async def test_eof_ends_the_process_even_with_a_handler_thread_still_running(peer: StdioPeer) -> None:
    long = {"_meta": META, "name": "in_a_thread", "arguments": {"seconds": 30}}
    await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": long})
    # Requests start in order: once a later one is answered, the thread is running.
    assert (await peer.call(2, "tools/list", {}))["id"] == 2
    assert peer.process.stdin is not None
    peer.process.stdin.close()
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await asyncio.wait_for(peer.process.wait(), 15) == 0
    assert loop.time() - started < 10  # the grace periods, not the thread's 30 s
    assert peer.process.stdout is not None
    assert await peer.process.stdout.read() == b""  # nothing for the request cut off by EOF


async def test_the_size_limit_counts_the_message_not_its_line_ending(peer: StdioPeer) -> None:
    def of_size(request_id: int, size: int) -> bytes:
        params: dict[str, Any] = {"_meta": META, "pad": ""}
        empty = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params})
        params["pad"] = "x" * (size - len(empty.encode()))
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params})
        assert len(line.encode()) == size
        return line.encode()

    await peer.send_raw(of_size(1, 4096))
    assert "result" in await peer.receive()
    await peer.send_raw(of_size(2, 4096) + b"\r")  # a CRLF line ending
    assert "result" in await peer.receive()
    await peer.send_raw(of_size(3, 4097))
    refused = await peer.receive()
    assert "the message is 4097 bytes, over the limit of 4096 bytes" in refused["error"]["message"]


def test_stdin_and_stdout_on_one_socket_get_whole_lines(tmp_path: Path) -> None:
    """inetd, systemd socket activation, socat EXEC: one socket is both stdin and stdout, so
    reading stdin without blocking makes stdout non-blocking too; a large answer must still go
    out whole, and the ones after it too."""
    ours, theirs = socket.socketpair()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--stdio", "--marker-dir", str(tmp_path)],
        stdin=theirs,
        stdout=theirs,
        stderr=subprocess.PIPE,
    )
    theirs.close()
    try:
        for request_id, size in ((1, 3_000_000), (2, 10)):
            params = {"_meta": META, "name": "big", "arguments": {"size": size}}
            message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            ours.sendall(json.dumps(message).encode() + b"\n")
        time.sleep(1.0)  # let the server fill the socket's buffer before anything is read
        received = b""
        ours.settimeout(20)
        while received.count(b"\n") < 2:
            chunk = ours.recv(1 << 20)
            assert chunk, "the server closed the socket"
            received += chunk
        answers = [json.loads(line) for line in received.splitlines()]
        assert [a["id"] for a in answers] == [1, 2]
        assert len(answers[0]["result"]["content"][0]["text"]) == 3_000_000
        ours.shutdown(socket.SHUT_WR)
        assert process.wait(timeout=15) == 0
    finally:
        ours.close()
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        errors = process.stderr.read()
        process.stderr.close()
    assert b"Traceback" not in errors, errors.decode()
    assert b"never retrieved" not in errors, errors.decode()


async def test_ctrl_c_ends_the_server_with_the_interrupted_status(peer: StdioPeer) -> None:
    assert (await peer.call(1, "tools/list", {}))["id"] == 1  # serving
    peer.process.send_signal(2)  # SIGINT, as Ctrl-C in the terminal running it
    assert await asyncio.wait_for(peer.process.wait(), 15) == 130


@pytest.mark.parametrize("closed", ["stdin", "stdout"])
def test_a_closed_stdin_or_stdout_is_said_plainly(closed: str, tmp_path: Path) -> None:
    """Started with ``<&-`` or ``>&-``: one clear line and status 1, not a traceback."""
    fd = 0 if closed == "stdin" else 1
    process = subprocess.run(
        [sys.executable, str(SERVER), "--stdio", "--marker-dir", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.close(fd),  # the child closes its own descriptor before exec
        timeout=30,
        check=False,
    )
    assert process.returncode == 1
    assert b"stdin or stdout is closed" in process.stderr
    assert b"Traceback" not in process.stderr
