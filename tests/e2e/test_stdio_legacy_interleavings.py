"""stdio, 2025-11-25: several calls at once, driven by a drawn schedule, against a real server.

Each example starts ``e2e_server.py --stdio``, runs ``initialize``, and then plays a schedule that
hypothesis draws, without waiting for the server between steps unless a step says so: calls that
ask forms one after the other (``ask_forms``), two at once (``ask_pair``), nothing
(``progress``) or nothing for a while (``nap``), some with a progress token; answers to the
server's ``elicitation/create`` (accept fitting, accept not fitting, decline, cancel, a JSON-RPC
error, an ``action`` that is none), sometimes sent twice, sent late or to an id never asked;
``notifications/cancelled`` for a call right away, once it asked, once it answered, twice, or
for an id that names nothing; pings; ``notifications/initialized`` late or twice; progress from
the client. Lines go out one write each, or (drawn) held back and written together at the next
wait, so that the server reads them in one go (what makes most races here). It ends by
answering what is left and closing stdin, or by closing stdin at once.

A reader checks every line the server writes as it comes, against a model of what must happen
(docs/protocol.md, "2025-11-25 sessions", and the spec's cancellation rules):

* every line is one JSON-RPC 2.0 message;
* a response answers a request of the client's that has no answer yet (never a notification);
  once the ping sent right after a ``notifications/cancelled`` is answered (the server has read
  the cancellation), nothing more comes for that call: no response, question or progress;
* the server's requests have ids of their own that never repeat, and no question goes out
  before ``notifications/initialized``; a call's questions come in the order its handler asks
  them (the next round only once every question of the last one is answered, a form asked again
  only after an answer that did not fit it), each message naming its call;
* a question is withdrawn (``notifications/cancelled`` with its id) only when its call was
  cancelled or another question of its round failed, at most once, and not when the server
  read its answer before what ended the call; every question of a cancelled or failed call that
  the client never answered is withdrawn;
* progress only for a running call's token, before its response (a call still running at a
  sudden EOF may lose the rest: the session is over);
* the server sends no ``ping`` of its own (docs/protocol.md); one it did would be answered or
  not, as drawn;
* every call that is not cancelled ends with exactly one response, and it is the one its
  answers call for (the text of the answers, the tool error for a client error or for three
  answers that did not fit, ``-32602`` for an ``action`` that is none; at a sudden EOF, the
  tool error saying the client went away for a call still waiting on it, for an answer or for
  ``notifications/initialized``);
* nothing stalls (every wait is bounded), and when stdin closes the process exits 0 with no
  traceback and no work left running.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.e2e.test_stdio import StdioPeer, running_peer
from tests.e2e.test_stdio_legacy import LEGACY, initialize, nothing_within, opened

EXAMPLES = 10  # per event loop; each example is one server process
WITHIN = 10.0  # the longest the server may take for anything
REFUSAL = {"code": -32001, "message": "the user closed the dialog"}
REFUSED = f"the client answered elicitation/create with error {REFUSAL['code']}: {REFUSAL['message']}"
QUESTION = re.compile(r"(c\d+) form (\d)\?(\n\nThe previous answer was not accepted: .*)?", re.DOTALL)

Kind = Literal["fit", "unfit", "decline", "cancel", "error", "invalid"]
FAILING = ("error", "invalid")
KINDS: tuple[Kind, ...] = ("fit", "unfit", "decline", "cancel", "error", "invalid")


# -- the schedule ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Start:
    """A ``tools/call``: ``ask_forms`` (``count`` forms), ``ask_pair``, ``progress`` or ``nap``
    (``count`` tenths of a second)."""

    tool: Literal["ask_forms", "ask_pair", "progress", "nap"]
    count: int = 1
    token: Literal["none", "text", "number"] = "none"
    text_id: bool = False


@dataclass(frozen=True)
class Answer:
    """Answer an open question (the ``pick``-th), waiting a little for one if one is coming;
    ``again``: answer it a second time."""

    kind: Kind
    pick: int = 0
    again: Kind | None = None


@dataclass(frozen=True)
class LateAnswer:
    """Answer a question already answered or withdrawn, or (``never_asked``, or none such yet)
    an id the server never used."""

    kind: Kind
    pick: int = 0
    never_asked: bool = False


@dataclass(frozen=True)
class Cancel:
    """``notifications/cancelled`` for the ``pick``-th call: ``now``, once it ``asked`` (or ran),
    or once it ``answered`` (or waits on the client); ``twice``: send it again."""

    pick: int = 0
    when: Literal["now", "asked", "answered"] = "now"
    twice: bool = False


@dataclass(frozen=True)
class CancelUnknown:
    """``notifications/cancelled`` for an id no request of the client's has."""

    text: bool = False


