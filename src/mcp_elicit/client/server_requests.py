"""Answering a 2025-11-25 server's own requests, through the machinery the 2026-07-28 rounds use.

An ``elicitation/create`` is checked exactly as an ``inputRequests`` entry is
(:func:`~mcp_elicit.client.inputs.parse_elicitation`: a mode this client declared, a schema
inside the subset, an ``elicitationId`` for a URL) and answered by
:class:`~mcp_elicit.client.answering.Answering` -- the same answerer, the same validation before
anything is sent, defaults applied, the URL assessed and opened only after consent, the server
named with each question. A request that fails a check is answered with an error and never
shown: ``-32602`` for a mode this client did not declare (``"Elicitation mode 'url' was not
declared by this client"``), a schema outside the subset or malformed params; ``-32601`` for
sampling or roots when no sampler or roots were configured (nothing was declared), and for
methods this client does not serve. ``ping`` is answered at once.

While a request that takes human (or model) time is open, the timers of this client's own
requests are paused (:class:`~mcp_elicit.client.timers.PausableTimers`). A failure on this side
(the answerer could not ask, or kept giving invalid answers) is answered to the server as
``-32603`` and kept, so that the call it interrupted raises it, as it would on 2026-07-28.

A call's questions are bounded as its rounds are on 2026-07-28 (``max_rounds``). A 2025-11-25
request does not say which call it belongs to (on stdio nothing ties them), so the bound holds
for each stretch of time in which calls run: while the server's questions in it (forms, URLs,
sampling, roots, valid or not) stay within ``max_rounds`` for each call begun in it, they are
answered; the next one is refused with ``-32603`` and the running calls end with
:class:`~mcp_elicit.client.errors.RoundLimitError` (:meth:`ServerRequestHandler.calls`).

``notifications/elicitation/complete`` for a URL the person accepted goes to ``on_url_complete``
(and wakes whatever waits for it, see :mod:`~mcp_elicit.client.url_required`); an id this client
never accepted is ignored, as the spec requires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.answering import Answering
from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import (
    InvalidSchemaError,
    MalformedMessageError,
    UndeclaredRequestError,
)
from mcp_elicit.client.inputs import (
    InputRequest,
    RootsInput,
    UrlInput,
    parse_elicitation,
    parse_sampling,
)
from mcp_elicit.client.questions import ServerIdentity
from mcp_elicit.client.text import clean
from mcp_elicit.client.timers import PausableTimers
from mcp_elicit.wire.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_elicit.wire.jsonrpc import ErrorResponse, Notification, Request, Response, Result
from mcp_elicit.wire.mrtr import ELICIT, LIST_ROOTS, SAMPLE

logger = logging.getLogger("mcp_elicit.client.server_requests")

ELICITATION_COMPLETE = "notifications/elicitation/complete"
_TOO_MANY = "Internal error: the client stopped answering: too many questions in one call"
# URLs accepted and not yet reported complete, remembered for their completion notice.
MAX_WATCHED = 256


@dataclass(frozen=True, slots=True)
class UrlCompleted:
    """The server says the browser step of a URL the person accepted is done
    (``notifications/elicitation/complete``)."""

    server: ServerIdentity
    elicitation_id: str
    message: str  # the URL question's message (the server's text: clean it before showing)
    url: str


UrlCompleteCallback = Callable[[UrlCompleted], None]


class ServerRequestHandler:
    """The :class:`~mcp_elicit.client.transport.ServerMessages` of a 2025-11-25 session."""

    def __init__(
        self,
        answering: Answering,
        declared: Declared,
        identity: Callable[[], ServerIdentity],
        timers: PausableTimers,
        on_url_complete: UrlCompleteCallback | None = None,
    ) -> None:
        self._answering = answering
        self._declared = declared
        self._identity = identity
        self._timers = timers
        self._on_url_complete = on_url_complete
        self._watched: dict[str, tuple[UrlInput, asyncio.Event]] = {}
        self._failure: BaseException | None = None
        # The stretch of time in which calls run (see the module docstring).
        self._running = 0
        self._budget = 0  # questions it may still bring: max_rounds for each call begun in it
        self._spent = asyncio.Event()  # set when one more came: the running calls end

    @contextlib.contextmanager
    def calls(self, max_rounds: int) -> Iterator[asyncio.Event]:
        """While one call runs: the event set when the server asked more questions than
        ``max_rounds`` for each call running since the last time none was."""
        if self._running == 0:
            self._budget, self._spent = 0, asyncio.Event()
        self._running += 1
        self._budget += max_rounds
        try:
            yield self._spent
        finally:
            self._running -= 1

    # -- the server's requests ----------------------------------------------------------------
    async def answer(self, request: Request) -> Response:
        method = request.method
        if method == "ping":
            return Result(request.id, {})
        if method in (ELICIT, SAMPLE, LIST_ROOTS) and self._running:
            if self._budget <= 0:
                self._spent.set()
                return ErrorResponse(request.id, INTERNAL_ERROR, _TOO_MANY)
            self._budget -= 1
        if method == ELICIT:
            return await self._elicit(request)
        if method == SAMPLE:
            return await self._sample(request)
        if method == LIST_ROOTS:
            if not self._declared.roots:
                return ErrorResponse(request.id, METHOD_NOT_FOUND, "Method not found: roots/list (no roots)")
            return await self._asked(request, self._roots_input(request))
        shown = clean(method, single_line=True, max_length=100)
        return ErrorResponse(request.id, METHOD_NOT_FOUND, f"Method not found: {shown!r}")

    async def _elicit(self, request: Request) -> Response:
        try:
            question = parse_elicitation(str(request.id), request.params, self._declared, legacy=True)
        except UndeclaredRequestError as exc:
            mode = exc.needed.partition(".")[2] or "form"
            message = f"Elicitation mode '{mode}' was not declared by this client"
            return ErrorResponse(request.id, INVALID_PARAMS, message)
        except (InvalidSchemaError, MalformedMessageError) as exc:
            logger.warning("refused the server's elicitation/create %r: %s", request.id, exc)
            return ErrorResponse(request.id, INVALID_PARAMS, f"Invalid params: {exc}")
        response = await self._asked(request, question)
        accepted = isinstance(response, Result) and response.result.get("action") == "accept"
        if isinstance(question, UrlInput) and accepted and question.elicitation_id is not None:
            self.watch(question)
        return response

    async def _sample(self, request: Request) -> Response:
        try:
            question = parse_sampling(str(request.id), request.params, self._declared)
        except UndeclaredRequestError as exc:
            if exc.needed == "the sampling capability":
                return ErrorResponse(request.id, METHOD_NOT_FOUND, "Method not found: sampling (no sampler)")
            return ErrorResponse(
                request.id, INVALID_PARAMS, f"Invalid params: the request needs {exc.needed}, not declared"
            )
        except MalformedMessageError as exc:
            return ErrorResponse(request.id, INVALID_PARAMS, f"Invalid params: {exc}")
        return await self._asked(request, question)

    def _roots_input(self, request: Request) -> InputRequest:
        return RootsInput(str(request.id))

    async def _asked(self, request: Request, question: InputRequest) -> Response:
        """Put one checked question to the answerer (or sampler, or roots), with this client's
        request timers paused meanwhile."""
        self._timers.pause()
        try:
            answers = await self._answering.round([question], self._identity())
        except UndeclaredRequestError as exc:  # no answerer for a mode that was declared: impossible
            return ErrorResponse(request.id, INVALID_PARAMS, f"Invalid params: {exc}")
        except Exception as exc:
            # An AnswererError (a LocalError: the person could not be asked), a sampler or an
            # answerer returning the wrong thing or failing (a bug of the caller's), a failed
            # browser launch: the call raises it (take_failure), as a 2026-07-28 call does, not
            # the server's error that follows. Said once, there, not also in a log line.
            if self._failure is None:
                self._failure = exc
            logger.debug("could not answer the server's %s: %r", request.method, exc)
            return ErrorResponse(request.id, INTERNAL_ERROR, "Internal error: the client could not answer")
        finally:
            self._timers.resume()
        return Result(request.id, answers[question.key])

    def take_failure(self) -> BaseException | None:
        """The first failure on this side since the last call (and forget it)."""
        failure, self._failure = self._failure, None
        return failure

    # -- URL completions ------------------------------------------------------------------------
    def watch(self, question: UrlInput) -> asyncio.Event:
        """An event set when the server reports ``question``'s URL flow complete."""
        assert question.elicitation_id is not None
        found = self._watched.get(question.elicitation_id)
        if found is not None:
            return found[1]
        while len(self._watched) >= MAX_WATCHED:
            self._watched.pop(next(iter(self._watched)))
        event = asyncio.Event()
        self._watched[question.elicitation_id] = (question, event)
        return event

    def notify(self, notification: Notification) -> None:
        if notification.method == ELICITATION_COMPLETE:
            elicitation_id = notification.params.get("elicitationId")
            if not isinstance(elicitation_id, str):
                return
            found = self._watched.pop(elicitation_id, None)
            if found is None:
                logger.info("ignoring a completion notice for an unknown elicitation id")
                return
            question, event = found
            event.set()
            if self._on_url_complete is not None:
                done = UrlCompleted(self._identity(), elicitation_id, question.message, question.url)
                self._on_url_complete(done)
        elif notification.method == "notifications/message":
            data: Any = notification.params.get("data")
            logger.info("the server logs: %s", clean(str(data), single_line=True, max_length=500))
