"""The bookkeeping of one round: one execution of a handler, from the top, against its record.

The handler's :class:`~mcp_elicit.server.context.Context` asks the round for each question's
answer (:meth:`Round.lookup`), registers the questions it cannot answer (:meth:`Round.ask`) and
the ``ctx.once`` steps it runs; the replay engine (:mod:`mcp_elicit.server.replay`) watches the
round for news to tell when every branch has asked what it can, marks it as ending, and closes
it; the call engine (:mod:`mcp_elicit.server.engine`) reads the questions and the next record
from it. Each of them changes the round only through these methods.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from mcp_elicit.server.errors import HandlerDefect, ReplayMismatch
from mcp_elicit.server.gating import Need, refusal
from mcp_elicit.server.record import CallRecord
from mcp_elicit.wire.errors import McpError
from mcp_elicit.wire.meta import ClientCapabilities
from mcp_elicit.wire.mrtr import check_input_response

logger = logging.getLogger("mcp_elicit.server")

# The ctx.once step running in this context, set by Context.once. A question asked inside a step
# could never be answered: the round waits for steps in flight to finish before it ends.
RUNNING_STEP: ContextVar[str | None] = ContextVar("mcp_elicit_running_step", default=None)
# The round whose handler runs in this context (set by replay.run_round; tasks the handler starts
# inherit it). A closed round asked from another round's context is a ctx kept between runs.
RUNNING_ROUND: ContextVar[Round | None] = ContextVar("mcp_elicit_running_round", default=None)


# Not frozen: one per answer, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
class FreshAnswer:
    """An answer that arrived in this round's ``inputResponses``."""

    value: dict[str, Any]
    attempts: int  # invalid answers to this question before this one


@dataclass(slots=True)
class RecordedAnswer:
    """An answer consumed in an earlier round (kept in the record)."""

    value: Any


class _MissingCapabilities:
    """The client capabilities the branches of one round found missing, so that the -32021 error
    that ends the round names all of them (``requiredCapabilities`` lists every missing one), not
    only the first branch's."""

    def __init__(self) -> None:
        self.required: dict[str, Any] = {}
        self.needs: list[Need] = []
        self.errors: list[McpError] = []

    def add(self, need: Need) -> McpError:
        self.needs.append(need)
        # Every branch's error shares the one growing requiredCapabilities object; the messages
        # of the errors raised earlier are brought up to date too, since whichever propagates
        # first (asyncio.gather, TaskGroup) is the one the client sees.
        error = refusal(self.needs, self.required)
        for earlier in self.errors:
            earlier.message = error.message
            earlier.args = (error.message,)
        self.errors.append(error)
        return error