@dataclass(frozen=True)
class Ping:
    pass


@dataclass(frozen=True)
class Initialized:
    """``notifications/initialized`` (late, when the schedule held it back; else a second one)."""


@dataclass(frozen=True)
class ClientProgress:
    """``notifications/progress`` from the client, for a token the server never gave."""


@dataclass(frozen=True)
class Pause:
    tenths: int = 1


Step = Start | Answer | LateAnswer | Cancel | CancelUnknown | Ping | Initialized | ClientProgress | Pause


# -- the model ------------------------------------------------------------------------------------
@dataclass
class Question:
    id: Any
    call: Call
    key: int
    retry: bool
    answers: list[tuple[Kind, int, str]] = field(default_factory=list)  # kind, stdin line, name
    withdrawn: bool = False

    @property
    def answer(self) -> tuple[Kind, int, str] | None:
        """The answer the server reads (a second one finds nothing waiting)."""
        return self.answers[0] if self.answers else None


@dataclass
class Call:
    number: int
    id: Any
    tool: str
    count: int
    token: Any
    sent_at: float
    answered_at: float | None = None  # when its response was read
    questions: list[Question] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    progress: list[Any] = field(default_factory=list)
    cancel_line: int | None = None  # the stdin line of its first notifications/cancelled
    cancelled: bool = False  # that notification went before its response was read
    cancel_read: bool = False  # the ping sent after it is answered: the server has read it
    # The flow of its questions (ask_forms, ask_pair): the keys the current round asks, the
    # questions of it that came, invalid answers per key, what each key was answered, failures.
    expect: set[int] = field(default_factory=set)
    round: list[Question] = field(default_factory=list)
    attempts: dict[int, int] = field(default_factory=dict)
    said: dict[int, str] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    too_many: set[int] = field(default_factory=set)
    done: bool = False
    fail_line: int | None = None  # the stdin line of the first failing answer of its round

    @property
    def label(self) -> str:
        return f"c{self.number}"

    @property
    def asks(self) -> bool:
        return self.tool in ("ask_forms", "ask_pair")

    def question_coming(self) -> bool:
        """The server owes this call a question (it has every answer it needs for the next)."""
        return (
            self.asks
            and not self.done
            and not self.responses
            and self.cancel_line is None
            and len(self.round) < len(self.expect)
        )


class Violation(AssertionError):
    pass


