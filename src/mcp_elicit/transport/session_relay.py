"""Several instances: a message of a 2025-11-25 session that reaches an instance other than the
one holding the session is handed to that owner, and answered from there.

A session lives in the memory of the instance that answered its ``initialize`` (the calls
waiting for answers, the open streams), and its id names that instance
(:meth:`~mcp_elicit.transport.http_sessions.SessionTable.instance_of`). With
``Server(session_router=...)`` (:class:`SessionBus`; PostgreSQL ``LISTEN/NOTIFY``:
:class:`~mcp_elicit.storage.session_router.PostgresSessionRouter`), any instance takes any message:

* The instance that receives it (the *asker*) checks the request as usual (its headers, its body,
  the bearer token: the authentication hook runs here, on every request), then writes the owner a
  letter (:mod:`mcp_elicit.transport.relay_letters`): the method, the few headers the session
  code reads, the body, and the caller the token named (never the token).
* The owner acknowledges it at once, and waits for the asker's "go" before it runs anything: the
  asker says go only if the acknowledgement came in time, so a request the client was told is lost
  (below) never runs later, when an owner that was only stalled wakes up and reads its mail.
* Then the owner runs the very code a request of its own runs
  (:mod:`mcp_elicit.transport.http_legacy`) with a ``send`` that writes the response back to the
  asker, letter by letter: the status and headers, then the body, which for a call is its SSE
  stream (questions, notifications, the result) for as long as it lasts. So a response POST, a
  cancel or a DELETE gets the owner's own answer (202, 400, 404), a call completes on the owner
  while its events reach the client over the asker's connection, and a relayed message for a
  session of another principal gets the same 404 as a local one.
* The asker replays that response to its client: an SSE stream as it comes, any other body once
  whole (so that a response cut short is never half-sent).

Bounds, so that nothing waits without end:

* The owner must acknowledge within ``owner_timeout`` seconds. Without an answer (the instance is
  gone, it crashed, it never existed, or it is stalled) the session is taken as gone: 404, and the
  client initializes again. The asker never says go for that request, so it never runs.
* While a relay lasts, the two instances tell each other every ``keepalive`` seconds which relays
  they still hold. A relay not heard of for three of those is over: the asker ends its client's
  stream (the client may resume it with ``GET`` and ``Last-Event-ID``, on any instance), or
  answers 503 if the owner fell silent after go and before its response began (the request may
  have taken effect; a retry reaches a live owner, or gets the 404 above); the owner takes the
  client as gone (its stream then waits for a resumption, as when a connection drops).
* A client that goes away from the asker is reported to the owner at once, as a disconnect.
* When the asker's connection to PostgreSQL is replaced, letters may have been lost: the relays
  in progress end (503 before the response began, which clients may retry).
* ``max_relays`` relays at once each way (503 beyond); a relayed body of at most
  :data:`MAX_RELAYED_BODY` bytes (413); letters waiting for a slow client at most
  :data:`MAX_QUEUED_BYTES` bytes (its relay then ends, and the client may resume).

Trust: a letter is sealed with a key derived from the state keys, for its recipient only, and is
refused if replayed, so only instances given the same state keys and the same router can relay
for each other. The database carries ciphertext.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import orjson

from mcp_elicit.server.auth import Caller
from mcp_elicit.transport import http_legacy
from mcp_elicit.transport.asgi import Message, Receive, Send, send_json
from mcp_elicit.transport.http_checks import Head
from mcp_elicit.transport.relay_letters import Letter, LetterSealer
from mcp_elicit.transport.shutdown import answer_shutdown, stopping_task
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from mcp_elicit.wire.http import status_for_error
from mcp_elicit.wire.jsonrpc import (
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    RequestId,
    Result,
    encode_error,
    encode_notification,
    encode_request,
    parse_message,
)

if TYPE_CHECKING:
    from mcp_elicit.transport.http_app import HttpApp

__all__ = ["MAX_QUEUED_BYTES", "MAX_RELAYED_BODY", "SessionBus", "SessionRelay"]

logger = logging.getLogger("mcp_elicit.transport.relay")

MAX_RELAYED_BODY: Final = 32 * 1024 * 1024
MAX_QUEUED_BYTES: Final = 16 * 1024 * 1024
_BODY_LETTER: Final = 1024 * 1024  # an owner's body goes back in letters of at most this much
_SILENT_BEATS: Final = 3  # keepalives a relay may miss before it is over
# The headers the session code reads (http_legacy): all a relayed request needs.
_RELAYED_HEADERS: Final = ("mcp-session-id", "mcp-protocol-version", "last-event-id", "accept")
_METHODS: Final = frozenset({"POST", "GET", "DELETE"})


class Mailbox(Protocol):
    async def close(self) -> None: ...


class SessionBus(Protocol):
    """What carries letters between the instances of a deployment
    (:class:`~mcp_elicit.storage.session_router.PostgresSessionRouter`): a mailbox per instance,
    messages that arrive whole and in order or not at all, failures as :class:`OSError`."""

    @property
    def owner_timeout(self) -> float: ...

    @property
    def keepalive(self) -> float: ...

    @property
    def max_relays(self) -> int: ...

    async def open_mailbox(
        self, name: str, *, deliver: Callable[[bytes], None], lost: Callable[[], None]
    ) -> Mailbox: ...

    async def post(self, to: str, message: bytes) -> None: ...


class _End:
    """What ends an asker's wait other than a letter."""

    def __init__(self, why: str) -> None:
        self.why = why


