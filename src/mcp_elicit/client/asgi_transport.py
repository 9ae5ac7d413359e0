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

What the app sends is checked as an ASGI server checks it (a head, then its body; a message of
another shape or out of turn raises in the app, which then fails its request), and its ``send``
waits once a few messages are ahead of the client's reading, as a socket's does. The call ends
once the response is read: an app still running after it (cleaning up, or not listening for
the disconnect) runs on by itself, and :meth:`AsgiTransport.aclose` ends what is left.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
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
from mcp_elicit.client.http11 import media_type
from mcp_elicit.client.text import clean
from mcp_elicit.client.transport import OnNotification, Outgoing
from mcp_elicit.wire.jsonrpc import Response

logger = logging.getLogger("mcp_elicit.client.asgi")

# The ASGI types (as in mcp_elicit.transport.asgi, which the client does not import: it would
# bring the server with it).
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

# Messages the app may send ahead of the client's reading (a socket's buffer does the same):
# beyond them its send() waits, so an app streaming without a pause cannot keep the event loop
# (and the request timeout) from running, nor fill the memory.
_AHEAD = 8
# Seconds aclose() gives the app calls still running, once cancelled, to end.
_CLOSE_WAIT = 5.0


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
        self._running: set[asyncio.Future[None]] = set()  # app calls not over yet
        self._closed = False

    @property
    def reached_via(self) -> str:
        return f"{self._url} (in process)"

    async def start(self) -> None:
        pass

    async def aclose(self) -> None:
        """Cancel the app calls still running, and wait for them a while. A call still waiting
        for its response fails with a TransportError that says the client was closed (not with
        the app's answer to its cancellation)."""
        self._closed = True
        running, self._running = self._running, set()
        for app in running:
            app.cancel()
        if running:
            await asyncio.wait(running, timeout=_CLOSE_WAIT)

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        if self._closed:
            raise TransportError("the client is closed")
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
        exchange.follow(app)
        self._running.add(app)
        app.add_done_callback(lambda done: self._ended(done, exchange))
        try:
            response = await self._reply(exchange, request, on_notification)
        except Exception:
            if self._closed:
                raise self._closed_under(request) from None
            raise
        finally:
            exchange.disconnect()  # the response is read (or the caller gave up): the client is gone
        if self._closed:
            raise self._closed_under(request)
        return response

    async def _reply(
        self, exchange: _Exchange, request: Outgoing, on_notification: OnNotification | None
    ) -> Response:
        """The app's reply to ``request``, read as an HTTP client reads one."""
        status, reply_headers = await exchange.started()
        if status == 200 and media_type(reply_headers.get("content-type", "")) == "text/event-stream":
            return await sse_reply(exchange.chunks(), request, on_notification, self._limit)
        body = bytearray()
        async for chunk in exchange.chunks():
            body += chunk
            if len(body) > self._limit:
                raise MalformedMessageError(f"the server's reply is over the limit of {self._limit} bytes")
        return json_reply(
            status,
            bytes(body),
            request,
            self._url,
            reply_headers.get("www-authenticate"),
            reply_headers.get("location"),
        )

    def _closed_under(self, request: Outgoing) -> TransportError:
        """The error of a request still waiting when this client was closed (by another task)."""
        return TransportError(f"{request.method} to {self.reached_via} did not finish: the client was closed")

    def _ended(self, app: asyncio.Future[None], exchange: _Exchange) -> None:
        """An app call is over. What it raised after its whole response is only logged, as an
        ASGI server would (before it, the request already failed with it)."""
        self._running.discard(app)
        if app.cancelled():
            return
        failure = app.exception()
        if failure is not None and exchange.complete and not isinstance(failure, _Disconnected):
            logger.warning("the in-process app failed after its response: %s", _described(failure))


class _Disconnected(OSError):
    """What the app's ``send`` raises once the client has gone (as an ASGI server's does)."""


