"""Streamable HTTP (MCP 2026-07-28), server side, as a plain ASGI app.

One POST carries one JSON-RPC request or notification. GET and DELETE (the older revisions'
stream and session end) get 405, and so does OPTIONS, except a CORS preflight from an origin
listed in ``allowed_origins``. Checks, in order: path, method, Origin (403), Content-Type and
Content-Encoding (415), Accept (406), body size (413), JSON-RPC shape, ``_meta`` (-32602), headers
against the body (-32020), authentication (401), then the server. The reply is JSON, or an SSE stream when
the handler sends progress or log notifications and the client accepts ``text/event-stream``.
A client that closes the connection cancels the handler; a request the server itself cancels
(uvicorn, when its graceful shutdown time is over) is answered 503.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcp_elicit.transport.answer import answer
from mcp_elicit.transport.lifespan import acknowledge_lifespan
from mcp_elicit.wire.accept import accepted_replies
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError, header_mismatch
from mcp_elicit.wire.hosts import is_loopback_host
from mcp_elicit.wire.http import check_request_headers, status_for_error
from mcp_elicit.wire.jsonrpc import (
    InvalidMessage,
    MessageTooLarge,
    Notification,
    encode_error,
    encode_notification,
    parse_message,
)
from mcp_elicit.wire.meta import initialize_refused, parse_request_meta
from mcp_elicit.wire.param_headers import check_param_headers

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

logger = logging.getLogger("mcp_elicit.transport.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Unauthorized(Exception):
    """Raised by an ``authenticate`` hook: answer 401 with this ``WWW-Authenticate`` value."""

    def __init__(self, www_authenticate: str, message: str = "Unauthorized") -> None:
        super().__init__(message)
        self.www_authenticate = www_authenticate
        self.message = message


@dataclass(frozen=True, slots=True)
class Caller:
    """Who an ``authenticate`` hook found calling: the user (``principal``) and the OAuth client
    the token was issued to (its ``client_id`` or ``azp``), both from a validated token."""

    principal: str
    client: str | None = None


# Given the request headers (lower-case names), return the authenticated principal (or a Caller,
# which also names the client), None for an anonymous request, or raise Unauthorized.
Authenticate = Callable[[Mapping[str, str]], Awaitable[str | Caller | None]]

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
_CONTENT_TYPE_JSON = (b"content-type", b"application/json")
_NO_STORE = (b"cache-control", b"no-store")
_JSON_HEADERS = [_CONTENT_TYPE_JSON, _NO_STORE]
_START = "http.response.start"
_BODY = "http.response.body"

# The request headers the pipeline reads, by their raw (lower-case) name. Without an
# ``authenticate`` hook, other headers are skipped undecoded (nothing reads them), except Mcp-*
# ones, which are still checked for duplicates.
_READ_HEADERS: dict[bytes, str] = {
    name.encode("latin-1"): name
    for name in (
        "origin",
        "content-type",
        "content-encoding",
        "accept",
        "content-length",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "access-control-request-method",
        "access-control-request-headers",
    )
}
# Mcp-* headers that must not appear twice (the others, Mcp-Session-Id of older revisions say,
# are ignored like any header this server does not use).
_SINGLE_MCP_HEADERS = frozenset({"mcp-protocol-version", "mcp-method", "mcp-name"})
# What a browser page at an allowed origin may send (CORS preflight): the MCP headers, the
# parameter headers a tool declares and a bearer token.
_CORS_ALLOWED_HEADERS = "content-type, accept, authorization, mcp-protocol-version, mcp-method, mcp-name"
_CORS_HEADER_NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_TWO_ORIGINS = "(more than one Origin header)"
# The Accept value MCP clients send (and what any client that sends exactly it means).
_COMMON_ACCEPT = "application/json, text/event-stream"


def _encoded(content_encoding: str) -> bool:
    """Whether a Content-Encoding value names a coding other than ``identity`` (the body would
    otherwise reach the JSON parser compressed and be refused as "not valid UTF-8")."""
    return any(c.strip().lower() not in ("", "identity") for c in content_encoding.split(","))


def _loopback_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and is_loopback_host(parts.hostname)


class HttpApp:
    """ASGI app serving one MCP endpoint (``path``, default ``/mcp``).

    ``allowed_origins``: browser origins allowed to call (``["*"]`` for any). By default only
    loopback origins are allowed, which blocks DNS-rebinding attacks on local servers;
    requests without an Origin header (non-browser clients) are always allowed. A page at an
    origin listed in ``allowed_origins`` gets what CORS needs: its preflight (``OPTIONS``) is
    answered and every reply names it in ``Access-Control-Allow-Origin`` (the loopback default
    gives no CORS: a page on any local port could otherwise read what the tools answer).
    ``body_timeout``: seconds a request body may take to arrive; slower gets 408 (checked by a
    shared timer, so the answer may come up to ``min(0.05 s, body_timeout / 4)`` later).
    ``sse_hold``: seconds progress and log notifications are held back before an SSE reply
    starts, so that an error coming within that time keeps its HTTP status (see ``_SseStream``).
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_origins: Sequence[str] | None = None,
        authenticate: Authenticate | None = None,
        body_timeout: float = 30.0,
        sse_hold: float = 0.1,
    ) -> None:
        from mcp_elicit.server import options

        self.server = server
        self.body_timeout = options.seconds("body_timeout", body_timeout, positive=True)
        self.sse_hold = options.seconds("sse_hold", sse_hold)
        if not isinstance(path, str) or not path.startswith("/"):
            raise ValueError(f"path must start with '/', such as '/mcp', not {path!r}")
        self.path = path.rstrip("/") or "/"
        if isinstance(allowed_origins, str | bytes):
            raise TypeError(f"allowed_origins must be a list of origins, such as [{allowed_origins!r}]")
        self.allowed_origins = None if allowed_origins is None else frozenset(allowed_origins)
        self.authenticate = authenticate
        self.max_body = server.max_message_bytes
        self._in_flight = _InFlight(body_timeout)

    # -- the request pipeline (one coroutine per request: no nested calls on the hot path) ----
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await acknowledge_lifespan(receive, send)
            return
        path = scope["path"]
        if path != self.path and (path.rstrip("/") or "/") != self.path:
            await _plain(send, 404, b"Not Found")
            return
        headers: dict[str, str] = {}
        duplicate: str | None = None
        read_all = self.authenticate is not None  # the hook sees every header
        for raw_name, raw_value in scope["headers"]:
            # ASGI servers give header names in lower case. The first value of a header wins.
            name = _READ_HEADERS.get(raw_name)
            if name is None:
                if not (read_all or raw_name.startswith(b"mcp-")):
                    continue
                name = raw_name.decode("latin-1")
            if name in headers:
                if name == "origin":
                    headers[name] = _TWO_ORIGINS  # never an allowed origin
                elif name == "accept" or name == "content-encoding":
                    headers[name] += ", " + raw_value.decode("latin-1")  # one list (RFC 9110 §5.3)
                elif duplicate is None and (name in _SINGLE_MCP_HEADERS or name.startswith("mcp-param-")):
                    duplicate = name  # refused once the body (and so the request id) is read
                continue
            headers[name] = raw_value.decode("latin-1")

        # Origin first, whatever the method: a page in a browser must learn nothing more.
        origin = headers.get("origin")
        if origin is not None:
            if not self._origin_allowed(origin):
                await _error(
                    send, 403, None, McpError(INVALID_REQUEST, f"Forbidden: origin {origin!r} is not allowed")
                )
                return
            # CORS only for origins the operator listed: the loopback default lets local pages
            # through the DNS-rebinding check, not read replies (any local port could be anyone's).
            if self.allowed_origins is not None:
                if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
                    await _preflight(send, origin, headers.get("access-control-request-headers"))
                    return
                send = _with_cors(send, origin)
        if scope["method"] != "POST":
            await _json(
                send,
                405,
                encode_error(
                    None, McpError(INVALID_REQUEST, "Method Not Allowed: send JSON-RPC messages with POST")
                ),
                extra=[(b"allow", b"POST")],
            )
            return
        content_type = headers.get("content-type", "")
        if (
            content_type != "application/json"
            and content_type.split(";", 1)[0].strip().lower() != "application/json"
        ):
            await _error(
                send,
                415,
                None,
                McpError(INVALID_REQUEST, "Unsupported Media Type: the body must be application/json"),
            )
            return
        encoding = headers.get("content-encoding")
        if encoding is not None and _encoded(encoding):
            await _json(
                send,
                415,
                encode_error(
                    None,
                    McpError(
                        INVALID_REQUEST,
                        f"Unsupported Media Type: Content-Encoding {encoding!r} is not supported; "
                        "send the body uncompressed",
                    ),
                ),
                extra=[(b"accept-encoding", b"identity")],
            )
            return
        accept = headers.get("accept", "*/*")
        if accept == _COMMON_ACCEPT:
            accepts_sse = True
        else:
            accepts_json, accepts_sse = accepted_replies(accept)
            if not accepts_json:
                await _error(
                    send,
                    406,
                    None,
                    McpError(INVALID_REQUEST, "Not Acceptable: the client must accept application/json"),
                )
                return

        declared = headers.get("content-length")
        if (
            declared is not None
            and declared.isascii()
            and declared.isdigit()
            and int(declared) > self.max_body
        ):
            await self._too_large(send)
            return
        in_flight = self._in_flight
        entry = in_flight.start(receive)
        try:
            body = await self._read_body(entry, receive)
        except asyncio.CancelledError:
            if entry.task.cancelling() == 0:
                raise
            # Only the server cancels a request here (uvicorn, once its graceful shutdown time
            # is over): answer it rather than leave uvicorn's bare 500.
            await _shutting_down(send, None)
            if entry.task.uncancel() == 0:
                return
            raise
        finally:
            in_flight.finish(entry)
        if entry.expired:
            slow = McpError(INVALID_REQUEST, "Invalid request: the request body did not arrive in time")
            await _json(send, 408, encode_error(None, slow), extra=[(b"connection", b"close")])
            return
        if body is None:
            await self._too_large(send)
            return
        try:
            message = parse_message(body, max_bytes=self.max_body)
        except MessageTooLarge as exc:
            await _error(send, 413, exc.request_id, exc)
            return
        except InvalidMessage as exc:
            await _error(send, status_for_error(exc.code), exc.request_id, exc)
            return
        if isinstance(message, Notification):
            # Authenticated like any request, though nothing runs: a 202 tells a caller that
            # its credentials were taken.
            if self.authenticate is not None and await self._authenticated(send, headers, None) is None:
                return
            await send({"type": _START, "status": 202, "headers": []})
            await send({"type": _BODY, "body": b""})
            return
        try:
            if message.method == "initialize":
                raise initialize_refused(message.params)
            meta = parse_request_meta(message.params)
            if duplicate is not None:
                raise header_mismatch(f"the {duplicate} header appears twice")
            check_request_headers(headers, message)
            if self.server.param_headers and message.method == "tools/call":
                tool = message.params.get("name")
                mapping = self.server.param_headers.get(tool) if isinstance(tool, str) else None
                if mapping:
                    check_param_headers(headers, mapping, message.params.get("arguments"))
        except McpError as exc:
            await _error(send, status_for_error(exc.code), message.id, exc)
            return
        principal = client = None
        if self.authenticate is not None:
            caller = await self._authenticated(send, headers, message.id)
            if caller is None:
                return
            principal, client = caller

        # Notifications (progress, logs) need an SSE reply; only a request that asked for
        # them and accepts text/event-stream gets one.
        stream: _SseStream | None = None
        notify = None
        if accepts_sse and (meta.progress_token is not None or meta.log_level is not None):
            stream = _SseStream(send, entry.loop, self.sse_hold)
            notify = stream.notify

        in_flight.handling(entry)
        try:
            failure, payload = await answer(
                self.server, message, meta=meta, principal=principal, notify=notify, client=client
            )
        except asyncio.CancelledError:
            if stream is not None:
                stream.close()
            if entry.task.cancelling() == 0:
                raise  # not this request's cancellation
            if not entry.disconnected:
                # Cancelled by the server (uvicorn cancels what still runs once its graceful
                # shutdown time is over): the client gets an error, not a cut connection.
                if stream is not None and stream.opened:
                    await stream.end_with(encode_error(message.id, _shutdown_error()))
                else:
                    await _shutting_down(send, message.id)
            # (A closed connection is the cancellation in 2026-07-28: nothing is sent for it.)
            if entry.task.uncancel() == 0:
                return
            raise
        finally:
            in_flight.finish(entry)
        status = 200 if failure is None else status_for_error(failure.code)
        if stream is not None and await stream.finish(payload, status):
            return
        await send(
            {
                "type": _START,
                "status": status,
                "headers": [_CONTENT_TYPE_JSON, _NO_STORE, (b"content-length", b"%d" % len(payload))],
            }
        )
        await send({"type": _BODY, "body": payload})

    async def _authenticated(
        self, send: Send, headers: Mapping[str, str], request_id: Any
    ) -> tuple[str | None, str | None] | None:
        """``(principal, client)`` from the ``authenticate`` hook (``(None, None)`` for an
        anonymous call); or None when the reply (401, or 503 while credentials cannot be checked)
        has been sent."""
        assert self.authenticate is not None
        try:
            caller = await self.authenticate(headers)
        except Unauthorized as exc:
            error = McpError(INVALID_REQUEST, exc.message)
            await _json(
                send,
                401,
                encode_error(request_id, error),
                extra=[(b"www-authenticate", exc.www_authenticate.encode("latin-1"))],
            )
            return None
        except Exception:
            # The identity provider (its JWKS) cannot be reached: fail closed, but say it is
            # temporary; a 401 would make clients throw away tokens that are fine.
            logger.exception("authentication is unavailable")
            error = McpError(
                INTERNAL_ERROR, "Internal error: credentials cannot be checked right now; retry shortly"
            )
            await _json(send, 503, encode_error(request_id, error), extra=[(b"retry-after", b"5")])
            return None
        if isinstance(caller, Caller):
            return caller.principal, caller.client
        return caller, None

    async def _too_large(self, send: Send) -> None:
        too_large = McpError(
            INVALID_REQUEST, f"Invalid request: the body is over the limit of {self.max_body} bytes"
        )
        await _error(send, 413, None, too_large)

    def _origin_allowed(self, origin: str) -> bool:
        if origin == _TWO_ORIGINS:
            return False  # whatever is allowed, "*" included
        if self.allowed_origins is None:
            return _loopback_origin(origin)
        return "*" in self.allowed_origins or origin in self.allowed_origins

    async def _read_body(self, entry: _Request, receive: Receive) -> bytes | None:
        """The whole body (None when over the size limit, or when it took longer than
        ``body_timeout`` and ``entry.expired`` is set: a client sending slowly must not hold a
        request open forever)."""
        max_body = self.max_body
        try:
            message = await receive()
            if message["type"] != "http.request":
                return b""
            body: bytes = message.get("body", b"")
            if len(body) > max_body:
                return None
            if not message.get("more_body", False):
                return body  # the usual case: the whole body in one message
            chunks = [body]
            size = len(body)
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > max_body:
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        except asyncio.CancelledError:
            if entry.expired and entry.task.uncancel() == 0:
                return None
            raise
        return b"".join(chunks)


