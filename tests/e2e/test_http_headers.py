"""Streamable HTTP header rules end to end (real uvicorn process on 127.0.0.1): ``Mcp-Param-*``
headers checked against the arguments, raw non-ASCII header values, a duplicated ``Mcp-*``
header answered with the request's id, two Authorization headers refused, and a legacy ``initialize``
told which versions we speak."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcp_elicit import Server
from mcp_elicit.wire.http import encode_header_value
from tests.e2e.conftest import HttpServer
from tests.e2e.test_http import body, headers_for
from tests.helpers import InProcessServer


@pytest.fixture
async def client() -> Any:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


async def call_run_query(
    client: httpx.AsyncClient, url: str, arguments: dict[str, Any], **param_headers: str | bytes
) -> httpx.Response:
    message = body("tools/call", {"name": "run_query", "arguments": arguments})
    headers: dict[str, str | bytes] = {**headers_for(message), **param_headers}
    return await client.post(url, content=json.dumps(message), headers=headers)


async def test_param_headers_that_match_the_arguments_pass(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    response = await call_run_query(
        client,
        http_server.url,
        {"region": "us-west1", "query": "SELECT 1", "limit": 5},
        **{"mcp-param-region": "us-west1", "mcp-param-limit": "5"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"][0]["text"] == "ran SELECT 1 in us-west1 (limit 5)"


async def test_param_headers_base64_and_numbers_by_value(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    # A value that is not plain ASCII travels base64-encoded; 5.0 and 5 are the same integer.
    response = await call_run_query(
        client,
        http_server.url,
        {"region": "Zürich", "query": "q", "limit": 5.0},
        **{"mcp-param-region": encode_header_value("Zürich"), "mcp-param-limit": "5"},
    )
    assert response.status_code == 200, response.text


async def test_an_absent_argument_needs_no_header(http_server: HttpServer, client: httpx.AsyncClient) -> None:
    response = await call_run_query(
        client, http_server.url, {"region": "eu", "query": "q"}, **{"mcp-param-region": "eu"}
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("arguments", "headers", "needle"),
    [
        ({"region": "us-west1", "query": "q"}, {}, "Mcp-Param-Region header is required"),
        (
            {"region": "us-west1", "query": "q"},
            {"mcp-param-region": "eu-central1"},
            "Mcp-Param-Region header value 'eu-central1' does not match",
        ),
        ({"region": "us-west1", "query": "q"}, {"mcp-param-region": "=?base64?***?="}, "not valid base64"),
        (
            {"region": "eu", "query": "q", "limit": 5},
            {"mcp-param-region": "eu", "mcp-param-limit": "6"},
            "Mcp-Param-Limit header value '6'",
        ),
        (
            {"region": "eu", "query": "q", "limit": 5},
            {"mcp-param-region": "eu", "mcp-param-limit": "5abc"},
            "Mcp-Param-Limit",
        ),
        (
            {"region": "Zürich", "query": "q"},
            {"mcp-param-region": "Zürich".encode("latin-1")},
            "other than visible ASCII",
        ),
        (
            {"region": "eu", "query": "q"},  # limit left to its default; a proxy would see 500
            {"mcp-param-region": "eu", "mcp-param-limit": "500"},
            "Mcp-Param-Limit header is sent, but the argument 'limit' has no value",
        ),
    ],
)
async def test_param_headers_that_disagree_are_refused(
    http_server: HttpServer,
    client: httpx.AsyncClient,
    arguments: dict[str, Any],
    headers: dict[str, str | bytes],
    needle: str,
) -> None:
    response = await call_run_query(client, http_server.url, arguments, **headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32020
    assert needle in error["message"]


async def test_a_raw_non_ascii_mcp_name_is_refused(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    # Decoded as latin-1 the raw bytes would equal the tool's name; only the base64 form counts.
    message = body("tools/call", {"name": "grüßen", "arguments": {}})
    headers: dict[str, str | bytes] = {**headers_for(message), "mcp-name": "grüßen".encode("latin-1")}
    response = await client.post(http_server.url, content=json.dumps(message), headers=headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32020
    assert "=?base64?" in error["message"]


async def test_a_duplicated_mcp_header_is_refused_with_the_request_id(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/call", {"name": "greet", "arguments": {}})
    headers = [*headers_for(message).items(), ("mcp-name", "greet")]
    response = await client.post(http_server.url, content=json.dumps(message), headers=headers)
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] == message["id"]
    assert answer["error"]["code"] == -32020
    assert "appears twice" in answer["error"]["message"]


async def test_two_authorization_headers_are_refused_in_either_era(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    """Which of two Authorization headers counts is for no one to guess (a proxy in front may have
    checked the other): 400 before the authentication hook runs, for a request of either era and
    for a notification, and never the caller of either header."""
    twice = [("authorization", "Bearer alice"), ("authorization", "Bearer mallory")]
    call = body("tools/call", {"name": "greet", "arguments": {}})
    response = await client.post(
        http_server.url, content=json.dumps(call), headers=[*headers_for(call).items(), *twice]
    )
    assert response.status_code == 400
    assert response.json()["id"] == call["id"]
    assert response.json()["error"]["code"] == -32020
    assert response.json()["error"]["message"] == "Header mismatch: the authorization header appears twice"

    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    legacy = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    response = await client.post(http_server.url, content=json.dumps(initialize), headers=[*legacy, *twice])
    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": "Invalid request: the Authorization header appears twice"},
    }

    notification = body("notifications/cancelled", {"requestId": 1})
    del notification["id"]
    response = await client.post(
        http_server.url,
        content=json.dumps(notification),
        headers=[*headers_for(notification).items(), *twice],
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


async def test_a_control_character_in_a_plain_mcp_name_is_refused_even_when_it_matches(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/call", {"name": "a\tb", "arguments": {}})
    headers = {**headers_for(message), "mcp-name": "a\tb"}
    response = await client.post(http_server.url, content=json.dumps(message), headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


@pytest.mark.parametrize("method", ["GET", "DELETE", "POST"])
async def test_a_foreign_origin_is_refused_before_anything_else(
    http_server: HttpServer, client: httpx.AsyncClient, method: str
) -> None:
    response = await client.request(method, http_server.url, headers={"origin": "https://evil.example"})
    assert response.status_code == 403
    assert "origin 'https://evil.example' is not allowed" in response.json()["error"]["message"]
    allowed = await client.request(method, http_server.url, headers={"origin": "http://127.0.0.1"})
    assert allowed.status_code == (400 if method != "POST" else 415)  # GET, DELETE: no session named


async def test_two_origin_headers_are_refused_whatever_their_order(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/list", {})
    for origins in (
        ["http://127.0.0.1", "https://evil.example"],
        ["https://evil.example", "http://127.0.0.1"],
    ):
        headers = [*headers_for(message).items(), *(("origin", origin) for origin in origins)]
        response = await client.post(http_server.url, content=json.dumps(message), headers=headers)
        assert response.status_code == 403, origins


async def test_an_initialize_with_a_2026_header_is_a_header_mismatch(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    """A 2025-11-25 handshake sent with MCP-Protocol-Version 2026-07-28 contradicts itself
    (wire-2025-11-25.md §8.2, row 5): -32020, not a session."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
    }
    response = await client.post(http_server.url, content=json.dumps(message), headers=headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32020
    assert "MCP-Protocol-Version" in error["message"]
    assert "mcp-session-id" not in response.headers


async def post_with(
    client: httpx.AsyncClient, url: str, message: dict[str, Any], headers: list[tuple[str, str | bytes]]
) -> httpx.Response:
    """A POST with exactly ``headers`` (repeated names kept, in order)."""
    return await client.post(url, content=json.dumps(message), headers=headers)


async def test_repeated_accept_lines_are_one_list_and_q0_refuses(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/list")
    base = [(k, v) for k, v in headers_for(message).items() if k != "accept"]
    split = [*base, ("accept", "text/event-stream"), ("accept", "application/json")]
    assert (await post_with(client, http_server.url, message, split)).status_code == 200
    refusals = ("application/json;q=0, text/event-stream", "application/jsonl", "*/*, application/json;q=0")
    for refused in refusals:
        response = await post_with(client, http_server.url, message, [*base, ("accept", refused)])
        assert response.status_code == 406, refused
    # SSE refused with q=0: no stream for the progress, the reply as plain JSON.
    progress = body("tools/call", {"name": "progress", "arguments": {}})
    progress["params"]["_meta"]["progressToken"] = "p1"
    plain = [(k, v) for k, v in headers_for(progress).items() if k != "accept"]
    response = await post_with(
        client, http_server.url, progress, [*plain, ("accept", "application/json, text/event-stream;q=0")]
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"


async def test_mcp_headers_this_revision_does_not_use_may_repeat(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/list")
    headers = [*headers_for(message).items(), ("mcp-session-id", "a"), ("mcp-session-id", "b")]
    assert (await post_with(client, http_server.url, message, headers)).status_code == 200


async def test_non_ascii_method_and_version_headers_are_refused_even_when_they_match(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/lisé")
    headers = [(k, v) for k, v in headers_for(message).items() if k != "mcp-method"]
    raw = [*headers, ("mcp-method", b"tools/lis\xe9")]  # the body's value, in Latin-1 bytes
    response = await post_with(client, http_server.url, message, raw)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


async def test_an_integer_id_beyond_64_bits_is_named_as_such(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    message = body("tools/list")
    raw = json.dumps(message).replace(f'"id": {message["id"]}', '"id": 123456789012345678901234567890')
    response = await client.post(http_server.url, content=raw, headers=headers_for(message))
    assert response.status_code == 400
    assert "integer ids must fit in 64 bits" in response.json()["error"]["message"]


async def test_by_default_a_local_page_gets_no_cors(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    """The loopback default only lets local pages past the DNS-rebinding check: a page on any
    local port could otherwise read what the tools answer."""
    origin = "http://localhost:5173"
    preflight = await client.options(
        http_server.url, headers={"origin": origin, "access-control-request-method": "POST"}
    )
    assert preflight.status_code == 405
    assert "access-control-allow-origin" not in preflight.headers
    message = body("tools/list")
    response = await client.post(
        http_server.url, content=json.dumps(message), headers={**headers_for(message), "origin": origin}
    )
    assert response.status_code == 200
    assert "access-control-allow-origin" not in response.headers


@pytest.mark.parametrize("listed", [["https://app.example"], ["*"]])
async def test_a_page_at_a_listed_origin_can_call_through_cors(listed: list[str]) -> None:
    app = Server("cors", state_keys=["cors-tests-only-secret-abcdefghijklmnopqrstuv"])

    @app.tool()
    async def hello() -> str:
        return "hello"

    origin = "https://app.example"
    with InProcessServer(app.asgi(allowed_origins=listed)) as served:
        url = f"{served.base}/mcp"
        async with httpx.AsyncClient(timeout=10) as client:
            preflight = await client.options(
                url,
                headers={
                    "origin": origin,
                    "access-control-request-method": "POST",
                    "access-control-request-headers": "content-type, mcp-method, mcp-name, mcp-param-region",
                },
            )
            assert preflight.status_code == 204
            assert "content-length" not in preflight.headers  # RFC 9110 §8.6: never on a 204
            assert preflight.headers["access-control-allow-origin"] == origin
            assert preflight.headers["access-control-allow-methods"] == "POST"
            allowed = {h.strip() for h in preflight.headers["access-control-allow-headers"].split(",")}
            assert {
                "content-type",
                "mcp-method",
                "mcp-name",
                "mcp-protocol-version",
                "mcp-param-region",
            } <= allowed
            assert "access-control-allow-credentials" not in preflight.headers
            message = body("tools/call", {"name": "hello", "arguments": {}})
            response = await client.post(
                url, content=json.dumps(message), headers={**headers_for(message), "origin": origin}
            )
            assert response.status_code == 200
            assert response.headers["access-control-allow-origin"] == origin
            twice = await client.post(
                url,
                content=json.dumps(message),
                headers=[*headers_for(message).items(), ("origin", origin), ("origin", origin)],
            )
            assert twice.status_code == 403  # two Origin headers: refused whatever is listed
            if listed != ["*"]:
                foreign = await client.options(
                    url, headers={"origin": "https://evil.example", "access-control-request-method": "POST"}
                )
                assert foreign.status_code == 403
                assert "access-control-allow-origin" not in foreign.headers
