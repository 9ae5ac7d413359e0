"""The HTTP side on its own: the built-in HTTP/1.1 client against a scripted server that writes
exact bytes (keep-alive, stale connections, chunked and read-to-close bodies, SSE, errors), and the
httpx-backed transport against our real server. Everything listens on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_elicit.client import (
    Answer,
    AuthorizationRequiredError,
    Client,
    HttpStatusError,
    MalformedMessageError,
    McpClientError,
    Progress,
    TransportError,
)
from mcp_elicit.client.http import HttpTransport
from mcp_elicit.client.http11 import Origin
from tests.server_process import ServerProcess

from .support import Script

DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "1"}},
}


def ok(request: dict[str, Any], result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()


def tool_text(text: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


def with_length(body: bytes, status: str = "200 OK", extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


def chunked(parts: list[bytes], content_type: str = "application/json") -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    return head + b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts) + b"0\r\n\r\n"


# Given (the request's JSON, its headers, the connection's number, the request's number on that
# connection), return the raw reply bytes and whether to close the connection afterwards.
Handler = Callable[[dict[str, Any], dict[str, str], int, int], tuple[bytes, bool]]


@dataclass
class RawServer:
    url: str
    connections: int = 0
    requests: list[tuple[dict[str, Any], dict[str, str]]] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)  # each request line's target, as sent
    writers: list[asyncio.StreamWriter] = field(default_factory=list)  # the server's ends, in order


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Handler], Any]]:
    servers: list[asyncio.Server] = []

    async def start(handler: Handler) -> RawServer:
        state = RawServer("")

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            state.connections += 1
            state.writers.append(writer)
            number, count = state.connections, 0
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    lines = head.decode("latin-1").split("\r\n")
                    state.targets.append(lines[0].split(" ")[1])
                    headers = {
                        k.lower(): v.strip()
                        for k, _, v in (line.partition(":") for line in lines[1:] if line)
                    }
                    body = await reader.readexactly(int(headers["content-length"]))
                    message = json.loads(body)
                    state.requests.append((message, headers))
                    count += 1
                    reply, close = handler(message, headers, number, count)
                    writer.write(reply)
                    await writer.drain()
                    if close:
                        break
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


def discover_or(reply: Callable[[dict[str, Any]], bytes], close_after: bool = False) -> Handler:
    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        if message["method"] == "server/discover":
            return with_length(ok(message, DISCOVER)), False
        return reply(message), close_after

    return handle


async def test_keep_alive_reuses_one_connection(raw_server: Any) -> None:
    server = await raw_server(discover_or(lambda m: with_length(ok(m, tool_text("hi")))))
    async with Client.connect(server.url, headers={"Authorization": "Bearer t0ken"}) as client:
        for _ in range(3):
            assert (await client.call_tool("x")).text == "hi"
    assert server.connections == 1
    assert len(server.requests) == 4
    for _message, headers in server.requests:
        assert headers["authorization"] == "Bearer t0ken"
        assert headers["host"] == server.url.split("/")[2]
        assert headers["accept-encoding"] == "identity"


async def test_the_callers_user_agent_replaces_the_default(raw_server: Any) -> None:
    server = await raw_server(discover_or(lambda m: with_length(ok(m, tool_text("hi")))))
    async with Client.connect(server.url) as client:
        await client.call_tool("x")
    async with Client.connect(server.url, headers={"user-agent": "my-app/1.0"}) as client:
        await client.call_tool("x")
    agents = [headers["user-agent"] for _message, headers in server.requests]
    assert agents == ["mcp-elicit"] * 2 + ["my-app/1.0"] * 2


async def test_a_connection_closed_while_idle_is_replaced_transparently(raw_server: Any) -> None:
    # The server closes after every response without saying so: the next request finds a dead
    # kept-alive socket and must go out again on a fresh connection.
    server = await raw_server(discover_or(lambda m: with_length(ok(m, tool_text("again"))), close_after=True))
    async with Client.connect(server.url) as client:
        assert (await client.call_tool("a")).text == "again"
        await asyncio.sleep(0.1)
        assert (await client.call_tool("b")).text == "again"
    assert server.connections == 2
    assert [m["params"]["name"] for m, _ in server.requests if m["method"] == "tools/call"] == ["a", "b"]


async def test_a_connection_the_server_closed_is_replaced_even_before_the_loop_noticed(
    raw_server: Any,
) -> None:
    # The server's close is in the socket but no event loop callback has run yet: the pool must
    # still not hand out that connection, since a request lost on it is never sent again.
    server = await raw_server(discover_or(lambda m: with_length(ok(m, tool_text(m["params"]["name"])))))
    async with Client.connect(server.url) as client:
        assert (await client.call_tool("a")).text == "a"
        server.writers[-1].get_extra_info("socket").shutdown(socket.SHUT_WR)
        time.sleep(0.05)  # noqa: ASYNC251 -- on purpose: the close reaches the socket, not the loop
        assert (await client.call_tool("b")).text == "b"
    assert [m["params"]["name"] for m, _ in server.requests if m["method"] == "tools/call"] == ["a", "b"]
    assert server.connections == 2


async def test_a_request_the_server_read_then_dropped_is_never_sent_again(raw_server: Any) -> None:
    """The server read "b" on a kept-alive connection and dropped it without a reply (a crash, a
    proxy's reset): it may have run the tool, so sending "b" again could run it twice."""

    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        if message["method"] == "server/discover":
            return with_length(ok(message, DISCOVER)), False
        if conn == 1 and count == 3:
            return b"", True  # discover, "a", then "b" on the first connection: dropped, no reply
        return with_length(ok(message, tool_text(message["params"]["name"]))), False

    server = await raw_server(handle)
    async with Client.connect(server.url) as client:
        assert (await client.call_tool("a")).text == "a"
        with pytest.raises(TransportError, match=r"tools/call to http://127\.0\.0\.1.*not sent again"):
            await client.call_tool("b")
        assert (await client.call_tool("c")).text == "c"  # on a fresh connection
    names = [m["params"]["name"] for m, _ in server.requests if m["method"] == "tools/call"]
    assert names == ["a", "b", "c"]
    assert server.connections == 2


async def test_a_request_dropped_on_a_fresh_connection_is_sent_once(raw_server: Any) -> None:
    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        if message["method"] == "server/discover":
            return with_length(ok(message, DISCOVER)), False
        return b"", True  # every call: connection dropped, no reply

    server = await raw_server(handle)
    async with Client.connect(server.url) as client:
        with pytest.raises(TransportError, match=r"tools/call to http://127\.0\.0\.1"):
            await client.call_tool("x")
    assert [m["method"] for m, _ in server.requests] == ["server/discover", "tools/call"]


async def test_chunked_and_read_to_close_bodies(raw_server: Any) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        body = ok(message, tool_text(message["params"]["name"]))
        if message["params"]["name"] == "chunked":
            return chunked([body[:7], body[7:20], body[20:]])
        return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + body

    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        if message["method"] == "server/discover":
            return with_length(ok(message, DISCOVER)), False
        return reply(message), message["params"]["name"] == "to-close"

    server = await raw_server(handle)
    async with Client.connect(server.url) as client:
        assert (await client.call_tool("chunked")).text == "chunked"
        assert (await client.call_tool("to-close")).text == "to-close"
        assert (await client.call_tool("chunked")).text == "chunked"
    assert server.connections == 2


async def test_sse_reply_with_progress_then_the_response(raw_server: Any) -> None:
    def reply(message: dict[str, Any]) -> bytes:
        token = message["params"]["_meta"]["progressToken"]
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1},
        }
        events = [b": ping\n\n", b"data: " + json.dumps(note).encode() + b"\n\n"]
        events.append(b"event: message\ndata: " + ok(message, tool_text("streamed")) + b"\n\n")
        return chunked(events, "text/event-stream")

    server = await raw_server(discover_or(reply))
    seen: list[Progress] = []
    async with Client.connect(server.url, on_progress=seen.append) as client:
        assert (await client.call_tool("s")).text == "streamed"
    assert seen == [Progress("tools/call", "s", 1.0, None, None)]


