"""Several instances, any traffic: a drawn script of 2025-11-25 session traffic spread over three
instances of one deployment, checked against what ``session_relay.py``, ``http_legacy.py`` and
docs/protocol.md promise.

Three instances (``routing_server.build``: the same state keys, a real
:class:`~mcp_elicit.storage.PostgresSessionRouter` on a ``NOTIFY`` channel of this run's own,
``Authorization: Bearer <name>`` naming the principal) are served over real HTTP on 127.0.0.1 by
uvicorn in the test's own process, so that their logs and their counts (sessions, relays asked,
relays served) can be read. Hypothesis draws a script of steps, each with the instance it is sent
to (any of them, so most go through the relay):

* ``open``: ``initialize`` (and ``notifications/initialized``) on an instance, as alice;
* ``call``: ``greet`` (two form questions in turn), its SSE stream read as it comes;
* ``answer``: a response POST: the right answer to the call's open question, the same answer
  again, an id never sent, a malformed response, or the right answer with another principal's
  token;
* ``resume``: ``GET`` with ``Last-Event-ID`` (the last event the client saw), with or without the
  call's previous connection still open;
* ``drop``: the client closes the call's connection mid-stream;
* ``cancel``: ``notifications/cancelled`` for the call;
* ``delete``: ``DELETE`` of the session, and ``foreign``: requests of the session (POST, GET,
  DELETE) with another principal's token;
* ``forge``: someone with the database but not the keys writes onto an instance's mailbox
  channel: garbage frames, frames with odd headers, letters seen on the wire replayed (to the
  same instance or another), truncated, bit-flipped, a letter sealed with other keys, a large
  junk message;
* ``stop``: an instance stops (its sessions die with it; what it relayed is cut).

The model: every request is answered within a bound, with the status the docs give (200, 202,
400, 404); a call's events are numbered without gap or repeat across its connections (the same
id always the same event); every call of a live session ends with exactly one response, the one
its answers make, unless it was cancelled while it waited (then none); a call of a deleted or
lost session never gets a response afterwards; nothing waits past the bound. At the end of
every example, every session is deleted and each instance's counts of sessions, relays asked and
relays served come back to zero; and no error is logged by ``mcp_elicit`` at any time
(``no_errors_logged``: forged letters may be logged as warnings, never as errors).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import importlib
import json
import logging
import os
import random
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from psycopg.conninfo import make_conninfo

from mcp_elicit import Server
from mcp_elicit.state import KeyRing, StateSealer
from mcp_elicit.storage import PostgresSessionRouter
from mcp_elicit.storage.notify_frames import PIECE_BYTES, frames
from mcp_elicit.transport.http_app import HttpApp
from mcp_elicit.transport.relay_letters import LetterSealer
from tests.helpers import InProcessServer, find_pg_dsn, no_errors_logged
from tests.http_session_support import Session, events
from tests.strategies import fuzz_settings

# The instances are those of test_session_routing.py (routing_server.build, its bearer hook); it
# is a script too, and mypy --strict finds an Any in it: taken in untyped.
routing_server: Any = importlib.import_module("tests.e2e.routing_server")

EXAMPLES = 15
SCALE = int(os.environ.get("RELAY_TRAFFIC_SCALE", "1"))  # more examples for a longer hunt
"""Raise (e.g. to 20) for a long local hunt."""
OWNER_TIMEOUT = 0.6  # seconds: a session whose owner does not answer is gone after this
KEEPALIVE = 0.2  # a silent relay is over after three of these
SLACK = 3.0  # a loaded machine (2 shared cores) answers later than the bound says
WITHIN = OWNER_TIMEOUT + 3 * KEEPALIVE + SLACK  # the longest anything may take
NODES = 3
ALICE, MALLORY = "alice", "mallory"


@pytest.fixture(scope="module")
def server_loop() -> str:
    """(Overrides tests/e2e/conftest.py.) The instances run in the test's own process, on its
    loop: asyncio's, for every test of tests/e2e; a second run would test the same thing."""
    return "asyncio"


@pytest.fixture(scope="module")
def dsn() -> str:
    found = find_pg_dsn("relaying 2025-11-25 sessions between instances")
    # A name of its own: tests that terminate other backends by name leave these alone.
    return make_conninfo(found, application_name="mcp_elicit_relay_any_traffic")


