"""Streamable HTTP end to end: a real uvicorn process on 127.0.0.1, real HTTP requests."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import httpx
import pytest

from mcp_elicit.wire.http import encode_header_value
from tests.e2e.conftest import HttpServer
from tests.helpers import wait_for_text
from tests.http_session_support import sse_lines

VERSION = "2026-07-28"
_ids = itertools.count(1)
FORM = {"elicitation": {"form": {}}}


def body(
    method: str, params: dict[str, Any] | None = None, *, capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    p = dict(params or {})
    p.setdefault(
        "_meta",
        {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": FORM if capabilities is None else capabilities,
        },
    )
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": p}


def headers_for(message: dict[str, Any], **extra: str) -> dict[str, str]:
    h = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": message["method"],
    }
    params = message.get("params", {})
    target = params.get("name", params.get("uri"))
    if isinstance(target, str):
        h["mcp-name"] = encode_header_value(target)
    h.update(extra)
    return h


async def post(client: httpx.AsyncClient, url: str, message: dict[str, Any], **extra: str) -> httpx.Response:
    return await client.post(url, content=json.dumps(message), headers=headers_for(message, **extra))


@pytest.fixture
async def client() -> Any:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


async def test_the_server_runs_on_the_loop_of_this_module_run(
    http_server: HttpServer, h11_server: HttpServer, client: httpx.AsyncClient, server_loop: str
) -> None:
    for server in (http_server, h11_server):
        call = body("tools/call", {"name": "event_loop", "arguments": {}})
        result = (await post(client, server.url, call)).json()["result"]
        assert result["content"][0]["text"] == server_loop


async def test_two_round_flow_over_http(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    call = body("tools/call", {"name": "greet", "arguments": {}})
    first = (await post(client, http_server.url, call)).json()["result"]
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["first"]
    retry = body(
        "tools/call",
        {
            "name": "greet",
            "arguments": {},
            "inputResponses": {"first": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": first["requestState"],
        },
    )
    assert retry["id"] != call["id"]
    second = (await post(client, http_server.url, retry)).json()["result"]
    assert list(second["inputRequests"]) == ["last"]
    assert second["requestState"] != first["requestState"]
    final = body(
        "tools/call",
        {
            "name": "greet",
            "arguments": {},
            "inputResponses": {"last": {"action": "accept", "content": {"name": "Lovelace"}}},
            "requestState": second["requestState"],
        },
    )
    response = await post(client, http_server.url, final)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    result = response.json()["result"]
    assert result["content"] == [{"type": "text", "text": "Hello, Ada Lovelace!"}]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "e2e", "version": "1.0.0"}


async def test_non_ascii_tool_name_travels_base64_encoded(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    call = body("tools/call", {"name": "grüßen", "arguments": {}})
    response = await post(client, http_server.url, call)
    assert headers_for(call)["mcp-name"].startswith("=?base64?")
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "input_required"


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT"])
async def test_post_get_and_delete_are_the_methods(
    http_server: HttpServer, client: httpx.AsyncClient, verb: str
) -> None:
    """POST carries messages; GET and DELETE are a 2025-11-25 session's stream and end, so without
    a session they are told to name one; anything else is 405."""
    response = await client.request(verb, http_server.url, headers={"accept": "text/event-stream"})
    if verb == "PUT":
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, POST, DELETE"
    else:
        assert response.status_code == 400
        assert "Mcp-Session-Id header is required" in response.json()["error"]["message"]


async def test_unknown_path_is_404(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    response = await client.post(http_server.url.replace("/mcp", "/other"), content=b"{}")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("mutate", "status", "code", "needle"),
    [
        (lambda m, h: h.update({"mcp-name": "other"}), 400, -32020, "Mcp-Name header value 'other'"),
        (lambda m, h: h.pop("mcp-method"), 400, -32020, "Mcp-Method header is required"),
        (lambda m, h: h.update({"mcp-protocol-version": "2025-11-25"}), 400, -32020, "MCP-Protocol-Version"),
        (lambda m, h: m["params"].pop("_meta"), 400, -32602, "params._meta is required"),
        (
            lambda m, h: m.update({"method": "nope/nope"}) or h.update({"mcp-method": "nope/nope"}),
            404,
            -32601,
            "Method not found",
        ),
        (
            lambda m, h: (
                m["params"]["_meta"].update({"io.modelcontextprotocol/protocolVersion": "1900-01-01"})
                or h.update({"mcp-protocol-version": "1900-01-01"})
            ),
            400,
            -32022,
            "Unsupported protocol version",
        ),
    ],
)
async def test_protocol_errors_get_their_status(
    http_server: HttpServer, client: httpx.AsyncClient, mutate: Any, status: int, code: int, needle: str
) -> None:
    message = body("tools/call", {"name": "greet", "arguments": {}})
    headers = headers_for(message)
    mutate(message, headers)
    response = await client.post(http_server.url, content=json.dumps(message), headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code
    assert needle in error["message"]
    assert response.json()["id"] == message["id"]


async def test_missing_capability_is_400_with_required_capabilities(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    response = await post(
        client, http_server.url, body("tools/call", {"name": "greet", "arguments": {}}, capabilities={})
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_handler_failures_that_escaped_the_engine_get_json_answers(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    cancelled = await post(client, http_server.url, body("tools/call", {"name": "awaits_cancelled"}))
    assert cancelled.status_code == 200
    assert cancelled.json()["result"]["isError"] is True
    unsendable = await post(client, http_server.url, body("tools/call", {"name": "unsendable_error"}))
    assert unsendable.headers["content-type"] == "application/json"
    assert unsendable.json()["error"]["code"] == -32603


async def test_bad_bodies(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    base = {"content-type": "application/json", "accept": "application/json"}
    response = await client.post(http_server.url, content=b"{oops", headers=base)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    response = await client.post(http_server.url, content=b"[]", headers=base)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    response = await client.post(
        http_server.url, content=b"{}", headers={**base, "content-type": "text/plain"}
    )
    assert response.status_code == 415
    response = await client.post(http_server.url, content=b"{}", headers={**base, "accept": "text/html"})
    assert response.status_code == 406
    big = json.dumps(body("tools/list", {"pad": "x" * 100_000})).encode()
    response = await client.post(http_server.url, content=big, headers=base)
    assert response.status_code == 413
    assert "over the limit of 65536 bytes" in response.json()["error"]["message"]


async def test_notifications_get_202(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    headers = {"content-type": "application/json", "accept": "application/json"}
    response = await client.post(
        http_server.url, content=json.dumps(note), headers={**headers, "mcp-protocol-version": VERSION}
    )
    assert response.status_code == 202
    assert response.content == b""
    # Without the 2026 header it is a 2025-11-25 client's, which must name its session.
    legacy = await client.post(http_server.url, content=json.dumps(note), headers=headers)
    assert legacy.status_code == 400
    assert "Mcp-Session-Id header is required" in legacy.json()["error"]["message"]


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("https://evil.example", 403),
        ("http://localhost:5173", 200),
        ("http://127.0.0.1:9", 200),
        # The loopback rule of wire.hosts: all of 127.0.0.0/8 and [::1]; not the absolute
        # "localhost.", names under localhost or DNS names that resolve to 127.0.0.1.
        ("http://127.0.0.2:9", 200),
        ("http://[::1]:9", 200),
        ("http://localhost.:5173", 403),
        ("http://app.localhost:5173", 403),
        ("http://127.0.0.1.nip.io", 403),
    ],
)
async def test_origin_check(
    http_server: HttpServer, client: httpx.AsyncClient, origin: str, status: int
) -> None:
    response = await post(client, http_server.url, body("tools/list"), origin=origin)
    assert response.status_code == status


async def test_tampered_state_is_refused_with_one_fixed_message(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    first = (
        await post(client, http_server.url, body("tools/call", {"name": "greet", "arguments": {}}))
    ).json()["result"]
    state = first["requestState"]
    flipped = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    for bad in (state + "-TAMPERED", flipped, state[:20], "v1.", ""):
        retry = body(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "requestState": bad,
                "inputResponses": {"first": {"action": "accept", "content": {"name": "x"}}},
            },
        )
        response = await post(client, http_server.url, retry)
        assert response.status_code == 400
        assert response.json()["error"] == {
            "code": -32602,
            "message": "Invalid or expired requestState",
            "data": {"reason": "invalid_request_state"},
        }


async def test_state_is_bound_to_the_tool_and_its_arguments(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    first = (
        await post(client, http_server.url, body("tools/call", {"name": "greet", "arguments": {}}))
    ).json()["result"]
    other_tool = body(
        "tools/call", {"name": "grüßen", "arguments": {}, "requestState": first["requestState"]}
    )
    assert (await post(client, http_server.url, other_tool)).json()["error"]["code"] == -32602


async def test_state_is_bound_to_the_user(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    call = body("tools/call", {"name": "greet", "arguments": {}})
    first = (await post(client, http_server.url, call, authorization="Bearer alice")).json()["result"]
    answer = {"first": {"action": "accept", "content": {"name": "A"}}}
    as_bob = body(
        "tools/call",
        {"name": "greet", "arguments": {}, "requestState": first["requestState"], "inputResponses": answer},
    )
    refused = await post(client, http_server.url, as_bob, authorization="Bearer bob")
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "Invalid or expired requestState"
    anonymous = await post(client, http_server.url, as_bob)
    assert anonymous.status_code == 400
    # Alice's state in Bob's request is a security event for the operator (not an INFO line).
    deadline = time.monotonic() + 5
    while "SECURITY: a requestState sealed for 'test|alice' was sent by 'test|bob'" not in (
        log := http_server.log_text()
    ):
        assert time.monotonic() < deadline, log[-2000:]
        await asyncio.sleep(0.05)
    assert "sealed for 'test|alice' was sent by an anonymous caller on tools/call 'greet'" in log
    as_alice = body(
        "tools/call",
        {"name": "greet", "arguments": {}, "requestState": first["requestState"], "inputResponses": answer},
    )
    ok = await post(client, http_server.url, as_alice, authorization="Bearer alice")
    assert ok.status_code == 200
    assert list(ok.json()["result"]["inputRequests"]) == ["last"]


async def test_state_is_bound_to_the_client_the_token_was_issued_to(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    call = body("tools/call", {"name": "greet", "arguments": {}})
    first = await post(client, http_server.url, call, authorization="Bearer alice@app-a")
    state = first.json()["result"]["requestState"]
    answer = {"first": {"action": "accept", "content": {"name": "A"}}}

    def retry() -> dict[str, Any]:
        params = {"name": "greet", "arguments": {}, "requestState": state, "inputResponses": answer}
        return body("tools/call", params)

    for other in ("Bearer alice@app-b", "Bearer alice"):
        refused = await post(client, http_server.url, retry(), authorization=other)
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == "Invalid or expired requestState"
    ok = await post(client, http_server.url, retry(), authorization="Bearer alice@app-a")
    assert ok.status_code == 200
    assert list(ok.json()["result"]["inputRequests"]) == ["last"]


async def test_progress_streams_as_sse_when_asked(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    message = body("tools/call", {"name": "progress", "arguments": {}})
    message["params"]["_meta"]["progressToken"] = "p1"
    response = await post(client, http_server.url, message)
    assert response.headers["content-type"] == "text/event-stream"
    events = [
        json.loads(line[len("data: ") :]) for line in response.text.splitlines() if line.startswith("data: ")
    ]
    assert [e.get("method") for e in events] == ["notifications/progress", "notifications/progress", None]
    assert events[0]["params"] == {"progressToken": "p1", "progress": 1, "total": 2, "message": "half way"}
    assert events[-1]["result"]["content"][0]["text"] == "progressed"


async def test_progress_without_token_is_plain_json(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    response = await post(client, http_server.url, body("tools/call", {"name": "progress", "arguments": {}}))
    assert response.headers["content-type"] == "application/json"


async def test_an_error_after_progress_keeps_its_http_status(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    """-32021 MUST be HTTP 400: progress sent just before it is held back, not streamed at 200."""
    message = body("tools/call", {"name": "progress_then_sampling", "arguments": {}})
    message["params"]["_meta"]["progressToken"] = "p1"
    response = await post(client, http_server.url, message)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == -32021


async def test_progress_streams_while_the_handler_is_still_running(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/call", {"name": "progress_then_wait", "arguments": {"label": "stream"}})
    message["params"]["_meta"]["progressToken"] = "p2"
    events: list[dict[str, Any]] = []
    async with client.stream(
        "POST", http_server.url, content=json.dumps(message), headers=headers_for(message)
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        async for line in sse_lines(response):
            if not line.startswith("data: "):
                continue
            events.append(json.loads(line[len("data: ") :]))
            if len(events) == 1:  # the progress came while the handler waits for this marker
                (http_server.markers / "go-stream").write_text("go")
    assert events[0]["params"] == {"progressToken": "p2", "progress": 1, "total": 2, "message": "waiting"}
    assert events[-1]["result"]["content"][0]["text"] == "went on"


async def test_closing_the_connection_cancels_the_handler(http_server: HttpServer) -> None:
    message = body("tools/call", {"name": "slow", "arguments": {"label": "http"}})
    async with httpx.AsyncClient(timeout=httpx.Timeout(0.5)) as impatient:
        with pytest.raises(httpx.ReadTimeout):
            await post(impatient, http_server.url, message)
    assert await wait_for_text(http_server.markers / "cancelled-http", "cancelled") == "cancelled"


async def test_a_slow_handler_does_not_block_other_clients(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    slow = asyncio.create_task(
        post(client, http_server.url, body("tools/call", {"name": "slow", "arguments": {"label": "busy"}}))
    )
    await asyncio.sleep(0.1)
    fast = await post(client, http_server.url, body("tools/list"))
    assert fast.status_code == 200
    assert not slow.done()
    slow.cancel()


async def test_a_body_that_arrives_too_slowly_gets_408(http_server: HttpServer) -> None:
    port = int(http_server.url.split(":")[2].split("/")[0])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    writer.write(head.encode() + b'{"jsonrpc":')  # then nothing more
    await writer.drain()
    async with asyncio.timeout(10):
        status_line = await reader.readline()
        rest = await reader.read()
    writer.close()
    assert status_line.startswith(b"HTTP/1.1 408")
    assert b"the request body did not arrive in time" in rest
    # The server is still serving others.
    async with httpx.AsyncClient(timeout=10) as other:
        assert (await post(other, http_server.url, body("tools/list"))).status_code == 200
