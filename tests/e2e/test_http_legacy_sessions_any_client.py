"""A sloppy or hostile 2025-11-25 client, any script: a property test of our server's session
path over Streamable HTTP (``http_legacy.py``, ``http_sessions.py``, ``event_stream.py``, the
legacy bridge), a real server process (``legacy_sessions_server.py``) driven with raw HTTP.

The other property tests of this path play one call at a time and one question at a time
(``test_http_legacy_answers.py``), or concentrate on drops and resumptions
(``test_http_legacy_resumption_any.py``). Here hypothesis draws a script over several sessions of
two principals, each with several calls running at once whose rounds ask one to three questions
together (forms and URLs), and the client answers them as no honest client would:

* in any order, across calls; twice in turn; twice at once; after the call ended; before the
  question was read (an id the session may or may not have sent yet); with ids never sent;
* with every kind of reply: accept, decline, cancel (with content too: still a decline or
  cancel), invalid content (asked again, three times at most), malformed ElicitResults (-32602
  for the call), JSON-RPC errors (a tool error);
* misaddressed: in another session of the same or the other principal, in this session with the
  other principal's token, in an unknown session or none, batched, with a version the sessions
  do not speak;
* racing: an answer and ``notifications/cancelled`` for its call at once, an answer and
  ``DELETE`` of its session at once;
* ``notifications/cancelled`` of any call (running or over), ``DELETE`` of a session mid-call,
  the ``GET`` stream opened, opened twice at once, closed, opened again; a call's connection
  dropped and its stream picked up again (``Last-Event-ID``);
* calls whose POST accepts only JSON (one that asks fails with -32600, one that does not answers).

The model (``legacy_sessions_any_support.py``) checks, at each step: every reply has its status
(202 and no body for an answer the server must take; 400 for one no question waits for, 404 for
a session that is gone or another principal's, never 500), refusals carry a -32600 error a person
can act on and never the question's id; each call's stream carries only its own questions
and withdrawals (never a completion: its URL questions are plain ones), numbered without gap, and
its one response last; a response is the
one the answers taken make; a question withdrawn was never taken; the GET streams carry nothing.
At the end every call still running is answered to its end; a cancelled call (or one whose
session was deleted) that could not complete has no response; every wait is bounded; the
server's log has no traceback; and a fresh session still gets a call answered.

``LEGACY_SESSIONS_EXAMPLES`` raises the examples (default 20 per event loop: the module takes
about 20 s here). It also races a call's POST with its cancellation, on an idle or a busy
server, and cancels calls whose POST accepts only JSON: where the two bugs this found were.

The bugs found are at the end, each reduced to a minimal regression test.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st

from tests.e2e.legacy_sessions_any_support import (
    BAD_LOG,
    INVALID_CONTENT,
    MALFORMED,
    PRINCIPALS,
    WITH_CONTENT,
    WITHIN,
    Hunt,
    Question,
    Reply,
    SessionModel,
    bounded,
    outcome_of,
    start,
    valid_reply,
)
from tests.http_session_support import Session, answer_questions
from tests.server_process import ServerProcess
from tests.strategies import fuzz_settings

EXAMPLES = int(os.environ.get("LEGACY_SESSIONS_EXAMPLES", "20"))
MAX_CALLS_PER_SESSION = 5  # below what the session keeps resumable (8 delivered streams)


@pytest.fixture(scope="module")
def server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server process per event loop (``server_loop``, tests/e2e/conftest.py), shared by the
    examples: each opens and deletes sessions of its own."""
    running = start(tmp_path_factory.mktemp("legacy-sessions"))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=WITHIN, limits=httpx.Limits(max_connections=200)) as client:
        yield client


# -- the script ------------------------------------------------------------------------------------

