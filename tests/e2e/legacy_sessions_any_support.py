"""What ``test_http_legacy_sessions_any_client.py`` needs besides its strategies: the server
process it drives, the model of its sessions and calls, and the client that plays any script
against it, raw HTTP over httpx.

The model is checked at sync points only (:meth:`Hunt.sync`): the readers of the event streams
just collect what arrives, and the main coroutine, which alone posts and updates the model,
reads it between steps. So what the server did because of an answer is always checked against a
model that already knows the answer was taken (its 202 came back first), whichever connection
the server wrote first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from hypothesis import event

from tests.helpers import free_port
from tests.http_session_support import Session, events, initialize
from tests.server_process import PY, ServerProcess, start_server

SERVER = Path(__file__).with_name("legacy_sessions_server.py")
WITHIN = 5.0  # seconds anything may take (the legs wait 30 s: no question times out in an example)
# An event stream may rightly sit idle (a question waits for its answer): the model bounds the waits.
STREAMING = httpx.Timeout(WITHIN, read=None)
PRINCIPALS = ("alice", "bob")
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
WITHDRAWN = "the request it belongs to was cancelled"
RESULT_ERROR = "the client's ElicitResult"
# Lines in the server's log that mean an exception escaped (the process logs warnings and up).
BAD_LOG = ("Traceback", "Exception in ASGI application", "ERROR", "CRITICAL")


def start(log_dir: Path, *extra: str) -> ServerProcess:
    """``legacy_sessions_server.py`` on a free port of 127.0.0.1 (the one way tests start one)."""
    port = free_port()
    argv = [PY, str(SERVER), "--port", str(port), *extra]
    return start_server(argv, log=log_dir / f"server-{port}.log", port=port)


# -- replies -------------------------------------------------------------------------------------


@dataclass
class Reply:
    """An HTTP reply, read whole."""

    status: int
    body: bytes
    what: str

    def error(self) -> dict[str, Any]:
        """The JSON-RPC error of a refusal, checked to be one a person can act on."""
        assert self.status != 500, self
        message: dict[str, Any] = json.loads(self.body)
        assert "result" not in message, self
        error: dict[str, Any] = message["error"]
        assert error["code"] == -32600, self
        text = error["message"]
        assert isinstance(text, str), self
        assert len(text) > 20, self  # a sentence, not a bare status
        assert "Traceback" not in text, self
        assert "Internal" not in text, self
        return message


async def bounded(what: str, awaitable: Awaitable[httpx.Response]) -> Reply:
    """``awaitable``'s reply within :data:`WITHIN` (a hang fails the example, naming it)."""
    try:
        async with asyncio.timeout(WITHIN):
            response = await awaitable
    except TimeoutError:
        raise AssertionError(f"{what}: no reply within {WITHIN:g} s") from None
    assert response.status_code != 500, (what, response.text)
    return Reply(response.status_code, response.content, what)


# -- the model ------------------------------------------------------------------------------------


@dataclass(eq=False)
class Question:
    """One ``elicitation/create`` a call sent: ``taken`` is the reply (``{"result": ...}`` or
    ``{"error": ...}``) the server took for it (a POST got 202)."""

    id: int
    call: CallModel
    key: str
    kind: str  # "f" form, "u" URL
    elicitation_id: str | None
    taken: dict[str, Any] | None = None
    withdrawn: bool = False

    @property
    def waiting(self) -> bool:
        """As far as the model knows, the server waits for its answer."""
        return self.taken is None and not self.withdrawn and not self.call.ended


@dataclass(eq=False)
class Stream:
    """One connection of a call's stream or a GET stream: its reader task and what it read."""

    task: asyncio.Task[None] | None = None
    status: int | None = None
    body: bytes = b""
    head: asyncio.Event = field(default_factory=asyncio.Event)
    inbox: list[tuple[str | None, str]] = field(default_factory=list)
    ended: bool = False  # the server ended the response (not the client)
    dropped: bool = False  # the client closed it
    broken: str | None = None  # the server cut the connection before the response's end


