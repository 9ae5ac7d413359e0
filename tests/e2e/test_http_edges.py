"""Streamable HTTP edges against the real server (uvicorn on 127.0.0.1): compressed request
bodies, notifications a handler sends after its result, and what requests in flight get when the
server is stopped (SIGTERM)."""

from __future__ import annotations

import asyncio
import gzip
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import HttpServer, start_http_server, stop
from tests.e2e.test_http import body, headers_for, post
from tests.helpers import wait_for_text
from tests.http_session_support import Session, messages


@pytest.fixture
async def client() -> Any:
    async with httpx.AsyncClient(timeout=10) as c:
        yield c


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize("encoding", ["gzip", "GZIP", "identity, gzip", "br"])
async def test_a_compressed_body_is_refused_with_415_naming_the_encoding(
    http_server: HttpServer, client: httpx.AsyncClient, encoding: str
) -> None:
    """It reached the JSON parser as it was: 400, "the message is not valid UTF-8"."""
    message = body("tools/list")
    response = await client.post(
        http_server.url,
        content=gzip.compress(json.dumps(message).encode()),
        headers=headers_for(message, **{"content-encoding": encoding}),
    )
    assert response.status_code == 415
    assert response.headers["accept-encoding"] == "identity"
    error = response.json()["error"]
    assert error["code"] == -32600
    assert f"Content-Encoding {encoding!r} is not supported; send the body uncompressed" in error["message"]


async def test_a_second_content_encoding_line_counts_too(http_server: HttpServer) -> None:
    """Repeated lines are one list: ``identity`` first must not hide ``gzip`` after it."""
    message = body("tools/list")
    payload = gzip.compress(json.dumps(message).encode())
    head = "".join(f"{k}: {v}\r\n" for k, v in headers_for(message).items())
    port = int(http_server.url.split(":")[2].split("/")[0])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Encoding: identity\r\n"
            f"Content-Encoding: gzip\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
        reply = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    assert reply.startswith(b"HTTP/1.1 415"), reply[:100]
    assert b"Content-Encoding 'identity, gzip' is not supported" in reply


async def test_an_identity_content_encoding_is_served(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    response = await post(client, http_server.url, body("tools/list"), **{"content-encoding": "identity"})
    assert response.status_code == 200
    assert "tools" in response.json()["result"]


async def test_progress_reported_after_the_result_is_dropped_without_an_error(
    http_server: HttpServer, client: httpx.AsyncClient
) -> None:
    """A task the handler left behind reports progress once the SSE reply has ended: uvicorn
    refused the message after the response and the handler's report raised RuntimeError."""
    label = f"late-{time.monotonic_ns()}"
    arguments = {"label": label, "early": True}
    message = body("tools/call", {"name": "progress_after_result", "arguments": arguments})
    message["params"]["_meta"]["progressToken"] = "late"
    response = await post(client, http_server.url, message)
    assert response.headers["content-type"] == "text/event-stream"
    events = _events(response.text)
    assert [e.get("method") for e in events] == ["notifications/progress", None]
    assert events[-1]["result"]["content"][0]["text"] == "returned"
    assert await wait_for_text(http_server.markers / f"late-{label}", "none") == "none"


def _stoppable(tmp_path: Path, *extra: str) -> HttpServer:
    """A server of its own (this test stops it), with its output kept for the test to read."""
    return start_http_server(tmp_path, *extra)


async def _sigterm_and_wait(server: HttpServer, limit: float) -> tuple[int | None, float]:
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        code = await asyncio.to_thread(server.process.wait, limit)
    except subprocess.TimeoutExpired:
        code = None
    return code, time.monotonic() - started


async def test_sigterm_lets_short_requests_finish_and_answers_the_rest_with_503(tmp_path: Path) -> None:
    server = _stoppable(tmp_path, "--graceful", "1")
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            stuck = body("tools/call", {"name": "slow", "arguments": {"label": "stuck"}})
            short = body("tools/call", {"name": "in_a_thread", "arguments": {"seconds": 0.5}})
            streaming = body("tools/call", {"name": "progress_then_wait", "arguments": {"label": "never"}})
            streaming["params"]["_meta"]["progressToken"] = "s"
            calls = [asyncio.create_task(post(client, server.url, m)) for m in (stuck, short, streaming)]
            await wait_for_text(server.markers / "started-stuck", "started")
            await asyncio.sleep(0.3)  # the SSE reply has started (its progress went out)
            code, took = await _sigterm_and_wait(server, 10)
            stuck_reply, short_reply, stream_reply = await asyncio.gather(*calls)
        assert code == -signal.SIGTERM, server.log_text()
        assert took < 5
        assert short_reply.status_code == 200
        assert short_reply.json()["result"]["content"][0]["text"] == "thread done"
        assert stuck_reply.status_code == 503
        shutting_down = "Internal error: the server is shutting down; retry the request"
        assert stuck_reply.json() == {
            "jsonrpc": "2.0",
            "id": stuck["id"],
            "error": {"code": -32603, "message": shutting_down},
        }
        assert stream_reply.status_code == 200
        events = _events(stream_reply.text)
        assert events[0]["method"] == "notifications/progress"
        assert events[-1] == {**stuck_reply.json(), "id": streaming["id"]}
        assert "Exception in ASGI application" not in server.log_text()
    finally:
        stop(server)


async def test_sigterm_ends_a_2025_11_25_call_stream_with_the_calls_error(tmp_path: Path) -> None:
    """A call of a session answered on its SSE stream: its stream ends with the call's error
    response (-32603, shutting down) once the graceful time is over, not with a cut connection
    (uvicorn then logged the cancelled request as an "Exception in ASGI application")."""
    server = _stoppable(tmp_path, "--graceful", "1")
    try:
        async with httpx.AsyncClient(timeout=20) as http:
            session = Session(http, server.url)
            await session.open()
            call = session.request("tools/call", {"name": "slow", "arguments": {"label": "legacy"}})

            async def read_stream() -> list[dict[str, Any]]:
                async with session.stream(call) as response:
                    assert response.status_code == 200
                    return [message async for message in messages(response)]

            reading = asyncio.create_task(read_stream())
            await wait_for_text(server.markers / "started-legacy", "started")
            code, took = await _sigterm_and_wait(server, 10)
            got = await asyncio.wait_for(reading, 5)
        assert code == -signal.SIGTERM, server.log_text()
        assert took < 5
        assert got == [
            {
                "jsonrpc": "2.0",
                "id": call["id"],
                "error": {
                    "code": -32603,
                    "message": "Internal error: the server is shutting down; retry the request",
                },
            }
        ]
        assert "Exception in ASGI application" not in server.log_text()
    finally:
        stop(server)


async def test_by_default_sigterm_ends_the_server_though_a_handler_never_finishes(tmp_path: Path) -> None:
    """uvicorn's own default waits for requests in flight for ever: the process never exited."""
    server = _stoppable(tmp_path)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            stuck = body("tools/call", {"name": "slow", "arguments": {"label": "default"}})
            call = asyncio.create_task(post(client, server.url, stuck))
            await wait_for_text(server.markers / "started-default", "started")
            code, took = await _sigterm_and_wait(server, 12)
            reply = await asyncio.wait_for(call, 5) if code is not None else None
        assert code == -signal.SIGTERM
        assert 4 < took < 10  # serve()'s default: 5 s
        assert reply is not None
        assert reply.status_code == 503
        assert reply.json()["error"]["code"] == -32603
    finally:
        stop(server)