REPLIES = (
    ["accept", "accept", "accept", "decline", "cancel", "error"]
    + [f"with content:{name}" for name in WITH_CONTENT]
    + [f"invalid:{name}" for name in INVALID_CONTENT]
    + [f"malformed:{name}" for name in MALFORMED]
)
ROUTES = [
    "own",
    "own",
    "own",
    "own twice",
    "own twice at once",
    "a bystander session",
    "the other principal's session",
    "the other principal's token",
    "an unknown session",
    "no session",
    "a batch",
    "a version not spoken",
    "with the call's cancellation",
    "with the session's DELETE",
]
BOGUS_IDS = ["huge", "negative", "a string", "early", "early", "early"]


@dataclass(frozen=True)
class Step:
    kind: str
    a: int = 0
    b: int = 0
    c: int = 0
    plan: tuple[str, ...] = ()


plans = st.lists(st.text("fu", min_size=1, max_size=3), min_size=1, max_size=2).map(tuple)
indices = st.integers(0, 50)
calls = st.builds(Step, st.just("call"), indices, plan=plans)
any_answers = st.builds(
    Step, st.just("answer"), indices, st.integers(0, len(REPLIES) - 1), st.integers(0, len(ROUTES) - 1)
)
good_answers = st.builds(Step, st.just("answer"), indices, st.integers(0, 2), st.integers(0, 2))
steps = st.one_of(
    calls,
    any_answers,
    any_answers,
    any_answers,
    good_answers,
    st.builds(Step, st.just("bogus"), indices, st.integers(0, len(BOGUS_IDS) - 1), st.integers(0, 2)),
    st.builds(Step, st.just("cancel"), indices, st.integers(0, 3), st.integers(0, 1)),
    st.builds(Step, st.just("delete"), indices),
    st.builds(Step, st.just("get"), indices, st.integers(0, 2)),
    st.builds(Step, st.just("drop"), indices),
    st.builds(Step, st.just("resume"), indices),
    st.builds(Step, st.just("pause"), st.integers(0, 3)),
    st.builds(Step, st.just("json"), indices, st.integers(0, 1), st.integers(0, 1), plan=plans),
)


@dataclass(frozen=True)
class Script:
    """The working sessions' principals (the bystanders are one per principal), then the steps:
    a few calls first, so that most steps find questions to answer."""

    principals: tuple[str, ...]
    steps: tuple[Step, ...]


scripts = st.builds(
    Script,
    st.lists(st.sampled_from(PRINCIPALS), min_size=1, max_size=3).map(tuple),
    st.builds(
        lambda first, rest: (*first, *rest),
        st.lists(calls, min_size=1, max_size=4),
        st.lists(steps, min_size=4, max_size=30),
    ),
)


def pick(items: list[Any], which: int) -> Any:
    return items[which % len(items)] if items else None


# -- the steps -------------------------------------------------------------------------------------