class _SseStream:
    """The reply as ``text/event-stream``, for a request that asked for notifications.

    Notifications are held back for ``hold`` seconds first: an error that comes within that time
    (a capability the request does not declare, a malformed answer: most errors come at once)
    still goes out as JSON with its own HTTP status (400 for -32021, say), which a stream that
    has started at 200 can no longer carry; the notifications held for it are dropped. A reply
    that comes within that time carries them before the result. After it, the stream starts and
    notifications go out as they come.
    """

    def __init__(self, send: Send, loop: asyncio.AbstractEventLoop, hold: float) -> None:
        self._send = send
        self._loop = loop
        self._hold = hold
        self._held: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self._opening: asyncio.Task[None] | None = None
        self.opened = False  # the response has started (its head is sent)
        self.started = False  # ... and the held notifications have gone out
        # The reply has been sent (or the request cancelled): a notification from a task the
        # handler left behind would be an ASGI message after the response, which the server
        # refuses with an error raised in that task.
        self._done = False

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if self._done:
            return
        data = encode_notification(method, params)
        if self.started:
            await self._event(data)
            return
        self._held.append(data)
        if self._timer is None and self._opening is None:
            self._timer = self._loop.call_later(self._hold, self._open_soon)

    def _open_soon(self) -> None:
        self._timer = None
        self._opening = self._loop.create_task(self._open())

    async def _open(self) -> None:
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-store"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )
        self.opened = True
        # Notifications that come while these go out are held too: they follow in order.
        while self._held:
            await self._event(self._held.pop(0))
        self.started = True

    async def finish(self, payload: bytes, status: int) -> bool:
        """Send the reply on the stream and return True; or return False (the stream never
        started, and the reply is an error or has no notifications to carry) for the caller to
        send it as JSON with ``status``."""
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._opening is not None:
            await self._opening
        if not self.started:
            if status != 200 or not self._held:
                return False
            await self._open()
        await self._event(payload, last=True)
        return True

    def close(self) -> None:
        """The request was cancelled: send nothing more."""
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
        if self._opening is not None:
            self._opening.cancel()

    async def end_with(self, payload: bytes) -> None:
        """End a stream that has started (after :meth:`close`) with ``payload``."""
        await self._event(payload, last=True)

    async def _event(self, data: bytes, *, last: bool = False) -> None:
        await self._send(
            {
                "type": "http.response.body",
                "body": b"event: message\ndata: " + data + b"\n\n",
                "more_body": not last,
            }
        )