@pytest.mark.parametrize("via", ["builtin", "httpx"])
@pytest.mark.parametrize("other", ["another-id", "the-id-as-text"])
async def test_a_response_to_another_id_on_an_sse_reply_fails_the_call_at_once(
    raw_server: Any, via: str, other: str
) -> None:
    """A 2026-07-28 POST carries one request: a response on its stream that answers another id
    is the server's mistake, and fails the call as in a JSON reply, not at its timeout. (It was
    logged at INFO and the call waited; this stream never ends.)"""

    def reply(message: dict[str, Any]) -> bytes:
        wrong = 12345 if other == "another-id" else str(message["id"])
        event = b"data: " + json.dumps({"jsonrpc": "2.0", "id": wrong, "result": {}}).encode() + b"\n\n"
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + f"{len(event):x}\r\n".encode() + event + b"\r\n"  # and no last chunk

    server = await raw_server(discover_or(reply))
    async with httpx.AsyncClient() as http:
        options: dict[str, Any] = {"http_client": http} if via == "httpx" else {}
        async with Client.connect(server.url, **options) as client:
            with pytest.raises(MalformedMessageError, match="not the JSON-RPC response to id") as caught:
                await asyncio.wait_for(client.call_tool("x"), 5)
    assert str(caught.value).startswith("the reply to tools/call is not the JSON-RPC response to id ")