class Player:
    """Plays a :class:`Script`'s steps on a :class:`Hunt`."""

    def __init__(self, hunt: Hunt) -> None:
        self.hunt = hunt

    def questions(self, which: int, waiting_first: bool) -> Question | None:
        every = [q for call in self.hunt.calls for q in call.questions]
        waiting = [q for q in every if self.hunt.must_take(q)]
        chosen: Question | None = pick(waiting if waiting_first and waiting else every, which)
        return chosen

    async def call(self, step: Step) -> None:
        session = pick(self.hunt.working(), step.a)
        if len(session.calls) >= MAX_CALLS_PER_SESSION:
            return
        call = await self.hunt.call(session, list(step.plan))
        if call is not None:  # its first question (or its end), so that answers have something to take
            await self.hunt.until(
                lambda: bool(call.questions) or call.ended, f"{call.label}: its first question"
            )

    async def answer(self, step: Step) -> None:
        question = self.questions(step.a, waiting_first=step.a % 4 != 3)
        if question is None:
            return
        reply_kind = REPLIES[step.b]
        route = ROUTES[step.c]
        if question.kind == "u" and reply_kind.startswith("invalid:"):
            reply_kind = "accept"  # a URL answer has no content to be invalid
        if reply_kind in ("accept", "decline", "cancel"):
            reply = valid_reply(question, reply_kind)
        elif reply_kind == "error":
            reply = {"error": {"code": -1, "message": "User rejected the request"}}
        elif reply_kind.startswith("invalid:"):
            reply = {"result": INVALID_CONTENT[reply_kind.split(":", 1)[1]]}
        elif reply_kind.startswith("with content:"):
            reply = {"result": WITH_CONTENT[reply_kind.split(":", 1)[1]]}
        else:
            reply = {"result": MALFORMED[reply_kind.split(":", 1)[1]][0]}
        event(f"answer: {route}")
        note(f"answer {question.call.label} q{question.id} ({question.key}) {reply_kind} via {route}")
        await self.send(question, reply, route)

    async def send(self, question: Question, reply: dict[str, Any], route: str) -> None:
        hunt = self.hunt
        session = question.call.session
        body = {"jsonrpc": "2.0", "id": question.id, **reply}
        what = f"answer {question.call.label} q{question.id} via {route}"
        other = PRINCIPALS[1 - PRINCIPALS.index(session.principal)]
        if route == "own":
            hunt.taken_or_refused(question, await hunt.post(session, body, what), reply)
        elif route == "own twice":
            first = await hunt.post(session, body, what)
            hunt.taken_or_refused(question, first, reply)
            second = await hunt.post(session, body, what + " (again)")
            if first.status == 202:
                hunt.refused(second, 400, "no question of this session waits")
            else:
                hunt.taken_or_refused(question, second, reply)
        elif route == "own twice at once":
            must = hunt.must_take(question)
            both = await asyncio.gather(hunt.post(session, body, what), hunt.post(session, body, what))
            taken = [reply_ for reply_ in both if reply_.status == 202]
            assert len(taken) <= 1, both
            if must:
                assert len(taken) == 1, both
            for refusal in [reply_ for reply_ in both if reply_.status != 202]:
                hunt.refused(refusal, 404 if session.deleted else 400, "")
            if taken:
                assert taken[0].body == b""
                outcome_of(question, reply)
        elif route == "a bystander session":
            refused = await hunt.post(hunt.bystander(session.principal), body, what)
            hunt.refused(refused, 400, "no question of this session waits")
        elif route == "the other principal's session":
            refused = await hunt.post(hunt.bystander(other), body, what)
            hunt.refused(refused, 400, "no question of this session waits")
        elif route == "the other principal's token":
            refused = await hunt.post(session, body, what, authorization=f"Bearer {other}")
            hunt.refused(refused, 404, "initialize again")
        elif route == "an unknown session":
            refused = await hunt.post(session, body, what, **{"mcp-session-id": "0badc0de.unknown"})
            hunt.refused(refused, 404, "initialize again")
        elif route == "no session":
            refused = await hunt.post(session, body, what, **{"mcp-session-id": None})
            hunt.refused(refused, 400, "Mcp-Session-Id header is required")
        elif route == "a batch":
            refused = await hunt.post(session, [body], what)
            hunt.refused(refused, 400, "batches are not supported")
        elif route == "a version not spoken":
            refused = await hunt.post(session, body, what, **{"mcp-protocol-version": "2025-03-26"})
            hunt.refused(refused, 400, "MCP-Protocol-Version 2025-03-26")
        elif route == "with the call's cancellation":
            await self.racing_cancel(question, body, reply, what)
        else:
            await self.racing_delete(question, body, reply, what)

    async def racing_cancel(
        self, question: Question, body: dict[str, Any], reply: dict[str, Any], what: str
    ) -> None:
        hunt = self.hunt
        call = question.call
        session = call.session
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call.request["id"]},
        }
        answered, cancelled = await asyncio.gather(
            hunt.post(session, body, what), hunt.post(session, cancel, f"cancel {call.label}")
        )
        if session.deleted:
            hunt.refused(answered, 404, "initialize again")
            hunt.refused(cancelled, 404, "initialize again")
            return
        assert cancelled.status == 202, cancelled
        assert cancelled.body == b"", cancelled
        if answered.status == 202:
            assert hunt.may_take(question), answered
            outcome_of(question, reply)
        else:
            event("an answer racing the call's cancellation was refused")
            hunt.refused(answered, 400, "no question of this session waits")
        hunt.cancelled(call)

    async def racing_delete(
        self, question: Question, body: dict[str, Any], reply: dict[str, Any], what: str
    ) -> None:
        hunt = self.hunt
        session = question.call.session
        answered, deleted = await asyncio.gather(
            hunt.post(session, body, what),
            bounded(f"DELETE {session.label}", hunt.http.delete(hunt.url, headers=hunt.headers(session))),
        )
        if session.deleted:
            hunt.refused(deleted, 404, "initialize again")
            hunt.refused(answered, 404, "initialize again")
            return
        assert deleted.status == 200, deleted
        if answered.status == 202:
            assert hunt.may_take(question), answered
            outcome_of(question, reply)
        elif answered.status == 404:
            event("an answer racing its session's DELETE came after it")
            answered.error()
        else:
            hunt.refused(answered, 400, "no question of this session waits")
        hunt.deleted(session)

    async def bogus(self, step: Step) -> None:
        hunt = self.hunt
        session = pick(self.hunt.working(), step.a)
        kind = BOGUS_IDS[step.b]
        question_id: object = {
            "huge": 10**15,
            "negative": -1 - step.c,
            "a string": str(session.next_question_id()),
            "early": session.next_question_id() + step.c,
        }[kind]
        reply = {"result": {"action": "decline"}}
        posted = await hunt.post(
            session, {"jsonrpc": "2.0", "id": question_id, **reply}, f"answer id {question_id!r}"
        )
        if session.deleted:
            hunt.refused(posted, 404, "initialize again")
        elif kind != "early":
            hunt.refused(posted, 400, "no question of this session waits")
        elif posted.status == 202:
            assert isinstance(question_id, int)
            session.early[question_id] = reply  # taken: its question must come, and take it
        else:
            event("an answer before its question was sent was refused")
            hunt.refused(posted, 400, "no question of this session waits")

    async def cancel(self, step: Step) -> None:
        hunt = self.hunt
        if step.b == 3:
            await self.call_then_cancel_at_once(step)
            return
        call = pick(hunt.calls, step.a)
        target = 987_654 if call is None or step.b == 2 else call.request["id"]
        session = pick(hunt.working(), step.a) if call is None else call.session
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": target}}
        posted = await hunt.post(session, cancel, f"cancel {target}")
        if session.deleted:
            hunt.refused(posted, 404, "initialize again")
            return
        assert posted.status == 202, posted
        assert posted.body == b"", posted
        if call is not None and target == call.request["id"]:
            hunt.cancelled(call)

    async def call_then_cancel_at_once(self, step: Step) -> None:
        """A call's POST and its cancellation at once (bug 1), maybe while the server is busy
        (the ``hog`` tool blocks its loop 0.1 s: both are then read in one go)."""
        hunt = self.hunt
        session = pick(hunt.working(), step.a)
        if session.deleted or len(session.calls) >= MAX_CALLS_PER_SESSION:
            return
        hogging = None
        if step.c:
            hog = session.client.request("tools/call", {"name": "hog", "arguments": {"seconds": 0.1}})
            headers = hunt.headers(session, accept="application/json")
            hogging = asyncio.ensure_future(hunt.http.post(hunt.url, json=hog, headers=headers))
            await asyncio.sleep(0.03)
        request_id = session.client.request("ping")["id"] + 1  # the id the call will take
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        calling = asyncio.ensure_future(hunt.call(session, ["f"]))
        if hogging is not None:
            await asyncio.sleep(0.02)  # the call's POST is written first; both wait for the loop
        if hogging is None:
            posted = await hunt.post(session, cancel, f"cancel {request_id} at once")
        else:  # on a new connection, as the call's: the server reads both after the same accept
            async with httpx.AsyncClient(timeout=WITHIN) as other:
                sent = await other.post(hunt.url, json=cancel, headers=hunt.headers(session))
                posted = Reply(sent.status_code, sent.content, f"cancel {request_id} at once")
        started = await calling
        event(f"a call and its cancellation at once{' (busy server)' if hogging else ''}")
        if hogging is not None:
            assert (await hogging).status_code == 200
        assert posted.status == 202, posted
        assert started is not None
        assert started.request["id"] == request_id
        # The cancellation came first (the call was not there yet: ignored, the call goes on) or
        # second (the call ends, its question withdrawn if it was sent): the model allows both,
        # and the call must either ask or end, never hang with neither (bug 1).
        started.cancelled = True
        await hunt.until(
            lambda: bool(started.questions) or started.ended, f"{started.label}: a question or its end"
        )

    async def json(self, step: Step) -> None:
        """A call whose POST accepts only JSON: one that asks fails at once with -32600 (no way to
        the client), one that asks nothing answers, one cancelled while it runs is stopped and
        answered with -32800 (bug 2; unless the cancellation was read before the call, and
        ignored)."""
        hunt = self.hunt
        session = pick(hunt.working(), step.a)
        label = f"j{step.a}"
        asks = step.b == 0
        name, arguments = (
            ("ask", {"label": label, "plan": list(step.plan)})
            if asks
            else ("nap", {"label": label, "seconds": 0.2})
        )
        request = session.client.request("tools/call", {"name": name, "arguments": arguments})
        headers = hunt.headers(session, accept="application/json")
        posting = asyncio.ensure_future(
            bounded(f"JSON call {label}", hunt.http.post(hunt.url, json=request, headers=headers))
        )
        cancelling = step.c and not asks and not session.deleted
        if cancelling:
            await asyncio.sleep(0.05)
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request["id"]},
            }
            cancelled = await hunt.post(session, cancel, f"cancel JSON call {label}")
            assert cancelled.status == 202, cancelled
        reply = await posting
        if session.deleted:
            assert reply.status == 404, reply
            assert reply.error()["id"] == request["id"], reply  # (a request's own id, this time)
            return
        assert reply.status == 200, reply
        message = json.loads(reply.body)
        assert message["id"] == request["id"], reply
        if asks:
            assert message["error"]["code"] == -32600, reply
            assert "text/event-stream" in message["error"]["message"], reply
        elif cancelling and "error" in message:
            event("a JSON-reply call cancelled while it ran")
            assert message["error"] == {"code": -32800, "message": "Request cancelled"}, reply
        else:
            assert message["result"]["content"][0]["text"] == f"{label} napped", reply

    async def delete(self, step: Step) -> None:
        hunt = self.hunt
        session = pick(hunt.working(), step.a)
        deleted = await bounded(
            f"DELETE {session.label}", hunt.http.delete(hunt.url, headers=hunt.headers(session))
        )
        if session.deleted:
            hunt.refused(deleted, 404, "initialize again")
            return
        assert deleted.status == 200, deleted
        hunt.deleted(session)
        # Its streams end (its calls' and its GET stream), within the bound.
        await hunt.until(
            lambda: (
                all(s.ended or s.dropped for c in session.calls for s in c.streams)
                and all(g.ended or g.dropped for g in session.gets)
            ),
            f"the streams of {session.label} after its DELETE",
        )

    async def get(self, step: Step) -> None:
        hunt = self.hunt
        session = pick(hunt.sessions, step.a)
        if step.b == 1:  # closed
            for get in [g for g in session.gets if g.status == 200 and not (g.ended or g.dropped)]:
                await hunt.drop(get)
            return
        if session.deleted:
            refused = await hunt.get(session)
            assert refused.status == 404, refused
            Reply(404, refused.body, "GET").error()
            return
        if session.get_open:
            refused = await hunt.get(session)
            assert refused.status == 409, refused
            Reply(409, refused.body, "GET").error()
            return
        if step.b == 2:  # twice at once: one stream, one 409
            both = await asyncio.gather(hunt.get(session), hunt.get(session))
            assert sorted(s.status or 0 for s in both) in ([200, 409], [409, 409]), [s.status for s in both]
            for refused in [s for s in both if s.status == 409]:
                Reply(409, refused.body, "GET").error()
            if any(s.status == 200 for s in both):
                return
        await self.opened(session)

    async def opened(self, session: SessionModel) -> None:
        """The GET stream opens; a 409 only for as long as the server has not seen the last one's
        connection go (bounded)."""
        hunt = self.hunt
        deadline = asyncio.get_running_loop().time() + 2.0
        while True:
            stream = await hunt.get(session)
            if stream.status == 200:
                return
            assert stream.status == 409, (stream.status, stream.body)
            event("a GET refused 409 just after the last one closed")
            assert asyncio.get_running_loop().time() < deadline, "the GET stream never freed after its close"
            await asyncio.sleep(0.05)

    async def drop(self, step: Step) -> None:
        hunt = self.hunt
        hunt.sync()
        call = pick([c for c in hunt.calls if c.connected and c.last_id is not None], step.a)
        if call is not None:
            await hunt.drop(call.streams[-1])
            hunt.log.append(f"{call.label}: dropped")

    async def resume(self, step: Step) -> None:
        hunt = self.hunt
        hunt.sync()
        resumable = [c for c in hunt.calls if c.streams[-1].dropped and c.last_id is not None and not c.ended]
        call = pick(resumable, step.a)
        if call is not None:
            await hunt.resume(call)