class _InFlight:
    """The requests in progress, and one timer for all of them (a timer per request costs more
    than the rest of the transport): it ends request bodies that take longer than
    ``body_timeout`` to arrive, and watches long-running handlers for a disconnect (the client
    closing the connection cancels its request's handler).

    Most requests finish in well under a millisecond, so a watcher task (which waits on
    ``receive()``) is only started for a handler still running after ``WATCH_AFTER`` seconds.
    """

    WATCH_AFTER = 0.05

    def __init__(self, body_timeout: float = 30.0) -> None:
        self._entries: set[_Request] = set()
        self._timer: asyncio.TimerHandle | None = None
        self.body_timeout = body_timeout
        self._period = max(min(self.WATCH_AFTER, body_timeout / 4), 0.001)

    def start(self, receive: Receive) -> _Request:
        """Track the current task while it reads its request body."""
        task = asyncio.current_task()
        assert task is not None
        loop = task.get_loop()
        entry = _Request(task, receive, loop, loop.time())
        self._entries.add(entry)
        if self._timer is None:
            self._timer = loop.call_later(self._period, self._sweep, loop)
        return entry

    def handling(self, entry: _Request) -> None:
        """Track ``entry`` (finished before) again, while its handler runs."""
        loop = entry.loop
        entry.handling = True
        entry.closed = False
        entry.started = loop.time()
        self._entries.add(entry)
        if self._timer is None:
            self._timer = loop.call_later(self._period, self._sweep, loop)

    def finish(self, entry: _Request) -> None:
        entry.closed = True
        self._entries.discard(entry)
        if entry.watcher is not None:
            entry.watcher.cancel()

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        watch_cutoff = now - self.WATCH_AFTER
        body_cutoff = now - self.body_timeout
        for entry in self._entries:
            if entry.handling:
                if entry.watcher is None and entry.started <= watch_cutoff:
                    entry.watcher = loop.create_task(entry.watch())
            elif not entry.expired and entry.started <= body_cutoff:
                entry.expired = True
                entry.task.cancel()
        if self._entries:
            self._timer = loop.call_later(self._period, self._sweep, loop)


