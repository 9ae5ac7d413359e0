"""The Streamable HTTP transport, client side (MCP 2026-07-28, and 2025-11-25 sessions).

Every request is its own POST carrying ``Accept: application/json, text/event-stream``,
``MCP-Protocol-Version`` (equal to the ``_meta`` version), ``Mcp-Method`` and, for
``tools/call`` / ``prompts/get`` / ``resources/read``, ``Mcp-Name`` (base64-sentinel form when the
name is not plain header-safe ASCII). The reply is one JSON body, or an SSE stream of
notifications about the request followed by its response. Closing the stream is the
cancellation: a cancelled caller drops the connection, which the server sees.

A 2025-11-25 session (requests marked ``legacy``) differs: no ``Mcp-Method`` / ``Mcp-Name``;
``MCP-Protocol-Version`` (the negotiated version) and ``Mcp-Session-Id`` (minted by the server
on the reply to ``initialize``) on every request after ``initialize``; a 404 to a request that
carried the session id raises :class:`~mcp_elicit.client.errors.SessionExpiredError` (the engine
starts a new session); the server's own requests on a reply's event stream or on the GET stream
are answered by POSTing the JSON-RPC response (202 expected), with the same headers, and an answer
the server refuses fails the call whose stream brought the request, which would otherwise wait
for the server until its timeout; a reply's stream that ends (or whose connection drops) before
its response is resumed with ``GET`` and
``Last-Event-ID`` after the server's ``retry``; closing sends ``DELETE`` for the session.

:class:`HttpTransport` runs on :mod:`~mcp_elicit.client.http11` (asyncio streams, keep-alive);
:class:`~mcp_elicit.client.httpx_transport.HttpxTransport` does the same over an
``httpx.AsyncClient`` you configure (proxies, custom TLS, auth flows).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from contextvars import ContextVar
from typing import Any

from mcp_elicit.client.answered_id import answered_id
from mcp_elicit.client.errors import (
    AuthorizationRequiredError,
    HttpStatusError,
    MalformedMessageError,
    SessionExpiredError,
    TransportError,
)
from mcp_elicit.client.http11 import Connection, Origin, Pool, Reply
from mcp_elicit.client.messages import cancelled, decode
from mcp_elicit.client.reply_text import body_excerpt
from mcp_elicit.client.serving import Serving
from mcp_elicit.client.sse import SseDecoder
from mcp_elicit.client.text import clean
from mcp_elicit.client.transport import OnNotification, Outgoing, ServerMessages
from mcp_elicit.wire.http import encode_header_value, is_token
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Request, RequestId, Response, Result

logger = logging.getLogger("mcp_elicit.client.http")

DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
ACCEPT = "application/json, text/event-stream"
# Resuming a reply's stream: this many reconnections in a row that bring no new event end it.
MAX_IDLE_RESUMES = 3
DEFAULT_RETRY_MS = 1000  # when the server named no retry interval
MAX_RETRY_MS = 60_000  # a server's retry field cannot park a call for hours
CLOSE_TIMEOUT = 2.0  # for the DELETE that ends a session
STREAM_OPEN_TIMEOUT = 5.0  # how long opening the session waits for the GET stream's head
# A message POST whose connection drops before the reply is sent again after these pauses.
POST_RETRY_DELAYS = (0.1, 0.5)

# The request whose reply this task reads (set in send). Serving answers each of the server's
# requests in a task started where it was read, which inherits this: the answer's POST knows the
# call that waits on it. None on the GET stream, whose requests belong to no call.
_READING_FOR: ContextVar[RequestId | None] = ContextVar("mcp_elicit_http_reading_for", default=None)


def legacy_headers(version: str | None, session_id: str | None) -> dict[str, str]:
    """The MCP headers of one POST of a 2025-11-25 session (``initialize`` has neither value)."""
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


def checked_session_id(value: str) -> str:
    """The server's ``Mcp-Session-Id``, which goes back in every request head: visible ASCII only
    (the spec), so it cannot add a header line of its own."""
    if not value or len(value) > 1024 or any(not 0x21 <= ord(c) <= 0x7E for c in value):
        raise MalformedMessageError("the server's Mcp-Session-Id is not 1 to 1024 visible ASCII characters")
    return value


def request_headers(request: Outgoing) -> dict[str, str]:
    """The MCP headers of one POST (without the connection-level ones)."""
    if request.legacy:
        return legacy_headers(request.version, None)
    assert request.version is not None  # every 2026-07-28 request declares its version
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": request.version,
        "Mcp-Method": request.method,
    }
    if request.name is not None:
        headers["Mcp-Name"] = encode_header_value(request.name)
    if request.headers:
        headers.update(request.headers)
    return headers


# Headers the client writes (or that frame the request and its connection): a second copy
# would make the request malformed or contradict the MCP headers, and the server would then be
# blamed for refusing it. Every Mcp-* name is the protocol's own too.
_CLIENT_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-encoding",
        "content-length",
        "content-type",
        "expect",
        "host",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)


def reserved_header(name: str) -> str | None:
    """Why a caller cannot send header ``name`` (the client writes it), or None if it can."""
    lowered = name.lower()
    if lowered.startswith("mcp-"):
        return "mcp-elicit sets the Mcp-* headers of the protocol itself"
    if lowered in _CLIENT_HEADERS:
        return f"mcp-elicit sets {name} itself"
    return None


def header_value_problem(value: str) -> str | None:
    """Why a request head cannot carry this header value, or None: a control character other
    than tab (CR and LF would start another header), or one past Latin-1, the encoding the head
    is written in."""
    for char in value:
        code = ord(char)
        if (code < 0x20 and char != "\t") or code == 0x7F or code > 0xFF:
            return f"U+{code:04X} is not allowed in an HTTP header value"
    return None


def check_header_values(headers: Mapping[str, str]) -> dict[str, str]:
    """Caller-supplied headers, refused if they could break the request head or repeat one the
    client writes itself."""
    for name, value in headers.items():
        if not is_token(name):
            raise ValueError(f"invalid HTTP header {name!r}: the name is not an HTTP field name")
        problem = header_value_problem(value)
        if problem is not None:
            raise ValueError(f"invalid HTTP header {name!r}: {problem}")
        reason = reserved_header(name)
        if reason is not None:
            raise ValueError(f"header {name!r} cannot be given: {reason}")
    return dict(headers)


def json_reply(
    status: int,
    body: bytes,
    request: Outgoing,
    url: str,
    www_authenticate: str | None = None,
    location: str | None = None,
) -> Response:
    """The JSON-RPC response in a non-SSE reply, or the right error."""
    if 300 <= status < 400:
        # Never followed: a POST sent again elsewhere could run a tool at a host nobody chose.
        where = clean(location, single_line=True, max_length=300) if location else "(no Location given)"
        raise HttpStatusError(
            status, f"{request.method} to {url}: the server redirects to {where}; redirects are not followed"
        )
    try:
        message: Any = decode(body) if body.lstrip().startswith(b"{") else None
    except MalformedMessageError:
        message = None
    if status in (401, 403):  # whatever the body says: credentials are missing or refused
        said = message.message if isinstance(message, ErrorResponse) else None
        snippet = clean(said, single_line=True, max_length=200) if isinstance(said, str) else ""
        snippet = snippet or body_excerpt(body)
        raise AuthorizationRequiredError(status, f"{request.method} to {url}: {snippet}", www_authenticate)
    if (isinstance(message, ErrorResponse) and message.id in (request.id, None)) or (  # only an error
        isinstance(message, Result) and message.id == request.id and 200 <= status < 300  # may have a null id
    ):
        return message
    if 200 <= status < 300:
        raise MalformedMessageError(
            f"the reply to {request.method} (HTTP {status}) is not the JSON-RPC response to id {request.id!r}"
        )
    raise HttpStatusError(status, f"{request.method} to {url}: {body_excerpt(body)}")


async def sse_reply(
    chunks: AsyncIterator[bytes], request: Outgoing, on_notification: OnNotification | None, limit: int
) -> Response:
    """Read an SSE reply up to the response to ``request``; notifications go to the callback."""
    response = await read_events(chunks, request, on_notification, SseDecoder(limit))
    if response is not None:
        return response
    raise TransportError(f"the server ended the event stream of {request.method} without answering it")


async def read_events(
    chunks: AsyncIterator[bytes],
    request: Outgoing,
    on_notification: OnNotification | None,
    decoder: SseDecoder,
    serving: Serving | None = None,
) -> Response | None:
    """Read events up to the response to ``request`` (None if the stream ended first); the
    server's requests and its other notifications go to ``serving`` when there is one."""
    async for chunk in chunks:
        response = _first_answer(decoder.feed(chunk), request, on_notification, serving)
        if response is not None:
            return response
    return None  # (an event with no blank line after it is dropped, as the SSE spec says)