class Session:
    """The client: writes the schedule's lines, reads and checks every line of the server's."""

    def __init__(self, peer: StdioPeer, *, answer_pings: bool, batched: bool) -> None:
        self.peer = peer
        self.answer_pings = answer_pings
        self.batched = batched
        self.unsent: list[bytes] = []
        self.transcript: list[str] = []
        self.problems: list[str] = []
        self.lines_out = 0
        self.calls: list[Call] = []
        self.by_id: dict[Any, Call] = {}
        self.by_token: dict[tuple[type, Any], Call] = {}
        self.questions: dict[Any, Question] = {}
        self.server_ids: set[Any] = set()
        self.pings: dict[str, Call | None] = {}  # our pings (markers after a cancellation: their call)
        self.answered_pings: set[str] = set()
        self.initialize_answer: dict[str, Any] | None = None
        self.initialized_at: float | None = None
        self.closed = False  # stdin closed (the end)
        self.eof = False
        self.changed = asyncio.Condition()
        self.replies: set[asyncio.Task[int]] = set()  # answers to the server's pings, being sent
        self.names = itertools.count()
        self.ids = itertools.count()
        self.reader = asyncio.get_running_loop().create_task(self.read())

    # -- writing -----------------------------------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> int:
        """Write ``message`` (held back with the next ones until a wait, when batched); its
        line number on stdin."""
        self.lines_out += 1
        self.transcript.append(f"→ {json.dumps(message)}")
        self.unsent.append(json.dumps(message).encode())
        if not self.batched:
            await self.flush()
        return self.lines_out

    async def flush(self) -> None:
        """Write the lines held back, in one write: the server reads them at once."""
        if self.unsent:
            lines, self.unsent = self.unsent, []
            await self.peer.send_raw(b"\n".join(lines))

    async def ping(self, marks: Call | None = None) -> None:
        ping_id = f"{'mark' if marks else 'ping'}-{next(self.ids)}"
        self.pings[ping_id] = marks
        await self.send({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})

    async def start(self, step: Start) -> Call:
        number = len(self.calls) + 1
        token: Any = {"none": None, "text": f"tok-{number}", "number": 1000 + number}[step.token]
        call = Call(
            number,
            f"call-{number}" if step.text_id else number,
            step.tool,
            step.count,
            token,
            time.monotonic(),
        )
        arguments: dict[str, dict[str, Any]] = {
            "ask_forms": {"label": call.label, "count": step.count},
            "ask_pair": {"label": call.label},
            "progress": {},
            "nap": {"seconds": step.count / 10},
        }
        call.expect = {0, 1} if step.tool == "ask_pair" else {0}
        params: dict[str, Any] = {"name": step.tool, "arguments": arguments[step.tool]}
        if token is not None:
            params["_meta"] = {"progressToken": token}
            self.by_token[(type(token), token)] = call
        self.calls.append(call)
        self.by_id[call.id] = call
        await self.send({"jsonrpc": "2.0", "id": call.id, "method": "tools/call", "params": params})
        return call

    async def answer(self, question: Question, kind: Kind) -> None:
        name = f"N{next(self.names)}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": question.id}
        if kind == "error":
            message["error"] = REFUSAL
        else:
            message["result"] = {
                "fit": {"action": "accept", "content": {"name": name}},
                "unfit": {"action": "accept", "content": {"name": 7}},
                "decline": {"action": "decline"},
                "cancel": {"action": "cancel"},
                "invalid": {"action": "maybe"},
            }[kind]
        first = not question.answers and not question.withdrawn
        line = self.lines_out + 1
        question.answers.append((kind, line, name))
        if first:
            self.answered(question, kind, line)
        await self.send(message)

    async def cancel(self, call: Call, twice: bool) -> None:
        line = await self.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": call.id}}
        )
        if call.cancel_line is None:
            call.cancel_line = line
            call.cancelled = not call.responses
        if twice:
            await self.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": call.id, "reason": "again"},
                }
            )
        await self.ping(marks=call)

    # -- the flow of a call's questions --------------------------------------------------------------
    def answered(self, question: Question, kind: Kind, line: int) -> None:
        """The server will read ``kind`` for ``question``: its call's flow goes on."""
        call = question.call
        if question not in call.round:
            return
        if kind in FAILING:
            # The round fails (no round follows); the server may read another failing answer of
            # it before it ends.
            if not call.responses:
                call.failed.add(kind)
            if call.fail_line is None:
                call.fail_line = line
            call.done = True
            return
        if call.done or len(call.round) < len(call.expect) or any(q.answer is None for q in call.round):
            return
        unfit = set()
        for asked in call.round:
            assert asked.answer is not None
            got, _, name = asked.answer
            if got == "unfit":
                call.attempts[asked.key] = call.attempts.get(asked.key, 0) + 1
                unfit.add(asked.key)
            else:
                call.said[asked.key] = f"accept:{name}" if got == "fit" else got
        call.round = []
        call.too_many = {key for key in unfit if call.attempts[key] >= 3}
        if call.too_many:
            call.expect, call.done = set(), True
        elif unfit:
            call.expect = unfit
        elif call.tool == "ask_forms" and len(call.said) < call.count:
            call.expect = {len(call.said)}
        else:
            call.expect, call.done = set(), True

    def expected(self, call: Call, *, sudden_end: bool) -> set[str]:
        """What the call's response may be (see :meth:`outcome`)."""
        if call.tool == "progress":
            allowed = {"text:progressed"}
        elif call.tool == "nap":
            allowed = {"text:napped"}
        elif call.failed:
            allowed = {f"fail:{kind}" for kind in call.failed}
        elif call.too_many:
            allowed = {f"too many:{key}" for key in call.too_many}
        elif call.done:
            allowed = {"text:" + " ".join(call.said[key] for key in sorted(call.said))}
        else:
            allowed = set()
        if sudden_end and not call.done and call.asks:
            allowed.add("gone")  # EOF ended the questions it waited for
        initialized = min(self.initialized_at or math.inf, call.answered_at or math.inf)
        if call.asks and initialized - call.sent_at > 4.5:
            allowed.add("not initialized")  # the 5 s grace for notifications/initialized ran out
        return allowed

    @staticmethod
    def outcome(call: Call, response: dict[str, Any]) -> str:
        if "error" in response:
            code, message = response["error"]["code"], response["error"]["message"]
            if code == -32602 and "action must be one of accept, decline, cancel" in message:
                return "fail:invalid"
            if code == -32600 and "has not sent notifications/initialized" in message:
                return "not initialized"
            return f"error {code}: {message}"
        result = response["result"]
        if "resultType" in result or set(result) != {"content", "isError"}:
            return f"not a 2025-11-25 tool result: {result}"
        text = result["content"][0]["text"]
        if not result["isError"]:
            return f"text:{text}"
        could_not = f"Tool {call.tool!r} could not finish: "
        if text == could_not + REFUSED:
            return "fail:error"
        if text in (could_not + "the client went away", could_not + "the client has gone away"):
            return "gone"
        invalid = re.fullmatch(rf"The answer to '{call.label} form (\d)\?' was invalid 3 times .*", text)
        if invalid:
            return f"too many:{invalid.group(1)}"
        return f"tool error: {text}"

    # -- reading -----------------------------------------------------------------------------------
    async def read(self) -> None:
        stdout = self.peer.process.stdout
        assert stdout is not None
        while True:
            raw = await stdout.readline()
            if not raw:
                break
            self.transcript.append(f"← {raw.decode(errors='replace').rstrip()}")
            try:
                self.check(raw)
            except Violation as problem:
                self.problems.append(str(problem))
            except Exception as exc:  # a message of a shape the checks did not expect
                self.problems.append(f"{type(exc).__name__}: {exc} in {raw!r}")
            async with self.changed:
                self.changed.notify_all()
        self.eof = True
        async with self.changed:
            self.changed.notify_all()

    def check(self, raw: bytes) -> None:
        if not raw.endswith(b"\n"):
            raise Violation(f"a last line without its newline: {raw!r}")
        try:
            message = json.loads(raw)
        except ValueError:
            raise Violation(f"not one JSON message per line: {raw!r}") from None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            raise Violation(f"not a JSON-RPC 2.0 message: {raw!r}")
        if "method" in message:
            if "id" in message:
                self.server_request(message)
            else:
                self.server_notification(message)
        else:
            self.response(message)

    def response(self, message: dict[str, Any]) -> None:
        if ("result" in message) == ("error" in message):
            raise Violation(f"a response needs exactly one of result and error: {message}")
        response_id = message.get("id")
        if response_id == "init":
            if self.initialize_answer is not None:
                raise Violation("initialize answered twice")
            self.initialize_answer = message
            return
        if isinstance(response_id, str) and response_id in self.pings:
            if response_id in self.answered_pings:
                raise Violation(f"ping {response_id} answered twice")
            if message != {"jsonrpc": "2.0", "id": response_id, "result": {}}:
                raise Violation(f"a ping answered with {message}")
            self.answered_pings.add(response_id)
            marked = self.pings[response_id]
            if marked is not None:
                marked.cancel_read = True
            event("server: answered a ping")
            return
        call = self.by_id.get(response_id) if isinstance(response_id, str | int) else None
        if call is None:
            raise Violation(f"a response to no request of the client's (a notification?): {message}")
        if call.responses:
            raise Violation(f"a second response for call {call.id}: {message}")
        if call.cancel_read:
            raise Violation(f"a response for call {call.id} after its cancellation was read: {message}")
        call.responses.append(message)
        call.answered_at = time.monotonic()
        if call.cancelled:
            event("server: a response crossed its cancellation")

    def server_request(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            raise Violation(f"a request id that is neither a string nor an integer: {message}")
        if request_id in self.server_ids:
            raise Violation(f"the server used its request id {request_id!r} twice")
        self.server_ids.add(request_id)
        method = message["method"]
        if method == "ping":
            event("server: sent a ping")
            if self.answer_pings and not self.closed:
                task = asyncio.get_running_loop().create_task(
                    self.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
                )
                self.replies.add(task)
                task.add_done_callback(self.replies.discard)
            return
        if method != "elicitation/create":
            raise Violation(f"a request the client did not expect: {message}")
        if self.initialized_at is None:
            raise Violation(f"a question before notifications/initialized: {message}")
        params = message["params"]
        if params.get("mode") != "form" or params.get("requestedSchema", {}).get("required") != ["name"]:
            raise Violation(f"not the tools' form: {message}")
        found = QUESTION.fullmatch(params["message"])
        call = None if found is None else next((c for c in self.calls if c.label == found.group(1)), None)
        if found is None or call is None:
            raise Violation(f"a question that names no call: {message}")
        if call.responses:
            raise Violation(f"a question for call {call.id} after its response: {message}")
        if call.cancel_read:
            raise Violation(f"a question for call {call.id} after its cancellation was read: {message}")
        question = Question(request_id, call, int(found.group(2)), found.group(3) is not None)
        asked = {q.key for q in call.round}
        # The round's other questions may still come once a failing answer ended it: the server
        # may have written them before it read that answer.
        if question.key not in call.expect - asked:
            raise Violation(
                f"call {call.id} asked form {question.key} out of turn (its round asks "
                f"{sorted(call.expect)}, has {sorted(asked)}): {message}"
            )
        if question.retry != (call.attempts.get(question.key, 0) > 0):
            raise Violation(
                f"call {call.id} asked form {question.key} again for no reason, or not again: {message}"
            )
        call.round.append(question)
        call.questions.append(question)
        self.questions[request_id] = question
        event("server: asked again" if question.retry else "server: asked")

    def server_notification(self, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params", {})
        if method == "notifications/cancelled":
            question = self.questions.get(params.get("requestId"))
            if question is None:
                raise Violation(f"a withdrawal of no question: {message}")
            if question.withdrawn:
                raise Violation(f"question {question.id} withdrawn twice")
            question.withdrawn = True
            causes = [
                line for line in (question.call.cancel_line, question.call.fail_line) if line is not None
            ]
            if not causes:
                raise Violation(f"question {question.id} withdrawn while its call goes on: {message}")
            answer = question.answer
            if answer is not None and answer[1] < min(causes):
                raise Violation(
                    f"question {question.id} withdrawn though the server had read its answer (stdin line "
                    f"{answer[1]}) before what ended its call (line {min(causes)}): {message}"
                )
            event("server: withdrew a question")
        elif method == "notifications/progress":
            token = params.get("progressToken")
            call = self.by_token.get((type(token), token))
            if call is None:
                raise Violation(f"progress for a token no call gave: {message}")
            if call.responses:
                raise Violation(f"progress for call {call.id} after its response: {message}")
            if call.cancel_read:
                raise Violation(f"progress for call {call.id} after its cancellation was read: {message}")
            call.progress.append(params.get("progress"))
            event("server: progress")
        else:
            raise Violation(f"a notification the client did not expect: {message}")

    # -- waiting ----------------------------------------------------------------------------------
    async def until(self, ready: Callable[[], bool], within: float) -> bool:
        """Wait (at most ``within`` seconds) until ``ready()``."""
        await self.flush()
        try:
            async with self.changed:
                await asyncio.wait_for(self.changed.wait_for(lambda: ready() or self.eof), within)
        except TimeoutError:
            pass
        return ready()

    def open_questions(self) -> list[Question]:
        return [q for q in self.questions.values() if not q.answers and not q.withdrawn]

    def question_coming(self) -> bool:
        return self.initialized_at is not None and any(call.question_coming() for call in self.calls)

    def failure(self, what: str) -> str:
        lines = "\n".join(self.transcript[-60:])
        return f"{what}\n\nthe last lines (→ to the server, ← from it):\n{lines}"

    def verify(self) -> None:
        if self.problems:
            raise AssertionError(self.failure("\n".join(self.problems)))


# -- running a schedule -----------------------------------------------------------------------------
async def play(session: Session, step: Step) -> None:
    calls = session.calls
    match step:
        case Start():
            call = await session.start(step)
            event(f"call: {call.tool}" + (" with a progress token" if call.token is not None else ""))
        case Answer(kind=kind, pick=pick, again=again):
            if not session.open_questions() and session.question_coming():
                await session.until(lambda: bool(session.open_questions()), 1.0)
            waiting = session.open_questions()
            if not waiting:
                event("answer: nothing to answer")
                return
            question = waiting[pick % len(waiting)]
            await session.answer(question, kind)
            event(f"answer: {kind}")
            if again is not None:
                await session.answer(question, again)
                event("answer: twice")
        case LateAnswer(kind=kind, pick=pick, never_asked=never_asked):
            old = [q for q in session.questions.values() if q.answers or q.withdrawn]
            if old and not never_asked:
                await session.answer(old[pick % len(old)], kind)
                event("answer: late")
            else:
                unknown = 10**6 + pick if pick % 2 else f"never-asked-{pick}"
                await session.send({"jsonrpc": "2.0", "id": unknown, "result": {"action": "cancel"}})
                event("answer: an id never asked")
        case Cancel(pick=pick, when=when, twice=twice):
            if not calls:
                return
            call = calls[pick % len(calls)]
            if when == "asked" and session.initialized_at is not None:

                def asked() -> bool:
                    if call.asks:
                        return call.done or any(not q.answers and not q.withdrawn for q in call.questions)
                    return bool(call.progress or call.responses)

                await session.until(lambda: bool(call.responses) or asked(), 1.0)
            elif when == "answered":

                def blocked() -> bool:  # it waits on the client: for answers, or for initialized
                    waits = not call.question_coming() or session.initialized_at is None
                    return call.asks and waits and not call.done

                await session.until(lambda: bool(call.responses) or blocked(), 1.5)
            if call.cancel_line is not None:
                situation = "again"
            elif call.responses:
                situation = "after its response"
            elif any(not q.answers and not q.withdrawn for q in call.questions):
                situation = "while it waits for an answer"
            elif call.questions or call.progress:
                situation = "while it runs"
            else:
                situation = "before anything came"
            event(f"cancel: {situation}" + (", twice" if twice else ""))
            await session.cancel(call, twice)
        case CancelUnknown(text=text):
            target = "nobody" if text else 10**6
            await session.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": target}}
            )
            event("cancel: an id never used")
        case Ping():
            await session.ping()
        case Initialized():
            first = session.initialized_at is None
            await session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            if first:
                session.initialized_at = time.monotonic()
            if not first:
                event("initialized: again")
            else:
                event("initialized: after a call" if calls else "initialized: right after initialize")
        case ClientProgress():
            await session.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": f"client-{next(session.ids)}", "progress": 1},
                }
            )
        case Pause(tenths=tenths):
            await session.flush()
            await asyncio.sleep(tenths / 10)