class Round:
    """One execution of a handler against ``record`` with this request's ``responses``."""

    def __init__(
        self, record: CallRecord, responses: dict[str, Any], capabilities: ClientCapabilities | None = None
    ) -> None:
        self.record = record
        self.responses = responses
        self.capabilities = capabilities  # recorded with the questions this round asks
        self._pending: dict[str, dict[str, Any]] = {}  # key -> input request, asked this round
        self._pending_meta: dict[str, tuple[str, int]] = {}  # key -> (digest, attempts)
        self._new_answers: dict[str, tuple[str, Any]] = {}
        self._new_steps: dict[str, Any] = {}
        self._steps_running: set[str] = set()
        self._occurrences: dict[str, int] = {}
        self._used: set[str] = set()
        self._missing: _MissingCapabilities | None = None
        self._watcher: Callable[[], None] | None = None
        self._ending = False  # the replay engine is cancelling the handler to end the round
        self._closed = False  # the round is over: no question or step may start any more
        self._defect: HandlerDefect | None = None
        # The futures unanswered questions wait on: cancelled when the round is over, so that a
        # task the handler left behind (gather after a failure, shield, create_task) ends.
        self._waiters: list[asyncio.Future[None]] = []

    # -- what the replay engine watches ------------------------------------------------------
    def watch(self, on_news: Callable[[], None] | None) -> None:
        """Call ``on_news`` on news (a question asked, a step finished, an answer consumed), so
        that the replay engine can tell when the handler has asked all it will ask."""
        self._watcher = on_news

    def _news(self) -> None:
        if self._watcher is not None:
            self._watcher()

    @property
    def questions(self) -> dict[str, dict[str, Any]]:
        """The input requests asked so far this round, by key."""
        return self._pending

    @property
    def steps_running(self) -> int:
        return len(self._steps_running)

    @property
    def defect(self) -> HandlerDefect | None:
        """A defect found in a branch whose exception may never reach the engine (a gather
        child's, once gather has raised): the engine raises it whatever the handler does."""
        return self._defect

    def end(self) -> None:
        """The replay engine is about to cancel the handler to end the round."""
        self._ending = True

    def close(self) -> None:
        """The round is over: questions and steps from tasks still running are refused, and
        branches still waiting for an answer are cancelled."""
        self._closed = True
        for waiter in self._waiters:
            waiter.cancel()
        self._waiters.clear()

    def require(self, need: Need) -> None:
        """Raise the -32021 error when this request's client lacks ``need`` (naming also what
        other branches of this round found missing)."""
        if self.capabilities is not None and need.met_by(self.capabilities):
            return
        if self._missing is None:
            self._missing = _MissingCapabilities()
        raise self._missing.add(need)

    # -- questions ---------------------------------------------------------------------------
    def key_for(self, kind: str, digest: str, key: str | None) -> str:
        """The key of a question: the author's, or ``<kind>-<digest>[-<n>]`` for the n-th time the
        same content is asked in this run."""
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

        ``summary`` names the question in that error; a callable is only called then."""
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
            self._news()
        return FreshAnswer(raw, asked[1] if asked is not None else 0)

    def record_answer(self, key: str, digest: str, stored: Any) -> None:
        """Keep this round's answer to ``key`` in the next record."""
        self._new_answers[key] = (digest, stored)

    def ask(self, key: str, digest: str, request: dict[str, Any], attempts: int = 0) -> None:
        """Register a question for the client; the branch then waits (:meth:`wait_for_answer`)."""
        if self._closed:
            self._refuse_a_kept_ctx(f"asked {key!r}")
            logger.warning(
                "question %r was asked after its round had ended, by a task the handler did not "
                "wait for; it was not sent (await every task that asks)",
                key,
            )
            raise asyncio.CancelledError
        if self._ending:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # This task caught the CancelledError that ends the round and asked again: its
                # question would wait forever, and the request with it.
                self._defect = self._defect or swallowed_cancellation(f"asked {key!r}")
                raise self._defect
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
        self._pending[key] = request
        self._pending_meta[key] = (digest, attempts)
        self._news()

    async def wait_for_answer(self) -> None:
        """Block the asking branch until the engine ends the round (it cancels the handler)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

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

    # -- memoized steps ----------------------------------------------------------------------
    def recorded_step(self, name: str) -> tuple[bool, Any]:
        """Whether step ``name`` ran in an earlier round (or this run), and its result."""
        if name in self._steps_running:
            raise ValueError(f"ctx.once step {name!r} is already running in this round")
        if name in self._new_steps:
            return True, self._new_steps[name]
        if name in self.record.steps:
            return True, self.record.steps[name]
        return False, None

    def step_started(self, name: str) -> None:
        if self._closed:
            self._refuse_a_kept_ctx(f"started the step {name!r}")
            # Its result could not be recorded any more: the next round would run it again.
            logger.warning(
                "ctx.once step %r was started after its round had ended, by a task the handler "
                "did not wait for; it was not run (await every task that runs a step)",
                name,
            )
            raise asyncio.CancelledError
        self._steps_running.add(name)

    def _refuse_a_kept_ctx(self, what: str) -> None:
        """Raise when another run of a handler uses this closed round's ctx (kept in a global, an
        attribute, a closure): it is that handler's defect, not a task left behind by this one."""
        running = RUNNING_ROUND.get()
        if running is not None and running is not self:
            raise HandlerDefect(
                f"a handler {what} through a ctx kept from a run that has ended (an earlier call, "
                "or an earlier round of this one): use the ctx each run is given, and keep none"
            )

    def step_finished(self, name: str, value: Any, ok: bool) -> None:
        self._steps_running.discard(name)
        if ok:
            self._new_steps[name] = value
        self._news()

    # -- the next round's record -------------------------------------------------------------
    def next_payload(self, user_state: str | None) -> dict[str, Any]:
        """The sealed form of the record the next round starts from: the answers and steps so
        far, and the questions asked in this round."""
        record = self.record
        return CallRecord(
            record.call_id,
            record.round + 1,
            {**record.answers, **self._new_answers},
            {**record.steps, **self._new_steps},
            dict(self._pending_meta),
            user_state,
            None if self.capabilities is None else self.capabilities.input_kinds(),
        ).to_payload()


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