async def test_an_unreadable_notification_does_not_fail_the_call_an_unreadable_answer_does(
    raw_server: Any,
) -> None:
    broken = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"\\ud800"}}'

    def reply(message: dict[str, Any]) -> bytes:
        answer = ok(message, tool_text("streamed"))
        if message["params"]["name"] == "bad-answer":
            answer = answer.replace(b'"streamed"', b'"\\ud800"')  # a lone surrogate: unreadable
        events = [b"data: " + broken + b"\n\n", b"data: " + answer + b"\n\n"]
        return chunked(events, "text/event-stream")

    server = await raw_server(discover_or(reply))
    async with Client.connect(server.url) as client:
        assert (await client.call_tool("s")).text == "streamed"
        with pytest.raises(MalformedMessageError):
            await client.call_tool("bad-answer")


async def test_an_sse_stream_that_ends_without_the_response(raw_server: Any) -> None:
    server = await raw_server(discover_or(lambda m: chunked([b": nothing to see\n\n"], "text/event-stream")))
    async with Client.connect(server.url) as client:
        with pytest.raises(TransportError, match="without answering it"):
            await client.call_tool("s")


async def test_http_errors_without_a_json_rpc_body(raw_server: Any) -> None:
    page = b"<html>no such thing</html>"
    server = await raw_server(discover_or(lambda m: with_length(page, "502 Bad Gateway")))
    async with Client.connect(server.url) as client:
        with pytest.raises(HttpStatusError, match=r"HTTP 502") as caught:
            await client.call_tool("x")
    assert caught.value.status == 502
    assert "no such thing" in str(caught.value)


async def test_a_404_to_discover_falls_back_to_initialize(raw_server: Any) -> None:
    """A 404 without a modern error body is no 2026-07-28 server: the client tries the 2025-11-25
    handshake, and the 404 it gets there is the error reported."""

    def handle(message: dict[str, Any], headers: dict[str, str], conn: int, count: int) -> tuple[bytes, bool]:
        return with_length(b"Not Found", "404 Not Found"), False

    server = await raw_server(handle)
    with pytest.raises(HttpStatusError, match=r"HTTP 404: initialize to "):
        async with Client.connect(server.url):
            pass
    assert [m["method"] for m, _ in server.requests] == ["server/discover", "initialize"]


async def test_garbage_instead_of_http(raw_server: Any) -> None:
    server = await raw_server(discover_or(lambda m: b"SSH-2.0-OpenSSH\r\n\r\n"))
    async with Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError, match=r"not an HTTP/1\.x response"):
            await client.call_tool("x")


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":12345,"result":{}}',
        # Only an error may have a null id (one sent before the request's id was known).
        b'{"jsonrpc":"2.0","id":null,"result":{"content":[{"type":"text","text":"to nobody"}]}}',
    ],
    ids=["other-id", "null-id-result"],
)
async def test_a_200_reply_that_is_not_the_response(raw_server: Any, body: bytes) -> None:
    server = await raw_server(discover_or(lambda m: with_length(body)))
    async with Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError, match="not the JSON-RPC response"):
            await client.call_tool("x")


async def test_an_error_with_a_null_id_is_the_servers_error(raw_server: Any) -> None:
    error = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
    server = await raw_server(discover_or(lambda m: with_length(error, "400 Bad Request")))
    async with Client.connect(server.url) as client:
        with pytest.raises(McpClientError, match="Parse error") as caught:
            await client.call_tool("x")
    assert caught.value.code == -32700


@pytest.mark.parametrize("via", ["builtin", "httpx"])
async def test_escape_sequences_in_http_errors_never_reach_the_message(raw_server: Any, via: str) -> None:
    """The body of an error page and the WWW-Authenticate challenge are the server's text: an
    error message printed to a terminal must not set its title or clear its screen."""
    challenge = "Bearer realm=\x1b]0;pwned\x07\x1b[2Jx"

    def reply(message: dict[str, Any]) -> bytes:
        if message["params"]["name"] == "auth":
            head = f"HTTP/1.1 401 No\r\nWWW-Authenticate: {challenge}\r\nContent-Length: 0\r\n\r\n"
            return head.encode("latin-1")
        return with_length("\x1b]0;pwned\x07\x9b2Jboom\r \x1b[31mfine".encode(), "500 Oops")

    server = await raw_server(discover_or(reply))
    async with httpx.AsyncClient() as http:
        options: dict[str, Any] = {"http_client": http} if via == "httpx" else {}
        async with Client.connect(server.url, **options) as client:
            with pytest.raises(HttpStatusError) as failed:
                await client.call_tool("page")
            with pytest.raises(AuthorizationRequiredError) as refused:
                await client.call_tool("auth")
    assert str(failed.value).endswith(": boom fine")
    assert refused.value.www_authenticate == challenge  # as received, for a program to read
    assert "the server asks for: Bearer realm=x" in str(refused.value)
    for error in (failed.value, refused.value):
        assert not set(str(error)) & set("\x1b\x07\x9b\r"), repr(str(error))