class _Request:
    __slots__ = (
        "closed",
        "disconnected",
        "expired",
        "handling",
        "loop",
        "receive",
        "started",
        "task",
        "watcher",
    )

    def __init__(
        self, task: asyncio.Task[Any], receive: Receive, loop: asyncio.AbstractEventLoop, started: float
    ) -> None:
        self.task = task
        self.receive = receive
        self.loop = loop
        self.started = started
        self.handling = False
        self.watcher: asyncio.Task[None] | None = None
        self.closed = False
        self.disconnected = False
        self.expired = False

    async def watch(self) -> None:
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                break
        if not self.closed:
            self.disconnected = True
            self.task.cancel()


async def _json(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _error(send: Send, status: int, request_id: Any, error: McpError) -> None:
    await _json(send, status, encode_error(request_id, error))


def _shutdown_error() -> McpError:
    return McpError(INTERNAL_ERROR, "Internal error: the server is shutting down; retry the request")


async def _shutting_down(send: Send, request_id: Any) -> None:
    """The answer to a request the server stopped before it finished: 503, which clients retry."""
    await _json(send, 503, encode_error(request_id, _shutdown_error()), extra=[(b"connection", b"close")])


async def _preflight(send: Send, origin: str, requested: str | None) -> None:
    """The answer to a CORS preflight from an allowed origin: POST, with the MCP headers (and the
    ``Mcp-Param-*`` ones a tool declares, which the browser names in its request)."""
    allowed = _CORS_ALLOWED_HEADERS
    if requested:
        names = [name.strip().lower() for name in requested.split(",") if name.strip()]
        extra = [n for n in names if n.startswith("mcp-param-") and _CORS_HEADER_NAME.issuperset(n)]
        if extra:
            allowed += ", " + ", ".join(dict.fromkeys(extra))
    headers = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-methods", b"POST"),
        (b"access-control-allow-headers", allowed.encode("latin-1")),
        (b"access-control-max-age", b"600"),
        (b"vary", b"origin"),
        (b"content-length", b"0"),
    ]
    await send({"type": _START, "status": 204, "headers": headers})
    await send({"type": _BODY, "body": b""})


