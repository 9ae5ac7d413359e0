"""Streamable HTTP, 2025-11-25 shape: what the endpoint does for a request of a session.

:class:`~mcp_elicit.transport.http_app.HttpApp` sends here every message that belongs to the
2025-11-25 era (see ``http_app.era_of``): ``initialize`` opens a session
(:mod:`mcp_elicit.transport.http_sessions`) and its response carries the ``Mcp-Session-Id``;
every later message must name it (400 without, 404 for a session that is unknown, ended,
expired or another user's). Then:

* a call (``tools/call``, ``prompts/get``, ``resources/read``) runs in a task of the session
  (in ``HttpSession.calls``: bounded by ``max_calls``, cancelled by ``notifications/cancelled``
  and by the session's end). Its POST is answered on an SSE stream
  (:mod:`mcp_elicit.transport.event_stream`): the questions the call sends the client, its
  notifications, its response; a dropped connection can be picked up again (``GET`` with
  ``Last-Event-ID``). A POST that accepts only JSON gets the response as JSON (a question fails
  the call), or -32800 once the call is cancelled;
* any other request is answered with JSON;
* a response to one of the session's requests (a POST whose body is a JSON-RPC result or
  error) completes the question waiting for it: 202, or 400 when it answers none (an id never
  sent, another session's, one already answered);
* ``notifications/cancelled`` cancels the named call (its stream ends without a response, and
  the questions it was waiting for are withdrawn); other notifications: 202;
* ``GET`` opens the session's stream for messages that belong to no request (one at a time,
  409 for a second; ``notifications/resources/updated`` for the resources the session
  subscribed to), or, with ``Last-Event-ID``, resumes a call's stream;
* ``DELETE`` ends the session (and its streams: the GET stream's connection ends too).

A message for a session another instance holds (its id names that instance) is handed to that
instance when the server has a ``session_router``
(:mod:`mcp_elicit.transport.session_relay`), which runs it through this same code; without one
it gets the 404 of an unknown session (one instance, or a load balancer that sends every
request of a session to the instance its ``Mcp-Session-Id`` names).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, TypeVar

from mcp_elicit.server.auth import Caller
from mcp_elicit.transport.asgi import Header, Receive, Send, send_json, send_response
from mcp_elicit.transport.event_stream import EventStream, last_event, serve_events
from mcp_elicit.transport.http_checks import Head
from mcp_elicit.transport.http_sessions import HttpSession, SessionLimit, SessionTable
from mcp_elicit.transport.shutdown import shutdown_error
from mcp_elicit.wire.errors import INVALID_REQUEST, McpError
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Request, Result, encode_error

if TYPE_CHECKING:
    from mcp_elicit.transport.http_app import HttpApp

logger = logging.getLogger("mcp_elicit.transport.http")

CALLS = frozenset({"tools/call", "prompts/get", "resources/read"})
SESSION_HEADER = b"mcp-session-id"
# The answer to a cancelled call whose POST waits for JSON (a stream just ends): no MCP code says
# "cancelled", and this is the one the official SDKs answer with at 2025-11-25 (LSP's
# RequestCancelled).
REQUEST_CANCELLED: Final = -32800

T = TypeVar("T")


async def _refuse(send: Send, status: int, message: str, request_id: object = None) -> None:
    error = McpError(INVALID_REQUEST, message)
    await send_json(
        send, status, encode_error(request_id if isinstance(request_id, str | int) else None, error)
    )


class _StreamChannel:
    """A call's messages, as events of its stream (dropped once the stream is done)."""

    def __init__(self, stream: EventStream) -> None:
        self._stream = stream

    async def send(self, message: bytes, *, control: bool = False, notification: bool = False) -> bool:
        if self._stream.done:
            return False
        self._stream.send(message)
        return True

    async def close(self) -> None:
        self._stream.close_connection()


class _NoChannel:
    """A request answered with JSON: nothing can go to the client before its response, so its
    notifications are dropped (as on the 2026-07-28 side) and a question to the client fails the
    call with a reason."""

    async def send(self, message: bytes, *, control: bool = False, notification: bool = False) -> bool:
        if notification or control:
            return False
        raise McpError(
            INVALID_REQUEST,
            "Invalid request: this call must ask the client, and its POST does not accept "
            "text/event-stream, the only way a question can reach the client over HTTP",
        )

    async def close(self) -> None:
        pass  # a JSON answer has no stream to resume