async def play(hunt: Hunt, script: Script) -> None:
    for principal in PRINCIPALS:
        await hunt.open(principal, bystander=True)
    for principal in script.principals:
        await hunt.open(principal)
    player = Player(hunt)
    for step in script.steps:
        event(f"step: {step.kind}")
        if step.kind == "pause":
            await asyncio.sleep(0.02 * step.a)
        else:
            await getattr(player, step.kind)(step)
        hunt.sync()
    await settle(hunt)


async def settle(hunt: Hunt) -> None:
    """Every call still running is answered to its end (picked up again if dropped); each call
    ended as the model says; every session is deleted, and its streams end."""
    deadline = asyncio.get_running_loop().time() + 4 * WITHIN
    while True:
        hunt.sync()
        pending = [c for c in hunt.calls if c.running]
        if not pending:
            break
        assert asyncio.get_running_loop().time() < deadline, [c.label for c in pending]
        for call in pending:
            hunt.sync()  # (what came while the last call was answered)
            if call.running and call.streams[-1].dropped:
                await hunt.resume(call)
            for question in [q for q in call.questions if hunt.may_take(q)]:
                reply = valid_reply(question, "accept")
                body = {"jsonrpc": "2.0", "id": question.id, **reply}
                posted = await hunt.post(call.session, body, f"settle {call.label} q{question.id}")
                hunt.taken_or_refused(question, posted, reply)
        await asyncio.sleep(0.01)
    for call in hunt.calls:
        note(f"{call.label}: response {call.response}")
        for stream in call.streams:
            assert stream.broken is None, (call.label, stream.broken)
        if call.session.deleted and not call.ended:
            continue  # dropped, then its session ended: nothing to read any more
        assert call.ended, call.label
        if not (call.cancelled or call.deleted):
            assert call.response is not None, (call.label, "a call that ended without its response")
        elif call.response is None:
            event("a call cancelled or deleted ended without a response")
    for session in hunt.sessions:
        if session.live:
            deleted = await bounded(
                f"DELETE {session.label}", hunt.http.delete(hunt.url, headers=hunt.headers(session))
            )
            assert deleted.status == 200, deleted
            hunt.deleted(session)
    await hunt.until(
        lambda: (
            all(g.ended or g.dropped for s in hunt.sessions for g in s.gets)
            and all(s.task is None or s.task.done() or s.dropped for c in hunt.calls for s in c.streams)
        ),
        "every stream's end once its session is deleted",
    )


