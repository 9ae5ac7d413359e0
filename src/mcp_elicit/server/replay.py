"""Runs one round of a handler: to completion, or until every branch that can ask has asked.

``ctx.elicit`` for an unanswered question registers it with the :class:`Round` and then waits
forever. Once the handler has questions pending, a watchdog lets concurrently started branches
(``asyncio.gather``, ``TaskGroup``) reach their own questions, waits for ``ctx.once`` steps in
flight to finish (so a side effect is never cut in half), then cancels the handler and the
round ends with all pending questions in one ``InputRequiredResult``.

The handler runs in the caller's task (no task per round): the watchdog is a chain of event-loop
callbacks, and it ends the round by cancelling that task, a cancellation this module catches and
takes back (``Task.uncancel``) so that nothing outside sees it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp_elicit.schema.errors import SchemaError
from mcp_elicit.server.errors import ReplayMismatch, ToolError
from mcp_elicit.server.lowlevel import InputRequired
from mcp_elicit.server.round import RUNNING_ROUND, Round, swallowed_cancellation
from mcp_elicit.wire.errors import McpError

# Event-loop turns without news after which concurrently started branches are taken to have
# asked what they can ask without waiting on real I/O. When every question so far was asked by
# the handler's own task (no gather/TaskGroup branch asked), one turn is enough: a task the
# handler created earlier has had its turn by then. Waiting less never breaks a flow; a question
# that misses the round is simply asked in the next one.
_QUIET_TURNS = 4
_QUIET_TURNS_DIRECT = 1
_POLL_SECONDS = 0.005
# The most one poll counts towards the grace period: a longer gap is the event loop blocked by
# other code (a handler calling time.sleep), during which no branch could reach its question.
_MAX_POLL_GAP = 0.05


class RetryLater(BaseException):
    """Raised by ``ctx.retry_later()``: end this round with a state-only InputRequiredResult.

    A BaseException so that a handler's ``except Exception`` does not swallow it.
    """


# Not frozen (one of each per round: a frozen dataclass's __init__ sets each field through
# object.__setattr__, which costs more than the rest of building it). Never modified.
@dataclass(slots=True)
class Completed:
    value: Any


@dataclass(slots=True)
class Suspended:
    """The round ended with questions for the client (possibly none: a state-only round)."""

    requests: dict[str, dict[str, Any]]


class _Watchdog:
    """Decides when a handler with pending questions has asked everything it can this round."""

    __slots__ = (
        "failure",
        "finished",
        "grace",
        "loop",
        "polled",
        "quiet",
        "quiet_needed",
        "rnd",
        "suspending",
        "task",
        "ticking",
        "timer",
        "waited",
    )

    def __init__(self, rnd: Round, task: asyncio.Task[Any], grace: float) -> None:
        self.rnd = rnd
        self.task = task
        self.grace = grace
        self.loop = task.get_loop()
        self.quiet = 0
        self.quiet_needed = _QUIET_TURNS_DIRECT
        self.ticking = False
        self.polled: float | None = None  # when the grace period was last polled
        self.waited = 0.0  # of the grace period
        self.finished = False
        self.suspending = False
        self.failure: ReplayMismatch | None = None
        self.timer: asyncio.TimerHandle | None = None
        rnd.watch(self.news)

    def news(self) -> None:
        self.quiet = 0
        if asyncio.current_task() is not self.task:
            self.quiet_needed = _QUIET_TURNS
        if self.rnd.questions and not self.ticking and not self.finished:
            self.ticking = True
            self.loop.call_soon(self.tick)

    def tick(self) -> None:
        self.ticking = False
        self.timer = None
        if self.finished or self.suspending:
            return
        if self.rnd.steps_running:
            return  # a finished step brings news and restarts the count
        self.quiet += 1
        if self.quiet < self.quiet_needed:
            self.ticking = True
            self.loop.call_soon(self.tick)
            return
        missing = self.rnd.unconsumed_answers()
        if missing:
            # An answer arrived for a question this run has not asked (yet). A branch may still
            # be on its way to it (real I/O before the question); give it a bounded grace period.
            now = self.loop.time()
            if self.polled is not None:
                self.waited += min(now - self.polled, _MAX_POLL_GAP)
            self.polled = now
            if self.waited < self.grace:
                self.ticking = True
                self.timer = self.loop.call_later(_POLL_SECONDS, self.tick)
                return
            self.failure = _not_asked_again(missing, "asked other questions instead")
        self.suspending = True
        self.rnd.end()
        self.task.cancel()

    def close(self) -> None:
        self.finished = True
        self.rnd.watch(None)
        if self.timer is not None:
            self.timer.cancel()


def _not_asked_again(keys: list[str], instead: str) -> ReplayMismatch:
    return ReplayMismatch(
        f"the client answered {', '.join(map(repr, keys))}, asked in the previous round, but on "
        f"replay the handler {instead}. Handlers are replayed on every round and must ask the same "
        "questions each time; move changing values (timestamps, random ids, fresh reads) into "
        "ctx.once(...)"
    )


class HandlerCancelled(RuntimeError):
    """The handler raised ``CancelledError`` although nothing cancelled it (it awaited a future
    or task that something else cancelled): a failure of the handler like any other."""


# What the engine makes of a handler's exceptions, most telling first: the request cannot be
# served (McpError), the handler is defective (ReplayMismatch, SchemaError), the tool failed on
# purpose (ToolError), the round ends without questions (RetryLater).
_ENGINE_ERRORS: tuple[type[BaseException], ...] = (
    McpError,
    ReplayMismatch,
    SchemaError,
    ToolError,
    RetryLater,
)


def exception_leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions in ``group`` and in the groups nested in it (a TaskGroup inside a
    TaskGroup nests them), themselves not groups."""
    leaves: list[BaseException] = []
    groups = [group]
    while groups:
        for inner in groups.pop().exceptions:
            if isinstance(inner, BaseExceptionGroup):
                groups.append(inner)
            else:
                leaves.append(inner)
    return leaves