async def post(
    app: HttpApp,
    head: Head,
    message: Request | Notification | Result | ErrorResponse,
    caller: Caller | None,
    send: Send,
    receive: Receive,
) -> None:
    table = app.sessions
    session_id = head.headers.get("mcp-session-id")
    if isinstance(message, Request) and message.method == "initialize":
        if app.relay is not None and not await app.relay.ready():
            # Other instances could not hand this session's messages here: no session then.
            await _refuse(
                send,
                503,
                "Service Unavailable: the instances cannot reach each other (their database is "
                "unavailable); retry shortly",
                message.id,
            )
            return
        await _initialize(table, session_id, message, caller, send)
        return
    request_id = message.id if isinstance(message, Request) else None
    if session_id is None:
        await _refuse(
            send, 400, "Bad Request: an Mcp-Session-Id header is required (send initialize first)", request_id
        )
        return
    owner = _elsewhere(app, session_id)
    if owner is not None and app.relay is not None:
        await app.relay.forward(owner, head, message, caller, send, receive)
        return
    session = table.get(session_id, caller)
    if session is None:
        await _refuse(
            send, 404, "Not Found: no such session (it ended or expired): initialize again", request_id
        )
        return
    if isinstance(message, Result | ErrorResponse):
        if session.legacy.receive(message):
            await send_response(send, 202, [])
        else:
            await _refuse(
                send,
                400,
                f"Bad Request: no question of this session waits for an answer with id {message.id!r} "
                "(never sent, already answered, or withdrawn)",
            )
        return
    if isinstance(message, Notification):
        if message.method == "notifications/cancelled":
            target = message.params.get("requestId")
            call = (
                session.calls.get(target)
                if isinstance(target, str | int) and not isinstance(target, bool)
                else None
            )
            if call is not None:
                call.cancel()
        else:
            session.legacy.notification(message)
        await send_response(send, 202, [])
        return
    headers: list[Header] = [(SESSION_HEADER, session.id.encode("ascii"))]
    if message.method not in CALLS:
        await send_json(send, 200, await session.legacy.handle(message, _NoChannel()), headers)
    elif await _admitted(table, session, message, send):
        if head.accepts_sse:
            await _call(table, session, message, send, receive, headers)
        else:
            await _json_call(session, message, send, headers)


async def _initialize(
    table: SessionTable, session_id: str | None, request: Request, caller: Caller | None, send: Send
) -> None:
    if session_id is not None and table.get(session_id, caller) is not None:
        await _refuse(send, 400, "Invalid request: this session is already initialized", request.id)
        return
    try:
        session = table.create(caller)
    except SessionLimit as exc:
        await send_json(send, exc.status, encode_error(request.id, McpError(INVALID_REQUEST, exc.message)))
        return
    body = session.legacy.handle_initialize(request)
    if session.legacy.version is None:  # initialize refused (malformed): no session then
        table.end(session)
        await send_json(send, 400, body)
        return
    await send_json(send, 200, body, [(SESSION_HEADER, session.id.encode("ascii"))])


async def _admitted(table: SessionTable, session: HttpSession, request: Request, send: Send) -> bool:
    """Whether the call may run in the session; False once the refusal is sent (its id is one
    of a call running, 400; the session runs ``max_calls`` already, 429)."""
    if request.id in session.calls:
        await _refuse(
            send, 400, f"Invalid request: id {request.id!r} is already in use in this session", request.id
        )
        return False
    if len(session.calls) >= table.max_calls:
        await _refuse(
            send,
            429,
            f"Too Many Requests: this session has {table.max_calls} calls running already",
            request.id,
        )
        return False
    return True


def _start(
    session: HttpSession,
    request: Request,
    work: Coroutine[Any, Any, T],
    on_end: Callable[[], None] = lambda: None,
) -> asyncio.Task[T]:
    """Run a call as a task of the session, in ``session.calls`` until it ends; then ``on_end()``.
    A callback, not a ``finally`` in ``work``: a call cancelled before its first step (its
    ``notifications/cancelled`` read in the same batch as its POST) never runs a line of it."""
    task = asyncio.ensure_future(work)
    session.calls[request.id] = task

    def ended(done: asyncio.Task[T]) -> None:
        on_end()
        if session.calls.get(request.id) is done:
            del session.calls[request.id]

    task.add_done_callback(ended)
    return task