async def fresh_session_works(http: httpx.AsyncClient, url: str) -> None:
    """The server still serves: a new session's call asks, takes its answer and answers."""
    session = Session(http, url, "carol")
    await session.open()
    call = session.request("tools/call", {"name": "ask", "arguments": {"label": "fresh", "plan": ["f"]}})
    async with asyncio.timeout(WITHIN):
        _, final = await answer_questions(
            session, call, lambda params: {"action": "accept", "content": {"name": "x"}}
        )
    assert final is not None
    assert final["result"]["content"][0]["text"] == "fresh: r0q0=accept:x"
    ended = await http.delete(url, headers=session.headers())
    assert ended.status_code == 200


def new_log(server: ServerProcess, offset: int) -> str:
    text = server.log_text()[offset:]
    for bad in BAD_LOG:
        assert bad not in text, text[-4000:]
    return text


@fuzz_settings(EXAMPLES)
@given(script=scripts)
async def test_any_client_behaviour_ends_every_call_once_and_keeps_sessions_apart(
    server: ServerProcess, http: httpx.AsyncClient, script: Script
) -> None:
    offset = len(server.log_text())
    hunt = Hunt(http, server.url)
    try:
        await play(hunt, script)
        await fresh_session_works(http, server.url)
    except BaseException:
        print("\n".join(hunt.log))
        raise
    finally:
        for call in hunt.calls:
            for stream in call.streams:
                await hunt.drop(stream)
        for session in hunt.sessions:
            for get in session.gets:
                await hunt.drop(get)
            if session.live:
                await http.delete(server.url, headers=hunt.headers(session))
    new_log(server, offset)