STOPPED = {"code": -32603, "message": "Internal error: the server is shutting down; retry the request"}


# -- the deployment -------------------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    """One instance: its app (its sessions, its relay), its router, its HTTP server."""

    name: str
    app: HttpApp
    router: PostgresSessionRouter
    served: InProcessServer
    up: bool = True

    @property
    def url(self) -> str:
        return self.served.base + "/mcp"

    def counts(self) -> tuple[int, int, int]:
        """Sessions held, relays asked, relays served."""
        relay = self.app.relay
        assert relay is not None
        return len(self.app.sessions), len(relay._asked), len(relay._served)


class Deployment:
    """Instances of one deployment, on a channel of their own."""

    def __init__(
        self, dsn: str, markers: Path, owner_timeout: float = OWNER_TIMEOUT, keepalive: float = KEEPALIVE
    ) -> None:
        self.dsn = dsn
        self.channel = f"mcp_elicit_test_{secrets.token_hex(6)}"
        self.markers = markers
        self.owner_timeout = owner_timeout
        self.keepalive = keepalive
        self.nodes: list[Node] = []

    async def start(self, name: str | None = None) -> Node:
        """A new instance (``name``: the name of one that stopped, as when it restarts)."""
        name = name or "n" + secrets.token_hex(4)
        args = argparse.Namespace(
            dsn=self.dsn,
            channel=self.channel,
            owner_timeout=self.owner_timeout,
            keepalive=self.keepalive,
            max_relays=1000,
            timeout=3.0,
            marker_dir=str(self.markers),
            instance=name,
        )
        server: Server = routing_server.build(args)
        router = server.session_router
        assert isinstance(router, PostgresSessionRouter)

        @server.tool()
        async def pause(seconds: float, note: str) -> str:
            """Answers ``note`` after a while."""
            await asyncio.sleep(seconds)
            return note

        app = HttpApp(server, authenticate=routing_server.bearer, sessions={"instance": name})
        served = InProcessServer(app)
        served.server.config.timeout_graceful_shutdown = 0  # a stop cuts the open streams
        await served.__aenter__()
        assert app.relay is not None
        assert await app.relay.ready()  # listening before any session
        node = Node(name, app, router, served)
        self.nodes.append(node)
        return node

    async def stop(self, node: Node) -> None:
        """The instance stops: no more HTTP, no more letters; what it held is gone."""
        node.up = False
        await node.served.__aexit__()
        assert node.app.relay is not None
        await node.app.relay.close()
        node.app.sessions.close()
        await node.router.close()

    def up(self) -> list[Node]:
        return [node for node in self.nodes if node.up]

    async def replace_stopped(self) -> None:
        self.nodes = self.up()
        while len(self.nodes) < NODES:
            await self.start()

    async def close(self) -> None:
        for node in self.up():
            await self.stop(node)


@pytest.fixture
async def deployment(dsn: str, tmp_path: Path) -> AsyncIterator[Deployment]:
    """Three instances, reused by every example of the test (an example leaves them as it found
    them: no session, no relay, every instance up)."""
    made = Deployment(dsn, tmp_path)
    try:
        for _ in range(NODES):
            await made.start()
        yield made
    finally:
        await made.close()


class Wire:
    """Someone with the database and not the keys: sees every frame on the instances' channels
    (``LISTEN``), and writes any ``NOTIFY`` it likes."""

    def __init__(self, dsn: str, channel: str) -> None:
        self.dsn = dsn
        self.channel = channel
        self.seen: list[tuple[str, str]] = []  # (instance, frame)
        self._listening: set[str] = set()
        self._ear: psycopg.AsyncConnection[Any] | None = None
        self._mouth: psycopg.AsyncConnection[Any] | None = None

    async def open(self) -> None:
        self._ear = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        self._ear.add_notify_handler(self._heard)
        self._mouth = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)

    def _heard(self, notification: psycopg.Notify) -> None:
        instance = notification.channel.removeprefix(self.channel + "_")
        self.seen.append((instance, notification.payload))
        del self.seen[:-200]

    async def listen(self, names: list[str]) -> None:
        """Eavesdrop on these instances' mailboxes too, and take in what came meanwhile."""
        assert self._ear is not None
        try:
            for name in names:
                if name not in self._listening:
                    await self._ear.execute(f'LISTEN "{self.channel}_{name}"')
                    self._listening.add(name)
            # A no-op statement reads what has arrived (the handler takes it).
            await self._ear.execute("SELECT 1")
        except psycopg.OperationalError as exc:  # terminated from outside
            logging.getLogger("mcp_elicit.tests").warning("cannot listen: %s", exc)
            await self._ear.close()
            self._listening.clear()
            self._ear = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
            self._ear.add_notify_handler(self._heard)

    async def notify(self, name: str, payload: str) -> None:
        assert self._mouth is not None
        try:
            await self._mouth.execute("SELECT pg_notify(%s, %s)", (f"{self.channel}_{name}", payload))
        except psycopg.OperationalError as exc:  # terminated from outside
            logging.getLogger("mcp_elicit.tests").warning("cannot tell: %s", exc)
            await self._mouth.close()
            self._mouth = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)

    async def close(self) -> None:
        for conn in (self._ear, self._mouth):
            if conn is not None:
                await conn.close()