def _with_cors(send: Send, origin: str) -> Send:
    """``send`` adding the CORS headers that let a page at ``origin`` (allowed) read the reply."""
    cors = [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", b"www-authenticate, retry-after"),
        (b"vary", b"origin"),
    ]

    async def send_with_cors(message: Message) -> None:
        if message["type"] == _START:
            message = {**message, "headers": [*message.get("headers", ()), *cors]}
        await send(message)

    return send_with_cors


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


DEFAULT_SHUTDOWN_TIMEOUT = 5.0
"""Seconds :func:`serve` lets requests in flight finish after SIGTERM or Ctrl-C; those still
running then get 503 (``timeout_graceful_shutdown=`` changes it)."""


def serve(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    head_timeout: float | None = None,
    **options: Any,
) -> None:
    """Run ``app`` with uvicorn, one worker, quiet logs.

    ``head_timeout`` (default :data:`~mcp_elicit.transport.head_timeout.DEFAULT_HEAD_TIMEOUT`
    seconds) closes connections that do not finish sending a request head in time; pass ``0`` to
    turn it off. ``http="httptools"`` or ``"h11"`` picks uvicorn's protocol and keeps the head
    timeout; a protocol class of your own (``http=MyProtocol``) runs without it.

    On SIGTERM or Ctrl-C, requests in flight get ``timeout_graceful_shutdown`` seconds (default
    :data:`DEFAULT_SHUTDOWN_TIMEOUT`) to finish; then each still running is answered with 503
    (``-32603``, "the server is shutting down"; the last event of an SSE reply that has started).
    """
    import uvicorn

    from mcp_elicit.transport.head_timeout import DEFAULT_HEAD_TIMEOUT, server_protocol

    if not isinstance(host, str) or not host.strip():
        # uvicorn would take "" for every interface: never by accident.
        raise ValueError(f"host must be an address or a name to listen on, such as 127.0.0.1, not {host!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        # Not 0 either: uvicorn would pick a free port and tell no one which.
        raise ValueError(f"port must be a whole number from 1 to 65535, not {port!r}")
    seconds = DEFAULT_HEAD_TIMEOUT if head_timeout is None else head_timeout
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds < float("inf"):
        raise ValueError(f"head_timeout must be a number of seconds (0 turns it off), not {head_timeout!r}")
    settings: dict[str, Any] = {
        "log_level": "warning",
        "access_log": False,
        "lifespan": "off",
        # uvicorn waits for requests in flight without end by default: one handler that never
        # finishes kept a SIGTERMed server up for good (a second SIGTERM did nothing either).
        "timeout_graceful_shutdown": DEFAULT_SHUTDOWN_TIMEOUT,
    }
    protocol = options.pop("http", None)
    if protocol in (None, "auto", "httptools", "h11"):
        settings["http"] = server_protocol(seconds, base=_protocol_class(protocol))
    else:
        if head_timeout:
            raise ValueError("head_timeout works with http='httptools' or 'h11', not with a protocol class")
        settings["http"] = protocol
    settings.update(options)
    # What uvicorn.run does for an app object, with a Server that lets the requests it cancels
    # at the end of the graceful shutdown send their 503 before the process ends.
    config = uvicorn.Config(app, host=host, port=port, **settings)
    if config.reload or config.workers > 1:
        raise ValueError(
            "serve() runs one process: reload= and workers= need uvicorn.run and an import string"
        )
    server = _answering_server(uvicorn.Server)(config)
    try:
        server.run()
    except KeyboardInterrupt:
        pass  # Ctrl-C, re-raised by uvicorn once it has shut down
    finally:
        if config.uds and os.path.exists(config.uds):
            os.remove(config.uds)
    if not server.started:
        sys.exit(3)  # uvicorn's STARTUP_FAILURE


def _answering_server(base: type[Any]) -> type[Any]:
    """uvicorn's Server, waiting (briefly) for the requests it cancelled to end.

    uvicorn cancels the requests still running when ``timeout_graceful_shutdown`` is over, then
    returns at once and re-raises the signal, which ends the process: the cancelled requests
    never ran again, and their clients saw the connection cut instead of the 503 they are owed.
    """

    class AnsweringServer(base):  # type: ignore[misc]
        async def shutdown(self, sockets: Any = None) -> None:
            await super().shutdown(sockets=sockets)
            running = set(self.server_state.tasks)
            if running:
                await asyncio.wait(running, timeout=_ANSWER_TIME)

    return AnsweringServer


# Seconds the requests cancelled at the end of a graceful shutdown get to send their answer (a
# handler that swallows its cancellation does not hold the process longer than this).
_ANSWER_TIME = 1.0


def _protocol_class(name: str | None) -> type[Any] | None:
    """uvicorn's protocol class for ``http=name`` (None: uvicorn's own choice)."""
    if name == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    if name == "h11":
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
    return None