async def _json_call(session: HttpSession, request: Request, send: Send, headers: list[Header]) -> None:
    """Run a call in the session and answer with JSON (its POST accepts no event stream)."""
    call = _start(session, request, session.legacy.handle(request, _NoChannel()))
    try:
        body = await call  # this request cancelled (the server stopping): the call is too
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        # The call was cancelled (notifications/cancelled, DELETE), not this request: the POST
        # still needs an answer, and it is no result.
        body = encode_error(request.id, McpError(REQUEST_CANCELLED, "Request cancelled"))
    await send_json(send, 200, body, headers)


async def _call(
    table: SessionTable,
    session: HttpSession,
    request: Request,
    send: Send,
    receive: Receive,
    headers: list[Header],
) -> None:
    """Run a call in the session and answer on a stream of its own."""
    stream_id = session.new_stream_id()
    task: asyncio.Task[None] | None = None

    def abandoned() -> None:
        logger.info("a call's stream was not picked up again within %g s: cancelling it", table.resume_grace)
        if task is not None:
            task.cancel()

    def over(delivered: bool) -> None:
        session.stream_over(stream_id, delivered=delivered)

    stream = EventStream(stream_id, resume_grace=table.resume_grace, on_abandoned=abandoned, on_over=over)
    session.streams[stream_id] = stream
    stream.prime()

    async def run() -> None:
        stream.finish(await session.legacy.handle(request, _StreamChannel(stream)))

    # Cancelled, the stream ends without a response (finish once done does nothing).
    task = _start(session, request, run(), lambda: stream.finish(None))
    await serve_events(
        stream, None, send, receive, headers, lambda: encode_error(request.id, shutdown_error())
    )


async def get(app: HttpApp, head: Head, caller: Caller | None, send: Send, receive: Receive) -> None:
    if await _relayed(app, head, caller, send, receive):
        return
    session = await _session_of(app, head, caller, send)
    if session is None:
        return
    headers: list[Header] = [(SESSION_HEADER, session.id.encode("ascii"))]
    named = (head.headers.get("last-event-id") or "").strip()
    resume = last_event(named) if named else None
    if named and (resume is None or resume[0] not in session.get_streams):
        # A call's stream, resumed after the event the client last read (never one past it).
        stream = None if resume is None else session.streams.get(resume[0])
        if stream is None or resume is None or resume[1] > stream.last_seq:
            await _refuse(send, 404, "Not Found: that stream is unknown or over")
            return
        await serve_events(stream, resume[1], send, receive, headers)
        return
    # A GET stream: a new one, or one the client lost (resumed by its last event's id).
    if session.get_stream is not None:
        await _refuse(send, 409, "Conflict: this session has a GET stream open already")
        return
    stream = EventStream(session.new_stream_id("g"), resume_grace=0.0, on_abandoned=lambda: None)
    session.get_stream = stream
    session.get_streams.append(stream.id)
    stream.prime()
    session.legacy.standalone = _StreamChannel(stream)
    try:
        await serve_events(stream, None, send, receive, headers)
    finally:
        session.legacy.standalone = None
        session.get_stream = None
        stream.finish(None)


async def delete(app: HttpApp, head: Head, caller: Caller | None, send: Send, receive: Receive) -> None:
    if await _relayed(app, head, caller, send, receive):
        return
    session = await _session_of(app, head, caller, send)
    if session is None:
        return
    app.sessions.end(session)
    with contextlib.suppress(Exception):
        await send_response(send, 200, [])


def _elsewhere(app: HttpApp, session_id: str) -> str | None:
    """The other instance that holds the session ``session_id`` names, when messages are handed
    between instances; None otherwise (this one, no routing, or an id no instance mints: 404)."""
    if app.relay is None:
        return None
    owner = app.sessions.instance_of(session_id)
    return None if owner == app.sessions.instance else owner


async def _relayed(app: HttpApp, head: Head, caller: Caller | None, send: Send, receive: Receive) -> bool:
    """Hand a GET or DELETE to the instance that holds its session; False when it is this one's."""
    session_id = head.headers.get("mcp-session-id")
    owner = None if session_id is None else _elsewhere(app, session_id)
    if owner is None or app.relay is None:
        return False
    await app.relay.forward(owner, head, None, caller, send, receive)
    return True


async def _session_of(app: HttpApp, head: Head, caller: Caller | None, send: Send) -> HttpSession | None:
    session_id = head.headers.get("mcp-session-id")
    if session_id is None:
        await _refuse(send, 400, "Bad Request: an Mcp-Session-Id header is required")
        return None
    session = app.sessions.get(session_id, caller)
    if session is None:
        await _refuse(send, 404, "Not Found: no such session (it ended or expired): initialize again")
        return None
    return session