# -- the bugs found, each reduced to its smallest deterministic reproduction ----------------------


@dataclass
class RawPost:
    """A POST written on a connection opened beforehand (so that two of them can be made to
    reach the server in one read of its event loop), its reply read raw."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    port: int

    @classmethod
    async def connect(cls, port: int) -> RawPost:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, port)

    def write(self, headers: dict[str, str], message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        head = [b"POST /mcp HTTP/1.1", f"host: 127.0.0.1:{self.port}".encode()]
        head += [f"{name}: {value}".encode() for name, value in headers.items()]
        head.append(b"content-length: %d" % len(body))
        self.writer.write(b"\r\n".join(head) + b"\r\n\r\n" + body)

    async def until_end(self, within: float) -> bytes | None:
        """The chunked reply up to its last chunk; None if it has not ended within ``within``."""
        got = b""
        try:
            async with asyncio.timeout(within):
                while not got.endswith(b"\r\n0\r\n\r\n"):
                    chunk = await self.reader.read(65536)
                    if not chunk:
                        break
                    got += chunk
        except TimeoutError:
            return None
        return got

    def close(self) -> None:
        self.writer.close()


# Bug 1: a call cancelled before its task first ran never ended. http_legacy._call started the
# call as a task whose coroutine cleaned up in a try/finally (the stream's end, the call out of
# session.calls). A notifications/cancelled that the event loop takes before the task's first
# step (its POST and the call's in one read: a busy loop, a client that cancels right after
# calling) cancels it there, and asyncio then never enters the coroutine (its finally never
# runs). So the call's stream never ended (the client waited for ever), its id stayed "already in
# use in this session", its place counted against max_calls for good (a few such races and the
# session took no call: 429), and the session was never idle. The clean-up is now a done
# callback (http_legacy._start). With the hog tool blocking the loop for 0.2 s, both POSTs are
# read in one batch, every time, on uvloop and asyncio alike.
async def test_regression_a_call_cancelled_as_it_arrives_ends(
    server: ServerProcess, http: httpx.AsyncClient
) -> None:
    session = Session(http, server.url, "alice")
    await session.open()
    assert server.port is not None
    calling, cancelling = await RawPost.connect(server.port), await RawPost.connect(server.port)
    try:
        hog = session.request("tools/call", {"name": "hog", "arguments": {"seconds": 0.2}})
        hogging = asyncio.ensure_future(
            http.post(server.url, json=hog, headers=session.headers(accept="application/json"))
        )
        await asyncio.sleep(0.05)  # the loop is blocked now: what comes next is read in one go
        call = session.request("tools/call", {"name": "ask", "arguments": {"label": "x", "plan": ["f"]}})
        calling.write(session.headers(), call)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call["id"]}}
        cancelling.write(session.headers(), cancel)
        assert (await hogging).status_code == 200
        ended = await calling.until_end(3.0)
        again = await http.post(server.url, json=call, headers=session.headers(accept="application/json"))
        # The stream of the cancelled call ends (no response: docs/protocol.md), and its id is free.
        assert ended is not None, "the cancelled call's stream never ended"
        assert b'"result"' not in ended
        assert "already in use" not in again.text, again.text
    finally:
        calling.close()
        cancelling.close()
        await http.delete(server.url, headers=session.headers())


@pytest.fixture(scope="module")
def one_call_server(server_loop: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The server with one call at a time per session (``max_calls=1``)."""
    running = start(tmp_path_factory.mktemp("one-call"), "--max-calls", "1")
    try:
        yield running
    finally:
        running.stop()