@dataclass(eq=False)
class SessionModel:
    label: str
    principal: str
    client: Session
    bystander: bool = False
    deleted: bool = False
    calls: list[CallModel] = field(default_factory=list)
    question_ids: dict[int, Question] = field(default_factory=dict)
    early: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> reply taken before seen
    gets: list[Stream] = field(default_factory=list)

    @property
    def live(self) -> bool:
        return not self.deleted

    @property
    def get_open(self) -> bool:
        return any(not (get.ended or get.dropped) and get.status == 200 for get in self.gets)

    def next_question_id(self) -> int:
        return max(self.question_ids, default=0) + 1


@dataclass(eq=False)
class CallModel:
    """One ``ask`` call: its plan (a string of kinds per round) and what the model knows of it."""

    label: str
    session: SessionModel
    request: dict[str, Any]
    plan: list[str]
    streams: list[Stream] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    said: dict[str, str] = field(default_factory=dict)  # key -> what the tool says of its answer
    attempts: dict[str, int] = field(default_factory=dict)  # key -> invalid answers taken
    exhausted: list[str] = field(default_factory=list)
    failure: tuple[Any, ...] | None = None  # the first answer that fails the call
    cancelled: bool = False
    deleted: bool = False
    may_answer: bool = True  # False: cancelled or deleted before it could complete
    response: dict[str, Any] | None = None
    ended: bool = False  # its stream's end was read
    stream_name: str | None = None
    last_seq: int | None = None  # the last event processed
    last_id: str | None = None  # the last event received (a resumption starts after it)

    @property
    def keys(self) -> list[list[str]]:
        return [
            [f"r{number}q{index}" for index in range(len(kinds))] for number, kinds in enumerate(self.plan)
        ]

    def kind_of(self, key: str) -> str:
        number, index = key[1:].split("q")
        return self.plan[int(number)][int(index)]

    @property
    def connected(self) -> bool:
        return bool(self.streams) and not (self.streams[-1].ended or self.streams[-1].dropped)

    @property
    def running(self) -> bool:
        return not self.ended and self.session.live

    def can_complete(self) -> bool:
        """Whether the answers taken so far decide the call (no more is needed from the client):
        an answer that fails it, a round whose every question took an answer and one of them its
        last invalid one, or every question answered."""
        if self.failure is not None:
            return True
        for round_keys in self.keys:
            if any(key in self.exhausted for key in round_keys) and all(map(self._took, round_keys)):
                return True
            if not all(key in self.said for key in round_keys):
                return False
        return True

    def _took(self, key: str) -> bool:
        asked = [question for question in self.questions if question.key == key]
        return key in self.said or key in self.exhausted or (bool(asked) and asked[-1].taken is not None)

    def asked_again(self, key: str) -> bool:
        return self.attempts.get(key, 0) > 0

    def open_question(self, key: str) -> Question | None:
        for question in self.questions:
            if question.key == key and question.taken is None and not question.withdrawn:
                return question
        return None

    def expected(self) -> dict[str, Any]:
        """The response the answers taken make (for a call that was neither cancelled nor ended
        with its session)."""
        if self.failure is not None and self.failure[0] == "malformed":
            return {"code": -32602, "needle": self.failure[1]}
        if self.failure is not None:
            _, code, message = self.failure
            return {
                "is_error": True,
                "text": "Tool 'ask' could not finish: the client answered elicitation/create with "
                f"error {code}: {message}",
            }
        if self.exhausted:
            return {"is_error": True, "prefix": "The answer to "}
        keys = [key for round_keys in self.keys for key in round_keys]
        return {"is_error": False, "text": f"{self.label}: " + " ".join(self.said[key] for key in keys)}


# -- answers ------------------------------------------------------------------------------------


