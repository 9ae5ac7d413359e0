"""2025-11-25 Streamable HTTP sessions, any interleaving of calls, drops and resumptions: a property
test of the server's event streams (``http_legacy.py``, ``event_stream.py``, ``http_sessions.py``)
against what the spec (../shared/docs/wire-2025-11-25.md §4.3, §4.5, §4.6, §4.8) and
docs/protocol.md promise, and the smallest reproductions of the bugs it found.

The app runs under uvicorn on 127.0.0.1 in the test's own event loop
(:class:`tests.helpers.InProcessServer`), so that its log records and its sessions' state (the
events each stream keeps) can be read. Two principals (``Bearer alice``, ``Bearer bob``) open
sessions; hypothesis draws a script that interleaves, over several sessions:

* ``open``: ``initialize``, ``notifications/initialized``, ``resources/subscribe`` to the session's
  own resource (and maybe one every session shares);
* ``call``: ``ask`` (0 to 3 forms in turn, pausing before each), ``poll`` (the same, its handler
  closing the connection before each question and its response: SEP-1699 polling) or ``nap``
  (progress, a sleep, progress), POSTed with a raw socket whose reply may be cut at a drawn byte
  (of its head or its body, with a FIN or a RST);
* ``answer``: the answer to a question the client has read, POSTed back;
* ``drop``: any open connection (a call's, a resumption's, a ``GET`` stream's) closed now;
* ``resume``: ``GET`` with ``Last-Event-ID``: valid (the last event read), stale (already read),
  from the future (past the last event sent), of another stream of the session, of another
  session's stream, of the session's ``GET`` stream, malformed (empty, blank, negative, spaced,
  leading zeros, signs, no dot, non-ASCII in Latin-1 or UTF-8, any printable text), sometimes
  two at once with the same id; each reply maybe cut at a drawn byte;
* ``get``: the session's ``GET`` stream opened (409 while one is open), maybe cut;
* ``touch``: a resource changes (``notifications/resources/updated`` to the ``GET`` streams of the
  sessions that watch it);
* ``foreign``: a resumption and a ``DELETE`` of the session with the other principal's token;
* ``delete``: ``DELETE`` of a session while its streams are open.

Checked on every event, as it arrives: it has an id ``<stream>.<seq>`` of the stream its
connection serves (a call's POST: a new stream of the session from its priming event on; a
resumption: the stream named; a ``GET``: a new stream), numbered without gap or repeat on that
connection, a resumption starting right after the id it named; an id always names the same event
within a session; and what it carries belongs to that stream -- the question, progress, response
or withdrawal of the call that stream answers (each message names its call, and a call its
session), a ``GET`` stream only the updates of resources its session watches. Every request is
answered within a bound, never with a 500; refusals carry a JSON-RPC ``-32600`` error; a
connection a resumption took over ends; every connection of a deleted session ends. At the end of
an example, every call of a live session whose stream the client can name is resumed until its
response, its questions answered: every question it asked has come, in the order asked, and its
response is the one its answers make, as its stream's last event; the sessions keep no more than
docs/protocol.md and ``event_stream.py`` say (``MAX_KEPT_EVENTS`` and ``MAX_KEPT_BYTES`` per
stream, the last ``KEPT_DELIVERED_STREAMS`` delivered streams, no finished stream held forever);
every session is deleted and nothing is left (sessions, subscriptions, calls). Nothing is logged
at error level by ``mcp_elicit`` or uvicorn.

The bugs this found are at the end, one regression test each: a ``Last-Event-ID`` of more digits
than ``int()`` takes (a 500), a malformed one opening the GET stream, the GET stream not resumable
by its own last event id (a 404, which tells the client its session is over), an id past the
stream's last event taking events before it, and a response over ``MAX_KEPT_BYTES`` lost for a
resumption.

``HTTP_RESUMPTION_EXAMPLES`` raises the examples (default 40: about 15 s here).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from mcp_elicit.server.app import Server
from mcp_elicit.transport.event_stream import MAX_KEPT_BYTES, MAX_KEPT_EVENTS, EventStream
from mcp_elicit.transport.http_app import HttpApp
from mcp_elicit.transport.http_sessions import KEPT_DELIVERED_STREAMS, HttpSession
from tests.e2e.http_legacy_resumption_support import Cut, RawStream, bearer, build
from tests.helpers import InProcessServer, no_errors_logged
from tests.http_session_support import Session
from tests.strategies import fuzz_settings

EXAMPLES = int(os.environ.get("HTTP_RESUMPTION_EXAMPLES", "40"))
# What the oracle holds the server to for the cases the bugs below were about (all of them now).
STRICT = frozenset(("huge", "malformed", "get", "future"))
"""The recorded bugs whose inputs get only the spec's or the docs' answer (1: all of them)."""
RESUME_GRACE = 30.0  # longer than an example: a stream dropped within one is never abandoned
LEG_TIMEOUT = 60.0  # likewise: a question waits for its answer all through an example
WITHIN = 5.0  # seconds anything may take (2 shared cores)
MAX_CALLS = 6  # per session: its last KEPT_DELIVERED_STREAMS delivered streams stay resumable
PRINCIPALS = ("alice", "bob")
SHARED_NOTE = "note://shared"


@pytest.fixture(scope="module")
def server_loop() -> str:
    """(Overrides tests/e2e/conftest.py.) The server runs in the test's own loop (asyncio's for
    every test of tests/e2e): a second run would test the same thing."""
    return "asyncio"


@dataclass
class Served:
    server: Server
    app: HttpApp
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    server = build(legacy_leg_timeout=LEG_TIMEOUT)
    app = HttpApp(server, authenticate=bearer, sessions={"resume_grace": RESUME_GRACE})
    async with InProcessServer(app) as running:
        try:
            yield Served(server, app, running.port)
        finally:
            app.sessions.close()  # a call a failed example left running would hold the shutdown


# -- the model ------------------------------------------------------------------------------------

GET = "GET"  # what owns a session's GET stream


@dataclass(eq=False)
class SessionModel:
    index: int
    principal: str
    client: Session
    held: HttpSession  # the server's session object (its state is read, never changed)
    watches: set[str]
    deleted: bool = False
    ledger: dict[tuple[str, int], str] = field(default_factory=dict)  # (stream, seq) -> data
    owners: dict[str, CallModel | str] = field(default_factory=dict)  # stream -> call, or GET
    questions: dict[object, CallModel] = field(default_factory=dict)  # question id -> its call
    conns: list[Conn] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"S{self.index}"

    @property
    def own_note(self) -> str:
        return f"note://{self.label}"

    @property
    def live(self) -> bool:
        return not self.deleted


@dataclass(eq=False)
class CallModel:
    index: int
    session: SessionModel
    request: dict[str, Any]
    count: int  # questions it asks (nap: none)
    tool: str
    stream: str | None = None
    seen: set[int] = field(default_factory=set)
    asked: dict[int, dict[str, Any]] = field(default_factory=dict)  # question number -> request
    answered: set[object] = field(default_factory=set)
    withdrawn: set[object] = field(default_factory=set)
    response: dict[str, Any] | None = None
    response_seq: int | None = None

    @property
    def label(self) -> str:
        return f"{self.session.label}c{self.index}"

    @property
    def cursor(self) -> int | None:
        """The last event of the run of events the client has from the priming one on."""
        if 0 not in self.seen:
            return None
        last = 0
        while last + 1 in self.seen:
            last += 1
        return last

    def open_question(self) -> dict[str, Any] | None:
        for number in sorted(self.asked):
            question = self.asked[number]
            if question["id"] not in self.answered and question["id"] not in self.withdrawn:
                return question
        return None

    def answer_to(self, number: int) -> str:
        return f"{self.label}-a{number}"

    def expected_text(self) -> str:
        if self.tool == "nap":
            return f"{self.label} napped"
        return f"{self.label} done: " + " ".join(self.answer_to(n) for n in range(self.count))


@dataclass(eq=False)
class Conn:
    """One streaming connection and what it must carry. ``kind``: ``call`` (a call's POST),
    ``resume`` (a GET naming ``named`` after ``after``), ``get`` (a GET stream, or a refusal).
    ``strict_start``: a resumption's first event must be ``after + 1`` (else only after it)."""

    kind: str
    session: SessionModel
    raw: RawStream
    what: str
    call: CallModel | None = None
    named: str | None = None
    after: int | None = None
    strict_start: bool = True
    future: bool = False
    get_or_resume: bool = False  # a GET resumption: a new GET stream, or that one resumed
    stream: str | None = None
    last_seq: int | None = None
    updates: list[str] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.raw.is_event_stream and not self.raw.over

    @property
    def target(self) -> str | None:
        """The stream it serves: the one a resumption names, from the start."""
        return self.stream if self.stream is not None or self.get_or_resume else self.named


# -- a run: the steps, and the checks of every event -----------------------------------------------


class Run:
    def __init__(self, served: Served, http: httpx.AsyncClient, data: st.DataObject) -> None:
        self.served = served
        self.http = http
        self.data = data
        self.sessions: list[SessionModel] = []
        self.calls: list[CallModel] = []
        self.log: list[str] = []
        self._changed = asyncio.Event()
        self.failures: list[BaseException] = []
        self._labels = itertools.count()

    # -- helpers -------------------------------------------------------------------------------
    def poke(self) -> None:
        self._changed.set()

    async def until(self, ready: Callable[[], bool], what: str, within: float = WITHIN) -> None:
        deadline = time.monotonic() + within
        while not ready():
            self.check()
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{what}: not within {within:g} s"
            self._changed.clear()
            try:
                async with asyncio.timeout(min(remaining, 0.05)):
                    await self._changed.wait()
            except TimeoutError:
                pass

    def live(self) -> list[SessionModel]:
        return [s for s in self.sessions if s.live]

    def pick(self, items: list[Any], which: int) -> Any:
        return items[which % len(items)] if items else None

    def headers(
        self, session: SessionModel, principal: str | None = None, **extra: str
    ) -> list[tuple[bytes, bytes]]:
        h = {**session.client.headers(**extra)}
        h["authorization"] = f"Bearer {principal or session.principal}"
        return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in h.items()]

    def stream(
        self,
        conn_kind: str,
        session: SessionModel,
        method: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes = b"",
        cut: Cut | None = None,
        what: str = "",
        **fields: Any,
    ) -> Conn:
        raw = RawStream(self.served.port, method, headers, body, cut, changed=self.poke)
        conn = Conn(conn_kind, session, raw, what, **fields)
        raw.on_event = lambda _raw, event_id, data: self.checked(conn, event_id, data)
        session.conns.append(conn)
        raw.start()
        return conn

    async def head(self, conn: Conn) -> None:
        """Wait for the reply's head (or the client's cut before it): never a hang."""
        try:
            async with asyncio.timeout(WITHIN):
                await conn.raw.head_read.wait()
        except TimeoutError:
            raise AssertionError(f"{conn.what}: no reply head within {WITHIN:g} s") from None
        status = conn.raw.status
        self.log.append(f"{conn.what} -> {status}{' (cut)' if conn.raw.cut else ''}")
        note(f"{conn.what.split(' ')[0]} -> {status}")
        assert status != 500, (conn.what, conn.raw.reply_body)

    async def timed(self, what: str, request: Any) -> httpx.Response:
        try:
            async with asyncio.timeout(WITHIN):
                response: httpx.Response = await request
        except TimeoutError:
            raise AssertionError(f"{what}: no answer within {WITHIN:g} s") from None
        self.log.append(f"{what} -> {response.status_code}")
        return response

    @staticmethod
    def refusal(status: int | None, body: bytes, statuses: set[int], what: str) -> None:
        """A refusal with one of ``statuses`` and a JSON-RPC -32600 error body."""
        assert status in statuses, (what, status, body[:300])
        error = json.loads(body)["error"]
        assert error["code"] == -32600, (what, error)
        assert isinstance(error["message"], str), (what, error)
        assert error["message"], (what, error)

    # -- what arrives --------------------------------------------------------------------------
    def checked(self, conn: Conn, event_id: str | None, data: str) -> None:
        """:meth:`on_event`, its failure kept for the test (it ends the reader task, whose
        exception nobody awaits) and raised by the next :meth:`check`."""
        try:
            self.on_event(conn, event_id, data)
        except BaseException as exc:
            self.failures.append(exc)
            self.poke()
            raise

    def check(self) -> None:
        if self.failures:
            raise self.failures[0]

    def on_event(self, conn: Conn, event_id: str | None, data: str) -> None:
        session = conn.session
        where = f"{conn.what}: event {event_id!r} {data[:200]!r}"
        assert event_id is not None, where
        name, dot, number = event_id.rpartition(".")
        assert dot, where
        assert name, where
        assert number.isdigit(), where
        assert number.isascii(), where
        seq = int(number)
        # 1. One stream per connection: the one it was opened for.
        if conn.stream is None:
            if conn.kind == "resume" and not (conn.get_or_resume and name != conn.named):
                assert name == conn.named, where
            else:  # a new stream (a call's, a GET's), from its priming event on
                assert seq == 0, where
                assert data == "", where
                assert name not in session.owners, ("a stream id used twice in a session", where)
                if conn.kind == "call":
                    assert conn.call is not None
                    self.bind(conn.call, name, where)
                else:
                    session.owners[name] = GET
                    conn.kind = "get"
            conn.stream = name
        assert name == conn.stream, ("an event of another stream", where)
        # 2. In order, no gap, no repeat; a resumption from right after the id it named.
        if conn.last_seq is None:
            if conn.kind == "resume":
                assert conn.after is not None
                if conn.strict_start:
                    assert seq == conn.after + 1, ("not the event after Last-Event-ID", conn.after, where)
                elif conn.future and "future" in STRICT:
                    assert seq > conn.after, ("an event the client said it had", conn.after, where)
        else:
            assert seq == conn.last_seq + 1, ("a gap or a repeat", conn.last_seq, where)
        conn.last_seq = seq
        # 3. An id always names the same event in a session.
        key = (name, seq)
        if key in session.ledger:
            assert session.ledger[key] == data, ("one id, two events", session.ledger[key], where)
            return
        session.ledger[key] = data
        # 4. What it carries belongs to this stream, its call, its session.
        owner = session.owners.get(name)
        if owner == GET:
            if seq == 0:
                assert data == "", where
                return
            message = json.loads(data)
            assert message.get("method") == "notifications/resources/updated", where
            assert message["params"]["uri"] in session.watches, ("an update it does not watch", where)
            conn.updates.append(message["params"]["uri"])
            return
        if seq == 0:
            assert data == "", where
            if isinstance(owner, CallModel):
                owner.seen.add(0)
            return
        message = json.loads(data)
        call = owner if isinstance(owner, CallModel) else self.identify(session, name, message, where)
        self.take(call, seq, message, where)

    def bind(self, call: CallModel, name: str, where: str) -> None:
        assert call.stream in (None, name), ("a call on two streams", call.stream, where)
        call.stream = name
        call.session.owners[name] = call
        call.seen |= {seq for stream, seq in call.session.ledger if stream == name and seq == 0}

    def identify(self, session: SessionModel, name: str, message: dict[str, Any], where: str) -> CallModel:
        """The call of a stream the client could not name (its POST was cut before its first
        event), from the label its message carries."""
        label = None
        params = message.get("params") or {}
        if message.get("method") in ("elicitation/create", "notifications/progress"):
            label = str(params.get("message", "")).split(" ")[0]
        elif "result" in message:
            label = message["result"]["content"][0]["text"].split(" ")[0]
        elif message.get("method") == "notifications/cancelled":
            found = session.questions.get(params.get("requestId"))
            label = None if found is None else found.label
        owners = [call for call in self.calls if call.label == label]
        assert owners, ("an event no call of this run sent", where)
        (call,) = owners
        assert call.session is session, ("another session's event", call.label, where)
        self.bind(call, name, where)
        return call

    def take(self, call: CallModel, seq: int, message: dict[str, Any], where: str) -> None:
        assert call.response_seq is None, ("an event after the response", where)
        call.seen.add(seq)
        method = message.get("method")
        params = message.get("params") or {}
        session = call.session
        if method == "elicitation/create":
            text = params["message"]
            assert text.startswith(call.label + " q"), ("another call's question", call.label, where)
            number = int(text[len(call.label) + 2 : -1])
            assert number not in call.asked, ("a question asked twice", where)
            assert number == len(call.asked), ("questions out of order", sorted(call.asked), where)
            assert message["id"] not in session.questions, ("a question id used twice", where)
            session.questions[message["id"]] = call
            call.asked[number] = message
        elif method == "notifications/progress":
            assert params["progressToken"] == call.label, where
            assert str(params.get("message", "")).startswith(call.label + " "), where
        elif method == "notifications/cancelled":
            assert session.questions.get(params["requestId"]) is call, ("another call's withdrawal", where)
            call.withdrawn.add(params["requestId"])
        else:
            assert method is None, ("not this call's", where)
            assert message.get("id") == call.request["id"], ("not this call's", where)
            assert call.response is None, where
            call.response = message
            call.response_seq = seq

    # -- the steps -----------------------------------------------------------------------------
    async def open(self, principal: str, shared: bool) -> None:
        client = Session(self.http, self.served.url, principal)
        async with asyncio.timeout(WITHIN):
            await client.open()
        assert client.id is not None
        held = self.served.app.sessions._sessions[client.id]
        session = SessionModel(len(self.sessions), principal, client, held, set())
        session.watches = {session.own_note} | ({SHARED_NOTE} if shared else set())
        for uri in sorted(session.watches):
            request = client.request("resources/subscribe", {"uri": uri})
            reply = await self.timed(f"subscribe {session.label}", client.post(request))
            assert reply.json()["result"] == {}
        self.sessions.append(session)
        self.log.append(f"open {session.label} as {principal}")

    async def call(self, which: int, shape: int, cut: Cut | None) -> None:
        session = self.pick(self.live(), which)
        if session is None or len([c for c in self.calls if c.session is session]) >= MAX_CALLS:
            return
        index = next(self._labels)
        label = f"{session.label}c{index}"
        if shape % 5 == 4:
            tool, count, arguments = "nap", 0, {"label": label, "seconds": (0.05, 0.3)[shape % 2]}
        elif shape % 7 == 6:
            count = shape % 3
            tool, arguments = "poll", {"label": label, "count": count}
        else:
            count = shape % 4
            tool, arguments = "ask", {"label": label, "count": count, "pause": (0.0, 0.02, 0.1)[shape % 3]}
        request = session.client.request(
            "tools/call", {"name": tool, "arguments": arguments, "_meta": {"progressToken": label}}
        )
        call = CallModel(index, session, request, count, tool)
        self.calls.append(call)
        note(f"call {tool}")
        conn = self.stream(
            "call",
            session,
            "POST",
            self.headers(session),
            json.dumps(request).encode(),
            cut,
            f"call {label} ({tool} {count}) cut {cut}",
            call=call,
        )
        await self.head(conn)
        if conn.raw.status is None:
            return  # cut in its head: the client cannot name its stream
        assert conn.raw.is_event_stream, (conn.what, conn.raw.status, conn.raw.reply_body)
        assert conn.raw.reply_headers["mcp-session-id"] == session.client.id

    async def answer(self, which: int) -> None:
        call = self.pick([c for c in self.calls if c.open_question() is not None], which)
        if call is not None:
            await self.answer_call(call)

    async def answer_call(self, call: CallModel) -> None:
        """POST the answer to the call's first question still waiting: 202 and no body (404 once
        its session is deleted)."""
        question = call.open_question()
        assert question is not None
        number = next(n for n, q in call.asked.items() if q is question)
        reply = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"name": call.answer_to(number)}},
        }
        session = call.session
        posted = await self.timed(
            f"answer {call.label} q{number}",
            self.http.post(self.served.url, json=reply, headers=session.client.headers()),
        )
        if session.live:
            assert posted.status_code == 202, (call.label, posted.text)
            assert posted.content == b""
            call.answered.add(question["id"])
        else:
            self.refusal(posted.status_code, posted.content, {404}, "an answer in a deleted session")

    async def drop(self, which: int, reset: bool) -> None:
        conns = [c for s in self.sessions for c in s.conns if c.open]
        conn = self.pick(conns, which)
        if conn is not None:
            self.log.append(f"drop {conn.what}{' (RST)' if reset else ''}")
            conn.raw.cut_now(reset=reset)
            await asyncio.wait_for(conn.raw.task, WITHIN)

    async def resume(self, which: int, kind: str, twice: bool, cut: Cut | None) -> None:
        known = [c for c in self.calls if c.stream is not None and c.cursor is not None]
        # Mostly a call of a live session; sometimes one of a deleted session (404).
        call = self.pick([c for c in known if c.session.live] if which % 5 else known, which // 5)
        if call is None:
            note(f"resume-{kind}: no call to resume")
            return
        assert call.stream is not None
        assert call.cursor is not None
        session, principal = call.session, call.session.principal
        name, after = call.stream, call.cursor
        value: bytes
        if kind == "valid":
            value = f"{name}.{after}".encode()
        elif kind == "stale":
            # The bounds of a draw must not depend on what the run did (the cursor does, on
            # timing): hypothesis refuses a strategy whose shape changes between replays.
            after = self.data.draw(st.integers(0, 2**32), label="stale") % (after + 1)
            value = f"{name}.{after}".encode()
        elif kind == "future":
            held = session.held.streams.get(name)
            produced = held._seq if held is not None else after
            after = produced + self.data.draw(st.integers(5, 10**15), label="ahead")
            value = f"{name}.{after}".encode()
        elif kind == "other stream":
            others = [
                c for c in self.calls if c.session is session and c is not call and c.cursor is not None
            ]
            other = self.pick(others, which // 7)
            if other is None:
                return
            value = f"{other.stream}.{other.cursor}".encode()
        elif kind == "other session":
            hosts = [s for s in self.live() if s is not session]
            host = self.pick(hosts, which // 7)
            if host is None:
                return
            session, principal = host, host.principal
            value = f"{name}.{after}".encode()
        elif kind == "other principal":
            principal = next(p for p in PRINCIPALS if p != session.principal)
            value = f"{name}.{after}".encode()
        elif kind == "get stream":
            named = [n for n, o in session.owners.items() if o == GET]
            if not named:
                return
            get_name = self.pick(named, which // 7)
            got = [seq for (n, seq) in session.ledger if n == get_name]
            value = f"{get_name}.{self.pick(sorted(got), which // 11)}".encode()
        else:
            value = self.data.draw(malformed(name, after), label="malformed Last-Event-ID")
        conns = await self.resumption(session, principal, value, kind, twice, cut)
        await self.one_connection_per_stream()
        if kind == "future" and call.open_question() is not None and any(c.open for c in conns):
            # What the call sends next goes to the connection resumed from the future.
            await self.answer_call(call)
            await asyncio.sleep(0.2)

    async def resumption(
        self, session: SessionModel, principal: str, value: bytes, kind: str, twice: bool, cut: Cut | None
    ) -> list[Conn]:
        """Open the GET (twice at once when ``twice``) and say what its reply must be."""
        headers = self.headers(session, principal, accept="text/event-stream")
        headers = [(k, v) for k, v in headers if k != b"content-type"] + [(b"last-event-id", value)]
        what = f"resume-{kind.replace(' ', '-')}{'-twice' if twice else ''} {session.label} as {principal}"
        what += f" with {value[:60]!r}"
        parsed = parse_last_event_id(value)
        fields: dict[str, Any] = {}
        expected: set[int]
        if principal != session.principal or not session.live:
            expected, conn_kind = {404}, "refused"
        elif parsed is None:
            conn_kind = "get"
            # No id at all (an empty one: what an SSE client sends for none) is a plain GET; any
            # other value that names no event gets the 404 (docs/protocol.md: "With Last-Event-ID,
            # a call's stream resumed (404 if unknown)").
            if not value.strip():
                expected = {200, 409}
            elif "malformed" in STRICT:
                expected = {400, 404}
            else:
                expected = {200, 400, 404, 409}
        else:
            name, after = parsed
            held = session.held.streams.get(name)
            if held is None and session.owners.get(name) == GET:
                # The spec (§4.8): a client SHOULD resume a GET stream with Last-Event-ID; a 404
                # tells it the session is over (§4.6).
                expected = {200, 409} if "get" in STRICT else {200, 404, 409}
                conn_kind = "resume"
                fields = {"named": name, "after": after, "get_or_resume": True, "strict_start": False}
            elif held is None:
                expected, conn_kind = {404}, "refused"
            else:
                future = after is None or after > held._seq
                # An id past the stream's last event names no event: 404 (or 200 if the call sent
                # that far meanwhile; then nothing up to the id comes).
                expected, conn_kind = ({200, 404} if future else {200}), "resume"
                fields = {"named": name, "after": after, "future": future, "strict_start": not future}
                if after is None:  # more digits than int() takes: past any event
                    fields["after"] = 10**30
        conns = [
            self.stream(
                conn_kind if conn_kind != "refused" else "get",
                session,
                "GET",
                headers,
                cut=cut,
                what=what,
                **fields,
            )
            for _ in range(2 if twice and 200 in expected else 1)
        ]
        for conn in conns:
            await self.head(conn)
            if conn.raw.status is None:
                continue  # cut in its head
            if conn.raw.status != 200:
                await asyncio.wait_for(conn.raw.task, WITHIN)
                self.refusal(conn.raw.status, conn.raw.reply_body, expected, what)
            else:
                assert 200 in expected, (what, expected)
                assert conn.raw.is_event_stream, what
        return conns

    async def one_connection_per_stream(self) -> None:
        """A connection that a newer one took over ends (one connection per stream)."""

        def ok() -> bool:
            for session in self.sessions:
                streams = [c.target for c in session.conns if c.open and c.target is not None]
                if len(streams) != len(set(streams)):
                    return False
            return True

        await self.until(ok, "an older connection of a resumed stream did not end")

    async def get(self, which: int, cut: Cut | None) -> None:
        session = self.pick(self.live(), which)
        if session is None:
            return
        headers = [
            (k, v) for k, v in self.headers(session, accept="text/event-stream") if k != b"content-type"
        ]
        deadline = time.monotonic() + WITHIN
        while True:
            some_open = any(c.kind == "get" and c.open for c in session.conns)
            conn = self.stream("get", session, "GET", headers, cut=cut, what=f"get {session.label} cut {cut}")
            await self.head(conn)
            if conn.raw.status != 409:
                break
            await asyncio.wait_for(conn.raw.task, WITHIN)
            self.refusal(409, conn.raw.reply_body, {409}, conn.what)
            if some_open:
                return  # one GET stream per session
            # The one before was dropped by the client; the server has yet to see it.
            assert time.monotonic() < deadline, "a dropped GET stream still holds its place"
            await asyncio.sleep(0.05)
        if conn.raw.status is not None:
            assert conn.raw.is_event_stream, (conn.what, conn.raw.status, conn.raw.reply_body)

    async def touch(self, which: int, uri_pick: int) -> None:
        senders = self.live()
        sender = self.pick(senders, which)
        if sender is None:
            return
        uris = sorted({s.own_note for s in self.sessions} | {SHARED_NOTE})
        uri = self.pick(uris, uri_pick)
        listening = [
            (s, c, len(c.updates))
            for s in self.live()
            if uri in s.watches
            for c in s.conns
            if c.kind == "get" and c.open and c.stream is not None and not c.raw.cut
        ]
        note(f"touch heard by {min(len(listening), 2)}+ GET streams")
        request = sender.client.request("tools/call", {"name": "touch", "arguments": {"uri": uri}})
        reply = await self.timed(
            f"touch {uri} from {sender.label}", sender.client.post(request, accept="application/json")
        )
        assert reply.json()["result"]["content"][0]["text"].startswith("told ")
        for session, conn, before in listening:

            def heard(conn: Conn = conn, before: int = before) -> bool:
                return len(conn.updates) > before or conn.raw.over

            await self.until(heard, f"the update of {uri} on {session.label}'s GET stream")

    async def foreign(self, which: int) -> None:
        """The other principal's token on a session's resumption and DELETE: 404, nothing else."""
        session = self.pick(self.live(), which)
        if session is None:
            return
        other = next(p for p in PRINCIPALS if p != session.principal)
        known = [
            c for c in self.calls if c.session is session and c.stream is not None and c.cursor is not None
        ]
        call = self.pick(known, which)
        if call is not None:
            await self.resumption(session, other, f"{call.stream}.0".encode(), "foreign", False, None)
        headers = {**session.client.headers(), "authorization": f"Bearer {other}"}
        deleted = await self.timed(
            f"foreign delete {session.label}", self.http.delete(self.served.url, headers=headers)
        )
        self.refusal(deleted.status_code, deleted.content, {404}, "foreign delete")
        assert session.client.id in self.served.app.sessions._sessions  # still there

    async def delete(self, which: int) -> None:
        session = self.pick(self.live(), which)
        if session is None:
            return
        headers = {**session.client.headers(), "authorization": f"Bearer {session.principal}"}
        deleted = await self.timed(
            f"delete {session.label}", self.http.delete(self.served.url, headers=headers)
        )
        assert deleted.status_code == 200, deleted.text
        session.deleted = True
        # Every stream of the session ends, its connections with it.
        await self.until(
            lambda: all(c.raw.over for c in session.conns), f"the connections of deleted {session.label}"
        )
        gone = await self.timed(
            "ping after delete",
            self.http.post(self.served.url, json=session.client.request("ping"), headers=headers),
        )
        self.refusal(gone.status_code, gone.content, {404}, "a deleted session")

    # -- bounds --------------------------------------------------------------------------------
    def check_bounds(self) -> None:
        """What the sessions keep (event_stream.py, http_sessions.py, docs/protocol.md)."""
        for held in self.served.app.sessions._sessions.values():
            assert len(held.delivered) <= KEPT_DELIVERED_STREAMS
            streams = list(held.streams.items())
            if held.get_stream is not None:
                streams.append((held.get_stream.id, held.get_stream))
            for name, stream in streams:
                kept_events(stream)
                if stream is not held.get_stream and stream.done:
                    assert (
                        name in held.delivered or stream._timer is not None or stream._listener is not None
                    ), f"stream {name} is over and kept forever"


def finished_streams(run: Run) -> list[Conn]:
    """The connections of live sessions that serve the stream of a call whose response came."""
    found = []
    for session in run.live():
        for conn in session.conns:
            owner = None if conn.target is None else session.owners.get(conn.target)
            if isinstance(owner, CallModel) and owner.response is not None:
                found.append(conn)
    return found


def note(text: str) -> None:
    """A statistic of the example (``--hypothesis-show-statistics``); nothing outside one."""
    with contextlib.suppress(InvalidArgument):
        event(text)


def kept_events(stream: EventStream) -> None:
    assert len(stream._kept) <= MAX_KEPT_EVENTS, len(stream._kept)
    assert stream._kept_bytes <= MAX_KEPT_BYTES, stream._kept_bytes
    assert stream._kept_bytes == sum(len(e) for _, e in stream._kept)


def parse_last_event_id(value: bytes) -> tuple[str, int | None] | None:
    """What a Last-Event-ID names, as the docs describe our ids (``<stream>.<seq>``, the seq as we
    write it -- no leading zero --, whitespace around it ignored, as HTTP does): ``(stream, seq)``,
    seq None when it has more digits than any event has; None for a value that is no such id."""
    text = value.decode("latin-1").strip()
    name, dot, number = text.rpartition(".")
    if not (dot and name and number) or any(ch not in "0123456789" for ch in number):
        return None
    if number != "0" and number.startswith("0"):
        return None
    return (name, int(number)) if len(number) <= 30 else (name, None)


# -- what hypothesis draws ------------------------------------------------------------------------

LATIN_1_PRINTABLE = st.characters(
    codec="latin-1", categories=["L", "M", "N", "P", "S", "Zs"], exclude_characters="\x85"
)


def malformed(name: str, seq: int) -> st.SearchStrategy[bytes]:
    fixed = [
        "",
        "   ",
        f"{name}.-1",
        f"{name}.+{seq}",
        f"{name}. {seq}",
        f"{name} .{seq}",
        name,
        f".{seq}",
        f"{name}.",
        f"{name}.{seq}.0",
        f"{name}.0x1",
        f" {name}.{seq} ",
        f"{name}.{seq:05d}",
        f"{name}.{seq}e0",
        f"{name}.{seq} {seq}",
        "-",
        ".",
        "..",
        f"{name}.{seq}\t",
        f"s-{seq}.{seq}",
        f"{name}.{10**18}",
    ]
    encoded = [text.encode() for text in fixed] + [
        f"{name}.".encode() + "³".encode("latin-1"),  # a digit to str.isdigit(), not to int()
        f"{name}.".encode() + "٣".encode(),  # an Arabic-Indic 3, as UTF-8
        f"{name}.{seq}é".encode(),
        f"{name}.{seq}".encode() + b"\xff",
        b"x" * 8000,  # large, not a number
    ]
    if "huge" in STRICT:  # more digits than int() converts (was a 500)
        encoded += [f"{name}.".encode() + b"9" * 4301, f"{name}.".encode() + b"0" * 5000 + b"1"]
    return st.sampled_from(encoded) | st.text(LATIN_1_PRINTABLE, max_size=40).map(
        lambda text: text.encode("latin-1")
    )


cuts = st.one_of(
    st.none(),
    st.none(),
    st.none(),
    st.builds(Cut, offset=st.integers(0, 1500), reset=st.booleans()),
    st.builds(Cut, offset=st.integers(0, 1500), reset=st.booleans()),
    st.builds(Cut, offset=st.integers(0, 150), in_head=st.just(True), reset=st.booleans()),
)
RESUME_KINDS = [
    "valid",
    "valid",
    "stale",
    "future",
    "other stream",
    "other session",
    "other principal",
    "get stream",
    "malformed",
    "malformed",
]
STEPS = ["open"] * 2 + ["call"] * 4 + ["answer"] * 5 + ["drop"] * 3 + ["resume"] * 8
STEPS += ["get"] * 2 + ["touch"] * 2 + ["foreign", "delete"]
Step = tuple[str, int, int, bool, Cut | None]
scripts = st.lists(
    st.tuples(st.sampled_from(STEPS), st.integers(0, 50), st.integers(0, 50), st.booleans(), cuts),
    min_size=3,
    max_size=30,
)


async def play(run: Run, script: list[Step]) -> None:
    await run.open(PRINCIPALS[0], True)
    await run.open(PRINCIPALS[1], True)
    for which in range(2):  # a call in each session to begin with, its priming event read
        await run.call(which, 1, None)
        await run.until(lambda: run.calls[-1].cursor is not None, "the priming event")
    for step, a, b, flag, cut in script:
        run.log.append(f"step {step} {a} {b} {flag} {cut}")
        note(f"step {step}")
        if step == "open":
            await run.open(PRINCIPALS[a % 2], flag)
        elif step == "call":
            await run.call(a, b, cut)
        elif step == "answer":
            await run.answer(a)
        elif step == "drop":
            await run.drop(a, flag)
        elif step == "resume":
            await run.resume(a, RESUME_KINDS[b % len(RESUME_KINDS)], flag, cut)
        elif step == "get":
            await run.get(a, cut)
        elif step == "touch":
            await run.touch(a, b)
        elif step == "foreign":
            await run.foreign(a)
        elif step == "delete":
            await run.delete(a)
        await asyncio.sleep(0)  # the readers take in what has come
        run.check()
        run.check_bounds()
    await settle(run)
    run.check()


async def settle(run: Run) -> None:
    """Every call the client can name is resumed until its response (its questions answered);
    then every session is deleted, and nothing is left."""
    for call in run.calls:
        session = call.session
        if not session.live or call.stream is None:
            continue  # ended with its session, or a stream the client cannot name
        while call.response is None:
            # (A connection resumed from the future owes the client nothing until then.)
            if not any(c.open and c.target == call.stream and not c.future for c in session.conns):
                assert call.cursor is not None
                headers = [
                    (k, v)
                    for k, v in run.headers(session, accept="text/event-stream")
                    if k != b"content-type"
                ] + [(b"last-event-id", f"{call.stream}.{call.cursor}".encode())]
                conn = run.stream(
                    "resume",
                    session,
                    "GET",
                    headers,
                    what=f"settle {call.label} after {call.cursor}",
                    named=call.stream,
                    after=call.cursor,
                )
                await run.head(conn)
                assert conn.raw.is_event_stream, (conn.what, conn.raw.status, conn.raw.reply_body)

            def moved(call: CallModel = call) -> bool:
                return (
                    call.response is not None
                    or call.open_question() is not None
                    or not any(
                        c.open and c.target == call.stream and not c.future for c in call.session.conns
                    )
                )

            await run.until(moved, f"{call.label}: a question or the response")
            if call.open_question() is not None:
                await run.answer_call(call)
        response = call.response
        assert response is not None
        assert response["result"]["content"][0]["text"] == call.expected_text(), (call.label, response)
        assert sorted(call.asked) == list(range(call.count)), (call.label, sorted(call.asked))
        assert max(call.seen) == call.response_seq, (call.label, sorted(call.seen))
    # The streams of finished calls end (their response went out); GET streams stay open.
    await run.until(
        lambda: all(c.raw.over for c in finished_streams(run)), "the connections of finished calls"
    )
    run.check_bounds()
    held = [s.held for s in run.sessions]
    for session in run.live():
        await run.delete(session.index)
    assert len(run.served.app.sessions) == 0
    assert not run.served.server.subscriptions._watching
    await run.until(lambda: all(not h.calls for h in held), "the calls of deleted sessions")
    for session in run.sessions:
        for conn in session.conns:
            await asyncio.wait_for(conn.raw.close(), WITHIN)
    run.check()


@fuzz_settings(EXAMPLES)
@given(script=scripts, data=st.data())
async def test_any_interleaving_of_calls_drops_and_resumptions_keeps_every_stream_whole_and_apart(
    served: Served, script: list[Step], data: st.DataObject
) -> None:
    async with httpx.AsyncClient(timeout=WITHIN) as http:
        run = Run(served, http, data)
        try:
            with no_errors_logged(), no_errors_logged("uvicorn.error"):
                await play(run, script)
        except BaseException:
            print("\n".join(run.log))
            raise
        finally:
            for session in run.sessions:
                for conn in session.conns:
                    await conn.raw.close()
            served.app.sessions.close()


# -- the bugs found, each reduced to its smallest deterministic reproduction -----------------------


@pytest.fixture
async def streams() -> AsyncIterator[list[RawStream]]:
    """The raw streams a test opens (:func:`replied`), closed when it ends."""
    opened: list[RawStream] = []
    yield opened
    for stream in opened:
        await stream.close()


async def opened(served: Served, http: httpx.AsyncClient) -> Session:
    session = Session(http, served.url, "alice")
    await session.open()
    return session


def get_headers(session: Session, last_event_id: bytes | None = None) -> list[tuple[bytes, bytes]]:
    headers = {k: v for k, v in session.headers(accept="text/event-stream").items() if k != "content-type"}
    raw = [(k.encode(), v.encode()) for k, v in headers.items()]
    return raw if last_event_id is None else [*raw, (b"last-event-id", last_event_id)]


async def replied(stream: RawStream, streams: list[RawStream]) -> RawStream:
    """``stream`` started, once its head is in (and its whole reply, unless an event stream)."""
    streams.append(stream)
    stream.start()
    await asyncio.wait_for(stream.head_read.wait(), WITHIN)
    if not stream.is_event_stream:
        await asyncio.wait_for(stream.task, WITHIN)
    return stream


async def call_until(
    served: Served, session: Session, call: dict[str, Any], count: int, streams: list[RawStream]
) -> RawStream:
    """POST ``call`` on a raw socket and read its stream until ``count`` events have come."""
    headers = [(k.encode(), v.encode()) for k, v in session.headers().items()]
    stream = await replied(RawStream(served.port, "POST", headers, json.dumps(call).encode()), streams)
    assert stream.is_event_stream, (stream.status, stream.reply_body)
    deadline = time.monotonic() + WITHIN
    while len(stream.events) < count:
        assert time.monotonic() < deadline, stream.events
        await asyncio.sleep(0.01)
    return stream


# Was (bug 1): a Last-Event-ID of the form <stream>.<seq> whose seq has more than 4300 digits (Python's
# int() limit for a string, sys.get_int_max_str_digits(); leading zeros count) passes
# event_stream.last_event's checks (isdigit, isascii), and int(seq) raises ValueError there: the GET
# is answered 500 "Internal Server Error" and uvicorn logs "Exception in ASGI application" with the
# traceback. Any client with a session of its own can do this (the header is read once the
# session is found; 5 KB is well within uvicorn's header limits), as often as it likes. It should be
# what any id that names no event gets: 404 with a -32600 body (docs/protocol.md: "With
# Last-Event-ID, a call's stream resumed (404 if unknown)").
@pytest.mark.parametrize("seq", [b"9" * 4301, b"0" * 5000 + b"1"])
async def test_regression_a_last_event_id_with_too_many_digits_gets_a_404(
    served: Served, streams: list[RawStream], seq: bytes
) -> None:
    async with httpx.AsyncClient(timeout=WITHIN) as http:
        session = await opened(served, http)
        with no_errors_logged(), no_errors_logged("uvicorn.error"):
            stream = await replied(RawStream(served.port, "GET", get_headers(session, b"s1." + seq)), streams)
            assert stream.status == 404, (stream.status, stream.reply_body)
            assert stream.json()["error"]["code"] == -32600


# Was (bug 2): a Last-Event-ID that is not one of the server's ids (s1.-1, s1. 3, s1.0x1, garbage:
# anything but an empty value) is silently taken for no Last-Event-ID at all
# (event_stream.last_event returns None, http_legacy.get then opens the session's GET stream): the
# client resuming its call gets the GET stream, a 200 on which its call's events never come, or
# a 409 "Conflict: this session has a GET stream open already" that does not name its mistake.
# docs/protocol.md: "GET ... With Last-Event-ID, a call's stream resumed (404 if unknown)"; the
# spec (§4.8) lets the server replay the stream the id names, and only that one. A value that
# names no stream should get the 404 (or a 400) with a -32600 body, like an unknown stream.
@pytest.mark.parametrize("value", [b"s1.-1", b"s1. 1", b"s1.0x1", b"s1.01", b"garbage"])
async def test_regression_a_malformed_last_event_id_gets_a_404(
    served: Served, streams: list[RawStream], value: bytes
) -> None:
    async with httpx.AsyncClient(timeout=WITHIN) as http:
        session = await opened(served, http)
        call = session.request(
            "tools/call", {"name": "ask", "arguments": {"label": "x", "count": 1, "pause": 0}}
        )
        await call_until(
            served, session, call, 2, streams
        )  # its stream is s1: the priming event, the question
        stream = await replied(RawStream(served.port, "GET", get_headers(session, value)), streams)
        assert stream.status in (400, 404), (stream.status, stream.reply_headers)
        assert stream.json()["error"]["code"] == -32600


# Was (bug 3): the session's GET stream cannot be resumed: its events have ids (its priming event
# "sN.0"), but http_legacy.get looks a Last-Event-ID up only among the calls' streams
# (session.streams), so a GET with the GET stream's own last event id gets 404 "Not Found: that
# stream is unknown or over" while the session lives. The spec (§4.8): "After any disconnect, the
# client SHOULD send GET with Last-Event-ID, whether the stream began as a POST or as a GET"; and a
# 404 on a request carrying a session id tells the client the session is over, after which it
# "MUST start over with a new initialize" (§4.6). Our own client does exactly this on every
# reconnection of its GET stream (client/http.py, _listen_on passes the last event id), takes the
# 404 for "the server offers no GET stream" and stops listening: resource updates and
# notifications/elicitation/complete sent on the GET stream never reach it again. It should get a
# GET stream again (200, replaying what it kept, or nothing), or 409 while one is open.
async def test_regression_the_get_stream_resumed_with_its_last_event_id_is_not_a_404(
    served: Served, streams: list[RawStream]
) -> None:
    async with httpx.AsyncClient(timeout=WITHIN) as http:
        session = await opened(served, http)
        listening = await replied(RawStream(served.port, "GET", get_headers(session)), streams)
        deadline = time.monotonic() + WITHIN
        while not listening.events:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        ((last_id, _),) = listening.events
        assert last_id is not None
        await listening.close()  # the connection drops
        assert session.id is not None
        held = served.app.sessions._sessions[session.id]
        while held.get_stream is not None:  # until the server has seen it go
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        again = await replied(RawStream(served.port, "GET", get_headers(session, last_id.encode())), streams)
        assert again.status == 200, (again.status, again.reply_body)


# Was (bug 4): a Last-Event-ID past the stream's last event (an id the server never sent) is taken: the
# replay skips every kept event (EventStream.attach keeps those with seq > after), but the events
# the call sends afterwards go to the new connection whatever their seq (EventStream._push gives
# every live event to the listener): a resumption "after s1.1000" gets s1.2, an event the client
# said it had. The spec (§4.8) lets the server replay "what followed that id", and only that. It
# should refuse the id (404 like an id that names no event, or 400), or hold back what does not
# follow it.
async def test_regression_a_resumption_from_the_future_gets_nothing_before_its_id(
    served: Served, streams: list[RawStream]
) -> None:
    async with httpx.AsyncClient(timeout=WITHIN) as http:
        session = await opened(served, http)
        call = session.request(
            "tools/call", {"name": "ask", "arguments": {"label": "x", "count": 1, "pause": 0}}
        )
        first = await call_until(served, session, call, 2, streams)  # s1.0 (priming), s1.1 (the question)
        (question_id, question) = first.events[1]
        assert question_id == "s1.1"
        resumed = await replied(RawStream(served.port, "GET", get_headers(session, b"s1.1000")), streams)
        if resumed.status != 200:
            return  # refused: what the fix may do
        answer = {
            "jsonrpc": "2.0",
            "id": json.loads(question)["id"],
            "result": {"action": "accept", "content": {"name": "n"}},
        }
        await session.post(answer, expect=202)
        await asyncio.wait_for(resumed.task, WITHIN)  # the call is over: its stream ends
        try:
            assert all(
                int(event_id.rpartition(".")[2]) > 1000 for event_id, _ in resumed.events if event_id
            ), resumed.events
        finally:
            await first.close()


# Was (bug 5): a call's response larger than MAX_KEPT_BYTES (4 MiB) is not kept for a resumption: the
# event is pushed, then EventStream._push trims the kept events from the oldest until they fit,
# and the newest one alone does not fit, so it goes too. A client whose connection broke before
# the response came (its network, a proxy) resumes with Last-Event-ID and gets a stream that ends
# with no response; the call is lost (our client gives up after three such resumptions).
# docs/protocol.md: "a call's stream that ended while nobody read it (or its connection broke
# before the end) | kept resume_grace s for a GET with Last-Event-ID"; the spec (§4.3): the stream
# SHOULD eventually carry the response. The stream's last event (its response) should always be
# kept, whatever its size (the other events may go to honour the bound).
async def test_regression_a_large_response_is_kept_for_a_resumption(
    served: Served, streams: list[RawStream]
) -> None:
    async with httpx.AsyncClient(timeout=WITHIN) as http:
        session = await opened(served, http)
        call = session.request(
            "tools/call", {"name": "big", "arguments": {"label": "x", "size": MAX_KEPT_BYTES}}
        )
        first = await call_until(served, session, call, 1, streams)  # the priming event
        await first.close()  # the connection breaks before the response
        assert session.id is not None
        held = served.app.sessions._sessions[session.id]
        deadline = time.monotonic() + WITHIN
        while not held.streams["s1"].done:  # the call has answered, on no connection
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        resumed = await replied(RawStream(served.port, "GET", get_headers(session, b"s1.0")), streams)
        await asyncio.wait_for(resumed.task, WITHIN)
        assert resumed.clean_end
        assert [event_id for event_id, _ in resumed.events] == ["s1.1"], resumed.events
