"""ASGI, the interface every HTTP part of this package is written to: its types and replies.

An ASGI app is ``async def app(scope, receive, send)``: ``scope`` describes the request,
``receive()`` gives its body (and ``http.disconnect`` when the client goes away), ``send()``
takes the response as an ``http.response.start`` message (status, headers) followed by
``http.response.body`` messages. The MCP endpoint, the connect kit's pages and metadata, and the
demo's stand-in provider all reply through :func:`send_response`, so that every response of the
package is built one way (an SSE reply, sent in parts, is the one exception: :mod:`.sse`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

__all__ = [
    "ASGIApp",
    "Header",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "send_json",
    "send_response",
    "send_text",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Header = tuple[bytes, bytes]

JSON = b"application/json"
NO_STORE: Header = (b"cache-control", b"no-store")
# The head of every SSE response: never cached, and never buffered by a proxy (nginx holds a
# response back until it ends unless told not to, which would stall every event).
EVENT_STREAM: tuple[Header, ...] = (
    (b"content-type", b"text/event-stream"),
    NO_STORE,
    (b"x-accel-buffering", b"no"),
)
_NO_BODY = (204, 304)


async def send_response(
    send: Send, status: int, headers: Sequence[Header], body: bytes = b"", *, length: int | None = None
) -> None:
    """A whole response: ``headers`` as given (never a ``Content-Length``), ``Content-Length``
    (``len(body)``, or ``length``: a HEAD response declares its GET's; none for 204 and 304, which
    have no body), then ``body``."""
    head = [*headers]
    if status not in _NO_BODY:
        head.append((b"content-length", b"%d" % (len(body) if length is None else length)))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def send_json(send: Send, status: int, body: bytes, headers: Sequence[Header] = ()) -> None:
    """A JSON response that no cache keeps (the MCP endpoint's every reply)."""
    await send_response(send, status, [(b"content-type", JSON), NO_STORE, *headers], body)


async def send_text(send: Send, status: int, text: bytes, headers: Sequence[Header] = ()) -> None:
    """A short plain-text response (404 for a path that is not served, say)."""
    await send_response(send, status, [(b"content-type", b"text/plain; charset=utf-8"), *headers], text)
