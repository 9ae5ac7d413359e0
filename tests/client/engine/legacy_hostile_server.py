"""A 2025-11-25 Streamable HTTP server on 127.0.0.1 that answers each HTTP request exactly as a
test's :class:`Plan` says, byte for byte. Test-only, no library code.

It speaks just enough of the legacy wire for a client to get through: it refuses
``server/discover`` (or not), answers ``initialize`` with whatever reply the plan holds (any
result, any ``Mcp-Session-Id`` header), and each ``tools/call`` in turn with the plan's next
reply: a JSON body of any status and content type, a closed or hung connection, or an event
stream (:class:`Stream`) whose events carry the server's own requests, notifications, stray
responses and unreadable data, cut into pieces at any byte, then the call's response (or none).

A stream waits for the client's answers to the requests it carried before it sends the
response, as a real server does, and every answer POST is recorded: :meth:`HostileServer.owed`
says what the client still owes (each request read by the client, with an id not used before in
its session, must be answered once; a request that is not valid JSON-RPC but whose id can be
read is owed the -32600 refusal). :data:`CALL_ID` in a plan's messages stands for the id of the
request being answered, :data:`CALL_ID_TEXT` for that id as a string (a look-alike that must
not be taken for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CALL_ID",
    "CALL_ID_TEXT",
    "DROP",
    "HANG",
    "MISSING",
    "Ask",
    "Head",
    "HostileServer",
    "Plan",
    "Raw",
    "Reply",
    "Sent",
    "Stream",
]

ANSWER_WAIT = 2.0  # how long a stream waits for the client's answers before its response
HANG_LIMIT = 20.0  # a hung reply is given up after this long (the client gave up long before)


class _Placeholder:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


CALL_ID = _Placeholder("CALL_ID")
CALL_ID_TEXT = _Placeholder("CALL_ID_TEXT")
MISSING = _Placeholder("MISSING")  # an Ask without params


def fill(value: Any, call_id: Any) -> Any:
    """``value`` with the placeholders replaced by the id of the request being answered."""
    if value is CALL_ID:
        return call_id
    if value is CALL_ID_TEXT:
        return str(call_id)
    if isinstance(value, dict):
        return {k: fill(v, call_id) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, call_id) for v in value]
    return value


def to_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


# -- what the server sends -------------------------------------------------------------------
@dataclass(frozen=True)
class Ask:
    """A request of the server's own on a stream (``params`` MISSING: none at all)."""

    id: Any
    method: str
    params: Any = MISSING

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not MISSING:
            message["params"] = self.params
        return message

    @property
    def valid(self) -> bool:
        return self.params is MISSING or self.params is None or isinstance(self.params, dict)


@dataclass(frozen=True)
class Raw:
    """Event data that is not a readable message; ``owed``: the id of a request in it that the
    client can still read, and must refuse with -32600."""

    data: bytes
    owed: Any = None


# An event's data: a server request, a message (notification, stray response...), raw bytes, or
# None for a comment line (a keep-alive).
Item = Ask | Raw | dict[str, Any] | None


@dataclass(frozen=True)
class Head:
    """A reply in one piece. ``body``: bytes as they are, or a message (placeholders filled)."""

    status: int = 200
    body: bytes | dict[str, Any] | None = None
    content_type: str | None = "application/json"
    session: str | None = None  # the Mcp-Session-Id header (initialize)
    close: bool = False  # close the connection after it


@dataclass(frozen=True)
class Stream:
    """An SSE reply: ``items`` as events, then (once the client answered the requests among them)
    ``final`` (the response; none, one, or the same twice...).

    ``cut``: close the connection after that many events (priming included), ``half`` of the
    next one written first; a GET with Last-Event-ID then gets ``resume`` (``"continue"``: the
    events after that id, on a stream of their own). ``hang``: keep the stream open at its end.
    ``chunked`` framing, else read-to-close. ``splits``: where the bytes are cut into writes."""

    items: tuple[Item, ...] = ()
    final: tuple[Any, ...] = ()
    priming: bool = True
    event_ids: bool = True
    retry: int | None = 10
    eol: bytes = b"\n"
    chunked: bool = True
    splits: tuple[int, ...] = ()
    cut: int | None = None
    half: bool = False
    hang: bool = False
    resume: Reply | str = "continue"
    session: str | None = None  # the Mcp-Session-Id header (initialize)