def _engine_error(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception to act on when ``asyncio.TaskGroup`` wraps its branches' exceptions in a
    group, so that a TaskGroup ends a round the way ``asyncio.gather`` does (which raises the
    first). None when some branch failed otherwise: that group is an unexpected failure as is."""
    leaves = exception_leaves(group)
    if not all(isinstance(leaf, _ENGINE_ERRORS) for leaf in leaves):
        return None
    for kind in _ENGINE_ERRORS:
        for leaf in leaves:
            if isinstance(leaf, kind):
                return leaf
    return None  # pragma: no cover - every leaf is one of the kinds


async def run_round(
    handler: Callable[..., Awaitable[Any]], kwargs: dict[str, Any], rnd: Round, grace: float
) -> Completed | Suspended:
    """Run ``handler(**kwargs)`` for one round."""
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - always inside a task under asyncio
        raise RuntimeError("run_round must run inside an asyncio task")
    running = RUNNING_ROUND.set(rnd)
    try:
        outcome = await _run(handler, kwargs, rnd, grace, task)
        # A state will be sealed: a step still running (in a branch gather left behind when
        # another failed, in a task the handler did not await) must be recorded in it, or the
        # next round runs its side effect again.
        sealed = isinstance(outcome, Suspended) or isinstance(outcome.value, InputRequired)
        if sealed and rnd.steps_running:
            await _steps_settled(rnd)
            if isinstance(outcome, Suspended):
                outcome = Suspended(dict(rnd.questions))
        return outcome
    finally:
        RUNNING_ROUND.reset(running)
        rnd.close()


async def _steps_settled(rnd: Round) -> None:
    """Wait until no ``ctx.once`` step of this round is running."""
    loop = asyncio.get_running_loop()
    while rnd.steps_running:
        news: asyncio.Future[None] = loop.create_future()

        def wake(news: asyncio.Future[None] = news) -> None:
            if not news.done():
                news.set_result(None)

        rnd.watch(wake)
        try:
            await news
        finally:
            rnd.watch(None)


async def _run(
    handler: Callable[..., Awaitable[Any]],
    kwargs: dict[str, Any],
    rnd: Round,
    grace: float,
    task: asyncio.Task[Any],
) -> Completed | Suspended:
    # Cancellations owed from before this round (a caller that swallowed one; Python 3.11's
    # TaskGroup leaves one behind when a branch fails) are not news: only a new one is.
    owed = task.cancelling()
    watchdog = _Watchdog(rnd, task, grace)
    try:
        value = await handler(**kwargs)
    except asyncio.CancelledError as exc:
        if not watchdog.suspending:
            if task.cancelling() > owed:
                raise  # cancelled from outside (the client went away)
            raise HandlerCancelled(
                "the handler raised CancelledError without being cancelled (it awaited a future "
                "or task that was cancelled elsewhere)"
            ) from exc
        if task.uncancel() > owed:
            raise  # cancelled from outside as well as by us
        if rnd.defect is not None:
            raise rnd.defect from None  # a branch asked again after our cancellation
        if watchdog.failure is not None:
            raise watchdog.failure from None
        return Suspended(dict(rnd.questions))
    except BaseException as exc:
        if watchdog.suspending:
            task.uncancel()  # our cancellation ended in another exception: take it back
            if rnd.defect is not None and task.cancelling() <= owed:
                raise rnd.defect from None
        error = _engine_error(exc) if isinstance(exc, BaseExceptionGroup) else exc
        if isinstance(error, RetryLater):
            return Suspended(dict(rnd.questions))
        if error is None or error is exc:
            raise
        raise error from None
    finally:
        watchdog.close()
    if watchdog.suspending:
        if task.uncancel() > owed:
            # The handler swallowed our cancellation; someone else's is still owed.
            raise asyncio.CancelledError
        # The handler caught the cancellation that ends the round and returned: the questions
        # it asked would be dropped without anyone noticing.
        raise rnd.defect or swallowed_cancellation("returned")
    missing = rnd.unconsumed_answers()
    if missing:
        # An answered question the replay never reached: its answer (a decline, say) would be
        # dropped without anyone noticing.
        raise _not_asked_again(missing, "finished without asking it")
    return Completed(value)