def _described(failure: BaseException) -> str:
    """An exception the app raised, as a message quotes it: one clean line of bounded size."""
    try:
        text = repr(failure)
    except Exception:  # an exception whose repr fails: its type still says something
        text = type(failure).__name__
    return clean(text, single_line=True, max_length=300)


def _stage_after(stage: str, message: object) -> str:
    """What the app may send after ``message`` (``"head"``, ``"body"``, then ``"done"``); the
    error an ASGI server raises in the app for a message of another shape, or out of turn."""
    if not isinstance(message, Mapping):
        raise TypeError(f"an ASGI message is a dict, not {type(message).__name__}")
    kind = message.get("type")
    if stage == "head" and kind == "http.response.start":
        status = message.get("status")
        if type(status) is not int or not 100 <= status <= 999:
            raise TypeError(f"http.response.start needs a status from 100 to 999, not {status!r}")
        headers = message.get("headers", ())
        if not isinstance(headers, list | tuple) or not all(_is_header(header) for header in headers):
            raise TypeError("http.response.start needs its headers as (bytes, bytes) pairs")
        return "body"
    if stage == "body" and kind == "http.response.body":
        if not isinstance(message.get("body", b""), bytes | bytearray):
            raise TypeError("http.response.body needs its body as bytes")
        return "body" if message.get("more_body", False) else "done"
    expected = {"head": "http.response.start", "body": "http.response.body"}.get(stage)
    if expected is None:
        raise RuntimeError(f"the ASGI message {kind!r} came after the response was complete")
    raise RuntimeError(f"expected the ASGI message {expected!r}, not {kind!r}")


def _is_header(header: object) -> bool:
    return (
        isinstance(header, list | tuple)
        and len(header) == 2
        and all(isinstance(part, bytes | bytearray) for part in header)
    )


class _Exchange:
    """One request: its ``receive`` and ``send`` as the app sees them, and the messages the app
    sent as the client reads them (at most :data:`_AHEAD` waiting)."""

    def __init__(self, body: bytes) -> None:
        self._body: bytes | None = body
        self._gone = asyncio.Event()
        self._app: asyncio.Future[None] | None = None
        self._stage = "head"
        self._sent: deque[Message] = deque()
        self._arrived = asyncio.Event()  # a message sent, or the app ended
        self._taken = asyncio.Event()  # a message read, or the client gone

    @property
    def complete(self) -> bool:
        """Whether the app has sent its whole response."""
        return self._stage == "done"

    def follow(self, app: asyncio.Future[None]) -> None:
        self._app = app
        app.add_done_callback(lambda _: self._arrived.set())

    async def receive(self) -> Message:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self._stage = _stage_after(self._stage, message)
        while not self._gone.is_set() and len(self._sent) >= _AHEAD:
            self._taken.clear()
            await self._taken.wait()
        if self._gone.is_set():
            raise _Disconnected("the client has disconnected")
        self._sent.append(message)
        self._arrived.set()

    def disconnect(self) -> None:
        self._gone.set()
        self._taken.set()  # an app waiting to send learns it at once

    async def _next(self) -> Message:
        assert self._app is not None, "follow() the app first"
        while not self._sent:
            if self._app.done():
                raise self._failure(self._app)
            self._arrived.clear()
            await self._arrived.wait()
        self._taken.set()
        return self._sent.popleft()

    @staticmethod
    def _failure(app: asyncio.Future[None]) -> TransportError:
        failure = None if app.cancelled() else app.exception()
        if failure is None:
            return TransportError("the in-process app ended without a complete response")
        error = TransportError(f"the in-process app failed: {_described(failure)}")
        error.__cause__ = failure
        return error

    async def started(self) -> tuple[int, dict[str, str]]:
        message = await self._next()  # the head: send() lets nothing else come first
        headers = {
            bytes(name).decode("latin-1").lower(): bytes(value).decode("latin-1")
            for name, value in message.get("headers", ())
        }
        return message["status"], headers

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            message = await self._next()  # the body's parts: send() lets nothing else come
            body = message.get("body", b"")
            if body:
                yield bytes(body)
            if not message.get("more_body", False):
                return
