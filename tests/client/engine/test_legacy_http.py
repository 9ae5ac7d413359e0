"""A 2025-11-25 session over Streamable HTTP against a scripted server on 127.0.0.1 that records
every request: the session's headers, the server's request on a reply's event stream answered
by a POST (and refused), the GET stream, DELETE at close, and a session the server ends (404)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcp_elicit.client import Client, HttpStatusError, SessionExpiredError, TransportError
from mcp_elicit.client import http as client_http

from .support import Script, accept

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "raw-legacy", "version": "1"},
}
FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@dataclass
class Seen:
    method: str  # the HTTP method
    headers: dict[str, str]
    body: dict[str, Any] | None


@dataclass
class LegacyServer:
    url: str = ""
    seen: list[Seen] = field(default_factory=list)
    sessions: int = 0
    expire_after: int | None = None  # 404 every request of a session past this many tools/calls
    answers: asyncio.Queue[dict[str, Any] | None] = field(default_factory=asyncio.Queue)  # None: refused
    discover: bytes | None = None  # the reply to server/discover (default: 400 with -32000)
    silent_get: bool = False  # the GET stream's reply head never comes (else 405 at once)
    # The replies to the client's answers, in turn (then 202): DROP closes the connection once
    # the answer is read (and taken); any other status refuses it, and the question's stream
    # then stays open without a response until the client hangs up. A copy of an answer taken
    # gets 400, as our server answers it.
    answer_replies: list[bytes] = field(default_factory=list)
    taken: list[Any] = field(default_factory=list)  # the ids of the answers taken
    work: float = 0.0  # how long a tool that asked works on once it has the answer
    event_ids: bool = True  # the question's stream names its events (it can be resumed)

    def posts(self) -> list[Seen]:
        return [s for s in self.seen if s.method == "POST"]


def reply(status: str, body: bytes = b"", content_type: str = "application/json", extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    return head.encode() + body


def rpc(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


Handler = Callable[[LegacyServer, Seen, asyncio.StreamReader, asyncio.StreamWriter], Any]
DROP = b""


@pytest.fixture
async def legacy_server() -> AsyncIterator[Callable[..., Any]]:
    servers: list[asyncio.Server] = []

    async def start(**options: Any) -> LegacyServer:
        state = LegacyServer(**options)

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    method = lines[0].split(" ")[0]
                    headers = {
                        k.lower(): v.strip()
                        for k, _, v in (line.partition(":") for line in lines[1:] if line)
                    }
                    raw = await reader.readexactly(int(headers.get("content-length", "0")))
                    seen = Seen(method, headers, json.loads(raw) if raw else None)
                    state.seen.append(seen)
                    await handle(state, seen, reader, writer)
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        servers.append(server)
        state.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
        return state

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def handle(
    state: LegacyServer, seen: Seen, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    if seen.method == "GET":
        if state.silent_get:
            await asyncio.Event().wait()  # until the client hangs up (the test ends)
        writer.write(reply("405 Method Not Allowed"))
        return
    if seen.method == "DELETE":
        writer.write(reply("200 OK"))
        return
    message = seen.body or {}
    method, request_id = message.get("method"), message.get("id")
    session = seen.headers.get("mcp-session-id")
    if method is None:  # the answer to our elicitation/create
        if message.get("id") in state.taken:
            writer.write(reply("400 Bad Request", b"answered already", "text/plain"))
            return
        answered = state.answer_replies.pop(0) if state.answer_replies else reply("202 Accepted")
        refused = answered != DROP and not answered.startswith(b"HTTP/1.1 2")
        if not refused:
            state.taken.append(message.get("id"))
        await state.answers.put(None if refused else message)
        if answered == DROP:
            writer.transport.abort()
        else:
            writer.write(answered)
        return
    if method == "server/discover" and state.discover is not None:
        writer.write(state.discover)
        return
    if method == "server/discover":
        writer.write(
            reply("400 Bad Request", rpc({"id": None, "error": {"code": -32000, "message": "No session"}}))
        )
        return
    if method == "initialize":
        state.sessions += 1
        body = rpc({"id": request_id, "result": INIT})
        writer.write(reply("200 OK", body, extra=f"Mcp-Session-Id: s-{state.sessions}\r\n"))
        return
    if request_id is None:
        writer.write(reply("202 Accepted"))
        return
    if session != f"s-{state.sessions}" or (
        state.expire_after is not None and method == "tools/call" and state.expire_after <= 0
    ):
        writer.write(
            reply(
                "404 Not Found", rpc({"id": None, "error": {"code": -32001, "message": "Session not found"}})
            )
        )
        return
    if method == "tools/call":
        if state.expire_after is not None:
            state.expire_after -= 1
        name = message["params"]["name"]
        if name in ("ask", "ask_invalid"):
            # The question on the call's own event stream; the answer comes on another POST.
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            writer.write(head)
            # ask_invalid: params that are not an object, so not a valid JSON-RPC request.
            params = {"message": "OK?", "requestedSchema": FORM} if name == "ask" else 5
            ask = rpc({"id": 0, "method": "elicitation/create", "params": params})
            event = (b"id: e1\n" if state.event_ids else b"") + b"data: " + ask + b"\n\n"
            writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            await writer.drain()
            answer = await asyncio.wait_for(state.answers.get(), 10)
            if answer is None:  # refused: the tool never goes on
                await reader.read()
                return
            await asyncio.sleep(state.work)
            done = rpc(
                {"id": request_id, "result": {"content": [{"type": "text", "text": json.dumps(answer)}]}}
            )
            event = b"id: e2\ndata: " + done + b"\n\n"
            writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n0\r\n\r\n")
            return
        writer.write(
            reply("200 OK", rpc({"id": request_id, "result": {"content": [{"type": "text", "text": name}]}}))
        )
        return
    writer.write(reply("200 OK", rpc({"id": request_id, "result": {"tools": []}})))


async def test_the_session_headers_on_every_request_and_delete_at_close(legacy_server: Any) -> None:
    server = await legacy_server()
    async with Client.connect(server.url, headers={"Authorization": "Bearer t0k"}) as client:
        assert client.era == "legacy"
        assert (await client.call_tool("plain")).text == "plain"
    methods = [(s.method, (s.body or {}).get("method")) for s in server.seen]
    assert methods == [
        ("POST", "server/discover"),
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
        ("GET", None),
        ("POST", "tools/call"),
        ("DELETE", None),
    ]
    initialize, *later = server.seen[1:]
    assert "mcp-session-id" not in initialize.headers
    assert "mcp-protocol-version" not in initialize.headers
    for seen in later:
        assert seen.headers["mcp-session-id"] == "s-1"
        assert seen.headers["mcp-protocol-version"] == "2025-11-25"
        assert seen.headers["authorization"] == "Bearer t0k"
        assert "mcp-method" not in seen.headers
    assert "_meta" not in server.seen[4].body["params"]
    assert server.seen[3].headers["accept"] == "text/event-stream"


@pytest.mark.parametrize("silent_get", [False, True])
async def test_a_get_stream_that_never_opens_holds_up_connecting_for_a_bounded_time_and_says_so(
    legacy_server: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, silent_get: bool
) -> None:
    """Connecting waits for the GET stream's head (a server's message there must not be missed),
    but not past ``STREAM_OPEN_TIMEOUT``, and the wait is logged: a server that sends no head
    until its first event would otherwise make every connect slow without a word. The control:
    a server that answers the GET at once costs no wait and no log line."""
    monkeypatch.setattr(client_http, "STREAM_OPEN_TIMEOUT", 0.3)
    server = await legacy_server(silent_get=silent_get)
    caplog.set_level(logging.INFO, logger="mcp_elicit.client.http")
    started = time.monotonic()
    async with Client.connect(server.url) as client:
        connecting = time.monotonic() - started
        assert (await client.call_tool("plain")).text == "plain"
    said = [r.getMessage() for r in caplog.records if "did not open within" in r.getMessage()]
    if silent_get:
        assert 0.3 <= connecting < 3.0, connecting
        assert said == [
            "the server's GET stream (its messages about no request of ours) did not open "
            "within 0.3 s; going on without waiting for it"
        ]
    else:
        assert connecting < 0.3, connecting
        assert said == []


async def test_a_server_request_on_the_reply_stream_is_answered_by_a_post(legacy_server: Any) -> None:
    server = await legacy_server()
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with Client.connect(server.url, answerer=person, headers={"Authorization": "Bearer t0k"}) as client:
        result = await client.call_tool("ask")
    assert json.loads(result.text) == {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {"action": "accept", "content": {"ok": True}},
    }
    (answer,) = [s for s in server.posts() if s.body and "method" not in s.body]
    assert answer.headers["mcp-session-id"] == "s-1"
    assert answer.headers["mcp-protocol-version"] == "2025-11-25"
    assert answer.headers["authorization"] == "Bearer t0k"


@pytest.mark.parametrize("event_ids", [True, False], ids=["resumable", "not-resumable"])
@pytest.mark.parametrize(
    ("status", "error"),
    [
        ("404 Not Found", "the server ended the session (HTTP 404 to the answer to its request 0); "),
        ("500 Internal Server Error", "the server refused the answer to its request 0 (HTTP 500: oops); "),
    ],
    ids=["404", "500"],
)
async def test_an_answer_the_server_refuses_fails_the_call_at_once(
    legacy_server: Any, status: str, error: str, event_ids: bool
) -> None:
    """The server refuses the POST of the answer to its question (404: the session is gone; 500:
    it failed), so it will never have it, and the call that asked fails now, with why. (It
    waited for its timeout, 1800 s for `mcp-elicit call`, after a warning.) The client goes on."""
    server = await legacy_server(answer_replies=[reply(status, b"oops", "text/plain")], event_ids=event_ids)
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with Client.connect(server.url, answerer=person) as client:
        with pytest.raises(TransportError) as caught:
            await asyncio.wait_for(client.call_tool("ask"), 5)
        assert str(caught.value).startswith(error)
        assert (await client.call_tool("plain")).text == "plain"
    assert [s.body for s in server.posts() if s.body and "method" not in s.body] == [
        {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"ok": True}}}
    ]


async def test_a_copy_of_an_answer_refused_because_the_first_arrived_fails_nothing(
    legacy_server: Any,
) -> None:
    """The connection of the answer's POST drops after the server read it: the copy sent again
    gets 400 (the server has it already), and the call still gets its result."""
    server = await legacy_server(answer_replies=[DROP], work=1.0)
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with Client.connect(server.url, answerer=person) as client:
        result = await asyncio.wait_for(client.call_tool("ask"), 5)
    assert json.loads(result.text)["result"] == {"action": "accept", "content": {"ok": True}}
    assert len([s for s in server.posts() if s.body and "method" not in s.body]) == 2


async def test_an_invalid_server_request_on_the_reply_stream_gets_32600(legacy_server: Any) -> None:
    server = await legacy_server()
    person = Script(form=accept(ok=True), mode_names=("form",))
    async with Client.connect(server.url, answerer=person) as client:
        result = await client.call_tool("ask_invalid")
    refusal = {"code": -32600, "message": 'Invalid request: "params" must be an object'}
    assert json.loads(result.text) == {"jsonrpc": "2.0", "id": 0, "error": refusal}
    assert person.asked == []


async def test_a_session_404_starts_a_new_session_and_sends_the_request_again(legacy_server: Any) -> None:
    server = await legacy_server(expire_after=1)
    async with Client.connect(server.url) as client:
        assert (await client.call_tool("one")).text == "one"
        server.expire_after = None
        server.sessions += 1  # the server forgot s-1: its requests get 404 now
        assert (await client.call_tool("two")).text == "two"
    initializes = [s for s in server.posts() if (s.body or {}).get("method") == "initialize"]
    assert len(initializes) == 2
    assert "mcp-session-id" not in initializes[1].headers  # a new session starts without the old id
    calls = [
        s.headers["mcp-session-id"] for s in server.posts() if (s.body or {}).get("method") == "tools/call"
    ]
    assert calls == ["s-1", "s-1", "s-3"]  # "two" got 404 on s-1, then went again on the new session


async def test_a_session_404_twice_in_a_row_is_raised(legacy_server: Any) -> None:
    server = await legacy_server(expire_after=0)
    async with Client.connect(server.url) as client:
        with pytest.raises(SessionExpiredError, match="ended session"):
            await client.call_tool("x")
    initializes = [s for s in server.posts() if (s.body or {}).get("method") == "initialize"]
    assert len(initializes) == 2  # the first, and one new session: no endless re-initialize


@pytest.mark.parametrize("status", ["401 Unauthorized", "500 Internal Server Error"])
async def test_auth_and_server_errors_on_discover_are_errors_not_a_fallback(status: str) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.decode().lower().split("content-length:")[1].split("\r\n")[0])
        await reader.readexactly(length)
        writer.write(reply(status, b"no"))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
        with pytest.raises(HttpStatusError) as caught:
            async with Client.connect(url):
                pass
        assert caught.value.status == int(status[:3])
        assert "server/discover" in str(caught.value)
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    "discover",
    [
        reply("404 Not Found", b"Not Found", "text/plain"),
        reply("405 Method Not Allowed", b""),
        reply("400 Bad Request", b"Bad Request: no valid session ID provided", "text/plain"),
        reply("400 Bad Request", rpc({"id": None, "error": {"code": -32601, "message": "Method not found"}})),
        reply("400 Bad Request", rpc({"id": 1, "error": {"code": -32022, "message": "no", "data": {}}})),
    ],
    ids=["404-text", "405-empty", "400-text", "400-32601", "400-32022-without-versions"],
)
async def test_discover_refused_without_modern_evidence_falls_back_to_initialize(
    legacy_server: Any, discover: bytes
) -> None:
    """400/404/405 without a recognised 2026-07-28 error body (a DiscoverResult, or -32022 naming a
    2026 version) means a 2025-11-25 server: initialize, and the session works."""
    server = await legacy_server(discover=discover)
    async with Client.connect(server.url) as client:
        assert (client.era, client.protocol_version) == ("legacy", "2025-11-25")
        assert (await client.call_tool("plain")).text == "plain"
    methods = [(s.body or {}).get("method") for s in server.posts()]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