# Bug 2: a call whose POST accepts only application/json was no call of its session:
# http_legacy.post ran it in the request's own task, registered nowhere. So such calls (a tool
# that asks nothing needs no stream; a client may well send Accept: application/json only) were
# not bounded by max_calls (docs/protocol.md: "calls running at once in one session ... 429"),
# the bound bypassed by one header; and notifications/cancelled did not stop them, nor did DELETE
# ("The session ends: its calls are cancelled"): the handler ran to its end and its result was
# sent after the session was gone. Every call is a task of its session now; a cancelled one whose
# POST waits for JSON gets -32800 "Request cancelled" (what the official SDKs answer).
async def test_regression_json_reply_calls_count_against_max_calls(
    one_call_server: ServerProcess, http: httpx.AsyncClient
) -> None:
    session = Session(http, one_call_server.url, "alice")
    await session.open()
    try:
        naps = [
            session.request("tools/call", {"name": "nap", "arguments": {"label": f"n{i}", "seconds": 0.5}})
            for i in range(2)
        ]
        headers = session.headers(accept="application/json")
        replies = await asyncio.gather(
            *(http.post(one_call_server.url, json=nap, headers=headers) for nap in naps)
        )
        assert sorted(reply.status_code for reply in replies) == [200, 429], [r.text for r in replies]
    finally:
        await http.delete(one_call_server.url, headers=session.headers())


@pytest.mark.parametrize("how", ["cancel", "delete"])
async def test_regression_a_cancelled_json_reply_call_stops(
    server: ServerProcess, http: httpx.AsyncClient, how: str
) -> None:
    """Stopped by ``notifications/cancelled`` or by the session's end (DELETE): no result for it,
    and its POST gets -32800."""
    session = Session(http, server.url, "alice")
    await session.open()
    try:
        nap = session.request("tools/call", {"name": "nap", "arguments": {"label": "n", "seconds": 1.0}})
        napping = asyncio.ensure_future(
            http.post(server.url, json=nap, headers=session.headers(accept="application/json"))
        )
        await asyncio.sleep(0.3)
        if how == "cancel":
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": nap["id"]},
            }
            await session.post(cancel, expect=202)
        else:
            assert (await http.delete(server.url, headers=session.headers())).status_code == 200
        reply = await asyncio.wait_for(napping, WITHIN)
        assert reply.json() == {
            "jsonrpc": "2.0",
            "id": nap["id"],
            "error": {"code": -32800, "message": "Request cancelled"},
        }
    finally:
        await http.delete(server.url, headers=session.headers())