async def settle(session: Session) -> None:
    """Answer every question still open (fitting) until every call not cancelled has its
    response and every ping its answer; a stall fails the test."""
    if session.initialized_at is None:
        await play(session, Initialized())
    deadline = time.monotonic() + WITHIN

    def settled() -> bool:
        return all(call.responses or call.cancelled for call in session.calls) and set(session.pings) == (
            session.answered_pings
        )

    def to_answer() -> list[Question]:
        # Not those of a call cancelled or failed: the server withdraws them.
        return [q for q in session.open_questions() if q.call.cancel_line is None and not q.call.done]

    while not settled() and not session.problems and not session.eof:
        for question in to_answer():
            await session.answer(question, "fit")
        left = deadline - time.monotonic()
        if left <= 0:
            stalled = [call.id for call in session.calls if not (call.responses or call.cancelled)]
            pings = sorted(set(session.pings) - session.answered_pings)
            raise AssertionError(
                session.failure(f"stalled: calls {stalled} have no response, pings {pings} no answer")
            )
        await session.until(lambda: settled() or bool(to_answer()), min(left, 1.0))


async def finish(session: Session, *, sudden_end: bool) -> None:
    """Close stdin; the process must exit 0 at once, with no traceback and nothing left running;
    then every call gets its due."""
    process = session.peer.process
    assert process.stdin is not None
    assert process.stderr is not None
    open_at_the_end = {call.number for call in session.calls if not call.responses}
    await session.flush()
    session.closed = True
    session.transcript.append("→ (stdin closed)")
    process.stdin.close()
    try:
        await asyncio.wait_for(asyncio.shield(session.reader), WITHIN)
        status = await asyncio.wait_for(process.wait(), WITHIN)
    except TimeoutError:
        raise AssertionError(session.failure("the server did not exit after stdin closed")) from None
    stderr = (await process.stderr.read()).decode(errors="replace")
    session.verify()
    assert status == 0, session.failure(f"exit status {status}; stderr:\n{stderr}")
    assert "Traceback" not in stderr, stderr
    assert "exiting without it" not in stderr, stderr  # work was still running after the EOF grace
    assert session.initialize_answer is not None
    assert session.initialize_answer["result"]["protocolVersion"] == LEGACY, session.initialize_answer
    assert set(session.pings) == session.answered_pings, session.failure("a ping got no answer")
    for call in session.calls:
        problem = judge(session, call, sudden_end=sudden_end and call.number in open_at_the_end)
        assert problem is None, session.failure(problem)