def _first_answer(
    events: list[bytes],
    request: Outgoing,
    on_notification: OnNotification | None,
    serving: Serving | None = None,
) -> Response | None:
    """The response to ``request`` among these events' data, if there; notifications before it
    go to the callback."""
    for data in events:
        if not data.strip():
            continue  # a priming event (an id to resume from, no message)
        try:
            message = decode(data)
        except MalformedMessageError as exc:
            if answered_id(data) == request.id:
                raise  # the answer itself cannot be read
            if serving is not None and serving.invalid_request(exc):
                continue  # a request of the server's: answered -32600, so it does not wait for ever
            # A notification (a log line, progress) this client cannot read: the answer may
            # still come, as an unreadable line on stdio does not stop a call either.
            logger.warning("ignoring an unreadable event in the reply to %s", request.method)
            continue
        if isinstance(message, Result | ErrorResponse):
            if message.id == request.id or (message.id is None and isinstance(message, ErrorResponse)):
                return message
            if not request.legacy:
                # One request per POST in 2026-07-28: a response to another id on its stream is the
                # server's mistake, as in a JSON reply, not a reason to wait for the timeout.
                answered = clean(repr(message.id), single_line=True, max_length=80)
                raise MalformedMessageError(
                    f"the reply to {request.method} is not the JSON-RPC response to id {request.id!r}: "
                    f"it answers id {answered}"
                )
            logger.info("ignoring a response for request %r in the reply to %s", message.id, request.method)
        elif isinstance(message, Notification):
            if on_notification is not None:
                on_notification(message)
            if serving is not None and message.method != "notifications/progress":
                serving.notification(message)  # a completion or a cancellation, whatever it carries
        elif serving is not None:
            serving.request(message)  # in the server's id space: never the answer to ours
        else:
            # Servers send no requests in 2026-07-28 (an elicitation/create request is the
            # 2025-11-25 way): never answered, and said in the log as stdio does.
            logger.warning(
                "the server sent a %s request in the reply to %s; servers send no requests in "
                "MCP 2026-07-28, ignored",
                clean(message.method, single_line=True, max_length=200),
                request.method,
            )
    return None


