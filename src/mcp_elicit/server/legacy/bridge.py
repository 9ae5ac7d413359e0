"""One call on a 2025-11-25 session: the same handler, its questions sent as real requests.

A 2026-07-28 client answers a round's questions in a retried request; a 2025-11-25 client
answers real server→client requests. The bridge runs the engine (:meth:`Server.run_call
<mcp_elicit.server.app.Server.run_call>`) and, while it needs input, does what a 2026 client
would do, in process:

1. every input request of the round becomes one *leg*, a request to the client, all sent at once
   (``elicitation/create`` -- a URL one with a fresh ``elicitationId`` --,
   ``sampling/createMessage``, ``roots/list``), each waiting at most ``leg_timeout`` for its
   answer (human-paced: ten minutes by default, never the 60 s a machine would get);
2. the answers become the round's ``inputResponses`` (an ``ElicitResult`` checked and stripped of
   its ``_meta``), and the engine runs the handler again with them and the sealed
   ``requestState`` -- sealed, opened and checked exactly as on the wire, so a handler behaves
   the same whichever way its answers came;
3. until the call completes, or ``max_rounds`` rounds have passed.

Two rounds need no client at all. A round that asks nothing (a state-only round: the handler is
waiting for something, e.g. ``ctx.retry_later()``) is run again after a short pause. A URL question
the user already agreed to open in this call, asked again (the connect kit does that while the
browser step is still under way, holding each retry a while), is not sent again: the user's
consent stands, so it is answered ``accept`` here and the call goes on by itself once the browser
step is done. When it is no longer asked, the step is over, and the client is told with
``notifications/elicitation/complete`` for its ``elicitationId`` (to this session only) if the
step completed: an extension that owns the URL (the connect kit's pages:
:meth:`Extension.url_step_completed <mcp_elicit.server.extension.Extension.url_step_completed>`)
says so from its own record, whatever the call does next (it may still end with an error). Of
any other URL nothing is announced: the user's ``accept`` says only that they agreed to open it,
and the handler going on says no more, so "complete" could come before the page was even
loaded. A call that ends without its handler's outcome (cancelled, the client gone or failing)
still tells the client of the steps that completed.

Capabilities come from the session's ``initialize`` and are checked before anything is sent (the
engine gates every round), so a refusal has no side effects (``-32021`` naming what is missing).
A call the client lets down -- a question not answered within ``leg_timeout``, answered with a
JSON-RPC error, the client gone, or more than ``max_rounds`` rounds -- ends with
:class:`ClientFailed`: a ``tools/call`` then gets a tool error (``isError``) that says why,
``prompts/get`` and ``resources/read`` a ``-32603``. Cancelling the call (the client's
``notifications/cancelled``, a closed stream) cancels every leg still waiting, and the client is
sent ``notifications/cancelled`` for each of them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_elicit.server.call import Call
from mcp_elicit.server.engine import NeedsInput, Outcome
from mcp_elicit.server.legacy.notices import CallNotices
from mcp_elicit.server.registry import Entry
from mcp_elicit.server.replay import exception_leaves
from mcp_elicit.wire import legacy, mrtr
from mcp_elicit.wire.errors import INTERNAL_ERROR, McpError
from mcp_elicit.wire.jsonrpc import ErrorResponse

if TYPE_CHECKING:
    from mcp_elicit.server.legacy.session import Channel, LegacySession

logger = logging.getLogger("mcp_elicit.server.legacy")

# A state-only round is run again after this pause, doubling up to the cap.
_FIRST_PAUSE = 0.25
_MAX_PAUSE = 2.0
_COMPLETE = "notifications/elicitation/complete"
_MAX_NAMED_URLS = 64  # URL questions of a session remembered from its -32042s (see _refuse_urls)


class ClientFailed(McpError):
    """The call cannot go on because of the client's side of the exchange (see the module
    docstring); ``reason`` is the sentence a tool error shows."""

    def __init__(self, reason: str, data: Any = None) -> None:
        super().__init__(INTERNAL_ERROR, f"Internal error: {reason}", data)
        self.reason = reason


class Bridge:
    """Runs one call of a legacy session to its end (see the module docstring)."""

    def __init__(
        self, session: LegacySession, entry: Entry, call: Call, channel: Channel, notices: CallNotices
    ) -> None:
        self._session = session
        self._entry = entry
        self._call = call
        self._channel = channel
        self._notices = notices  # the call's notify: told when the handler runs again
        # (message, url) of URL questions the user accepted in this call -> their elicitationId
        self._accepted_urls: dict[tuple[str, str], str] = {}
        # url_mode "error": the URL questions of the session's -32042s this call went past
        self._named_used: set[tuple[str, str]] = set()

    async def run(self) -> dict[str, Any]:
        """The call's final result (2026 shape: the session writes it for its era)."""
        try:
            return await self._rounds()
        except (Exception, asyncio.CancelledError):
            await self._abandoned()
            raise

    async def _rounds(self) -> dict[str, Any]:
        session = self._session
        call = self._call
        loop = asyncio.get_running_loop()
        outcome = await session.server.run_call(self._entry, call)
        rounds = 0
        pause = _FIRST_PAUSE
        waiting_since: float | None = None  # the first round of a wait with nothing to send
        while isinstance(outcome, NeedsInput):
            answers, sent = await self._ask(outcome.requests) if outcome.requests else ({}, False)
            if sent:
                rounds += 1
                pause, waiting_since = _FIRST_PAUSE, None
                if rounds > session.max_rounds:
                    raise ClientFailed(
                        f"{call.method} {call.target!r} asked the client in more than "
                        f"{session.max_rounds} rounds; giving up"
                    )
            else:
                # Nothing went to the client: the handler waits for something else (a state-only
                # round, or a browser step the user agreed to): run it again after a pause, for
                # as long as a leg may wait.
                if waiting_since is None:
                    waiting_since = loop.time()
                elif loop.time() - waiting_since > session.leg_timeout:
                    raise ClientFailed(
                        f"{call.method} {call.target!r} waited more than {session.leg_timeout:g} s "
                        "without asking anything; giving up"
                    )
                await asyncio.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
            call = call.next_round(answers, outcome.state)
            self._notices.next_round()
            outcome = await session.server.run_call(self._entry, call)
            await self._completed_urls(outcome)
        for place in self._named_used:  # the call is through: those steps are behind the user
            session.urls_named.pop(place, None)
        return outcome.result

    async def _ask(self, requests: Mapping[str, dict[str, Any]]) -> tuple[dict[str, Any], bool]:
        """Every question of a round at once: their answers by key, and whether any question
        went to the client (the first failure ends the round, and the legs still waiting with
        it)."""
        retried = await self._refuse_urls(requests) if self._session.url_mode == "error" else False
        to_send = {key: request for key, request in requests.items() if not self._consented(request)}
        answers: dict[str, Any] = {}
        if len(to_send) == 1:
            # The common round: one question, awaited as it is. A task group around it costs
            # 3% of a whole 2025-11-25 HTTP flow (40k of 1273k instructions, bench/instructions.py
            # --legacy) for nothing to gather.
            ((key, request),) = to_send.items()
            answers[key] = await self._leg(request)
        elif to_send:
            legs: dict[str, asyncio.Task[dict[str, Any]]] = {}
            try:
                async with asyncio.TaskGroup() as group:
                    for key, request in to_send.items():
                        legs[key] = group.create_task(self._leg(request))
            except BaseExceptionGroup as failed:
                raise _first(failed) from None
            answers = {key: leg.result() for key, leg in legs.items()}
        for key in requests:
            if key not in answers:  # asked again while the browser step goes on: consent stands
                answers[key] = {"action": "accept"}
        return answers, bool(to_send) or retried

    def _consented(self, request: dict[str, Any]) -> bool:
        """A URL question the user already agreed to open in this call."""
        params = request.get("params") or {}
        if request.get("method") != mrtr.ELICIT or params.get("mode") != "url":
            return False
        return _place(params) in self._accepted_urls

    async def _leg(self, request: dict[str, Any]) -> dict[str, Any]:
        """One question as one request to the client; its answer as the engine reads it."""
        method = request.get("method")
        params = request.get("params") or {}
        if method == mrtr.ELICIT and params.get("mode") == "url":
            place = _place(params)
            elicitation_id = uuid.uuid4().hex
            answer = await self._send(method, legacy.elicitation_request(params, elicitation_id))
            if answer.get("action") == "accept":
                self._accepted_urls[place] = elicitation_id
            return answer
        if method == mrtr.ELICIT:
            version = self._session.version or legacy.LATEST_LEGACY
            try:
                question = legacy.elicitation_request(params, None, version)
            except ValueError as exc:
                raise ClientFailed(f"the client speaks MCP {version}, and {exc}") from None
            return await self._send(method, question)
        return await self._send(str(method), params)

    async def _send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = await self._session.request(method, params, self._channel)
        if isinstance(response, ErrorResponse):
            raise ClientFailed(
                f"the client answered {method} with error {response.code}: {response.message}",
                {"clientError": {"code": response.code, "message": response.message}},
            )
        if method == mrtr.ELICIT:
            return legacy.read_elicit_result(response.result)
        if not isinstance(response.result, dict):
            raise ClientFailed(f"the client's answer to {method} is not an object")
        return response.result

    async def _refuse_urls(self, requests: Mapping[str, dict[str, Any]]) -> bool:
        """``url_mode="error"``: a round with URL questions ends with ``-32042`` naming them; the
        client retries the call once the user has been to each URL.

        An extension that owns a URL (the connect kit) knows from its own record whether the
        step is done, and stops asking. For any other URL the retry is all the server learns: a
        URL a -32042 of this session named is taken as accepted on the retries (within
        ``leg_timeout``), as a 2026-07-28 client's ``accept`` would be, until a call completes
        past it. Without that the handler would ask it again on every retry, and the call could
        never complete (each retry runs it from the top: one that asks two URLs in turn needs
        the first one taken on both retries). True when such a URL was taken as accepted here
        (an answer, as if the client had sent it)."""
        named = self._session.urls_named
        retried = False
        now = asyncio.get_running_loop().time()
        for place in [place for place, (_, when) in named.items() if now - when > self._session.leg_timeout]:
            del named[place]
        urls = []
        for request in requests.values():
            params = request.get("params") or {}
            if request.get("method") != mrtr.ELICIT or params.get("mode") != "url":
                continue
            place = _place(params)
            earlier = named.get(place)
            if earlier is not None:
                self._accepted_urls[place] = earlier[0]
                self._named_used.add(place)
                retried = True
                continue
            elicitation_id = uuid.uuid4().hex
            urls.append(legacy.elicitation_request(params, elicitation_id))
            if await self._step_of(place[1]) is None and len(named) < _MAX_NAMED_URLS:
                named[place] = (elicitation_id, now)
        if urls:
            raise legacy.url_elicitation_required(
                urls, "This request needs you to complete a step in your browser first; then try again."
            )
        return retried

    async def _completed_urls(self, outcome: Outcome) -> None:
        """URL questions the client accepted that the handler no longer asks: their step is over
        (see :meth:`_step_over`)."""
        if not self._accepted_urls:
            return
        still = set()
        if isinstance(outcome, NeedsInput):
            for request in outcome.requests.values():
                params = request.get("params") or {}
                if params.get("mode") == "url":
                    still.add(_place(params))
        for place in [place for place in self._accepted_urls if place not in still]:
            await self._step_over(place)

    async def _step_over(self, place: tuple[str, str]) -> None:
        """The browser step of the accepted URL question ``place`` is over for this call: the
        client is told once, if the extension that owns the URL says it completed (see the
        module docstring)."""
        elicitation_id = self._accepted_urls.pop(place)
        if await self._step_completed(place[1]):
            await self._session.notify(_COMPLETE, {"elicitationId": elicitation_id}, self._channel)

    async def _abandoned(self) -> None:
        """The call ends with no outcome from the handler (cancelled, the client gone or
        failing, an error response): a browser step that completed is still over for the
        client. Best effort: the call's own ending (re-raised by the caller) is what counts."""
        try:
            for place in list(self._accepted_urls):
                await self._step_over(place)
        except Exception as exc:  # the client is gone, say: nothing more to tell it
            logger.info("could not tell the client of a completed URL step: %r", exc)

    async def _step_completed(self, url: str) -> bool:
        """Whether the server's extension says the step behind ``url`` completed (not when the URL
        is not its own, or there is none)."""
        return await self._step_of(url) is True

    async def _step_of(self, url: str) -> bool | None:
        """What the server's extension says of the step behind ``url``: completed (True), not yet
        (False), or None when the URL is not its own (or there is no extension). Best effort: a
        failure to tell is logged, never the call's end, and counts as not completed."""
        extension = self._session.server.connect
        if extension is None:
            return None
        try:
            return await extension.url_step_completed(url, self._principal())
        except Exception:
            logger.exception("could not learn whether a URL question's step completed")
            return False

    def _principal(self) -> str | None:
        caller = self._call.caller
        return None if caller is None else caller.principal


def _place(params: Mapping[str, Any]) -> tuple[str, str]:
    """What tells a URL question apart within a call: its message and its URL."""
    return (str(params.get("message")), str(params.get("url")))


def _first(failed: BaseExceptionGroup[BaseException]) -> BaseException:
    """The exception that ended a round (the others are the legs cancelled because of it)."""
    leaves = exception_leaves(failed)
    for leaf in leaves:
        if not isinstance(leaf, asyncio.CancelledError):
            return leaf
    return leaves[0]