def judge(session: Session, call: Call, *, sudden_end: bool) -> str | None:
    """What is wrong with what ``call`` got, if anything."""
    if call.cancelled:
        # A cancelled call may have crossed its response, nothing more (checked as read); the
        # questions it never had an answer to are withdrawn. (One answered after the
        # cancellation may still have been read first: the questions of a round of two wait in
        # tasks of their own, cancelled a step after the call.)
        event("end: a call cancelled" + (", its response crossed" if call.responses else ""))
        if not call.responses and call.cancel_read:
            left = [q.id for q in call.questions if not q.withdrawn and not q.answers]
            if left:
                return f"call {call.id} was cancelled, and its questions {left} were not withdrawn"
        return None
    if len(call.responses) != 1:
        return f"call {call.id} ({call.tool}) got {len(call.responses)} responses"
    got = session.outcome(call, call.responses[0])
    allowed = session.expected(call, sudden_end=sudden_end)
    if got not in allowed:
        return f"call {call.id} ({call.tool}) ended with {got!r}, expected one of {sorted(allowed)}"
    event(f"end: {call.tool} {got.split(':')[0]}")
    if call.fail_line is not None and not sudden_end:
        # A failing answer ended its round: the questions of the round it left unanswered are
        # withdrawn (unless the EOF came first: then nothing waits for an answer any more).
        # (One the client answered after the failing answer may have been read before the
        # server acted on it: then it has its answer, and is not withdrawn.)
        left = [q.id for q in call.round if not q.withdrawn and not q.answers]
        if left:
            return f"call {call.id} failed, and its questions {left} were not withdrawn"
    wanted = {"progress": [1, 2], "nap": [0, 1]}.get(call.tool, []) if call.token is not None else []
    if sudden_end:
        # After the EOF the session is over: progress of a call still running may be dropped.
        wanted = wanted[: len(call.progress)]
    if call.progress != wanted:
        return f"call {call.id} ({call.tool}) reported progress {call.progress}, expected {wanted}"
    return None