def _failure(exc: BaseException) -> str:
    """Why a request's connection failed, in words."""
    return "the connection closed before the reply was complete" if isinstance(exc, EOFError) else repr(exc)


def _compression(headers: Mapping[str, str]) -> str | None:
    """The header and coding that compress a reply's body (this client decodes none), or None."""
    for name, ignored in (("Content-Encoding", ""), ("Transfer-Encoding", "chunked")):
        for coding in headers.get(name.lower(), "").lower().split(","):
            if coding.strip() not in ("", "identity", ignored):
                return f"{name}: {coding.strip()}"
    return None


class HttpTransport:
    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._url = url
        self._origin = Origin(url)
        extra = check_header_values(headers or {})
        if not any(name.lower() == "user-agent" for name in extra):  # the caller's replaces ours
            extra["User-Agent"] = "mcp-elicit"
        # Host, encoding and the caller's headers (Authorization): on every request, of every kind.
        self._head_common = (
            f"Host: {self._origin.host_header}\r\nAccept-Encoding: identity\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in extra.items())
        ).encode("latin-1")
        self._pool = Pool(self._origin, connect_timeout=connect_timeout)
        self._limit = max_message_bytes
        # A 2025-11-25 session: its id and version, the answers to the server's requests, and
        # the GET stream of its own messages.
        self._session_id: str | None = None
        self._version: str | None = None
        self._serving: Serving | None = None
        self._listener: asyncio.Task[None] | None = None
        self._closed = False
        self._closing = asyncio.Event()  # set with _closed: ends the waits for a server's retry
        self._telling: set[asyncio.Task[None]] = set()  # notifications/cancelled on their way
        # Legacy requests in flight, for a response the server puts on the GET stream instead (or
        # the error that ends one from outside its reply, see _fail), and the connection each
        # one's reply is read on now.
        self._waiting: dict[RequestId, asyncio.Future[Response]] = {}
        self._reading: dict[RequestId, Connection] = {}

    @property
    def reached_via(self) -> str:
        return self._url

    @property
    def era_key(self) -> str:
        """What an era verdict is cached under: the origin."""
        origin = self._origin
        return f"{'https' if origin.tls else 'http'}://{origin.host_header}"

    @property
    def session_id(self) -> str | None:
        """The 2025-11-25 session's ``Mcp-Session-Id``, once the server minted one."""
        return self._session_id

    async def start(self) -> None:
        pass  # connections open on first use

    def serve(self, messages: ServerMessages) -> None:
        if self._serving is not None:
            # A new session: the questions of the one before can no longer be answered, and
            # their answers must not reach this one (whose server may use the same ids again).
            self._serving.cancel()
        self._serving = Serving(messages, self._post_answer)

    async def notify(self, body: bytes, version: str) -> None:
        self._version = version
        await self._post_message(body)

    async def session_opened(self, version: str) -> None:
        self._version = version
        old = self._listener
        if old is not None and not old.done():
            old.cancel()  # the stream of the session before, which the server ended
            await asyncio.wait([old])
        # Opened before anything else is sent, so that nothing the server says about the
        # requests that follow can miss it (it may put a response there when it replays).
        opened = asyncio.Event()
        self._listener = asyncio.create_task(self._listen(opened))
        try:
            await asyncio.wait_for(opened.wait(), STREAM_OPEN_TIMEOUT)
        except TimeoutError:
            # The stream may still open; until it does, what the server sends there is lost.
            logger.info(
                "the server's GET stream (its messages about no request of ours) did not open "
                "within %g s; going on without waiting for it",
                STREAM_OPEN_TIMEOUT,
            )

    def _head(self, method: str, headers: Mapping[str, str], body_length: int | None) -> bytes:
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        length = f"Content-Length: {body_length}\r\n" if body_length is not None else ""
        return (
            f"{method} {self._origin.target} HTTP/1.1\r\n".encode("latin-1")
            + self._head_common
            + f"{lines}{length}\r\n".encode("latin-1")
        )

    async def send(self, request: Outgoing, on_notification: OnNotification | None) -> Response:
        if self._closed:
            raise TransportError("the client is closed")
        session = self._session_id if request.legacy else None
        headers = legacy_headers(request.version, session) if request.legacy else request_headers(request)
        head = self._head("POST", headers, len(request.body))
        conn = await self._pool.acquire()  # a kept-alive one only if the server has not closed it
        if request.legacy:
            self._waiting[request.id] = asyncio.get_running_loop().create_future()
            self._read_on(request, conn)
        reading = _READING_FOR.set(request.id)
        try:
            response = await self._exchange(conn, head, request, on_notification, session)
        except (asyncio.IncompleteReadError, OSError) as exc:
            # Never sent again: the server may have received the request and run it before the
            # connection dropped, and nothing tells that apart from a connection it had closed.
            conn.abort()
            if self._closed:
                raise self._closed_under(request) from None
            self._raise_if_failed(request)
            why = _failure(exc)
            raise TransportError(
                f"HTTP {request.method} to {self._url} failed: {why} (not sent again: it may have run)"
            ) from exc
        except asyncio.CancelledError:
            conn.abort()  # closing the stream tells a 2026-07-28 server
            if request.legacy:
                # A 2025-11-25 server keeps a dropped call for the client to resume: it is told.
                self._cancel_on_wire(request)
            raise
        except BaseException:
            conn.abort()  # failed mid-reply
            raise
        finally:
            _READING_FOR.reset(reading)
            self._reading.pop(request.id, None)
            waiting = self._waiting.pop(request.id, None)
            if waiting is not None and not waiting.done():
                waiting.cancel()
            elif waiting is not None and not waiting.cancelled():
                waiting.exception()  # (a failure that came as the call ended: asyncio would log it unread)
        self._pool.release(conn)
        return response

    def _read_on(self, request: Outgoing, conn: Connection) -> None:
        """``conn`` carries the reply of the legacy ``request`` now (what :meth:`_fail` drops);
        dropped at once if the call was ended from outside while it connected."""
        self._reading[request.id] = conn
        waiting = self._waiting.get(request.id)
        if waiting is not None and waiting.done():
            conn.abort()

    def _fail(self, request_id: RequestId, error: TransportError) -> bool:
        """End the legacy call ``request_id`` now with ``error``, as a broken stream ends a call:
        its future holds the error, which its reader raises once the stream ends, and its
        connection is dropped to end that stream. False when it is not waiting any more."""
        waiting = self._waiting.get(request_id)
        if waiting is None or waiting.done():
            return False
        waiting.set_exception(error)
        conn = self._reading.get(request_id)
        if conn is not None:
            conn.abort()
        return True

    def _raise_if_failed(self, request: Outgoing) -> None:
        """Raise the error :meth:`_fail` ended ``request`` with, if it did (its stream then broke)."""
        waiting = self._waiting.get(request.id)
        if waiting is None or not waiting.done() or waiting.cancelled():
            return
        failure = waiting.exception()
        if failure is not None:
            raise failure

    async def _exchange(
        self,
        conn: Connection,
        head: bytes,
        request: Outgoing,
        on_notification: OnNotification | None,
        session: str | None,
    ) -> Response:
        reply = await conn.request(head, request.body)
        coding = _compression(reply.headers)
        if coding is not None and 200 <= reply.status < 300:
            # The request said Accept-Encoding: identity; a compressed body can never be read.
            shown = clean(coding, single_line=True, max_length=60)
            raise MalformedMessageError(
                f"the reply to {request.method} is compressed ({shown}), which the request did not accept"
            )
        if request.legacy:
            self._note_session(request, reply, session)
        if reply.status == 200 and reply.content_type == "text/event-stream":
            chunks = reply.chunks()
            decoder = SseDecoder(self._limit)
            serving = self._serving if request.legacy else None
            try:
                response = await read_events(chunks, request, on_notification, decoder, serving)
            except (asyncio.IncompleteReadError, OSError):
                # The connection dropped mid-stream: a 2025-11-25 stream that gave an event id is
                # picked up again from there, as one the server ended (after any disconnect).
                if not request.legacy or decoder.last_event_id is None:
                    raise
                response = None
                conn.reusable = False
            finally:
                await chunks.aclose()
            if not reply.done:
                conn.reusable = False  # the rest of the stream is not ours to read
            if response is None and request.legacy:
                waiting = self._waiting.get(request.id)
                if waiting is not None and waiting.done() and not waiting.cancelled():
                    return waiting.result()  # it came on the GET stream (or raises: see _fail)
                response = await self._resume(request, on_notification, decoder)
            if response is None:
                self._raise_if_failed(request)  # (resuming gave up as the call failed: say why)
                raise TransportError(
                    f"the server ended the event stream of {request.method} without answering it"
                )
            return response
        body = await reply.read(self._limit)
        headers = reply.headers
        return json_reply(
            reply.status, body, request, self._url, headers.get("www-authenticate"), headers.get("location")
        )

    def _note_session(self, request: Outgoing, reply: Reply, session: str | None) -> None:
        """Learn the session id from the reply to ``initialize``; a 404 to a request that carried
        one means the server ended the session."""
        if request.method == "initialize" and 200 <= reply.status < 300:
            minted = reply.headers.get("mcp-session-id")
            self._session_id = checked_session_id(minted) if minted is not None else None
        elif reply.status == 404 and session is not None:
            if self._session_id == session:
                self._session_id = None
            raise SessionExpiredError(f"{request.method} to {self._url}: the server ended session")

    async def _resume(
        self, request: Outgoing, on_notification: OnNotification | None, decoder: SseDecoder
    ) -> Response | None:
        """The reply's stream ended before its response: wait the server's ``retry``, then GET
        with ``Last-Event-ID`` and read on, until the response comes or reconnections stop
        bringing anything new. Without an event id there is nothing to resume from."""
        waiting = self._waiting.get(request.id)
        idle = 0
        while idle < MAX_IDLE_RESUMES:
            last = decoder.last_event_id
            if last is None or header_value_problem(last) is not None or last != last.strip():
                return None
            if self._closed:  # (closing ends the session: that is what ended its stream)
                raise self._closed_under(request)
            delay = min(decoder.retry_ms or DEFAULT_RETRY_MS, MAX_RETRY_MS) / 1000
            response = await self._retry_pause(delay, waiting)
            if response is not None:
                return response
            if self._closed:
                raise self._closed_under(request)
            headers = self._stream_headers(last)
            decoder = decoder.resumed()
            try:
                conn = await self._pool.acquire()
            except TransportError as exc:  # it was reachable a moment ago: say what was lost
                raise TransportError(
                    f"the connection dropped during {request.method}, and resuming its reply "
                    f"failed: {exc} (the server may have stopped; the call may have run)"
                ) from None
            self._read_on(request, conn)
            try:
                reply = await conn.request(self._head("GET", headers, None), b"")
                if reply.status != 200 or reply.content_type != "text/event-stream":
                    body = await reply.read(64 * 1024)
                    raise HttpStatusError(
                        reply.status,
                        f"resuming the reply to {request.method} (Last-Event-ID {last!r}): "
                        f"{body_excerpt(body)}",
                    )
                chunks = reply.chunks()
                try:
                    response = await read_events(chunks, request, on_notification, decoder, self._serving)
                finally:
                    await chunks.aclose()
            except (asyncio.IncompleteReadError, OSError):
                # Dropped again, before the reply's head or in its stream: resumed again from the
                # last event id (the server keeps the stream for a while).
                response = None
            finally:
                conn.abort()  # a stream's connection is never reused
            if response is not None:
                return response
            idle = 0 if decoder.last_event_id != last else idle + 1
        return None

    async def _retry_pause(self, delay: float, waiting: asyncio.Future[Response] | None) -> Response | None:
        """Wait ``delay`` (the server's retry) before resuming a stream; the response if it came on
        the GET stream meanwhile (the error if the call failed meanwhile, raised). Closing the
        client ends the wait at once (a server's retry may be a minute)."""
        closing = asyncio.ensure_future(self._closing.wait())
        watched: set[asyncio.Future[Any]] = {closing} if waiting is None else {closing, waiting}
        try:
            # (asyncio.wait never cancels ``waiting``: the GET stream may still answer it.)
            await asyncio.wait(watched, timeout=delay, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closing.cancel()
        if waiting is None or not waiting.done() or waiting.cancelled():
            return None
        return waiting.result()

    def _cancel_on_wire(self, request: Outgoing) -> None:
        """Send ``notifications/cancelled`` for a 2025-11-25 request its caller gave up on (never
        for ``initialize``, which the spec says a client must not cancel), in a task of its own:
        the caller's task is being cancelled."""
        if self._closed or request.method == "initialize":
            return
        task = asyncio.create_task(self._tell_cancelled(cancelled(request.id)))
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    async def _tell_cancelled(self, body: bytes) -> None:
        try:
            await self._post_message(body)
        except (TransportError, OSError) as exc:
            logger.info("could not tell the server a request was cancelled: %s", exc)

    def _closed_under(self, request: Outgoing) -> TransportError:
        """The error of a request still waiting when this client was closed (by another task)."""
        return TransportError(f"HTTP {request.method} to {self._url} did not finish: the client was closed")

    def _stream_headers(self, last_event_id: str | None) -> dict[str, str]:
        """The headers of a GET that opens (or resumes) an event stream of the session."""
        headers = {"Accept": "text/event-stream"}
        if self._version is not None:
            headers["MCP-Protocol-Version"] = self._version
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    async def _post_message(self, body: bytes) -> None:
        """POST a notification of the session; one the server refuses is only logged."""
        status, said, _ = await self._post(body)
        if not 200 <= status < 300:
            logger.warning("the server refused a message of this client's (HTTP %d): %s", status, said)

    async def _post_answer(self, body: bytes) -> None:
        """POST the answer to one of the server's requests (what :class:`Serving` sends with).
        The call whose stream brought the request waits for the server, which waits for this
        answer: one the server refuses fails that call now, instead of at its timeout. A copy
        sent again after a drop may be refused because the first one arrived: unless the
        session is gone (404), that fails nothing."""
        session = self._session_id
        status, said, copies = await self._post(body)
        if 200 <= status < 300:
            return
        request = clean(repr(answered_id(body)), single_line=True, max_length=80)
        if status == 404 and session is not None:
            why = f"the server ended the session (HTTP 404 to the answer to its request {request})"
        elif copies == 1:
            why = f"the server refused the answer to its request {request} (HTTP {status}: {said})"
        else:
            why = None
        call = _READING_FOR.get()  # None for a request of the GET stream: no call waits on it
        failed = False
        if why is not None and call is not None:
            failed = self._fail(call, TransportError(f"{why}; the call cannot finish"))
        # A call that failed says it; else only this line tells why the server will wait.
        level = logging.INFO if failed else logging.WARNING
        logger.log(level, "the server refused an answer of this client's (HTTP %d): %s", status, said)

    async def _post(self, body: bytes) -> tuple[int, str, int]:
        """POST a message that is not a request in the session: the reply's status, an excerpt
        of its body, and how many copies went out.

        A connection that drops before the reply is tried again on a new one (after each of
        :data:`POST_RETRY_DELAYS`), unlike a request: the session and the call waiting for an
        answer outlive any one connection, and sending a message twice is harmless (the server
        takes an answer once, and refuses a copy with 400)."""
        headers = legacy_headers(self._version, self._session_id)
        head = self._head("POST", headers, len(body))
        copies = 0
        for pause in (*POST_RETRY_DELAYS, None):
            copies += 1
            conn = await self._pool.acquire()
            try:
                reply = await conn.request(head, body)
                reply_body = await reply.read(64 * 1024)
            except (asyncio.IncompleteReadError, OSError) as exc:
                conn.abort()
                if pause is None:
                    raise TransportError(
                        f"HTTP POST of a notification or answer to {self._url} failed: {_failure(exc)}"
                    ) from exc
                logger.info(
                    "HTTP POST of a message to %s failed (%s); sending it again", self._url, _failure(exc)
                )
                await asyncio.sleep(pause)
                continue
            except BaseException:
                conn.abort()
                raise
            break
        self._pool.release(conn)
        return reply.status, body_excerpt(reply_body), copies

    async def _listen(self, opened: asyncio.Event) -> None:
        """The GET stream: the server's messages about no request of ours (its own requests,
        ``notifications/elicitation/complete``, ...). A server that offers none says 405.
        ``opened`` is set once the first GET's reply head is in (or it failed)."""
        try:
            await self._listen_on(opened)
        finally:
            opened.set()

    async def _listen_on(self, opened: asyncio.Event) -> None:
        serving = self._serving
        last: str | None = None
        quiet = 0
        while not self._closed and quiet < MAX_IDLE_RESUMES:
            headers = self._stream_headers(last)
            decoder = SseDecoder(self._limit)
            decoder.last_event_id = last
            try:
                conn = await self._pool.acquire()
            except TransportError as exc:
                logger.info("the GET stream could not connect: %s", exc)
                return
            events = 0
            try:
                reply = await conn.request(self._head("GET", headers, None), b"")
                opened.set()
                if reply.status != 200 or reply.content_type != "text/event-stream":
                    logger.debug("the server offers no GET stream (HTTP %d)", reply.status)
                    return
                async for chunk in reply.chunks():
                    for data in decoder.feed(chunk):
                        events += 1
                        self._dispatch(data, serving)
            except (OSError, asyncio.IncompleteReadError, MalformedMessageError) as exc:
                opened.set()  # the first GET failed: connecting does not wait for its retries
                logger.info("the GET stream ended: %r", exc)
            finally:
                conn.abort()
            last = decoder.last_event_id
            if last is not None and (header_value_problem(last) is not None or last != last.strip()):
                last = None
            quiet = 0 if events else quiet + 1
            await asyncio.sleep(min(decoder.retry_ms or DEFAULT_RETRY_MS, MAX_RETRY_MS) / 1000)

    def _dispatch(self, data: bytes, serving: Serving | None) -> None:
        if not data.strip():
            return  # a priming event
        try:
            message = decode(data)
        except MalformedMessageError as exc:
            if serving is None or not serving.invalid_request(exc):
                logger.warning("ignoring an unreadable event on the GET stream")
            return
        if serving is None:
            return
        if isinstance(message, Request):
            serving.request(message)
        elif isinstance(message, Notification):
            serving.notification(message)
        else:
            # Only when the server replays a stream; a response to a request of ours in flight
            # still answers it.
            waiting = self._waiting.get(message.id) if message.id is not None else None
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
            else:
                logger.info("ignoring a response on the GET stream (id %r)", message.id)

    async def aclose(self) -> None:
        self._closed = True
        self._closing.set()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
        if self._serving is not None:
            await self._serving.aclose()
        if self._telling:  # the cancellations on their way reach the server before the session ends
            await asyncio.wait(self._telling, timeout=CLOSE_TIMEOUT)
        session, self._session_id = self._session_id, None
        if session is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._end_session(session), CLOSE_TIMEOUT)
        await self._pool.aclose()

    async def _end_session(self, session: str) -> None:
        """DELETE: the server may free the session now (405 means it does not let clients)."""
        headers = legacy_headers(self._version, session)
        del headers["Content-Type"]
        conn = await self._pool.acquire()
        try:
            reply = await conn.request(self._head("DELETE", headers, 0), b"")
            await reply.read(64 * 1024)
        finally:
            conn.abort()