_CLIENT_GONE: Final = _End("the client went away")
_LOST: Final = _End("contact with the instance that holds the session was lost")
_TOO_SLOW: Final = _End("the client reads more slowly than the instance that holds the session writes")


@dataclass(eq=False)
class _Asked:
    """A relay this instance asked of ``owner``: the letters that came back, waiting."""

    owner: str
    heard: float  # loop time the owner last showed it holds this relay
    queue: asyncio.Queue[Letter | _End] = field(default_factory=asyncio.Queue)
    queued_bytes: int = 0


@dataclass(eq=False)
class _Served:
    """A relay this instance serves for ``asker``: the request runs here, its response goes back."""

    relay: SessionRelay
    asker: str
    number: int
    heard: float
    gone: asyncio.Event = field(default_factory=asyncio.Event)
    go: asyncio.Event = field(default_factory=asyncio.Event)  # the asker still waits: run it
    complete: bool = False  # the whole response went back

    async def receive(self) -> Message:
        """The relayed connection's ``receive``: a disconnect once the client has gone."""
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        """The relayed connection's ``send``: each ASGI message back to the asker, as letters.
        :class:`OSError` once the client has gone (what a broken connection raises)."""
        if self.gone.is_set():
            raise ConnectionResetError("the client of this relayed request has gone")
        try:
            if message["type"] == "http.response.start":
                headers = [
                    [name.decode("latin-1"), value.decode("latin-1")] for name, value in message["headers"]
                ]
                await self.relay.post(
                    self.asker, "start", self.number, {"status": message["status"], "headers": headers}
                )
            elif message["type"] == "http.response.body":
                body: bytes = message.get("body", b"")
                more: bool = message.get("more_body", False)
                pieces = [body[i : i + _BODY_LETTER] for i in range(0, len(body), _BODY_LETTER)] or [b""]
                for index, piece in enumerate(pieces):
                    last = index == len(pieces) - 1
                    await self.relay.post(self.asker, "body", self.number, {"more": more or not last}, piece)
                if not more:
                    self.complete = True
        except OSError:
            self.gone.set()
            raise


