"""A 2025-11-25 client over real HTTP, as small as the tests of the legacy server need: the
handshake, requests answered with JSON, and SSE streams read event by event."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from tests.http_session_support import sse_lines

VERSION = "2025-11-25"
_ids = itertools.count(1)


@dataclass
class Event:
    id: str | None
    data: str

    @property
    def message(self) -> dict[str, Any] | None:
        """The JSON-RPC message the event carries (None for a priming event)."""
        return json.loads(self.data) if self.data.strip() else None


def result_text(event: Event | None) -> str:
    """The text of the tool result an event carries."""
    assert event is not None
    message = event.message
    assert message is not None
    assert "result" in message, message
    text: str = message["result"]["content"][0]["text"]
    return text


class Events:
    """The events of one SSE response, read as they come."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = sse_lines(response)

    async def next(self) -> Event | None:
        """The next event; None once the response has ended."""
        event_id: str | None = None
        data: list[str] = []
        seen = False
        async for line in self._lines:
            if not line:
                if seen:
                    return Event(event_id, "\n".join(data))
                continue
            seen = True
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "id":
                event_id = value
            elif field == "data":
                data.append(value)
        return Event(event_id, "\n".join(data)) if seen else None

    async def rest(self) -> list[Event]:
        """Every event until the response ends."""
        events = []
        while (event := await self.next()) is not None:
            events.append(event)
        return events


class LegacyClient:
    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self.initialize_result: dict[str, Any] = {}

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
        }
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        headers.update(extra)
        return headers

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": VERSION,
            "capabilities": capabilities if capabilities is not None else {"elicitation": {}},
            "clientInfo": {"name": "tests", "version": "1"},
        }
        response = await self.post(
            {"jsonrpc": "2.0", "id": next(_ids), "method": "initialize", "params": params}
        )
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        self.initialize_result = response.json()["result"]
        note = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202
        return self.initialize_result

    async def post(self, message: dict[str, Any], **headers: str) -> httpx.Response:
        return await self.http.post(self.url, content=json.dumps(message), headers=self.headers(**headers))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC response (result or error) to a request answered with JSON."""
        message = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}
        response = await self.post(message, accept="application/json")
        reply: dict[str, Any] = response.json()
        return reply

    @asynccontextmanager
    async def call(self, method: str, params: dict[str, Any]) -> AsyncIterator[Events]:
        """A call answered on its SSE stream, open while the block runs."""
        message = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        request = self.http.build_request(
            "POST", self.url, content=json.dumps(message), headers=self.headers()
        )
        response = await self.http.send(request, stream=True)
        try:
            assert response.status_code == 200, (await response.aread()).decode()
            assert response.headers["content-type"] == "text/event-stream"
            yield Events(response)
        finally:
            await response.aclose()

    @asynccontextmanager
    async def get(self, last_event_id: str | None = None) -> AsyncIterator[Events]:
        """The session's GET stream (with ``last_event_id``: a call's stream, resumed)."""
        headers = self.headers(accept="text/event-stream")
        headers.pop("content-type")
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        request = self.http.build_request("GET", self.url, headers=headers)
        response = await self.http.send(request, stream=True)
        try:
            assert response.status_code == 200, (await response.aread()).decode()
            yield Events(response)
        finally:
            await response.aclose()