DROP = "drop"  # close the connection without a reply
HANG = "hang"  # never reply: wait until the client closes the connection
Reply = Head | Stream | str


@dataclass
class Plan:
    """How the server answers each kind of HTTP request (``initialize`` and ``calls`` in turn;
    past their end, a good ``initialize`` and a plain text result)."""

    discover: Reply = field(default_factory=lambda: Head(404, b"Not Found", "text/plain"))
    initialize: list[Reply] = field(default_factory=list)
    initialized: Reply = field(default_factory=lambda: Head(202))
    listen: Reply = field(default_factory=lambda: Head(405))
    calls: list[Reply] = field(default_factory=list)
    answer: Reply = field(default_factory=lambda: Head(202))
    delete: Reply = field(default_factory=lambda: Head(200))


GOOD_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "hostile", "version": "1"},
}


def result_of(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


# -- what the server records -----------------------------------------------------------------
@dataclass
class Seen:
    verb: str
    headers: dict[str, str]
    body: Any  # the JSON sent, None for no body
    generation: int  # initialize requests received before this one


@dataclass
class Sent:
    """A request of the server's that the client read (its event was written whole)."""

    generation: int
    key: str  # the id as JSON: 1 and "1" differ
    method: str
    params: Any
    valid: bool  # valid JSON-RPC: owed an answer; else owed the -32600 refusal
    first: bool  # the first request with this id in its session (a reused id is owed nothing)
    cancelled: bool = False  # the server sent notifications/cancelled for it afterwards


def valid_session(value: str | None) -> bool:
    """An Mcp-Session-Id a client can send back (visible ASCII, as a header parser reads it)."""
    if value is None:
        return True
    value = value.strip(" \t")
    return 0 < len(value) <= 1024 and all(0x21 <= ord(c) <= 0x7E for c in value)


def key_of(request_id: Any) -> str:
    return json.dumps(request_id)


class HostileServer:
    """``async with HostileServer(plan) as server``: listening on 127.0.0.1 (``server.url``)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.url = ""
        self.seen: list[Seen] = []
        self.sent: list[Sent] = []
        self.answers: dict[str, list[dict[str, Any]]] = {}
        self.minted: list[str | None] = []  # Mcp-Session-Id of each initialize reply
        self.failures: list[BaseException] = []  # bugs of this server (the test asserts none)
        self.late: list[Sent] = []  # requests still unanswered when a stream gave up waiting
        self.generation = 0
        self._calls = 0
        self._streams: dict[int, tuple[Stream, Any, int]] = {}  # call streams, for resuming
        self._listened: set[str | None] = set()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def __aenter__(self) -> HostileServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/mcp"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    # -- what the client owes -------------------------------------------------------------------
    def owed(self) -> list[Sent]:
        """The requests read and owed an answer that has not come (an id the server used again
        in a new session is owed an answer in each)."""
        owed: list[Sent] = []
        for key in dict.fromkeys(s.key for s in self.sent):
            due = [s for s in self.sent if s.key == key and s.first and not s.cancelled]
            owed.extend(due[len(self.answers.get(key, [])) :])
        return owed

    async def settled(self, within: float) -> bool:
        """Wait until the client owes nothing (False if it still does after ``within`` s)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while self.owed():
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    def _record(self, item: Item, generation: int) -> None:
        """A whole event was written: the client has read it."""
        if isinstance(item, Ask | Raw):
            request_id = item.id if isinstance(item, Ask) else item.owed
            if isinstance(item, Raw) and request_id is None:
                return
            key = key_of(request_id)
            first = not any(s.key == key and s.generation == generation for s in self.sent)
            method = item.method if isinstance(item, Ask) else "(unreadable)"
            params = item.params if isinstance(item, Ask) else None
            valid = item.valid if isinstance(item, Ask) else False
            self.sent.append(Sent(generation, key, method, params, valid, first))
        elif isinstance(item, dict) and item.get("method") == "notifications/cancelled":
            params = item.get("params")
            named = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(named, str | int) and not isinstance(named, bool):
                for sent in self.sent:
                    if sent.key == key_of(named) and sent.generation == generation:
                        sent.cancelled = True

    # -- HTTP -------------------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            while await self._one(reader, writer):
                pass
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass  # the client went away
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a bug of this server: the test reports it
            self.failures.append(exc)
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.transport.abort()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and reply; False when the connection is to be closed."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        lines = head.decode("latin-1").split("\r\n")
        verb = lines[0].split(" ")[0]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)
        }
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        body = json.loads(raw) if raw else None
        self.seen.append(Seen(verb, headers, body, self.generation))
        plan = self.plan
        if verb == "DELETE":
            return await self._reply(plan.delete, None, reader, writer)
        if verb == "GET":
            return await self._get(headers, reader, writer)
        assert isinstance(body, dict), body  # the client under test only POSTs JSON objects
        method = body.get("method")
        if method is None:  # the answer to one of our requests
            self.answers.setdefault(key_of(body.get("id")), []).append(body)
            return await self._reply(plan.answer, None, reader, writer)
        if "id" not in body:
            notified = plan.initialized if method == "notifications/initialized" else Head(202)
            return await self._reply(notified, None, reader, writer)
        request_id = body["id"]
        if method == "server/discover":
            return await self._reply(plan.discover, request_id, reader, writer)
        if method == "initialize":
            self.generation += 1
            number = self.generation
            reply: Reply = (
                plan.initialize[number - 1]
                if number <= len(plan.initialize)
                else Head(body=result_of(CALL_ID, GOOD_INIT), session=f"fresh-{number}")
            )
            self.minted.append(reply.session if isinstance(reply, Head | Stream) else None)
            return await self._reply(reply, request_id, reader, writer)
        if method == "tools/call":
            self._calls += 1
            reply = (
                plan.calls[self._calls - 1]
                if self._calls <= len(plan.calls)
                else Head(body=result_of(CALL_ID, {"content": [{"type": "text", "text": "plain"}]}))
            )
            return await self._reply(reply, request_id, reader, writer, stream_no=self._calls)
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return await self._reply(
            Head(body={"jsonrpc": "2.0", "id": request_id, "error": error}), None, reader, writer
        )

    async def _get(
        self, headers: dict[str, str], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        last = headers.get("last-event-id")
        if last is not None:
            stream_no, _, index = last.partition(".")
            found = (
                self._streams.get(int(stream_no[1:]))
                if stream_no[1:].isdigit() and stream_no[0] == "c"
                else None
            )
            if found is None or not index.isdigit():
                return await self._reply(Head(404, b"unknown stream", "text/plain"), None, reader, writer)
            stream, request_id, generation = found
            if stream.resume != "continue":
                return await self._reply(stream.resume, None, reader, writer)
            # The rest of the stream, after that event, on a stream of its own.
            rest = Stream(
                items=stream.items,
                final=stream.final,
                priming=stream.priming,
                event_ids=stream.event_ids,
                retry=stream.retry,
                eol=stream.eol,
                chunked=stream.chunked,
                resume=Head(404, b"no more", "text/plain"),
            )
            return await self._stream(
                rest, request_id, reader, writer, f"c{stream_no[1:]}", generation, int(index) + 1
            )
        session = headers.get("mcp-session-id")
        if session in self._listened:
            return await self._reply(Head(405), None, reader, writer)
        self._listened.add(session)
        listen = self.plan.listen
        if isinstance(listen, Stream):
            # The session's own stream carries no response, and is never resumed.
            listen = dataclasses.replace(listen, final=(), cut=None, resume=Head(404))
        return await self._reply(listen, None, reader, writer, stream_no=0)

    async def _reply(
        self,
        reply: Reply,
        request_id: Any,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        stream_no: int | None = None,
    ) -> bool:
        if reply == DROP:
            return False
        if reply == HANG:
            await _until_closed(reader)
            return False
        if isinstance(reply, Stream):
            name = "g" if stream_no == 0 else f"c{stream_no if stream_no is not None else 'x'}"
            if stream_no:
                self._streams[stream_no] = (reply, request_id, self.generation)
            return await self._stream(reply, request_id, reader, writer, name, self.generation, 0)
        assert isinstance(reply, Head), reply
        body = reply.body if isinstance(reply.body, bytes | None) else to_json(fill(reply.body, request_id))
        lines = [f"HTTP/1.1 {reply.status} Whatever"]
        if reply.content_type is not None:
            lines.append(f"Content-Type: {reply.content_type}")
        lines.append(f"Content-Length: {len(body or b'')}")
        if reply.session is not None:
            lines.append(f"Mcp-Session-Id: {reply.session}")
        if reply.close:
            lines.append("Connection: close")
        writer.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (body or b""))
        await writer.drain()
        return not reply.close

    async def _stream(
        self,
        stream: Stream,
        request_id: Any,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        name: str,
        generation: int,
        start: int,
    ) -> bool:
        """Write ``stream`` from its event number ``start``."""
        lines = ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", "Cache-Control: no-cache"]
        lines.append("Transfer-Encoding: chunked" if stream.chunked else "Connection: close")
        if stream.session is not None:
            lines.append(f"Mcp-Session-Id: {stream.session}")
        writer.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n")
        await writer.drain()
        if not valid_session(stream.session):
            return False  # refused at its head: the client reads none of its events
        eol = stream.eol

        def event(number: int, data: bytes | None) -> bytes:
            out = b""
            if stream.event_ids:
                out += f"id: {name}.{number}".encode() + eol
            out += b": keep-alive" + eol if data is None else b"data: " + data + eol
            return out + eol

        # (number, bytes, the item it carries) for every event before the response.
        events: list[tuple[int, bytes, Item]] = []
        if stream.priming:
            events.append((0, event(0, b""), None))
        for number, item in enumerate(stream.items, start=1):
            if isinstance(item, Ask):
                data: bytes | None = to_json(fill(item.message(), request_id))
            elif isinstance(item, Raw):
                data = item.data
            elif item is None:
                data = None
            else:
                data = to_json(fill(item, request_id))
            events.append((number, event(number, data), item))
        events = [e for e in events if e[0] >= start]
        if events and stream.retry is not None:  # named once, on the first event
            number, data, item = events[0]
            events[0] = (number, f"retry: {stream.retry}".encode() + eol + data, item)
        cut = stream.cut if start == 0 else None
        if cut is not None:
            written, rest = events[:cut], events[cut:]
            await self._write(writer, stream, written, generation)
            if stream.half and rest:
                piece = rest[0][1][: len(rest[0][1]) // 2]
                await self._write(writer, stream, [(rest[0][0], piece, None)], generation)
            return False  # the connection closes mid-stream
        await self._write(writer, stream, events, generation)
        if stream.final:
            if not await self.settled(ANSWER_WAIT):
                self.late.extend(self.owed())
            number = len(stream.items) + 1
            finals: list[tuple[int, bytes, Item]] = [
                (number + i, event(number + i, to_json(fill(m, request_id))), None)
                for i, m in enumerate(stream.final)
            ]
            await self._write(writer, stream, finals, generation)
        if stream.hang:
            await _until_closed(reader)
            return False
        if stream.chunked:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        return False  # read-to-close: the close ends the body

    async def _write(
        self,
        writer: asyncio.StreamWriter,
        stream: Stream,
        events: list[tuple[int, bytes, Item]],
        generation: int,
    ) -> None:
        """The events' bytes in pieces cut at ``stream.splits``; an event is recorded as read once
        the piece that ends it is out."""
        body = b"".join(e[1] for e in events)
        ends: list[tuple[int, Callable[[], None]]] = []
        offset = 0
        for _, data, item in events:
            offset += len(data)
            ends.append((offset, functools.partial(self._record, item, generation)))
        cuts = sorted({c for c in stream.splits if 0 < c < len(body)} | {len(body)})
        start = 0
        for end in cuts:
            piece = body[start:end]
            if not piece:
                continue  # (an empty chunk would end a chunked body)
            writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if stream.chunked else piece)
            await writer.drain()
            await asyncio.sleep(0)  # let the client read this piece on its own
            while ends and ends[0][0] <= end:
                ends.pop(0)[1]()
            start = end


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """Wait until the client closes the connection (at most HANG_LIMIT seconds)."""
    with contextlib.suppress(TimeoutError, ConnectionError):
        async with asyncio.timeout(HANG_LIMIT):
            while await reader.read(65536):
                pass