# -- the model ------------------------------------------------------------------------------------


@dataclass(eq=False)
class SessionModel:
    index: int
    client: Session  # its url is the owner's
    owner: Node
    deleted: bool = False

    @property
    def live(self) -> bool:
        return not self.deleted and self.owner.up


@dataclass(eq=False)
class CallModel:
    index: int
    session: SessionModel
    request: dict[str, Any]
    stream: str | None = None  # the stream id its events carry
    seen: dict[int, bytes] = field(default_factory=dict)  # seq -> the event's data, as it came
    last_seq: int | None = None  # the last event the client read (what it resumes after)
    questions: list[dict[str, Any]] = field(default_factory=list)  # in the order they came
    answered: set[object] = field(default_factory=set)  # question ids whose answer got 202
    withdrawn: set[object] = field(default_factory=set)
    responses: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq -> the response
    cancelled_waiting: bool = False  # cancelled before its last answer was taken
    ended_early: bool = False  # its session ended (DELETE, owner stopped) before its last answer
    owner_stopped: bool = False  # its session's instance stopped: its stream may end with the error
    readers: list[tuple[httpx.Response, asyncio.Task[None], Node]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def reading(self) -> list[tuple[httpx.Response, asyncio.Task[None], Node]]:
        return [r for r in self.readers if not r[1].done()]

    @property
    def open_question(self) -> dict[str, Any] | None:
        for question in self.questions:
            qid = question["id"]
            if qid not in self.answered and qid not in self.withdrawn:
                return question
        return None

    @property
    def all_answered(self) -> bool:
        return len(self.answered) == 2

    @property
    def may_respond(self) -> bool:
        return not self.cancelled_waiting and not self.ended_early

    def expected_text(self) -> str:
        return f"Hello, c{self.index}first c{self.index}last!"


def reply_to(call: CallModel, question: dict[str, Any]) -> dict[str, Any]:
    part = "first" if question["params"]["message"] == "First name?" else "last"
    content = {"name": f"c{call.index}{part}"}
    return {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}}


async def read_stream(call: CallModel, response: httpx.Response) -> None:
    """Take in a call's events as they come on one connection, checking each."""
    try:
        async for event_id, data in events(response):
            assert event_id is not None, data
            stream, _, number = event_id.rpartition(".")
            seq = int(number)
            if call.stream is None:
                call.stream = stream
            assert stream == call.stream, (event_id, call.stream)
            raw = data.encode()
            if seq in call.seen:  # read again after a resume: the very same event
                assert call.seen[seq] == raw, (seq, call.seen[seq], raw)
            else:
                call.seen[seq] = raw
                if data:
                    take(call, seq, json.loads(data))
            call.last_seq = seq if call.last_seq is None else max(call.last_seq, seq)
            call.changed.set()
    except httpx.HTTPError:
        pass  # the connection was cut (its instance stopped): the client may resume
    finally:
        call.changed.set()


def take(call: CallModel, seq: int, message: dict[str, Any]) -> None:
    method = message.get("method")
    if method == "elicitation/create":
        assert message["params"]["message"] in ("First name?", "Last name?"), message
        assert message["id"] not in {q["id"] for q in call.questions}, message
        call.questions.append(message)
    elif method == "notifications/cancelled":
        target = message["params"]["requestId"]
        assert target in {q["id"] for q in call.questions}, (message, call.questions)
        assert target not in call.answered, (message, call.answered)
        call.withdrawn.add(target)
    else:
        assert method is None, message
        assert message.get("id") == call.request["id"], message
        assert not call.responses, (call.responses, message)  # exactly one response
        call.responses[seq] = message