class SessionRelay:
    """The relays of one :class:`~mcp_elicit.transport.http_app.HttpApp` (see the module
    docstring): :meth:`forward` as the asker, the owner's side when letters come."""

    def __init__(self, app: HttpApp, bus: SessionBus) -> None:
        self._app = app
        self._bus = bus
        self.name = app.sessions.instance
        self._letters = LetterSealer(app.server.sealer, self.name)
        self._dead_after = _SILENT_BEATS * bus.keepalive
        self._mailbox: Mailbox | None = None
        self._opening = asyncio.Lock()
        self._posting = asyncio.Lock()
        # From a random start: an instance restarted under the same name must not number its
        # relays as its previous process did, whose relays an owner may still serve (keyed by
        # sender and number) until they fall silent; their answers would go to the new ones.
        self._numbers = itertools.count(secrets.randbelow(2**62) + 1)
        self._asked: dict[int, _Asked] = {}
        self._served: dict[tuple[str, int], _Served] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._ticker: asyncio.Task[None] | None = None

    # -- the mailbox -----------------------------------------------------------------------------
    async def ready(self) -> bool:
        """Whether this instance listens for letters (opening its mailbox on first use). An
        instance listens before it mints its first session id, so that no letter for one of its
        sessions can come before it does."""
        if self._mailbox is not None:
            return True
        async with self._opening:
            if self._mailbox is None:
                try:
                    self._mailbox = await self._bus.open_mailbox(
                        self.name, deliver=self._received, lost=self._lost
                    )
                except OSError as exc:
                    logger.warning("cannot listen for the letters of other instances: %s", exc)
                    return False
                self._ticker = asyncio.ensure_future(self._tick())
        return True

    async def close(self) -> None:
        """Stop relaying: the mailbox closes, relays in progress end."""
        if self._ticker is not None:
            self._ticker.cancel()
        for task in list(self._tasks):
            task.cancel()
        self._lost()
        if self._mailbox is not None:
            mailbox, self._mailbox = self._mailbox, None
            await mailbox.close()

    async def post(
        self, to: str, kind: str, number: int, fields: dict[str, Any] | None = None, data: bytes = b""
    ) -> None:
        """Seal a letter and post it (in one step, under a lock: letters must leave in the order
        of their stamps)."""
        async with self._posting:
            await self._bus.post(to, self._letters.seal(to, kind, number, fields, data))

    def _received(self, sealed: bytes) -> None:
        letter = self._letters.open(sealed)
        if letter is None:
            return
        now = asyncio.get_running_loop().time()
        if letter.kind == "open":
            key = (letter.sender, letter.relay)
            if key in self._served:
                return
            # Registered at once: a "gone" right behind it must find it.
            over = len(self._served) >= self._bus.max_relays
            serving = self._served[key] = _Served(self, letter.sender, letter.relay, now)
            task = asyncio.ensure_future(self._serve(letter, serving, over))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif letter.kind in ("go", "gone"):
            served = self._served.get((letter.sender, letter.relay))
            if served is not None:
                (served.go if letter.kind == "go" else served.gone).set()
        elif letter.kind == "alive":
            self._heard_from(letter, now)
        else:  # "ack", "start", "body", "end": the owner's side of a relay asked here
            asked = self._asked.get(letter.relay)
            if asked is None or asked.owner != letter.sender:
                return  # over already (the client went away, or it timed out)
            asked.heard = now
            asked.queued_bytes += len(letter.data)
            asked.queue.put_nowait(_TOO_SLOW if asked.queued_bytes > MAX_QUEUED_BYTES else letter)

    def _heard_from(self, letter: Letter, now: float) -> None:
        """An "alive" letter: the relays its sender still asks of this instance, and those it
        still serves for it."""
        for number in _numbers(letter.fields.get("asks")):
            served = self._served.get((letter.sender, number))
            if served is not None:
                served.heard = now
        for number in _numbers(letter.fields.get("serves")):
            asked = self._asked.get(number)
            if asked is not None and asked.owner == letter.sender:
                asked.heard = now

    def _lost(self) -> None:
        """Letters may have been lost: every relay in progress ends."""
        for asked in self._asked.values():
            asked.queue.put_nowait(_LOST)
        for served in self._served.values():
            served.gone.set()

    async def _tick(self) -> None:
        """Every ``keepalive`` seconds: tell each peer which relays this instance still holds with
        it, and let go of the relays served for an asker that has fallen silent."""
        while True:
            await asyncio.sleep(self._bus.keepalive)
            try:
                await self._beat()
            except Exception:  # never the end of the keepalives: relays would die of silence
                logger.exception("telling other instances which relays go on failed")

    async def _beat(self) -> None:
        now = asyncio.get_running_loop().time()
        peers: dict[str, tuple[list[int], list[int]]] = {}
        for number, asked in self._asked.items():
            peers.setdefault(asked.owner, ([], []))[0].append(number)
        for served in list(self._served.values()):
            if served.gone.is_set():
                continue  # its request is winding down
            if now - served.heard > self._dead_after:
                logger.info(
                    "the instance that asked relay %s.%d fell silent: its client is taken as gone",
                    served.asker,
                    served.number,
                )
                served.gone.set()
            else:
                peers.setdefault(served.asker, ([], []))[1].append(served.number)
        for peer, (asks, serves) in peers.items():
            try:
                await self.post(peer, "alive", 0, {"asks": asks, "serves": serves})
            except OSError as exc:
                logger.info("cannot tell instance %s that relays go on: %s", peer, exc)

    # -- asking ----------------------------------------------------------------------------------
    async def forward(
        self,
        owner: str,
        head: Head,
        message: Request | Notification | Result | ErrorResponse | None,
        caller: Caller | None,
        send: Send,
        receive: Receive,
    ) -> None:
        """Hand a request for a session of ``owner`` to it, and answer with its response."""
        request_id = message.id if isinstance(message, Request) else None
        body = b"" if message is None else _encoded(message)
        if len(body) > MAX_RELAYED_BODY:
            await _refuse(
                send,
                413,
                "Payload Too Large: this instance relays bodies of at most "
                f"{MAX_RELAYED_BODY} bytes to the instance that holds the session",
                request_id,
            )
            return
        if not await self.ready():
            await _unavailable(send, request_id)
            return
        if len(self._asked) >= self._bus.max_relays:
            await _refuse(
                send,
                503,
                "Service Unavailable: this instance relays as many requests as it may; retry shortly",
                request_id,
                retry=True,
            )
            return
        number = next(self._numbers)
        asked = _Asked(owner, asyncio.get_running_loop().time())
        self._asked[number] = asked
        watcher = asyncio.ensure_future(_watch(receive, asked))
        try:
            fields = {
                "m": head.method,
                "h": {name: head.headers[name] for name in _RELAYED_HEADERS if name in head.headers},
                "sse": head.accepts_sse,
                "c": None if caller is None else [caller.principal, caller.client],
            }
            try:
                await self.post(owner, "open", number, fields, body)
            except OSError as exc:
                logger.warning("cannot hand a request to instance %s: %s", owner, exc)
                await _unavailable(send, request_id)
                return
            reply = _Reply(send)
            try:
                await self._answer(number, asked, request_id, reply)
            except asyncio.CancelledError:
                task = stopping_task()
                if task is None:
                    raise
                # The server stops (mcp_elicit.transport.shutdown): the owner lets go at once, and
                # the client gets the end of its stream (to resume on another instance) or a 503.
                await self._tell_gone(asked, number)
                if reply.started:
                    await reply.cut()
                else:
                    with contextlib.suppress(Exception):  # the client may be gone
                        await answer_shutdown(send, request_id)
                if task.uncancel() == 0:
                    return
                raise
        finally:
            watcher.cancel()
            self._asked.pop(number, None)

    async def _answer(self, number: int, asked: _Asked, request_id: RequestId | None, reply: _Reply) -> None:
        """Replay the owner's response to the client, as the letters come."""
        loop = asyncio.get_running_loop()
        send = reply.send
        acknowledged = False  # any letter of the owner's about this relay acknowledges it
        opened = asked.heard

        def deadline() -> float:
            return asked.heard + self._dead_after if acknowledged else opened + self._bus.owner_timeout

        while True:
            try:
                async with asyncio.timeout_at(deadline()):
                    event = await asked.queue.get()
            except TimeoutError:
                if loop.time() < deadline():
                    continue  # an "alive" letter moved the deadline meanwhile
                await self._owner_silent(asked, acknowledged, reply, request_id)
                await self._tell_gone(asked, number)
                return
            if isinstance(event, _End):
                await self._tell_gone(asked, number)
                if event is _CLIENT_GONE:
                    return
                if reply.started:
                    await reply.cut()
                else:
                    await _unavailable(send, request_id, f"Service Unavailable: {event.why}; retry")
                return
            asked.queued_bytes -= len(event.data)
            try:
                if event.kind == "ack":
                    # In time (a late one finds no relay here): from now on the request may run.
                    await self.post(asked.owner, "go", number)
                acknowledged = True
                if event.kind == "start":
                    await reply.start(event.fields)
                elif event.kind == "body":
                    if await reply.body(event.data, bool(event.fields.get("more"))):
                        return
                elif event.kind == "end":  # the owner finished without a whole response
                    if reply.started:
                        await reply.cut()
                    else:
                        error = McpError(
                            INTERNAL_ERROR,
                            "Internal error: the instance that holds the session failed to answer",
                        )
                        await send_json(send, 500, encode_error(request_id, error))
                    return
            except OSError:  # our client's connection broke, or the relay did
                await self._tell_gone(asked, number)
                if reply.started:
                    await reply.cut()
                else:
                    with contextlib.suppress(Exception):  # the client may be gone
                        await _unavailable(send, request_id, "Service Unavailable: the relay broke; retry")
                return

    async def _owner_silent(
        self, asked: _Asked, acknowledged: bool, reply: _Reply, request_id: RequestId | None
    ) -> None:
        if reply.started:
            logger.info("instance %s fell silent mid-stream: the stream ends here", asked.owner)
            await reply.cut()
            return
        if acknowledged:
            logger.info("instance %s fell silent while it handled a relayed request", asked.owner)
            await _unavailable(
                reply.send,
                request_id,
                "Service Unavailable: the instance that holds the session stopped answering while it "
                "handled this request, which may have taken effect; retry shortly",
            )
            return
        logger.info(
            "instance %s did not answer within %g s: its session is taken as gone",
            asked.owner,
            self._bus.owner_timeout,
        )
        await _refuse(
            reply.send,
            404,
            "Not Found: no such session (the instance that held it does not answer): initialize again",
            request_id,
        )

    async def _tell_gone(self, asked: _Asked, number: int) -> None:
        """Tell the owner this relay is over here (the client went away, or the wait ended)."""
        with contextlib.suppress(OSError):
            await self.post(asked.owner, "gone", number)

    # -- serving ---------------------------------------------------------------------------------
    async def _serve(self, letter: Letter, served: _Served, over: bool) -> None:
        """Answer a relayed request (``over``: with 503, this instance serves ``max_relays``)."""
        try:
            if over:
                await _refuse(
                    served.send,
                    503,
                    "Service Unavailable: the instance that holds the session relays as many requests "
                    "as it may; retry shortly",
                    None,
                    retry=True,
                )
                return
            await self.post(letter.sender, "ack", letter.relay)
            if not await self._go(served):
                logger.info(
                    "relay %s.%d was given up by its asker before it could run: dropped",
                    served.asker,
                    served.number,
                )
                return
            await self._run(letter, served)
        except OSError:
            pass  # the relayed connection broke: as for a client that went away
        except Exception:
            logger.exception("a relayed request failed")
        finally:
            self._served.pop((letter.sender, letter.relay), None)
            if not served.complete and not served.gone.is_set():
                with contextlib.suppress(OSError):
                    await self.post(letter.sender, "end", letter.relay)

    async def _go(self, served: _Served) -> bool:
        """Wait for the asker's go; False when it gave up instead (its "gone", or its silence,
        which :meth:`_beat` turns into gone)."""
        if not served.go.is_set():
            waits = [asyncio.ensure_future(served.go.wait()), asyncio.ensure_future(served.gone.wait())]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiting in waits:
                    waiting.cancel()
        return not served.gone.is_set()

    async def _run(self, letter: Letter, served: _Served) -> None:
        """The relayed request, through the code a request of this instance's own goes through."""
        method, headers, caller = _request_of(letter)
        send, receive = served.send, served.receive
        session_id = None if headers is None else headers.get("mcp-session-id")
        if (
            method is None
            or headers is None
            or session_id is None
            or self._app.sessions.instance_of(session_id) != self.name
        ):
            await _refuse(send, 400, "Bad Request: a relayed request that names no session of this instance")
            return
        head = Head(method, headers, accepts_sse=letter.fields.get("sse") is True)
        if method == "GET":
            await http_legacy.get(self._app, head, caller, send, receive)
        elif method == "DELETE":
            await http_legacy.delete(self._app, head, caller, send, receive)
        else:
            try:
                message = parse_message(letter.data, max_bytes=MAX_RELAYED_BODY)
            except InvalidMessage as exc:
                await send_json(send, status_for_error(exc.code), encode_error(exc.reply_id, exc))
                return
            await http_legacy.post(self._app, head, message, caller, send, receive)