# -- the property -----------------------------------------------------------------------------------
kinds = st.sampled_from(KINDS)
starts = st.builds(
    Start,
    tool=st.sampled_from(["ask_forms", "ask_pair", "progress", "nap"]),
    count=st.integers(1, 3),
    token=st.sampled_from(["none", "text", "number"]),
    text_id=st.booleans(),
)
answers = st.builds(Answer, kind=kinds, pick=st.integers(0, 5), again=st.none() | kinds)
cancels = st.builds(
    Cancel, pick=st.integers(0, 5), when=st.sampled_from(["now", "asked", "answered"]), twice=st.booleans()
)
steps: st.SearchStrategy[Step] = st.one_of(  # a strategy listed twice is drawn twice as often
    starts,
    answers,
    answers,
    answers,
    answers,
    cancels,
    cancels,
    st.builds(LateAnswer, kind=kinds, pick=st.integers(0, 5), never_asked=st.booleans()),
    st.builds(CancelUnknown, text=st.booleans()),
    st.just(Ping()),
    st.just(Initialized()),
    st.just(ClientProgress()),
    st.builds(Pause, tenths=st.integers(1, 3)),
)
schedules = st.tuples(st.lists(starts, min_size=1, max_size=3), st.lists(steps, min_size=2, max_size=12)).map(
    lambda parts: [*parts[0], *parts[1]]
)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    schedule=schedules,
    late_initialized=st.booleans(),
    batched=st.booleans(),
    ending=st.sampled_from(["answer what is left, then EOF", "EOF at once"]),
    answer_pings=st.booleans(),
)
async def test_interleaved_calls_keep_the_protocol(
    tmp_path: Path,
    schedule: list[Step],
    late_initialized: bool,
    batched: bool,
    ending: str,
    answer_pings: bool,
) -> None:
    async with running_peer(tmp_path) as peer:
        session = Session(peer, answer_pings=answer_pings, batched=batched)
        event("lines: batched" if batched else "lines: one write each")
        try:
            await session.send(initialize())
            assert await session.until(lambda: session.initialize_answer is not None, WITHIN), (
                session.failure("no answer to initialize")
            )
            if not late_initialized:
                await play(session, Initialized())
            for step in schedule:
                await play(session, step)
                session.verify()
            sudden_end = ending == "EOF at once"
            event(f"ending: {ending}")
            if not sudden_end:
                await settle(session)
            session.verify()
            await finish(session, sudden_end=sudden_end)
        finally:
            session.reader.cancel()


