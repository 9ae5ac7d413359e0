"""The ASGI app of ``test_any_asgi_app.py``: it serves MCP to the client's in-process transport
and, for each request it gets, does what one :class:`Behaviour` says at the ASGI level.

A behaviour is the honest reply (or another one) framed as JSON or as an SSE stream, cut into
``more_body`` chunks at any bytes, under any status and headers, with at most one
:class:`Fault`: nothing sent, a body before the head, the head twice, an exception (or
``CancelledError``) before, during or after the body, a stream that stops short, a second
``receive()`` (which only a disconnect answers), a late reply, a message that is not what ASGI
says, a flood of body messages, lingering after the response.

The app plays a 2026-07-28 server (``server/discover``, then ``tools/call`` rounds that ask a
form until the last one, which completes with ``marker``) or a 2025-11-25 one (every request is
refused with ``-32601``, as a legacy server refuses ``server/discover``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .rogue_server import read_body
from .test_any_server_reply import VERSION

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

CONTENT_TYPES = {"json": b"application/json", "sse": b"text/event-stream"}
FLOOD_SECONDS = 2.0  # how long a flooding app sends before it stops by itself
LINGER_SECONDS = 2.5  # how long a lingering app stays after its response, deaf to the disconnect
FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Which one?",
        "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string"}}},
    },
}


@dataclass(frozen=True)
class Sse:
    """How an SSE reply is written: line ends, a byte order mark, what comes before the response
    event (comments, notifications, a priming event, a retry field), and whether the response
    event comes at all."""

    eol: bytes = b"\n"
    bom: bool = False
    before: tuple[str, ...] = ()  # "comment", "notification", "priming", "retry", "unreadable"
    response: bool = True


@dataclass(frozen=True)
class Fault:
    """What goes wrong with one reply. ``at`` counts the body chunks sent before the fault (past
    the last chunk: after the complete response; ``-1``: before the head)."""

    kind: str = "none"
    at: int = 0
    error: str = "RuntimeError"  # for "raise": the exception's type
    text: str = "boom"  # and its message
    delay: float = 0.0  # for "late": seconds before the head, deaf to the disconnect
    message: Any = None  # for "malformed": sent instead of the head (at 0) or the first body message


@dataclass(frozen=True)
class Behaviour:
    framing: str = "json"  # "json" or "sse"
    status: Any = 200
    content_type: bytes | None = None  # None: the framing's own (application/json, text/event-stream)
    type_name: bytes = b"content-type"
    headers: tuple[tuple[bytes, bytes], ...] = ()  # more headers, after the content type
    reply: Any = None  # None: the honest reply; a dict (the request's id put in) or raw bytes
    pad: int = 0  # spaces inside the JSON text (still valid JSON): a reply of any size
    sse: Sse = field(default_factory=Sse)
    cuts: tuple[int, ...] = ()  # where the body is split into chunks (each taken modulo its length + 1)
    fault: Fault = field(default_factory=Fault)


def exception(kind: str, text: str) -> BaseException:
    """A fresh exception of one of the kinds an app raises."""
    if kind == "CancelledError":
        return asyncio.CancelledError(text)
    if kind == "ExceptionGroup":
        return ExceptionGroup("unhandled errors in a TaskGroup", [ValueError(text)])
    kinds: dict[str, type[Exception]] = {
        "RuntimeError": RuntimeError,
        "ValueError": ValueError,
        "KeyError": KeyError,
        "OSError": OSError,
        "TimeoutError": TimeoutError,
    }
    return kinds[kind](text)


def payload(behaviour: Behaviour, honest: dict[str, Any], request_id: Any) -> bytes:
    """The JSON text of the reply, padded."""
    reply = behaviour.reply
    if isinstance(reply, bytes):
        return reply
    message = honest if reply is None else {**reply, "id": request_id}
    text = json.dumps(message, ensure_ascii=False)
    if behaviour.pad and text.endswith("}"):
        text = text[:-1] + " " * behaviour.pad + "}"
    return text.encode()


NOTE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "ça va"}}


def sse_body(style: Sse, data: bytes) -> bytes:
    eol = style.eol
    parts = [b"\xef\xbb\xbf"] if style.bom else []
    for kind in style.before:
        parts.append(
            {
                "comment": b": keep-alive" + eol,
                "notification": b"data: " + json.dumps(NOTE, ensure_ascii=False).encode() + eol + eol,
                "priming": b"id: 0" + eol + b"data:" + eol + eol,
                "retry": b"retry: 10" + eol,
                "unreadable": b"data: {not json" + eol + eol,
            }[kind]
        )
    if style.response:
        parts.append(b"event: message" + eol + b"id: 1" + eol + b"data: " + data + eol + eol)
    return b"".join(parts)


def body_of(behaviour: Behaviour, honest: dict[str, Any], request_id: Any) -> bytes:
    data = payload(behaviour, honest, request_id)
    return sse_body(behaviour.sse, data) if behaviour.framing == "sse" else data


def cut_points(body: bytes, cuts: tuple[int, ...]) -> list[int]:
    return sorted(cut % (len(body) + 1) for cut in cuts)


def split(body: bytes, cuts: tuple[int, ...]) -> list[bytes]:
    """``body`` cut at each of ``cuts`` (modulo its length + 1, so a cut may fall anywhere, and two
    cuts at one place make an empty chunk)."""
    points = cut_points(body, cuts)
    pieces, start = [], 0
    for point in points:
        pieces.append(body[start:point])
        start = point
    pieces.append(body[start:])
    return pieces


def head_of(behaviour: Behaviour) -> dict[str, Any]:
    content_type = behaviour.content_type or CONTENT_TYPES[behaviour.framing]
    headers = [(behaviour.type_name, content_type), *behaviour.headers]
    return {"type": "http.response.start", "status": behaviour.status, "headers": headers}


async def play(behaviour: Behaviour, body: bytes, receive: Receive, send: Send) -> None:
    """Send the reply as ``behaviour`` says (the request body is already read)."""
    fault = behaviour.fault
    kind = fault.kind
    chunks = split(body, behaviour.cuts)
    at = min(fault.at, len(chunks))
    if kind == "nothing":
        return
    if kind == "raise" and at < 0:
        raise exception(fault.error, fault.text)
    if kind == "read twice":
        await receive()  # no more body: only the client's disconnect answers it
    if kind == "late":
        await asyncio.sleep(fault.delay)
    if kind == "body first":
        await send({"type": "http.response.body", "body": chunks[0], "more_body": True})
    head = head_of(behaviour)
    if kind == "malformed" and at <= 0:
        await send(fault.message)
    else:
        await send(head)
    if kind == "head only":
        return
    if kind == "flood":
        await flood(send, b" " if behaviour.framing == "json" else b": flood\n\n")
        return
    for index, chunk in enumerate(chunks):
        if index == at:
            if kind == "raise":
                raise exception(fault.error, fault.text)
            if kind == "stop":
                return  # more_body was True: the response is not complete
            if kind == "second head":
                await send(head)
            if kind == "unknown message":
                await send({"type": "http.response.trailers", "headers": [], "more_trailers": False})
        last = index == len(chunks) - 1
        message = {"type": "http.response.body", "body": chunk, "more_body": not last}
        if kind == "malformed" and at > 0 and index == 0:
            message = fault.message
        await send(message)
    if at >= len(chunks):  # after the complete response
        if kind == "raise":
            raise exception(fault.error, fault.text)
        if kind == "second head":
            await send(head)
    if kind == "watch":
        while (await receive())["type"] != "http.disconnect":
            pass
    if kind == "linger":
        await asyncio.sleep(LINGER_SECONDS)


async def flood(send: Send, chunk: bytes) -> None:
    """Body messages, as fast as ``send`` takes them, until the client is gone or
    :data:`FLOOD_SECONDS` passed (one message object, so that what piles up costs little)."""
    message = {"type": "http.response.body", "body": chunk, "more_body": True}
    started = time.monotonic()
    try:
        while time.monotonic() - started < FLOOD_SECONDS:
            await send(message)
    except OSError:
        return


class ScriptedApp:
    """Serves ``/mcp``: request ``n`` (``server/discover`` first, then the ``tools/call`` rounds)
    gets ``behaviours[n]`` (a plain honest reply past the end). ``rounds`` ``tools/call`` rounds:
    all but the last ask a form, the last completes with ``marker``."""

    path = "/mcp"

    def __init__(
        self, behaviours: list[Behaviour], *, rounds: int, marker: str, legacy: bool = False
    ) -> None:
        self.behaviours = behaviours
        self.rounds = rounds
        self.marker = marker
        self.legacy = legacy
        self.scopes: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []  # each reply's body, before it is cut into chunks
        self.calls = 0

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        self.scopes.append(scope["type"])
        if scope["type"] != "http":
            return
        request = json.loads(await read_body(receive))
        index = len(self.requests)
        self.requests.append(request)
        behaviour = self.behaviours[index] if index < len(self.behaviours) else Behaviour()
        body = body_of(behaviour, self.honest(request), request["id"])
        self.bodies.append(body)
        await play(behaviour, body, receive, send)

    def honest(self, request: dict[str, Any]) -> dict[str, Any]:
        """What a well-behaved server answers ``request``."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if self.legacy:
            return {**reply, "error": {"code": -32601, "message": "Method not found"}}
        if request["method"] == "server/discover":
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"},
            }
        elif request["method"] == "tools/call" and self.calls < self.rounds - 1:
            self.calls += 1
            result = {
                "resultType": "input_required",
                "inputRequests": {"pick": FORM},
                "requestState": f"round-{self.calls}",
            }
        else:
            self.calls += 1
            result = {"resultType": "complete", "content": [{"type": "text", "text": self.marker}]}
        return {**reply, "result": result}