class _Reply:
    """The asker's response to its client: an SSE stream goes out as it comes, any other body
    once whole (a body cut short is never half-sent)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False  # the client has the status
        self._head: Message | None = None
        self._streaming = False
        self._held: list[bytes] = []

    async def start(self, fields: Any) -> None:
        status = fields.get("status")
        if (
            isinstance(status, bool)
            or not isinstance(status, int)
            or not isinstance(fields.get("headers"), list)
        ):
            raise ConnectionResetError("a malformed status")  # a broken relay: end it
        headers = [
            (str(name).encode("latin-1"), str(value).encode("latin-1"))
            for name, value in fields.get("headers", [])
        ]
        self._head = {"type": "http.response.start", "status": status, "headers": headers}
        self._streaming = any(
            name == b"content-type" and value.startswith(b"text/event-stream") for name, value in headers
        )
        if self._streaming:
            await self.send(self._head)
            self.started = True

    async def body(self, data: bytes, more: bool) -> bool:
        """Send (or hold) a piece of the body; True once the response is complete."""
        if self._head is None:
            raise ConnectionResetError("a body before the status")  # a broken relay: end it
        if self._streaming:
            await self.send({"type": "http.response.body", "body": data, "more_body": more})
            return not more
        self._held.append(data)
        if more:
            return False
        await self.send(self._head)
        self.started = True
        await self.send({"type": "http.response.body", "body": b"".join(self._held)})
        return True

    async def cut(self) -> None:
        """End a stream that has begun (the client may resume it); nothing otherwise."""
        if self.started and self._streaming:
            with contextlib.suppress(Exception):
                await self.send({"type": "http.response.body", "body": b"", "more_body": False})


async def _watch(receive: Receive, asked: _Asked) -> None:
    """Report the client's disconnect to the asker's wait."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            asked.queue.put_nowait(_CLIENT_GONE)
            return