def asked_or_over(call: CallModel) -> Callable[[], bool]:
    return lambda: call.open_question is not None or bool(call.responses) or not call.reading


def over(call: CallModel) -> Callable[[], bool]:
    return lambda: not call.reading


async def until(call: CallModel, what: str, ready: Callable[[], bool], within: float = WITHIN) -> None:
    deadline = time.monotonic() + within
    while not ready():
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"call {call.index}: {what} did not happen within {within:g} s"
        call.changed.clear()
        try:
            async with asyncio.timeout(remaining):
                await call.changed.wait()
        except TimeoutError:
            pass


class Run:
    """One example: the deployment, a client, the model, and the checks."""

    def __init__(self, deployment: Deployment, http: httpx.AsyncClient, wire: Wire, data: st.DataObject):
        self.deployment = deployment
        self.http = http
        self.wire = wire
        self.data = data
        self.sessions: list[SessionModel] = []
        self.calls: list[CallModel] = []
        self.log: list[str] = []

    def node(self, pick: int) -> Node:
        up = self.deployment.up()
        return up[pick % len(up)]

    async def timed(self, what: str, request: Any, bound: float = WITHIN) -> httpx.Response:
        """A request answered within ``bound`` seconds."""
        started = time.monotonic()
        try:
            async with asyncio.timeout(bound):
                response: httpx.Response = await request
        except TimeoutError:
            raise AssertionError(f"{what}: no answer within {bound:g} s") from None
        self.log.append(f"{what} -> {response.status_code} in {time.monotonic() - started:.2f} s")
        event(f"{what.split(' ')[0]} -> {response.status_code}")
        return response

    def expect(self, response: httpx.Response, status: int, what: str) -> None:
        assert response.status_code == status, (what, status, response.status_code, response.text)
        if status >= 400:
            error = response.json()["error"]
            assert error["code"] == -32600, (what, error)

    # -- steps -----------------------------------------------------------------------------------
    async def open(self, at: int) -> None:
        node = self.node(at)
        client = Session(self.http, node.url, ALICE)
        async with asyncio.timeout(WITHIN):
            await client.open()
        assert client.id is not None
        assert client.id.startswith(node.name + "."), client.id
        self.sessions.append(SessionModel(len(self.sessions), client, node))
        self.log.append(f"open s{len(self.sessions) - 1} on {node.name}")

    async def call(self, which: int, at: int) -> None:
        if not self.sessions:
            return
        session = self.sessions[which % len(self.sessions)]
        if len([c for c in self.calls if c.session is session]) >= 6:
            return  # (a session keeps its last 8 delivered streams resumable)
        node = self.node(at)
        request = session.client.request("tools/call", {"name": "greet", "arguments": {}})
        sent = self.http.build_request("POST", node.url, json=request, headers=session.client.headers())
        what = f"call on s{session.index} at {node.name}"
        response = await self.stream(what, sent, session)
        if response is None:
            return
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["mcp-session-id"] == session.client.id
        call = CallModel(len(self.calls), session, request)
        self.calls.append(call)
        self.attach(call, response, node)
        await until(call, "the priming event", lambda: 0 in call.seen or not call.reading)

    def attach(self, call: CallModel, response: httpx.Response, node: Node) -> None:
        call.readers.append((response, asyncio.ensure_future(read_stream(call, response)), node))

    def pick_call(self, which: int) -> CallModel | None:
        return self.calls[which % len(self.calls)] if self.calls else None

    async def answer(self, which: int, at: int, kind: int) -> None:
        call = self.pick_call(which)
        if call is None:
            return
        node = self.node(at)
        session = call.session
        if call.reading and session.live and call.may_respond and not call.all_answered:
            # Wait for the question the call is about to send.
            await until(call, "a question", lambda: call.open_question is not None or not call.reading)
        question = call.open_question
        headers = session.client.headers()
        what = f"answer-{ANSWERS[kind]} for c{call.index} at {node.name}"
        if kind == 0 and question is not None:  # the right answer
            post = self.http.post(node.url, json=reply_to(call, question), headers=headers)
            response = await self.timed(what, post)
            if not session.live:
                self.expect(response, 404, what)
                return
            if call.cancelled_waiting:  # withdrawn, or not yet: either way the 400 or a 202
                assert response.status_code in (202, 400), (what, response.text)
            else:
                self.expect(response, 202, what)
            if response.status_code == 202:
                assert response.content == b""
                call.answered.add(question["id"])
            return
        if kind == 1 and call.answered:  # an answer taken already, again
            again = next(q for q in call.questions if q["id"] in call.answered)
            post = self.http.post(node.url, json=reply_to(call, again), headers=headers)
            response = await self.timed(what, post)
            self.expect(response, 404 if not session.live else 400, what)
            return
        if kind == 2 and question is not None:  # the right answer, another principal's token
            post = self.http.post(
                node.url,
                json=reply_to(call, question),
                headers={**headers, "authorization": f"Bearer {MALLORY}"},
            )
            self.expect(await self.timed(what, post), 404, what)
            return
        if kind == 3:  # a malformed response: both result and error
            bad = {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "x"}}
            response = await self.timed(what, self.http.post(node.url, json=bad, headers=headers))
            assert response.status_code == 400, (what, response.text)
            return
        what = f"answer-unknown for c{call.index} at {node.name}"
        unknown = {"jsonrpc": "2.0", "id": 10**9 + call.index, "result": {"action": "decline"}}
        response = await self.timed(what, self.http.post(node.url, json=unknown, headers=headers))
        self.expect(response, 404 if not session.live else 400, what)

    async def resume(self, which: int, at: int) -> None:
        call = self.pick_call(which)
        if call is None or call.last_seq is None or call.stream is None:
            return
        node = self.node(at)
        session = call.session
        headers = session.client.headers(
            accept="text/event-stream", **{"last-event-id": f"{call.stream}.{call.last_seq}"}
        )
        sent = self.http.build_request("GET", node.url, headers=headers)
        what = f"resume c{call.index} after {call.last_seq} at {node.name}"
        response = await self.stream(what, sent, session)
        if response is not None:
            self.attach(call, response, node)

    async def stream(self, what: str, sent: httpx.Request, session: SessionModel) -> httpx.Response | None:
        """The 200 event stream ``sent`` opens; None once the 404 of a session no longer live
        is checked."""
        response = await self.timed(what, self.http.send(sent, stream=True))
        if not session.live:
            await response.aread()
            self.expect(response, 404, what)
            return None
        assert response.status_code == 200, (what, response.status_code, await response.aread())
        return response

    async def drop(self, which: int) -> None:
        call = self.pick_call(which)
        if call is None:
            return
        for response, reader, _ in call.reading:
            await response.aclose()
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self.log.append(f"drop c{call.index}")

    async def cancel(self, which: int, at: int) -> None:
        call = self.pick_call(which)
        if call is None:
            return
        node = self.node(at)
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call.request["id"]},
        }
        what = f"cancel c{call.index} at {node.name}"
        response = await self.timed(
            what, self.http.post(node.url, json=notice, headers=call.session.client.headers())
        )
        if not call.session.live:
            self.expect(response, 404, what)
            return
        self.expect(response, 202, what)
        if not call.all_answered:
            call.cancelled_waiting = True

    async def delete(self, which: int, at: int) -> None:
        if not self.sessions:
            return
        session = self.sessions[which % len(self.sessions)]
        node = self.node(at)
        what = f"delete s{session.index} at {node.name}"
        response = await self.timed(what, self.http.delete(node.url, headers=session.client.headers()))
        if not session.live:
            self.expect(response, 404, what)
            return
        self.expect(response, 200, what)
        self.ended(session)
        session.deleted = True

    def ended(self, session: SessionModel) -> None:
        for call in self.calls:
            if call.session is session and not call.all_answered:
                call.ended_early = True

    async def foreign(self, which: int, at: int, verb: int) -> None:
        if not self.sessions:
            return
        session = self.sessions[which % len(self.sessions)]
        node = self.node(at)
        headers = {**session.client.headers(), "authorization": f"Bearer {MALLORY}"}
        what = f"mallory-{('POST', 'GET', 'DELETE')[verb % 3]} on s{session.index} at {node.name}"
        if verb % 3 == 0:
            request = self.http.post(node.url, json=session.client.request("tools/list"), headers=headers)
        elif verb % 3 == 1:
            request = self.http.get(node.url, headers={**headers, "accept": "text/event-stream"})
        else:
            request = self.http.delete(node.url, headers=headers)
        self.expect(await self.timed(what, request), 404, what)

    async def forge(self, at: int) -> None:
        node = self.node(at)
        await self.wire.listen([n.name for n in self.deployment.up()])
        forgery = self.data.draw(forgeries, label="forgery")
        for payload in self.forged(forgery, node):
            await self.wire.notify(node.name, payload)
        self.log.append(f"forged {forgery[0]} to {node.name}")
        event(f"forged {forgery[0]}")

    def forged(self, forgery: Forgery, node: Node) -> list[str]:
        """The frames of a forgery (what it takes from the wire is whatever was seen there)."""
        kind, pick, cut, bit, junk = forgery
        seen = [frame for _, frame in self.wire.seen]
        frame = seen[pick % len(seen)] if seen else junk
        if kind == "replayed":
            return [frame]
        if kind == "truncated":
            return [frame[: cut * len(frame) // 1000]]
        if kind == "flipped":
            head, _, piece = frame.rpartition(" ")
            try:
                sealed = bytearray(base64.b64decode(piece, validate=True))
            except ValueError:
                return [frame]
            if sealed:
                sealed[cut * len(sealed) // 1001] ^= 1 << bit
            return [f"{head} {base64.b64encode(bytes(sealed)).decode()}"]
        if kind == "stranger":
            sealer = StateSealer(KeyRing.from_secrets([KeyRing.generate_secret()]), audience="mcp")
            sender = self.deployment.nodes[pick % len(self.deployment.nodes)].name
            letter = LetterSealer(sealer, sender).seal(node.name, LETTER_KINDS[bit % 6], 1 + cut)
            return frames(letter)
        if kind == "junk message":
            return frames(random.Random(cut).randbytes(cut * 4 * PIECE_BYTES // 1000))
        return [junk]


ANSWERS = ["right", "again", "foreign", "malformed", "unknown"]
FORGERIES = ["replayed", "truncated", "flipped", "stranger", "junk message", "junk frame"]
LETTER_KINDS = ["open", "gone", "alive", "start", "body", "end"]
Forgery = tuple[str, int, int, int, str]
# Digits of every kind: "²".isdigit() is true, and int("²") fails.
_counts = st.integers(0, 20).map(str) | st.text(
    st.characters(categories=["Nd", "No"]), min_size=1, max_size=3
)
junk_frames = st.text(max_size=60) | st.builds(
    lambda mid, index, count, piece: f"{mid} {index} {count} {piece}",
    st.text("0123456789abcdef", min_size=1, max_size=16),
    _counts,
    _counts,
    st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()) | st.text(max_size=20),
)
forgeries = st.tuples(
    st.sampled_from(FORGERIES), st.integers(0, 99), st.integers(0, 1000), st.integers(0, 7), junk_frames
)

STEPS = ["open"] + ["call"] * 3 + ["answer"] * 5 + ["resume"] * 2 + ["drop"] * 2
STEPS += ["cancel", "delete", "foreign", "forge", "forge", "stop"]
scripts = st.lists(
    st.tuples(st.sampled_from(STEPS), st.integers(0, 7), st.integers(0, NODES - 1), st.integers(0, 4)),
    min_size=2,
    max_size=16,
)


async def play(run: Run, script: list[tuple[str, int, int, int]]) -> None:
    await run.open(0)
    await run.call(0, script[0][2])  # one call at least, sent to any instance
    for step, which, at, kind in script:
        run.log.append(f"step {step} {which} {at} {kind}")
        if step == "open":
            await run.open(at)
        elif step == "call":
            await run.call(which, at)
        elif step == "answer":
            await run.answer(which, at, kind)
        elif step == "resume":
            await run.resume(which, at)
        elif step == "drop":
            await run.drop(which)
        elif step == "cancel":
            await run.cancel(which, at)
        elif step == "delete":
            await run.delete(which, at)
        elif step == "foreign":
            await run.foreign(which, at, kind)
        elif step == "forge":
            await run.forge(at)
        elif step == "stop" and len(run.deployment.up()) > 1:
            node = run.node(at)
            for session in run.sessions:
                if session.owner is node and session.live:
                    run.ended(session)
                    for call in run.calls:
                        call.owner_stopped |= call.session is session
            await run.deployment.stop(node)
            run.log.append(f"stopped {node.name}")
            event("stopped an instance")
    await settle(run)


async def settle(run: Run) -> None:
    """Finish every call, delete every session, and check that nothing is left anywhere."""
    for call in run.calls:
        session = call.session
        if session.live and call.may_respond:
            # Answer what is left, resuming wherever the client has no connection.
            while not call.responses:
                if not call.reading:
                    await run.resume(call.index, random.Random(call.index).randrange(NODES))
                    assert call.reading, f"call {call.index}: the resumption did not stream"
                await until(
                    call,
                    "a question or the response",
                    asked_or_over(call),
                )
                if call.open_question is not None and not call.responses:
                    await run.answer(call.index, call.index, 0)
            (response,) = call.responses.values()
            assert response["result"]["content"][0]["text"] == call.expected_text(), response
        elif session.live:
            # Cancelled while it waited: its stream ends, without a response.
            if not call.reading and call.last_seq is not None:
                await run.resume(call.index, call.index)
            await until(call, "the end of a cancelled call's stream", over(call))
        else:
            # Its session ended: its streams end, within the bound.
            await until(call, "the end of an ended session's stream", over(call))
        if not call.may_respond:
            # deployment.md: a call still running when its instance stops gets the -32603
            # "shutting down" error as its response, on a stream that instance serves itself.
            stopped = call.owner_stopped and all(r.get("error") == STOPPED for r in call.responses.values())
            assert not call.responses or call.all_answered or stopped, (call.index, call.responses)
            assert len(call.responses) <= 1, (call.index, call.responses)
        # Whatever it got, its events were numbered without a gap.
        if call.seen:
            assert sorted(call.seen) == list(range(max(call.seen) + 1)), sorted(call.seen)
    for session in run.sessions:
        if session.live:
            await run.delete(session.index, session.index)
    for call in run.calls:
        await run.drop(call.index)
    # Every instance lets go of every session and every relay, within the bound.
    deadline = time.monotonic() + WITHIN
    while True:
        counts = {node.name: node.counts() for node in run.deployment.up()}
        if all(c == (0, 0, 0) for c in counts.values()):
            break
        assert time.monotonic() < deadline, f"left behind (sessions, asked, served): {counts}"
        await asyncio.sleep(0.05)


@fuzz_settings(EXAMPLES * SCALE)
@given(script=scripts, data=st.data())
async def test_any_traffic_over_three_instances_gets_the_documented_answers(
    deployment: Deployment, script: list[tuple[str, int, int, int]], data: st.DataObject
) -> None:
    wire = Wire(deployment.dsn, deployment.channel)
    await wire.open()
    failed = True
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(WITHIN, read=None)) as http:
            run = Run(deployment, http, wire, data)
            with no_errors_logged():
                try:
                    await play(run, script)
                except Exception:
                    print("\n".join(run.log))
                    raise
        failed = False
    finally:
        await wire.close()
        if failed:  # start again from fresh instances
            await deployment.close()
        await deployment.replace_stopped()


# -- bugs, each reduced to its smallest reproduction ------------------------------------------------


async def relayed_once(http: httpx.AsyncClient, owner: Node, other: Node) -> None:
    """A request relayed from ``other`` to ``owner`` and answered: letters written to ``owner``
    before it have been taken in (a mailbox takes them in order)."""
    session = Session(http, owner.url, ALICE)
    await session.open()
    assert session.id is not None
    reply = await http.post(other.url, json=session.request("tools/list"), headers=session.headers())
    assert reply.status_code == 200, reply.text
    await http.delete(owner.url, headers=session.headers())


# Bug 1 (fixed): a NOTIFY frame whose index or count is made of digits int() does not take ("²", "³",
# or more than 4300 of them) makes notify_frames.Reassembly.add raise ValueError instead of
# dropping the frame; PgListener logs it as an ERROR with a traceback ("delivering a notification
# failed"). Anyone who can connect to the database can write such a frame to every instance's
# mailbox channel, as often as they like (NOTIFY needs no privilege).
async def test_bug_a_forged_frame_with_odd_digits_is_dropped_without_an_error(
    deployment: Deployment,
) -> None:
    owner, other = deployment.nodes[:2]
    wire = Wire(deployment.dsn, deployment.channel)
    await wire.open()
    try:
        async with httpx.AsyncClient(timeout=WITHIN) as http:
            with no_errors_logged():
                for frame in ("f00 ² 1 AAAA", "f00 0 ³ AAAA", "f00 0 " + "1" * 5000 + " AAAA"):
                    await wire.notify(owner.name, frame)
                await relayed_once(http, owner, other)  # the frames were taken in before it
    finally:
        await wire.close()


# Bug 2 (fixed): an instance restarted under the same name (HttpApp(sessions={"instance": ...}), a
# stable host name) counts its relays from 1 again, while the owner still serves the relays the
# previous process asked for (until three keepalives pass without word of them), keyed
# (sender, number). The owner drops the new "open" as a duplicate, and the response of the old
# relay -- another principal's call -- is sent to the new relay of the same number: bob's
# request gets alice's answer.
async def test_bug_a_restarted_instance_never_relays_another_principals_answer(
    dsn: str, tmp_path: Path
) -> None:
    made = Deployment(dsn, tmp_path, owner_timeout=3.0, keepalive=0.5)
    try:
        owner = await made.start()
        asker = await made.start()
        async with httpx.AsyncClient(timeout=10) as http:
            alice = Session(http, owner.url, ALICE)
            await alice.open()
            bob = Session(http, owner.url, "bob")
            await bob.open()
            secret = {"name": "pause", "arguments": {"seconds": 1.5, "note": "alice's secret"}}
            alices = asyncio.ensure_future(
                http.post(
                    asker.url,
                    json=alice.request("tools/call", secret),
                    headers=alice.headers(accept="application/json"),
                )
            )
            deadline = time.monotonic() + 5
            while owner.counts()[2] != 1:  # the owner runs alice's relayed call
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            await made.stop(asker)  # the asker dies (alice's connection with it), and comes back
            await asyncio.gather(alices, return_exceptions=True)
            again = await made.start(name=asker.name)
            reply = await http.post(again.url, json=bob.request("tools/list"), headers=bob.headers())
        assert "alice's secret" not in reply.text
        assert reply.status_code == 200, reply.text
        assert "tools" in reply.json()["result"]
    finally:
        await made.close()


class Records(logging.Handler):
    """The records of a logger whose message starts with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        super().__init__(logging.DEBUG)
        self.prefix = prefix
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.prefix):
            self.seen.append(record.getMessage())


# Bug 3 (fixed): an instance that stops (uvicorn's graceful shutdown, what SIGTERM does; its time over,
# uvicorn cancels what still runs) while it relays a call's stream: SessionRelay.forward does not
# handle the cancellation. The owner is not told the client went away (the module docstring:
# "at once"; here only after three keepalives), uvicorn logs "Exception in ASGI application"
# with the CancelledError's traceback, and the client's stream is cut in the middle of its
# chunked body instead of ending (serve() promises "the last event of an SSE reply that has
# started"). The same traceback comes for a 2025-11-25 stream served locally (http_legacy).
async def test_bug_an_instance_that_stops_mid_relay_tells_the_owner_and_logs_no_error(
    dsn: str, tmp_path: Path
) -> None:
    made = Deployment(dsn, tmp_path, keepalive=1.0)  # a silent relay is over after 3 s
    asgi_errors = Records("Exception in ASGI application")
    logging.getLogger("uvicorn.error").addHandler(asgi_errors)
    try:
        owner = await made.start()
        asker = await made.start()
        async with httpx.AsyncClient(timeout=10) as http:
            alice = Session(http, owner.url, ALICE)
            await alice.open()
            call = alice.request("tools/call", {"name": "greet", "arguments": {}})
            sent = http.build_request("POST", asker.url, json=call, headers=alice.headers())
            response = await http.send(sent, stream=True)
            assert response.status_code == 200
            deadline = time.monotonic() + 5
            while owner.counts()[2] != 1:  # the owner serves the relayed call
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            await asker.served.__aexit__()  # its graceful shutdown is over at once: cancelled
            stopped = time.monotonic()
            while owner.counts()[2] != 0:
                assert time.monotonic() - stopped < 1.0, "the owner was not told the client went away"
                await asyncio.sleep(0.02)
            await response.aclose()
        assert not asgi_errors.seen
    finally:
        logging.getLogger("uvicorn.error").removeHandler(asgi_errors)
        await made.close()