# -- found by the property above ------------------------------------------------------------------
def tools_call(call_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


async def test_a_question_answered_before_its_call_is_cancelled_is_not_withdrawn(tmp_path: Path) -> None:
    """The client answers a question and cancels its call at once (one write: the server reads
    both before the call runs again). The server has the answer, so the question is no longer in
    progress: it must not send ``notifications/cancelled`` for it (the spec: cancellation only
    of a request "believed to still be in progress"). It did, from the task woken by the answer
    and then cancelled."""
    async with running_peer(tmp_path) as peer:
        await opened(peer)
        await peer.send(tools_call(1, "ask_forms", {"label": "c1", "count": 2}))
        question = await peer.receive()
        assert question["params"]["message"] == "c1 form 0?"
        answer = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        mark = {"jsonrpc": "2.0", "id": "mark", "method": "ping"}
        await peer.send_raw(b"\n".join(json.dumps(message).encode() for message in (answer, cancel, mark)))
        # The ping is answered once the cancellation has been acted on; nothing came before it.
        assert await peer.receive() == {"jsonrpc": "2.0", "id": "mark", "result": {}}
        assert await nothing_within(peer, 0.3)  # and nothing after it: no response, no question


async def test_eof_ends_a_call_waiting_for_notifications_initialized_at_once(tmp_path: Path) -> None:
    """A call that must ask waits for ``notifications/initialized``; the client closes stdin
    instead of sending it. The client is gone, as for a call waiting for an answer: the call ends
    at once with the tool error saying so. It got no response at all, and held the process for
    the whole EOF grace, then was cancelled."""
    async with running_peer(tmp_path) as peer:
        await peer.send(initialize())
        assert "result" in await peer.receive()
        await peer.send(tools_call(1, "ask_forms", {"label": "c1", "count": 1}))
        await peer.send({"jsonrpc": "2.0", "id": "mark", "method": "ping"})
        assert (await peer.receive())["id"] == "mark"  # the server has read the call
        await asyncio.sleep(0.3)  # and the call waits for notifications/initialized
        assert peer.process.stdin is not None
        assert peer.process.stdout is not None
        closed = time.monotonic()
        peer.process.stdin.close()
        response = await peer.receive()
        assert response["id"] == 1
        assert response["result"]["isError"] is True
        # (went away: EOF ended its wait; has gone away: EOF came before it began to wait)
        assert response["result"]["content"][0]["text"] in (
            "Tool 'ask_forms' could not finish: the client went away",
            "Tool 'ask_forms' could not finish: the client has gone away",
        )
        assert await asyncio.wait_for(peer.process.wait(), WITHIN) == 0
        assert time.monotonic() - closed < 1.5  # not the EOF grace (2 s) for work still running
        assert await peer.process.stdout.read() == b""


async def test_a_question_never_sent_is_never_withdrawn(tmp_path: Path) -> None:
    """A call asking two forms at once waits for ``notifications/initialized``; the client sends
    it and cancels the call in one write. Each question's task wakes before the call's
    cancellation reaches it: the question is dropped unsent (the call is cancelled), and was
    then withdrawn anyway -- ``notifications/cancelled`` for ids the client never saw (the spec:
    only requests "previously issued")."""
    async with running_peer(tmp_path) as peer:
        await peer.send(initialize())
        assert "result" in await peer.receive()
        await peer.send(tools_call(1, "ask_pair", {"label": "c1"}))
        await peer.send({"jsonrpc": "2.0", "id": "call read", "method": "ping"})
        assert (await peer.receive())["id"] == "call read"
        await asyncio.sleep(0.3)  # the call's two questions wait for notifications/initialized
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        mark = {"jsonrpc": "2.0", "id": "mark", "method": "ping"}
        await peer.send_raw(
            b"\n".join(json.dumps(message).encode() for message in (initialized, cancel, mark))
        )
        assert await peer.receive() == {"jsonrpc": "2.0", "id": "mark", "result": {}}
        assert await nothing_within(peer, 0.5)  # nothing for the call: no question, no withdrawal
