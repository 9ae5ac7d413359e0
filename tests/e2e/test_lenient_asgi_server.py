"""The ASGI app as a lenient HTTP server would call it: uvicorn refuses a ``Content-Length``
that is not ASCII digits before the app sees it, other servers may not."""

from __future__ import annotations

import json
from typing import Any

from mcp_elicit import Server
from tests.e2e.test_http import body, headers_for


async def test_a_content_length_that_is_not_ascii_digits_does_not_break_the_request() -> None:
    app = Server("lenient", version="1", state_keys=["lenient-asgi-tests-only-key-0123456789abcdef"])

    @app.tool()
    async def echo(text: str) -> str:
        return text

    message = body("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    payload = json.dumps(message).encode()
    headers = [(k.encode(), v.encode()) for k, v in headers_for(message).items()]
    # "²".isdigit() is true but int("²") raises: the size check must not take it for a number.
    headers.append((b"content-length", "²".encode("latin-1")))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": ("127.0.0.1", 1)}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": payload, "more_body": False}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)

    await app.asgi()(scope, receive, send)
    assert sent[0]["status"] == 200
    assert json.loads(sent[1]["body"])["result"]["content"][0]["text"] == "hi"
