"""The record of one flow (what travels sealed in ``requestState``) and the bookkeeping of one
round of it.

A flow is one logical ``tools/call`` (or ``prompts/get``, ``resources/read``) spread over several
JSON-RPC requests. Each round replays the handler from the top. A question is identified by its
key: the one the author gave (``key=``), or one derived from a digest of the question's content
and how many times the same content was asked before in this run. So a recorded answer finds its
question again whatever order concurrent branches reach it in, and a question whose content
changes between rounds is a different question, which the engine reports (see ``Round``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcp_elicit.server.errors import HandlerDefect, ReplayMismatch
from mcp_elicit.wire.capabilities import ClientCapabilities, merge_required
from mcp_elicit.wire.errors import McpError, missing_capability
from mcp_elicit.wire.mrtr import check_input_response

PAYLOAD_VERSION = 2  # 2: question digests cut to 128 bits

logger = logging.getLogger("mcp_elicit.server")


# The ctx.once step running in this context, set by Context.once. A question asked inside a step
# could never be answered: the round waits for steps in flight to finish before it ends.
RUNNING_STEP: ContextVar[str | None] = ContextVar("mcp_elicit_running_step", default=None)

MAX_ANSWER_NESTING = 200  # answers are kept in the sealed state; its encoder stops at 254 levels


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON data nests arrays/objects more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class MalformedFlow(Exception):
    """A sealed payload that authenticated but is not a flow record we wrote."""


def question_digest(kind: str, content: Any) -> str:
    """A stable digest of what a question asks (kind + canonical JSON of its content): SHA-256
    cut to 128 bits, 32 hex digits."""
    # orjson with sorted keys is codec.dumps_canonical, called directly (two per flow).
    canonical = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    # Only compared for equality (did the question change between rounds?) and sealed in every
    # requestState, where each character costs work per round: 128 bits are plenty for that.
    return hashlib.sha256(kind.encode() + b"\0" + canonical).hexdigest()[:32]


def _new_flow_id() -> str:
    return os.urandom(16).hex()


@dataclass(slots=True)
class FlowRecord:
    """Everything the server remembers about a flow between rounds."""

    flow_id: str = field(default_factory=_new_flow_id)
    round: int = 0
    # key -> (digest, stored answer): answers the handler has consumed in earlier rounds.
    answers: dict[str, tuple[str, Any]] = field(default_factory=dict)
    # step name -> recorded result of ctx.once(...).
    steps: dict[str, Any] = field(default_factory=dict)
    # key -> (digest, invalid attempts so far): questions sent in the last round.
    asked: dict[str, tuple[str, int]] = field(default_factory=dict)
    # the low-level handler's own state string (InputRequired.state).
    user_state: str | None = None
    # ClientCapabilities.input_kinds() of the request that asked ``asked`` (None: not recorded).
    input_kinds: int | None = None

    def to_payload(self) -> dict[str, Any]:
        return _payload(
            self.flow_id, self.round, self.answers, self.steps, self.asked, self.user_state, self.input_kinds
        )

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> FlowRecord:
        try:
            if payload.get("v") != PAYLOAD_VERSION:
                raise MalformedFlow("unknown flow payload version")
            flow_id = payload["f"]
            round_no = payload["r"]
            # Absent parts skip their comprehension (each costs a function call): a flow with
            # one question carries only "q".
            answers = {str(k): (str(v[0]), v[1]) for k, v in payload["a"].items()} if "a" in payload else {}
            steps = dict(payload["s"]) if "s" in payload else {}
            asked = (
                {str(k): (str(v[0]), int(v[1])) for k, v in payload["q"].items()} if "q" in payload else {}
            )
            user_state = payload.get("u")
            input_kinds = payload.get("c")
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise MalformedFlow(str(exc)) from None
        if not isinstance(flow_id, str) or not isinstance(round_no, int):
            raise MalformedFlow("bad flow id or round")
        if user_state is not None and not isinstance(user_state, str):
            raise MalformedFlow("bad user state")
        if input_kinds is not None and type(input_kinds) is not int:
            raise MalformedFlow("bad input kinds")
        return cls(flow_id, round_no, answers, steps, asked, user_state, input_kinds)


def _payload(
    flow_id: str,
    round_no: int,
    answers: dict[str, tuple[str, Any]],
    steps: dict[str, Any],
    asked: dict[str, tuple[str, int]],
    user_state: str | None,
    input_kinds: int | None,
) -> dict[str, Any]:
    """The sealed form of a flow record (:meth:`FlowRecord.to_payload`)."""
    payload: dict[str, Any] = {"v": PAYLOAD_VERSION, "f": flow_id, "r": round_no}
    if answers:
        payload["a"] = {k: [d, v] for k, (d, v) in answers.items()}
    if steps:
        payload["s"] = steps
    if asked:
        payload["q"] = {k: [d, n] for k, (d, n) in asked.items()}
    if user_state is not None:
        payload["u"] = user_state
    if input_kinds is not None:
        payload["c"] = input_kinds
    return payload


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__, which
# costs more than the rest of a lookup. Neither is modified after it is built.
@dataclass(slots=True)
class FreshAnswer:
    """An answer that arrived in this round's ``inputResponses``."""

    value: dict[str, Any]
    attempts: int