def valid_reply(question: Question, action: str) -> dict[str, Any]:
    if action == "accept" and question.kind == "f":
        return {"result": {"action": "accept", "content": {"name": f"{question.call.label}-{question.id}"}}}
    return {"result": {"action": action}}


MALFORMED: dict[str, tuple[Any, str]] = {
    "unknown action": ({"action": "maybe"}, "action must be one of accept, decline, cancel"),
    "no action": ({"content": {"name": "x"}}, "action must be one of accept, decline, cancel"),
    "content not an object": ({"action": "accept", "content": ["x"]}, "content must be an object"),
    "not an object": ("yes", "is not an object"),
}
# A decline or cancel is one whatever else it carries (docs/protocol.md): the content is dropped.
WITH_CONTENT: dict[str, Any] = {
    "decline with content": {"action": "decline", "content": {"name": "x"}},
    "cancel with content": {"action": "cancel", "content": {"name": 5}},
}
INVALID_CONTENT: dict[str, Any] = {
    "name not a string": {"action": "accept", "content": {"name": 5}},
    "name missing": {"action": "accept", "content": {}},
    "no content": {"action": "accept"},
}


def outcome_of(question: Question, reply: dict[str, Any]) -> None:
    """What the call makes of ``reply``, taken for ``question`` (a 202): the model updated."""
    call = question.call
    question.taken = reply
    if "error" in reply:
        event("taken: a JSON-RPC error")
        if call.failure is None:
            call.failure = ("error", reply["error"]["code"], reply["error"]["message"])
        return
    result = reply["result"]
    for _, (malformed, needle) in MALFORMED.items():
        if result == malformed:
            event("taken: a malformed ElicitResult")
            if call.failure is None:
                call.failure = ("malformed", needle)
            return
    action = result["action"]
    if question.kind == "f" and action == "accept":
        content = result.get("content") or {}
        name = content.get("name")
        if not isinstance(name, str):
            event("taken: invalid content")
            call.attempts[question.key] = call.attempts.get(question.key, 0) + 1
            if call.attempts[question.key] >= 3:
                call.exhausted.append(question.key)
            return
        call.said[question.key] = f"{question.key}=accept:{name}"
    else:
        call.said[question.key] = f"{question.key}={action}"
    event(f"taken: {action}")


# -- the hunt -------------------------------------------------------------------------------------