async def test_nothing_listening() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(TransportError, match=r"cannot connect to 127\.0\.0\.1"):
        async with Client.connect(f"http://127.0.0.1:{port}/mcp"):
            pass


def test_header_injection_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid HTTP header"):
        HttpTransport("http://127.0.0.1:1/mcp", headers={"X-Evil": "a\r\nInjected: yes"})
    # Callers of the API get the CLI's checks: a name that is not a token, a control character,
    # a character the Latin-1 request head cannot carry.
    for name, value, needle in (
        ("X(Note)", "a", "the name is not an HTTP field name"),
        ("X-Note", "a\x0bb", r"U\+000B is not allowed"),
        ("X-Note", "5 \u20ac", r"U\+20AC is not allowed"),
    ):
        with pytest.raises(ValueError, match=needle):
            HttpTransport("http://127.0.0.1:1/mcp", headers={name: value})
    HttpTransport("http://127.0.0.1:1/mcp", headers={"X-Note": "caf\u00e9\tok"})
    # Headers the client writes itself: a second copy would make the request malformed.
    for name in ("Content-Length", "transfer-encoding", "Host", "Mcp-Method", "MCP-Protocol-Version"):
        with pytest.raises(ValueError, match="cannot be given: mcp-elicit sets"):
            HttpTransport("http://127.0.0.1:1/mcp", headers={name: "0"})
    HttpTransport("http://127.0.0.1:1/mcp", headers={"Authorization": "Bearer t", "X-Trace": "1"})
    with pytest.raises(ValueError, match="not an http"):
        HttpTransport("ftp://127.0.0.1/mcp")


async def test_a_url_outside_ascii_is_sent_percent_encoded(raw_server: Any) -> None:
    """The path and query go on the request line percent-encoded from UTF-8, as browsers and
    httpx send them; escapes already there stay as they are. (A "€" raised UnicodeEncodeError; an
    "é" or a space made a request line the server refused with 400.)"""
    server = await raw_server(discover_or(lambda m: with_length(ok(m, tool_text("hi")))))
    async with Client.connect(f"{server.url}/café €?q=a b&x=€&kept=%41%2F&lone=100%") as client:
        assert (await client.call_tool("x")).text == "hi"
    sent = "/mcp/caf%C3%A9%20%E2%82%AC?q=a%20b&x=%E2%82%AC&kept=%41%2F&lone=100%25"
    assert server.targets == [sent, sent]


async def test_an_internationalised_host_is_sent_in_its_ascii_form(raw_server: Any) -> None:
    """A host outside ASCII is looked up, and named in Host, in its IDNA form, mapped as browsers
    map it: "１２７.０.０.１" (fullwidth digits) is 127.0.0.1. A name IDNA refuses is a
    ValueError that says so, before anything is sent."""
    server = await raw_server(discover_or(lambda m: with_length(ok(m, tool_text("hi")))))
    port = server.url.split(":")[2].split("/")[0]
    async with Client.connect(f"http://１２７.０.０.１:{port}/mcp") as client:
        assert (await client.call_tool("x")).text == "hi"
    assert [headers["host"] for _, headers in server.requests] == [f"127.0.0.1:{port}"] * 2
    origin = Origin("https://例え.テスト:8443/mcp")
    assert (origin.host, origin.host_header) == ("xn--r8jz45g.xn--zckzah", "xn--r8jz45g.xn--zckzah:8443")
    with pytest.raises(ValueError, match=r"the host '\\u0600\.com' is not a valid internationalised"):
        HttpTransport("http://\u0600.com/mcp")
    # (what Python makes of command-line bytes that are not UTF-8)
    with pytest.raises(ValueError, match=r"U\+DCFF, a lone surrogate"):
        HttpTransport("http://127.0.0.1:1/\udcff")


