"""Streamable HTTP (MCP 2026-07-28), server side: the MCP endpoint as a plain ASGI app.

One POST carries one JSON-RPC request or notification. A request goes through, in order:
the path (404), the head checks (:mod:`mcp_elicit.transport.http_checks`: Origin 403, CORS
preflight, method 405, Content-Type and Content-Encoding 415, Accept 406, declared size 413), the
body (408 when it comes too slowly, 413 when it is too large), the JSON-RPC envelope (-32700,
-32600), ``_meta`` and the headers against the body (-32602, -32020), authentication (401, or
503 while credentials cannot be checked), then the server. The reply is JSON, or an SSE stream
(:mod:`mcp_elicit.transport.sse`) when the request asked for notifications and accepts
``text/event-stream``. A client that closes the connection cancels the handler
(:mod:`mcp_elicit.transport.in_flight`); a request the server itself cancels (uvicorn, when its
graceful shutdown time is over) is answered 503.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from mcp_elicit.server.auth import Authenticate, Caller, Unauthorized, as_caller
from mcp_elicit.transport import http_checks, http_legacy
from mcp_elicit.transport.asgi import Receive, Scope, Send, send_json, send_response, send_text
from mcp_elicit.transport.http_checks import Head, Policy
from mcp_elicit.transport.http_sessions import SessionTable
from mcp_elicit.transport.in_flight import InFlight, InFlightRequest
from mcp_elicit.transport.lifespan import acknowledge_lifespan
from mcp_elicit.transport.session_relay import SessionRelay
from mcp_elicit.transport.shutdown import answer_shutdown, shutdown_error
from mcp_elicit.transport.sse import SseStream
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from mcp_elicit.wire.http import status_for_error
from mcp_elicit.wire.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    Message,
    MessageTooLarge,
    Notification,
    Request,
    RequestId,
    Result,
    encode_error,
    parse_message,
)
from mcp_elicit.wire.legacy import check_version_header, is_modern_version
from mcp_elicit.wire.meta import RequestMeta, is_modern

if TYPE_CHECKING:
    from mcp_elicit.server.app import Server

logger = logging.getLogger("mcp_elicit.transport.http")


class HttpApp:
    """ASGI app serving one MCP endpoint (``path``, default ``/mcp``).

    ``allowed_origins``: browser origins allowed to call (``["*"]`` for any). By default only
    loopback origins are allowed, which blocks DNS-rebinding attacks on local servers;
    requests without an Origin header (non-browser clients) are always allowed. A page at an
    origin listed in ``allowed_origins`` gets what CORS needs: its preflight (``OPTIONS``) is
    answered and every reply names it in ``Access-Control-Allow-Origin`` (the loopback default
    gives no CORS: a page on any local port could otherwise read what the tools answer).
    ``authenticate``: the hook that names the caller from the request headers (every request
    and notification goes through it).
    ``body_timeout``: seconds a request body may take to arrive; slower gets 408 (checked by a
    shared timer, so the answer may come up to ``min(0.05 s, body_timeout / 4)`` later).
    ``sse_hold``: seconds progress and log notifications are held back before an SSE reply
    starts, so that an error coming within that time keeps its HTTP status (see ``SseStream``).
    ``sessions``: the bounds of 2025-11-25 sessions (``max_sessions``, ``max_per_principal``,
    ``max_calls``, ``idle_timeout``, ``resume_grace``, ``instance``: see
    :class:`~mcp_elicit.transport.http_sessions.SessionTable`).

    Both protocol eras are served on the one endpoint (:func:`era_of`): a request with the
    2026-07-28 ``_meta`` envelope statelessly, here; the messages of 2025-11-25 clients in their
    sessions (:mod:`mcp_elicit.transport.http_legacy`), handed to the instance that holds the
    session when it is another one and the server has a ``session_router``
    (:mod:`mcp_elicit.transport.session_relay`).
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
        sessions: Mapping[str, Any] | None = None,
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
        self.policy = Policy(self.allowed_origins, self.max_body, server.param_headers)
        self._in_flight = InFlight(body_timeout)
        self.sessions = SessionTable(
            server,
            **{
                "max_sessions": server.legacy_max_sessions,
                "max_per_principal": server.legacy_max_sessions_per_user,
                "idle_timeout": server.legacy_idle_timeout,
                **(sessions or {}),
            },
        )
        # Several instances: a message for a session another instance holds goes to it.
        router = server.session_router
        self.relay = None if router is None else SessionRelay(self, router)
        server.warn_if_key_is_ephemeral()

    async def aclose(self) -> None:
        """End the 2025-11-25 sessions (their calls are cancelled) and stop relaying for other
        instances (the database connection it listens on closes). An ASGI server's lifespan
        shutdown calls it, once the requests are over."""
        self.sessions.close()
        if self.relay is not None:
            await self.relay.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await acknowledge_lifespan(receive, send, on_shutdown=self.aclose)
            return
        if (scope["path"].rstrip("/") or "/") != self.path:
            await send_text(send, 404, b"Not Found")
            return
        head = Head.read(scope, all_headers=self.authenticate is not None)
        early = http_checks.first_reply(self.policy, head)
        if early is not None:
            await early.send(send)
            return
        origin = head.headers.get("origin")
        if origin is not None and self.allowed_origins is not None:
            send = http_checks.with_cors(send, origin)
        if head.method != "POST":  # GET or DELETE: a 2025-11-25 session's stream or its end
            # (A 2026-07-28 version here is not refused: GET and DELETE exist only in sessions,
            # which then answer for the session id.)
            modern = is_modern_version(head.headers.get("mcp-protocol-version"))
            if not modern and not await _session_version_ok(head, None, send):
                return
            passed, caller = await self._authenticated(send, head, None)
            if passed:
                if head.method == "GET":
                    await http_legacy.get(self, head, caller, send, receive)
                else:
                    await http_legacy.delete(self, head, caller, send, receive)
            return

        entry = self._in_flight.start(receive)
        body = await self._body(entry, receive, send)
        if body is None:
            return  # answered (408, 413, 503)
        message = await self._message(body, send)
        if message is None:
            return  # answered (-32700, -32600, 413)
        era = era_of(message, head)
        if era == "legacy":
            opening = isinstance(message, Request) and message.method == "initialize"
            if not opening and not await _session_version_ok(head, _id_of(message), send):
                return
            passed, caller = await self._authenticated(send, head, _id_of(message))
            if passed:
                await http_legacy.post(self, head, message, caller, send, receive)
            return
        if isinstance(message, Result | ErrorResponse):  # (era_of sends every response to legacy)
            raise AssertionError("unreachable")
        if isinstance(message, Notification):
            # Authenticated like any request, though nothing runs: a 202 tells a caller that
            # its credentials were taken.
            if (await self._authenticated(send, head, None))[0]:
                await send_response(send, 202, [])
            return
        try:
            meta = http_checks.check_request(self.policy, head, message)
        except McpError as exc:
            await send_json(send, status_for_error(exc.code), encode_error(message.id, exc))
            return
        passed, caller = await self._authenticated(send, head, message.id)
        if not passed:
            return  # answered (401, 503)
        # Notifications (progress, logs) need an SSE reply; only a request that asked for them
        # and accepts text/event-stream gets one.
        stream = None
        if head.accepts_sse and (meta.progress_token is not None or meta.log_level is not None):
            stream = SseStream(send, entry.loop, self.sse_hold)
        await self._handle(entry, message, meta, caller, stream, send)

    async def _handle(
        self,
        entry: InFlightRequest,
        request: Request,
        meta: RequestMeta,
        caller: Caller | None,
        stream: SseStream | None,
        send: Send,
    ) -> None:
        self._in_flight.handling(entry)
        try:
            failure, payload = await self.server.respond(
                request,
                meta=meta,
                caller=caller,
                notify=None if stream is None else stream.notify,
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
                    await stream.end_with(encode_error(request.id, shutdown_error()))
                else:
                    await answer_shutdown(send, request.id)
            # (A closed connection is the cancellation in 2026-07-28: nothing is sent for it.)
            if entry.task.uncancel() == 0:
                return
            raise
        finally:
            self._in_flight.finish(entry)
        status = 200 if failure is None else status_for_error(failure.code)
        if stream is not None and await stream.finish(payload, status):
            return
        await send_json(send, status, payload)

    async def _body(self, entry: InFlightRequest, receive: Receive, send: Send) -> bytes | None:
        """The whole body; or None once the reply is sent (too large, too slow, shutting down)."""
        try:
            body = await self._read_body(entry, receive)
        except asyncio.CancelledError:
            if entry.task.cancelling() == 0:
                raise
            # Only the server cancels a request here (uvicorn, once its graceful shutdown time
            # is over): answer it rather than leave uvicorn's bare 500.
            await answer_shutdown(send, None)
            if entry.task.uncancel() == 0:
                return None
            raise
        finally:
            self._in_flight.finish(entry)
        if entry.expired:
            slow = McpError(INVALID_REQUEST, "Invalid request: the request body did not arrive in time")
            await send_json(send, 408, encode_error(None, slow), [(b"connection", b"close")])
            return None
        if body is None:
            await http_checks.too_large(self.policy).send(send)
        return body

    async def _message(self, body: bytes, send: Send) -> Message | None:
        """The JSON-RPC message; or None once the error reply is sent."""
        try:
            message = parse_message(body, max_bytes=self.max_body)
        except MessageTooLarge as exc:
            await send_json(send, 413, encode_error(exc.request_id, exc))
            return None
        except InvalidMessage as exc:
            await send_json(send, status_for_error(exc.code), encode_error(exc.reply_id, exc))
            return None
        return message

    async def _authenticated(
        self, send: Send, head: Head, request_id: RequestId | None
    ) -> tuple[bool, Caller | None]:
        """``(True, caller)`` with the :class:`Caller` the ``authenticate`` hook names (None for an
        anonymous call, or without a hook); ``(False, None)`` once the reply (401, 400 for two
        Authorization headers, or 503 while credentials cannot be checked) has been sent."""
        if self.authenticate is None:
            return True, None
        if head.duplicate == "authorization":
            # Which one counts is for no one to guess (a proxy in front may have read the other).
            error = McpError(INVALID_REQUEST, "Invalid request: the Authorization header appears twice")
            await send_json(send, 400, encode_error(request_id, error))
            return False, None
        try:
            found = await self.authenticate(head.headers)
        except Unauthorized as exc:
            error = McpError(INVALID_REQUEST, exc.message)
            challenge = (b"www-authenticate", exc.www_authenticate.encode("latin-1"))
            await send_json(send, 401, encode_error(request_id, error), [challenge])
            return False, None
        except Exception:
            # The identity provider (its JWKS) cannot be reached: fail closed, but say it is
            # temporary; a 401 would make clients throw away tokens that are fine.
            logger.exception("authentication is unavailable")
            error = McpError(
                INTERNAL_ERROR, "Internal error: credentials cannot be checked right now; retry shortly"
            )
            await send_json(send, 503, encode_error(request_id, error), [(b"retry-after", b"5")])
            return False, None
        return True, as_caller(found)

    async def _read_body(self, entry: InFlightRequest, receive: Receive) -> bytes | None:
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


def era_of(message: Message, head: Head) -> Literal["modern", "legacy"]:
    """The era a POSTed message belongs to (wire-2025-11-25.md §8.2): a response (to a request
    of a session) is 2025-11-25; a request or notification with the 2026-07-28 ``_meta`` envelope
    is 2026-07-28, whatever else it says; without the envelope, a 2026 ``MCP-Protocol-Version``
    header makes it 2026-07-28 (refused there for its missing ``_meta``, and an ``initialize``
    for the header: -32020), anything else is 2025-11-25 (a header that names no version at
    all is refused there, in words a 2025-11-25 client can act on)."""
    if isinstance(message, Result | ErrorResponse):
        return "legacy"
    if is_modern(message.params):
        return "modern"
    return "modern" if is_modern_version(head.headers.get("mcp-protocol-version")) else "legacy"


async def _session_version_ok(head: Head, request_id: RequestId | None, send: Send) -> bool:
    """Whether a 2025-11-25 session message's ``MCP-Protocol-Version`` is absent or one these
    sessions speak; False once the 400 is sent."""
    try:
        check_version_header(head.headers.get("mcp-protocol-version"))
    except McpError as exc:
        await send_json(send, 400, encode_error(request_id, exc))
        return False
    return True


def _id_of(message: Message) -> RequestId | None:
    return message.id if isinstance(message, Request) else None