class Hunt:
    """One example: the sessions and calls of a script, played against ``url`` (see the test
    module's docstring)."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.sessions: list[SessionModel] = []
        self.calls: list[CallModel] = []
        self.log: list[str] = []
        self._labels = iter(range(1_000_000))

    # -- sessions ----------------------------------------------------------------------------
    async def open(self, principal: str, *, bystander: bool = False) -> SessionModel:
        client = Session(self.http, self.url, principal)
        async with asyncio.timeout(WITHIN):
            await client.open(initialize(capabilities=CAPABILITIES))
        session = SessionModel(f"S{len(self.sessions)}", principal, client, bystander)
        self.sessions.append(session)
        self.log.append(f"open {session.label} as {principal}{' (bystander)' if bystander else ''}")
        return session

    def working(self) -> list[SessionModel]:
        return [s for s in self.sessions if not s.bystander]

    def bystander(self, principal: str) -> SessionModel:
        (found,) = [s for s in self.sessions if s.bystander and s.principal == principal]
        return found

    def headers(self, session: SessionModel, **extra: str) -> dict[str, str]:
        return session.client.headers(**extra)

    # -- streams -----------------------------------------------------------------------------
    def _read(self, stream: Stream, request: httpx.Request) -> None:
        async def read() -> None:
            try:
                response = await self.http.send(request, stream=True)
                try:
                    stream.status = response.status_code
                    if response.status_code != 200:
                        stream.body = await response.aread()
                        stream.ended = True
                        return
                    stream.head.set()
                    async for event_id, data in events(response):
                        stream.inbox.append((event_id, data))
                    stream.ended = True
                finally:
                    stream.head.set()
                    await response.aclose()
            except (httpx.HTTPError, OSError) as exc:  # the server cut it: recorded, checked later
                stream.broken = repr(exc)
                stream.ended = True
                stream.head.set()

        stream.task = asyncio.ensure_future(read())

    async def headed(self, stream: Stream, what: str) -> None:
        try:
            async with asyncio.timeout(WITHIN):
                await stream.head.wait()
        except TimeoutError:
            raise AssertionError(f"{what}: no reply head within {WITHIN:g} s") from None
        assert stream.status != 500, (what, stream.body)
        self.log.append(f"{what} -> {stream.status}")

    async def drop(self, stream: Stream) -> None:
        """The client closes the connection."""
        if stream.task is None or stream.task.done():
            return
        stream.dropped = True
        stream.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stream.task

    # -- calls -------------------------------------------------------------------------------
    async def call(self, session: SessionModel, plan: list[str]) -> CallModel | None:
        label = f"c{next(self._labels)}"
        request = session.client.request(
            "tools/call", {"name": "ask", "arguments": {"label": label, "plan": plan}}
        )
        what = f"call {label} {plan} in {session.label}"
        stream = Stream()
        self._read(
            stream,
            self.http.build_request(
                "POST", self.url, json=request, headers=self.headers(session), timeout=STREAMING
            ),
        )
        await self.headed(stream, what)
        if session.deleted:
            assert stream.status == 404, (what, stream.status, stream.body)
            Reply(404, stream.body, what).error()
            return None
        assert stream.status == 200, (what, stream.status, stream.body)
        call = CallModel(label, session, request, plan, [stream])
        session.calls.append(call)
        self.calls.append(call)
        return call

    async def resume(self, call: CallModel) -> None:
        """``GET`` with ``Last-Event-ID``: the stream picked up after the last event received."""
        assert call.last_id is not None
        stream = Stream()
        headers = self.headers(call.session, accept="text/event-stream", **{"last-event-id": call.last_id})
        self._read(stream, self.http.build_request("GET", self.url, headers=headers, timeout=STREAMING))
        what = f"resume {call.label} after {call.last_id}"
        await self.headed(stream, what)
        if call.session.deleted:
            assert stream.status == 404, (what, stream.status, stream.body)
            Reply(404, stream.body, what).error()
            return
        assert stream.status == 200, (what, stream.status, stream.body)
        call.streams.append(stream)

    async def get(self, session: SessionModel) -> Stream:
        """The session's GET stream opened (200), refused (409 while one is open, 404 once the
        session is gone)."""
        stream = Stream()
        headers = self.headers(session, accept="text/event-stream")
        self._read(stream, self.http.build_request("GET", self.url, headers=headers, timeout=STREAMING))
        await self.headed(stream, f"GET {session.label}")
        session.gets.append(stream)
        return stream

    # -- what arrives ------------------------------------------------------------------------
    def sync(self) -> None:
        """Check what the streams have read since the last sync against the model."""
        for call in self.calls:
            for stream in call.streams:
                while stream.inbox:
                    self._take(call, *stream.inbox.pop(0))
            latest = call.streams[-1]
            assert latest.broken is None, (call.label, "the server cut the stream", latest.broken)
            if latest.ended and not latest.inbox and latest.status == 200 and not call.ended:
                call.ended = True
                self.log.append(f"{call.label}: stream ended")
        for session in self.sessions:
            for get in session.gets:
                while get.inbox:
                    event_id, data = get.inbox.pop(0)
                    where = f"GET stream of {session.label}: {event_id!r} {data[:200]!r}"
                    # No subscription, no question on it: only its priming event.
                    assert data == "", ("an event crossed onto a GET stream", where)
                    assert event_id is not None, where
                    assert event_id.endswith(".0"), where

    def _take(self, call: CallModel, event_id: str | None, data: str) -> None:
        where = f"{call.label} ({call.session.label}): event {event_id!r} {data[:300]!r}"
        assert event_id is not None, where
        name, _, seq_text = event_id.rpartition(".")
        seq = int(seq_text)
        if call.stream_name is None:
            assert seq == 0, ("a call's stream starts with its priming event", where)
            assert data == "", ("a call's stream starts with its priming event", where)
            assert all(other.stream_name != name for other in call.session.calls), (
                "a stream id twice",
                where,
            )
            call.stream_name = name
        else:
            assert name == call.stream_name, ("an event of another stream", where)
            assert call.last_seq is not None
            assert seq == call.last_seq + 1, ("a gap or a repeat", call.last_seq, where)
        call.last_seq = seq
        call.last_id = event_id
        if not data:
            return
        assert call.response is None, ("an event after the response", where)
        message = json.loads(data)
        method = message.get("method")
        if method == "elicitation/create":
            self._question(call, message, where)
        elif method == "notifications/cancelled":
            self._withdrawal(call, message, where)
        elif method == "notifications/elicitation/complete":
            # The server's URL questions are plain ctx.elicit_url ones: an accept says the user
            # agreed to open the page, never that they finished there.
            raise AssertionError(("a plain URL question announced complete", where))
        else:
            assert method is None, ("not this call's", where)
            assert message.get("id") == call.request["id"], ("another request's response", where)
            call.response = message
            self.log.append(f"{call.label}: response {data[:160]}")
            self._response(call, message, where)

    def _question(self, call: CallModel, message: dict[str, Any], where: str) -> None:
        params = message["params"]
        text = params["message"]
        assert text.startswith(call.label + " r"), ("another call's question", where)
        key = text[len(call.label) + 1 : text.index("?")]
        assert key in [k for keys in call.keys for k in keys], ("a question of no plan", where)
        kind = call.kind_of(key)
        assert params["mode"] == ("url" if kind == "u" else "form"), where
        number = int(key[1:].split("q")[0])
        if call.failure is not None:  # (its round's other questions went out with the one that failed)
            assert not call.asked_again(key), ("a question asked again after the call failed", where)
            assert number == max(int(q.key[1:].split("q")[0]) for q in call.questions), where
        assert key not in call.said, ("a question already answered", where)
        assert key not in call.exhausted, ("a question already given up on", where)
        assert call.open_question(key) is None, ("a question asked twice at once", where)
        for earlier in call.keys[:number]:
            assert all(k in call.said for k in earlier), ("a round before the one before it is over", where)
        if call.asked_again(key):
            assert text.startswith(f"{call.label} {key}?\n\nThe previous answer was not accepted: "), where
        else:
            assert text == f"{call.label} {key}?", where
        elicitation_id = None
        if kind == "u":
            elicitation_id = params["elicitationId"]
            assert params["url"] == f"https://example.com/{call.label}/{key}", where
            assert all(q.elicitation_id != elicitation_id for q in call.questions), where
        question_id = message["id"]
        assert isinstance(question_id, int), where
        assert not isinstance(question_id, bool), where
        session = call.session
        assert question_id not in session.question_ids, ("a question id used twice in a session", where)
        question = Question(question_id, call, key, kind, elicitation_id)
        session.question_ids[question_id] = question
        call.questions.append(question)
        self.log.append(f"{call.label}: question {question_id} {key}")
        if question_id in session.early:
            event("an answer posted before its question was read was taken")
            outcome_of(question, session.early.pop(question_id))

    def _withdrawal(self, call: CallModel, message: dict[str, Any], where: str) -> None:
        params = message["params"]
        found = call.session.question_ids.get(params["requestId"])
        assert found is not None, ("a withdrawal of no question of this session", where)
        assert found.call is call, ("a withdrawal of another call's question", where)
        assert found.taken is None, ("an answer taken (202), then its question withdrawn", where)
        assert not found.withdrawn, ("withdrawn twice", where)
        assert params.get("reason") == WITHDRAWN, where
        assert call.failure is not None or call.cancelled, ("a question withdrawn for no reason", where)
        found.withdrawn = True
        self.log.append(f"{call.label}: withdrawn {found.id}")

    def _response(self, call: CallModel, message: dict[str, Any], where: str) -> None:
        assert call.may_answer, ("a response for a call cancelled before it could complete", where)
        assert call.can_complete(), ("a response before the answers it needs", where)
        expected = call.expected()
        if "code" in expected:
            assert message["error"]["code"] == expected["code"], (expected, where)
            assert RESULT_ERROR in message["error"]["message"], (expected, where)
            assert expected["needle"] in message["error"]["message"], (expected, where)
        else:
            result = message["result"]
            (content,) = result["content"]
            assert result.get("isError", False) is expected["is_error"], (expected, where)
            if "prefix" in expected:
                assert content["text"].startswith(expected["prefix"]), (expected, where)
                assert "was invalid 3 times" in content["text"], (expected, where)
            else:
                assert content["text"] == expected["text"], (expected, where)
        if call.failure is not None or call.exhausted:
            # What the call was still waiting for was withdrawn before it ended.
            assert all(q.taken is not None or q.withdrawn for q in call.questions), where
        else:
            assert all(q.taken is not None for q in call.questions), where

    async def until(self, ready: Callable[[], bool], what: str, within: float = WITHIN) -> None:
        """Sync until ``ready()``; fail naming ``what`` after ``within`` s."""
        deadline = time.monotonic() + within
        while True:
            self.sync()
            if ready():
                return
            assert time.monotonic() < deadline, f"{what}: not within {within:g} s"
            await asyncio.sleep(0.01)

    # -- answers -----------------------------------------------------------------------------
    async def post(self, session: SessionModel, body: Any, what: str, **headers: str | None) -> Reply:
        sent = self.headers(session)
        for name, value in headers.items():
            if value is None:
                sent.pop(name, None)
            else:
                sent[name] = value
        reply = await bounded(what, self.http.post(self.url, content=json.dumps(body).encode(), headers=sent))
        self.log.append(f"{what} -> {reply.status}")
        return reply

    def must_take(self, question: Question) -> bool:
        """Whether the server must take an answer to ``question`` now (else it may, or not)."""
        call = question.call
        return question.waiting and call.session.live and call.failure is None and not call.cancelled

    def may_take(self, question: Question) -> bool:
        return question.taken is None and not question.withdrawn and not question.call.ended

    def refused(self, reply: Reply, status: int, needle: str) -> None:
        assert reply.status == status, reply
        message = reply.error()
        assert message.get("id") is None, reply  # a question's id is the server's own: never echoed
        assert needle in message["error"]["message"], (needle, reply)

    def taken_or_refused(self, question: Question, reply: Reply, sent: dict[str, Any]) -> None:
        """The model's verdict on one POST of ``sent`` to ``question`` in its own session."""
        if question.call.session.deleted:
            self.refused(reply, 404, "initialize again")
            return
        if self.must_take(question):
            assert reply.status == 202, (reply, "the question waits for its answer")
        elif not self.may_take(question):
            self.refused(reply, 400, "no question of this session waits")
        if reply.status == 202:
            assert reply.body == b"", reply
            assert self.may_take(question), reply
            outcome_of(question, sent)
        else:
            event("an answer the server may refuse was refused")
            self.refused(reply, 400, "no question of this session waits")

    def cancelled(self, call: CallModel) -> None:
        """``notifications/cancelled`` for ``call`` was taken (202)."""
        if call.running and not call.cancelled:
            call.cancelled = True
            call.may_answer = call.may_answer and call.can_complete()
            self.log.append(f"{call.label}: cancelled (may answer: {call.may_answer})")

    def deleted(self, session: SessionModel) -> None:
        session.deleted = True
        for call in session.calls:
            if not call.ended:
                call.deleted = True
                call.may_answer = call.may_answer and call.can_complete()
