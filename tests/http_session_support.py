"""A 2025-11-25 client played by hand over httpx, for tests that check every status, header and
event of a session as it travels (and that play the client badly on purpose)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def initialize(version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}} if capabilities is None else capabilities,
            "clientInfo": {"name": "hand-written", "version": "1"},
        },
    }


class Session:
    """A 2025-11-25 client session, played by hand over one httpx client."""

    def __init__(
        self, http: httpx.AsyncClient, url: str, user: str | None = None, *, token: str | None = None
    ) -> None:
        """``user``: the test servers' ``Bearer <user>`` hook; ``token``: a real access token."""
        self.http = http
        self.url = url
        self.id: str | None = None
        self.version = LEGACY
        bearer = token if token is not None else user
        self.auth = {} if bearer is None else {"authorization": f"Bearer {bearer}"}
        self._ids = iter(range(1, 10_000))

    def headers(self, **extra: str) -> dict[str, str]:
        h = {"content-type": "application/json", "accept": ACCEPT, **self.auth, **extra}
        if self.id is not None:
            h["mcp-session-id"] = self.id
            h["mcp-protocol-version"] = self.version
        return h

    async def open(self, message: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.http.post(self.url, json=message or initialize(), headers=self.headers())
        assert response.status_code == 200, response.text
        self.id = response.headers["mcp-session-id"]
        result: dict[str, Any] = response.json()["result"]
        self.version = result["protocolVersion"]
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, expect=202)
        return result

    async def post(self, message: dict[str, Any], *, expect: int = 200, **headers: str) -> httpx.Response:
        response = await self.http.post(self.url, json=message, headers=self.headers(**headers))
        assert response.status_code == expect, response.text
        return response

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}}

    def stream(self, message: dict[str, Any]) -> Any:
        return self.http.stream("POST", self.url, json=message, headers=self.headers())


async def events(response: httpx.Response) -> AsyncIterator[tuple[str | None, str]]:
    """(id, data) of each SSE event of ``response``."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data or event_id is not None:
                yield event_id, "\n".join(data)
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


async def answer_questions(
    session: Session, call: dict[str, Any], answer: Any
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Stream ``call``, answering each ``elicitation/create`` with ``answer(params)`` (a result
    object, POSTed back); every message of the stream, and the call's response."""
    seen: list[dict[str, Any]] = []
    final = None
    async with session.stream(call) as response:
        assert response.status_code == 200, await response.aread()
        async for _, data in events(response):
            if not data:
                continue
            message = json.loads(data)
            seen.append(message)
            if message.get("method") == "elicitation/create":
                result = answer(message["params"])
                await session.post({"jsonrpc": "2.0", "id": message["id"], "result": result}, expect=202)
            elif message.get("id") == call["id"] and "method" not in message:
                final = message
    return seen, final