# -- the httpx-backed transport -----------------------------------------------------------------
async def test_httpx_transport_runs_flows_progress_and_cancellation(
    ours_http: tuple[ServerProcess, Path],
) -> None:
    server, markers = ours_http
    seen: list[Progress] = []
    person = Script(form=lambda q: Answer("accept", {"name": q.key}))
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
        async with Client.connect(
            server.url, answerer=person, http_client=http, on_progress=seen.append
        ) as client:
            assert (await client.call_tool("greet")).text == "Hello, first last!"
            assert (await client.call_tool("progress")).text == "progressed"
            task = asyncio.create_task(client.call_tool("slow", {"label": "httpx"}))
            await asyncio.sleep(0.5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        assert not http.is_closed  # the caller's client stays open
    assert [p.progress for p in seen] == [1.0, 2.0]
    for _ in range(100):
        if (markers / "cancelled-httpx").exists():
            break
        await asyncio.sleep(0.05)
    assert (markers / "cancelled-httpx").read_text() == "cancelled"


@pytest.mark.parametrize("via", ["built-in", "httpx"])
async def test_a_401_is_an_authorization_error_with_the_challenge(via: str) -> None:
    """Our real server behind a token check: no token is not "not MCP 2026-07-28"."""
    from collections.abc import Mapping

    from mcp_elicit import Server
    from mcp_elicit.server.auth import Unauthorized
    from mcp_elicit.state import KeyRing
    from tests.helpers import InProcessServer

    challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"'

    async def authenticate(headers: Mapping[str, str]) -> str:
        if headers.get("authorization") != "Bearer good":
            raise Unauthorized(challenge)
        return "test|alice"

    app = Server("guarded", state_keys=[KeyRing.generate_secret()])

    @app.tool()
    async def hello() -> str:
        return "hello"

    with InProcessServer(app.asgi(authenticate=authenticate)) as server:
        url = f"{server.base}/mcp"
        async with httpx.AsyncClient() as http:
            options: dict[str, Any] = {"http_client": http} if via == "httpx" else {}
            with pytest.raises(AuthorizationRequiredError) as caught:
                async with Client.connect(url, **options):
                    pass
            assert caught.value.status == 401
            assert caught.value.www_authenticate == challenge
            assert "Bearer ..." in str(caught.value)
            async with Client.connect(url, headers={"Authorization": "Bearer good"}, **options) as client:
                assert (await client.call_tool("hello")).text == "hello"


async def test_mcp_param_headers_are_learned_from_tools_list(ours_http: tuple[ServerProcess, Path]) -> None:
    """A tool whose arguments travel in Mcp-Param-* headers (x-mcp-header): without the tools
    listed, the server refuses with -32020 and the client lists them and retries once."""
    server, _ = ours_http
    arguments = {"region": "Zürich", "query": "SELECT 1", "limit": 3}
    async with Client.connect(server.url) as client:
        result = await client.call_tool("run_query", arguments)
        assert result.text == "ran SELECT 1 in Zürich (limit 3)"
    async with Client.connect(server.url) as client:
        assert "run_query" in [tool["name"] for tool in await client.list_tools()]
        assert (
            await client.call_tool("run_query", {"region": "eu", "query": "q"})
        ).text == "ran q in eu (limit 10)"


async def test_a_reply_cut_off_after_it_began_is_never_sent_again(raw_server: Any) -> None:
    """The server got the call and began to answer: sending it again would run the tool twice."""

    def cut_off(message: dict[str, Any]) -> bytes:
        return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"

    server = await raw_server(discover_or(cut_off, close_after=True))
    async with Client.connect(server.url) as client:
        with pytest.raises(TransportError, match="tools/call"):
            await client.call_tool("once")
    assert [m["method"] for m, _ in server.requests] == ["server/discover", "tools/call"]


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \xb2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}",
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX",
    ],
    ids=["non-ascii-length", "negative-chunk", "0x-chunk", "chunk-without-crlf"],
)
async def test_bad_framing_is_a_malformed_message(raw_server: Any, reply: bytes) -> None:
    server = await raw_server(discover_or(lambda m: reply, close_after=True))
    async with Client.connect(server.url) as client:
        with pytest.raises(MalformedMessageError):
            await client.call_tool("x")


async def test_one_huge_chunk_is_refused_at_the_limit_not_buffered(raw_server: Any) -> None:
    limit = 1 << 20

    def huge(message: dict[str, Any]) -> bytes:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        return head + b"7fffffff\r\n" + b"x" * (2 * limit)  # declares 2 GiB, sends 2 MiB

    server = await raw_server(discover_or(huge, close_after=True))
    async with Client.connect(HttpTransport(server.url, max_message_bytes=limit)) as client:
        with pytest.raises(MalformedMessageError, match="over the limit"):
            await client.call_tool("x")
