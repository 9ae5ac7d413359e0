"""Runs one round of a handler: to completion, or until every branch that can ask has asked.

``ctx.elicit`` for an unanswered question registers it with the :class:`Round` and then waits
forever. Once the handler has questions pending, the engine lets concurrently started branches
(``asyncio.gather``, ``TaskGroup``) reach their own questions, waits for ``ctx.once`` steps in
flight to finish (so a side effect is never cut in half), then cancels the handler and sends all
pending questions in one ``InputRequiredResult``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp_elicit.server.errors import ReplayMismatch
from mcp_elicit.server.flow import Round

# Event-loop turns without news after which concurrently started branches are taken to have
# asked what they can ask without waiting on real I/O.
_QUIET_TURNS = 4
_POLL_SECONDS = 0.005


class RetryLater(BaseException):
    """Raised by ``ctx.retry_later()``: end this round with a state-only InputRequiredResult.

    A BaseException so that a handler's ``except Exception`` does not swallow it.
    """


@dataclass(frozen=True, slots=True)
class Completed:
    value: Any


@dataclass(frozen=True, slots=True)
class Suspended:
    """The round ended with questions for the client (possibly none: a state-only round)."""

    requests: dict[str, dict[str, Any]]


async def run_round(
    handler: Callable[[], Awaitable[Any]], rnd: Round, *, grace: float
) -> Completed | Suspended:
    loop = asyncio.get_running_loop()
    task: asyncio.Task[Any] = loop.create_task(_call(handler))
    task.add_done_callback(lambda _t: rnd.notify())
    try:
        while not task.done():
            if rnd.pending and await _settled(task, rnd, grace):
                break
            if task.done():
                break
            await rnd.wait()
    except BaseException:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise
    if task.done():
        try:
            return Completed(task.result())
        except RetryLater:
            return Suspended(dict(rnd.pending))
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return Suspended(dict(rnd.pending))


async def _call(handler: Callable[[], Awaitable[Any]]) -> Any:
    return await handler()


async def _settled(task: asyncio.Task[Any], rnd: Round, grace: float) -> bool:
    """True once the handler has asked all it will ask this round; False if it completed."""
    loop = asyncio.get_running_loop()
    seen = len(rnd.pending)
    quiet = 0
    deadline: float | None = None
    while not task.done():
        if rnd.steps_in_flight:
            await rnd.wait()
            quiet = 0
            continue
        await asyncio.sleep(0)
        if len(rnd.pending) != seen:
            seen = len(rnd.pending)
            quiet = 0
            continue
        quiet += 1
        if quiet < _QUIET_TURNS:
            continue
        missing = rnd.unconsumed_answers()
        if not missing:
            return True
        # An answer arrived for a question this run has not asked (yet). A branch may still be
        # on its way to it (real I/O before the question); give it a bounded grace period.
        if deadline is None:
            deadline = loop.time() + grace
        if loop.time() >= deadline:
            raise ReplayMismatch(
                f"the client answered {', '.join(map(repr, missing))}, asked in the previous round, "
                "but on replay the handler asked other questions instead. Handlers are replayed on "
                "every round and must ask the same questions each time; move changing values "
                "(timestamps, random ids, fresh reads) into ctx.once(...)"
            )
        await asyncio.sleep(_POLL_SECONDS)
    return False
