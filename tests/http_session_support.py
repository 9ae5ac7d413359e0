"""A 2025-11-25 client played by hand over httpx, for tests that check every status, header and
event of a session as it travels (and that play the client badly on purpose)."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
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
        """POST ``message``, its reply read as it comes (``async with``)."""
        return self.http.stream("POST", self.url, json=message, headers=self.headers())

    def listen(self, last_event_id: str | None = None) -> Any:
        """The session's GET stream (``async with``); with ``last_event_id``, a stream picked up
        again after that event."""
        resume = {} if last_event_id is None else {"last-event-id": last_event_id}
        return self.http.stream("GET", self.url, headers=self.headers(accept="text/event-stream", **resume))


_LINE_END = re.compile(rb"\r\n|\r|\n")


async def sse_lines(response: httpx.Response) -> AsyncIterator[str]:
    """The lines of an SSE body as the SSE spec ends them: at CR, LF or CRLF only. (httpx's
    ``aiter_lines`` also ends a line at U+0085, U+2028 and the like, which JSON data may hold.)"""
    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        held = b"\r" if buffer.endswith(b"\r") else b""  # a CRLF's LF may be in the next chunk
        *lines, rest = _LINE_END.split(buffer[: len(buffer) - len(held)])
        buffer = rest + held
        for line in lines:
            yield line.decode("utf-8")
    for line in _LINE_END.split(buffer)[:-1]:  # a last line without its end is no line
        yield line.decode("utf-8")


async def events(response: httpx.Response) -> AsyncIterator[tuple[str | None, str]]:
    """(id, data) of each SSE event of ``response``."""
    event_id: str | None = None
    data: list[str] = []
    async for line in sse_lines(response):
        if line == "":
            if data or event_id is not None:
                yield event_id, "\n".join(data)
            event_id, data = None, []
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))


async def messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of ``response``'s SSE events (events without data left out, such as
    the priming one)."""
    async for _, data in events(response):
        if data:
            yield json.loads(data)


@asynccontextmanager
async def heard_on(session: Session) -> AsyncIterator[list[dict[str, Any]]]:
    """What ``session``'s GET stream carries while the block runs (it listens from a moment
    before the block begins, and its last messages have a moment to arrive after it ends)."""
    heard: list[dict[str, Any]] = []

    async def listen() -> None:
        async with session.listen() as stream:
            assert stream.status_code == 200
            async for message in messages(stream):
                heard.append(message)

    listening = asyncio.ensure_future(listen())
    try:
        await asyncio.sleep(0.3)
        yield heard
        await asyncio.sleep(0.3)
    finally:
        listening.cancel()
        await asyncio.gather(listening, return_exceptions=True)


@asynccontextmanager
async def until_first_question(
    session: Session, call: dict[str, Any]
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """POST ``call`` and read its stream up to its first ``elicitation/create``: (that event's id,
    the question), the stream still open in the block; the client drops it when the block ends."""
    async with session.stream(call) as response:
        assert response.status_code == 200, await response.aread()
        async for event_id, data in events(response):
            message = json.loads(data) if data else {}
            if message.get("method") == "elicitation/create":
                assert event_id is not None, message  # a question can be resumed after
                yield event_id, message
                return
    raise AssertionError(f"the stream of {call} ended without a question")


async def answer_questions(
    session: Session,
    call: dict[str, Any],
    answer: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    answering: Sequence[Session] = (),
    resume_from: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Stream ``call``, answering each ``elicitation/create`` with ``answer(params)`` (a result
    object, POSTed back to ``session``, or to each of ``answering`` in turn: the same session
    reached another way); every message of the stream, and the call's response. With
    ``resume_from``, the call is not sent again: its stream is picked up after that event id."""
    repliers = itertools.cycle(answering or [session])
    seen: list[dict[str, Any]] = []
    final = None
    opened = session.stream(call) if resume_from is None else session.listen(resume_from)
    async with opened as response:
        assert response.status_code == 200, await response.aread()
        async for message in messages(response):
            seen.append(message)
            if message.get("method") == "elicitation/create":
                result = answer(message["params"])
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                posted = await next(repliers).post(reply, expect=202)
                assert posted.content == b""  # the 202 has no body
            elif message.get("id") == call["id"] and "method" not in message:
                final = message
    return seen, final