@dataclass(slots=True)
class RecordedAnswer:
    value: Any


class _MissingCapabilities:
    """The client capabilities the branches of one round found missing, so that the -32021 error
    that ends the round names all of them (the spec: ``requiredCapabilities`` lists the missing
    capabilities), not only the first branch's."""

    __slots__ = ("details", "errors", "required")

    def __init__(self) -> None:
        self.required: dict[str, Any] = {}
        self.details: list[str] = []
        self.errors: list[McpError] = []

    def add(self, required: dict[str, Any], detail: str) -> McpError:
        merge_required(self.required, required)
        if detail not in self.details:
            self.details.append(detail)
        message = "; ".join(self.details)
        # Every branch's error shares the one growing requiredCapabilities object; the messages
        # of the errors raised earlier are brought up to date too, since whichever propagates
        # first (asyncio.gather, TaskGroup) is the one the client sees.
        error = missing_capability(self.required, message)
        for earlier in self.errors:
            earlier.message = message
            earlier.args = (message,)
        self.errors.append(error)
        return error


class Round:
    """The bookkeeping of one execution of a handler, shared by its Context and the engine."""

    __slots__ = (
        "_missing",
        "_occurrences",
        "_running_steps",
        "_used",
        "_waiters",
        "capabilities",
        "closed",
        "defect",
        "ending",
        "new_answers",
        "new_steps",
        "on_news",
        "pending",
        "pending_meta",
        "record",
        "responses",
        "steps_in_flight",
    )

    def __init__(
        self, record: FlowRecord, responses: dict[str, Any], capabilities: ClientCapabilities | None = None
    ) -> None:
        self.record = record
        self.responses = responses
        # This request's client capabilities (recorded with the questions this round asks).
        self.capabilities = capabilities
        self.pending: dict[str, dict[str, Any]] = {}
        self.pending_meta: dict[str, tuple[str, int]] = {}
        self.new_answers: dict[str, tuple[str, Any]] = {}
        self.new_steps: dict[str, Any] = {}
        self.steps_in_flight = 0
        self._occurrences: dict[str, int] = {}
        self._used: set[str] = set()
        self._running_steps: set[str] = set()
        self._missing: _MissingCapabilities | None = None
        # Set by the replay engine: called on news (a question asked, a step finished, an
        # answer consumed) so that it can tell when the handler has asked all it will ask.
        self.on_news: Callable[[], None] | None = None
        # Set by the replay engine once it has cancelled the handler to end the round.
        self.ending = False
        # Set when the round is over: its record is built (or no record will be).
        self.closed = False
        # A defect found in a branch whose exception may never reach the engine (a gather
        # child's, once gather has raised): the engine raises it whatever the handler does.
        self.defect: HandlerDefect | None = None
        # The futures unanswered questions wait on: cancelled when the round is over, so that a
        # task the handler left behind (gather after a failure, shield, create_task) ends.
        self._waiters: list[asyncio.Future[None]] = []

    def notify(self) -> None:
        if self.on_news is not None:
            self.on_news()

    def missing_capability(self, required: dict[str, Any], detail: str) -> McpError:
        """The -32021 error to raise for a capability this request's client did not declare,
        naming also what other branches of this round found missing."""
        if self._missing is None:
            self._missing = _MissingCapabilities()
        return self._missing.add(required, detail)

    # -- questions -------------------------------------------------------------------------
    def key_for(self, kind: str, digest: str, key: str | None) -> str:
        if key is not None:
            return key
        count = self._occurrences.get(digest, 0) + 1
        self._occurrences[digest] = count
        base = f"{kind}-{digest[:12]}"
        return base if count == 1 else f"{base}-{count}"

    def lookup(
        self, key: str, digest: str, summary: str | Callable[[], str]
    ) -> RecordedAnswer | FreshAnswer | None:
        """The answer to this question if there is one; raise when the question changed.

        ``summary`` names the question in that error; a callable is only called then (quoting a
        message costs more than the rest of a lookup)."""
        if key in self._used:
            raise ValueError(
                f"the question key {key!r} was used twice in one run of the handler; "
                "give each question its own key"
            )
        self._used.add(key)
        recorded = self.record.answers.get(key)
        if recorded is not None:
            if recorded[0] != digest:
                raise ReplayMismatch(
                    f"question {key!r} changed between rounds (now: {_text(summary)}). Handlers are "
                    "replayed on every round and must ask the same questions each time; move "
                    "changing values (timestamps, random ids, fresh reads) into ctx.once(...)"
                )
            return RecordedAnswer(recorded[1])
        asked = self.record.asked.get(key)
        if asked is not None and asked[0] != digest:
            raise ReplayMismatch(
                f"question {key!r} changed between the round that asked it and the retry "
                f"(now: {_text(summary)}). Handlers must ask the same questions on every round; move "
                "changing values into ctx.once(...)"
            )
        raw = self.responses.get(key)
        if raw is None:
            return None
        if type(raw) is not dict:
            raw = check_input_response(key, raw)  # raises: a malformed answer to this question
        if asked is not None:
            self.notify()
        return FreshAnswer(raw, asked[1] if asked is not None else 0)

    def record_answer(self, key: str, digest: str, stored: Any) -> None:
        self.new_answers[key] = (digest, stored)

    def ask(self, key: str, digest: str, request: dict[str, Any], attempts: int = 0) -> None:
        if self.closed:
            logger.warning(
                "question %r was asked after its round had ended, by a task the handler did not "
                "wait for; it was not sent (await every task that asks)",
                key,
            )
            raise asyncio.CancelledError
        if self.ending:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # This task caught the CancelledError that ends the round and asked again: its
                # question would wait forever, and the request with it.
                self.defect = self.defect or swallowed_cancellation(f"asked {key!r}")
                raise self.defect
        step = RUNNING_STEP.get()
        if step is not None:
            raise HandlerDefect(
                f"question {key!r} was asked inside ctx.once step {step!r}; a step must not wait for "
                "the user (the round ends only when steps finish): ask before the step and pass "
                "the answer in"
            )
        if not attempts and self.record.asked:
            # Asked again without an answer: invalid answers before still count towards the limit.
            asked = self.record.asked.get(key)
            if asked is not None and asked[0] == digest:
                attempts = asked[1]
        self.pending[key] = request
        self.pending_meta[key] = (digest, attempts)
        self.notify()

    async def wait_for_answer(self) -> None:
        """Block the asking branch until the engine ends the round (it cancels the handler)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def close(self) -> None:
        """The round is over: questions and steps from tasks still running are refused, and
        branches still waiting for an answer are cancelled."""
        self.closed = True
        for waiter in self._waiters:
            waiter.cancel()
        self._waiters.clear()

    def unconsumed_answers(self) -> list[str]:
        """Keys asked last round and answered now that this run has not asked (yet).

        Empty when the client declares other capabilities than the request that asked them did:
        the handler may rightly take another branch now (``ctx.can_elicit`` and the like), and
        those answers are then left unused."""
        record = self.record
        if not record.asked or record.asked.keys() <= self._used:  # all asked again: the usual case
            return []
        missing = [k for k in record.asked if k in self.responses and k not in self._used]
        if missing and self._input_kinds_changed():
            return []
        return missing

    def _input_kinds_changed(self) -> bool:
        recorded = self.record.input_kinds
        if recorded is None or self.capabilities is None:
            return False
        return recorded != self.capabilities.input_kinds()

    # -- memoized steps --------------------------------------------------------------------
    def recorded_step(self, name: str) -> tuple[bool, Any]:
        if name in self._running_steps:
            raise ValueError(f"ctx.once step {name!r} is already running in this round")
        if name in self.new_steps:
            return True, self.new_steps[name]
        if name in self.record.steps:
            return True, self.record.steps[name]
        return False, None

    def step_started(self, name: str) -> None:
        if self.closed:
            # Its result could not be recorded any more: the next round would run it again.
            logger.warning(
                "ctx.once step %r was started after its round had ended, by a task the handler "
                "did not wait for; it was not run (await every task that runs a step)",
                name,
            )
            raise asyncio.CancelledError
        self._running_steps.add(name)
        self.steps_in_flight += 1

    def step_finished(self, name: str, value: Any, ok: bool) -> None:
        self._running_steps.discard(name)
        self.steps_in_flight -= 1
        if ok:
            self.new_steps[name] = value
        self.notify()

    # -- the next round's record -----------------------------------------------------------
    def next_record(self, user_state: str | None) -> FlowRecord:
        return FlowRecord(
            self.record.flow_id, self.record.round + 1, *self._next_parts(), user_state, self._input_kinds()
        )

    def next_payload(self, user_state: str | None) -> dict[str, Any]:
        """``next_record(user_state).to_payload()`` without building the record in between."""
        return _payload(
            self.record.flow_id, self.record.round + 1, *self._next_parts(), user_state, self._input_kinds()
        )

    def _input_kinds(self) -> int | None:
        return None if self.capabilities is None else self.capabilities.input_kinds()

    def _next_parts(
        self,
    ) -> tuple[dict[str, tuple[str, Any]], dict[str, Any], dict[str, tuple[str, int]]]:
        """Answers, steps and questions of the next round's record (new dicts)."""
        record = self.record
        return (
            {**record.answers, **self.new_answers},
            {**record.steps, **self.new_steps},
            dict(self.pending_meta),
        )


def swallowed_cancellation(then: str) -> HandlerDefect:
    """The defect of a handler that caught the CancelledError with which the engine ends a round
    and went on (``then`` says how)."""
    return HandlerDefect(
        f"the handler caught the CancelledError with which the engine ends a round to send its "
        f"questions, and {then} instead of letting it propagate: its questions could never be "
        "sent. Re-raise CancelledError after any clean-up (handlers are cancelled on every "
        "round that asks)"
    )


def _text(summary: str | Callable[[], str]) -> str:
    return summary if isinstance(summary, str) else summary()
