"""The in-process transport: a client talking straight to a server object, no socket, no process.

``Client.connect(server)`` (an :class:`mcp_elicit.Server`, or any ASGI app that serves MCP)
calls the server's ASGI app in this event loop, as an ASGI server would: each request is one
HTTP POST with every MCP header, its body handed over in one ``http.request`` message, and the
reply read from the app's ``http.response.*`` messages -- JSON, or an SSE stream whose
notifications reach the caller as they come. Everything but the socket is what runs over
Streamable HTTP: the server's header checks, ``_meta``, authentication hook, SSE, and the
client's reply parsing. Cancelling the caller tells the app the client went away
(``http.disconnect``), which cancels the handler, as closing a connection does.

Tests and documentation examples use it to run a whole client against a server in one
process; an application can use it to call its own tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from mcp_elicit.client.errors import MalformedMessageError, TransportError
from mcp_elicit.client.http import (
    DEFAULT_MAX_MESSAGE_BYTES,
    check_header_values,
    json_reply,
    request_headers,
    sse_reply,
)
from mcp_elicit.client.transport import OnNotification, Outgoing
from mcp_elicit.wire.jsonrpc import Response

logger = logging.getLogger("mcp_elicit.client.asgi")

# The ASGI types (as in mcp_elicit.transport.asgi, which the client does not import: it would
# bring the server with it).
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


def app_of(target: object) -> tuple[AsgiApp, str] | None:
    """The ASGI app and MCP path of a server object (one with ``asgi()``) or of an app that serves
    MCP itself (an ``HttpApp``, or a connect kit's site, whose ``mcp`` is one); None for anything
    else."""
    make = getattr(target, "asgi", None)
    app: Any = make() if callable(make) else target
    endpoint = getattr(app, "mcp", app)
    path = getattr(endpoint, "path", None)
    if not callable(app) or not isinstance(path, str):
        return None
    return app, path


class AsgiTransport:
    """Requests to ``app`` in this process (see the module docstring). ``url`` is the address the
    requests claim (its path must be where the app serves MCP); ``headers`` go with every request
    (``Authorization`` for an app behind authentication)."""

    def __init__(
        self,
        app: AsgiApp,
        *,
        url: str = "http://in-process/mcp",
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url must be an http(s) URL, such as http://in-process/mcp, not {url!r}")
        self._app = app
        self._url = url
        self._scheme = parts.scheme
        self._host = parts.netloc
        self._path = parts.path or "/"
        self._query = parts.query.encode("latin-1")
        self._headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in {"Host": parts.netloc, **check_header_values(headers or {})}.items()
        ]
        self._limit = max_message_bytes

    @property
    def reached_via(self) -> str:
        return f"{self._url} (in process)"

    async def start(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        exchange = _Exchange(request.body)
        mcp_headers = request_headers(request).items()
        headers = [
            *self._headers,
            *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in mcp_headers),
            (b"content-length", b"%d" % len(request.body)),
        ]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": self._scheme,
            "path": self._path,
            "raw_path": self._path.encode("latin-1"),
            "query_string": self._query,
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 0),
            "server": (self._host, None),
        }
        app = asyncio.ensure_future(self._app(scope, exchange.receive, exchange.send))
        try:
            status, reply_headers = await exchange.started(app)
            if status == 200 and reply_headers.get("content-type", "").startswith("text/event-stream"):
                return await sse_reply(exchange.chunks(app), request, on_notification, self._limit)
            body = bytearray()
            async for chunk in exchange.chunks(app):
                body += chunk
                if len(body) > self._limit:
                    raise MalformedMessageError(
                        f"the server's reply is over the limit of {self._limit} bytes"
                    )
            return json_reply(
                status,
                bytes(body),
                request,
                self._url,
                reply_headers.get("www-authenticate"),
                reply_headers.get("location"),
            )
        finally:
            exchange.disconnect()  # the response is read (or the caller gave up): the client is gone
            await _settled(app)


async def _settled(app: asyncio.Future[None]) -> None:
    """Let the app's call end (it sees the disconnect); what it raises after its response is
    only logged, as an ASGI server would."""
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait({app}, timeout=5.0)
    if not app.done():
        app.cancel()
        return
    if not app.cancelled() and app.exception() is not None:
        logger.warning("the in-process app failed after its response: %r", app.exception())


class _Exchange:
    """One request's ``receive`` and ``send`` as the app sees them."""

    def __init__(self, body: bytes) -> None:
        self._body: bytes | None = body
        self._gone = asyncio.Event()
        self._messages: asyncio.Queue[Message] = asyncio.Queue()

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if self._gone.is_set():
            raise OSError("the client has disconnected")  # what an ASGI server does
        await self._messages.put(message)

    def disconnect(self) -> None:
        self._gone.set()

    async def _next(self, app: asyncio.Future[None]) -> Message:
        getting: asyncio.Future[Message] = asyncio.ensure_future(self._messages.get())
        waiting: set[asyncio.Future[Any]] = {getting, app}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getting.done():
                getting.cancel()
        if getting.done() and not getting.cancelled():
            return getting.result()
        if app.done() and not app.cancelled() and app.exception() is not None:
            raise TransportError(f"the in-process app failed: {app.exception()!r}") from app.exception()
        raise TransportError("the in-process app ended without a complete response")

    async def started(self, app: asyncio.Future[None]) -> tuple[int, dict[str, str]]:
        message = await self._next(app)
        if message.get("type") != "http.response.start":
            raise TransportError(f"the in-process app sent {message.get('type')!r} before its response head")
        headers = {
            bytes(name).decode("latin-1").lower(): bytes(value).decode("latin-1")
            for name, value in message.get("headers", ())
        }
        return int(message["status"]), headers

    async def chunks(self, app: asyncio.Future[None]) -> AsyncIterator[bytes]:
        while True:
            message = await self._next(app)
            if message.get("type") != "http.response.body":
                continue
            body = message.get("body", b"")
            if body:
                yield bytes(body)
            if not message.get("more_body", False):
                return