def _request_of(letter: Letter) -> tuple[str | None, dict[str, str] | None, Caller | None]:
    """The method, headers and caller an "open" letter names (None for what is malformed)."""
    method = letter.fields.get("m")
    raw = letter.fields.get("h")
    headers = (
        {name: value for name, value in raw.items() if name in _RELAYED_HEADERS and isinstance(value, str)}
        if isinstance(raw, dict)
        else None
    )
    who = letter.fields.get("c")
    caller = None
    if (
        isinstance(who, list)
        and len(who) == 2
        and isinstance(who[0], str)
        and (who[1] is None or isinstance(who[1], str))
    ):
        caller = Caller(who[0], who[1])
    return (method if method in _METHODS else None), headers, caller


def _numbers(value: object) -> list[int]:
    if not isinstance(value, list):
        return []
    return [n for n in value if isinstance(n, int) and not isinstance(n, bool)]


def _encoded(message: Request | Notification | Result | ErrorResponse) -> bytes:
    """The message as JSON again, for the owner to parse as it parses its own."""
    if isinstance(message, Request):
        return encode_request(message.id, message.method, message.params)
    if isinstance(message, Notification):
        return encode_notification(message.method, message.params)
    if isinstance(message, Result):
        return orjson.dumps({"jsonrpc": "2.0", "id": message.id, "result": message.result})
    error: dict[str, Any] = {"code": message.code, "message": message.message}
    if message.data is not None:
        error["data"] = message.data
    return orjson.dumps({"jsonrpc": "2.0", "id": message.id, "error": error})


async def _refuse(
    send: Send, status: int, message: str, request_id: RequestId | None = None, *, retry: bool = False
) -> None:
    error = McpError(INTERNAL_ERROR if status >= 500 else INVALID_REQUEST, message)
    await send_json(send, status, encode_error(request_id, error), [(b"retry-after", b"1")] if retry else [])


async def _unavailable(send: Send, request_id: RequestId | None, message: str | None = None) -> None:
    await _refuse(
        send,
        503,
        message
        or "Service Unavailable: the instance that holds this session cannot be reached right now; "
        "retry shortly",
        request_id,
        retry=True,
    )
