"""The call engine: run one round of a call and say whether it is complete or needs input.

:meth:`Engine.run` is the one entry point. Given a registry entry (a tool, prompt or resource)
and a :class:`~mcp_elicit.server.call.Call` (one round: the arguments, the client's capabilities,
who is calling, this round's answers and the ``requestState`` it carries), it

1. binds the round to the request (:class:`~mcp_elicit.state.RequestBinding`: method, target,
   a digest of the arguments, the caller) -- once, and only when a state is opened or sealed;
2. opens the state: a first round starts an empty :class:`~mcp_elicit.server.record.CallRecord`;
   a later one unseals the record from ``requestState`` (refused with one fixed ``-32602`` when
   it was sealed for another request, user, audience or key, has expired, or, with a single-use
   store, was used before); in redelivery mode the token is *claimed* for this exact request
   instead, and a request already answered gets the committed answer again;
3. runs the handler once from the top (:func:`~mcp_elicit.server.replay.run_round`), with a
   :class:`~mcp_elicit.server.context.Context` whose questions are answered from the record and
   this round's answers;
4. returns :class:`Complete` with the shaped result, or :class:`NeedsInput` with the questions
   the handler is waiting for (checked against the client's capabilities first: -32021 names
   all that is missing) and the next record sealed into a new ``requestState``.

It knows nothing of transports or protocol eras. The 2026-07-28 transports send ``NeedsInput``
as an ``InputRequiredResult``; the 2025-11-25 bridge sends each of its requests to the client as
a real request, collects the answers and calls :meth:`Engine.run` again in-process with them and
the sealed state, so a handler meets the same checks whichever way its answers came.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_elicit.schema.errors import SchemaError
from mcp_elicit.server import gating
from mcp_elicit.server.call import Call
from mcp_elicit.server.context import Context
from mcp_elicit.server.errors import HandlerDefect
from mcp_elicit.server.extension import Extension
from mcp_elicit.server.lowlevel import InputRequired
from mcp_elicit.server.record import MAX_ANSWER_NESTING, CallRecord, MalformedRecord, nested_deeper_than
from mcp_elicit.server.registry import Entry
from mcp_elicit.server.replay import Completed, run_round
from mcp_elicit.server.round import Round
from mcp_elicit.server.signature import ArgumentError
from mcp_elicit.state import (
    INVALID_STATE_MESSAGE,
    RequestBinding,
    StateRejected,
    StateSealer,
    StateStoreUnavailable,
    StateTooLarge,
    args_digest,
)
from mcp_elicit.state.binding import MAX_NESTING, bound_principal, request_digest
from mcp_elicit.state.seal import Claimed
from mcp_elicit.wire import codec, mrtr
from mcp_elicit.wire.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    McpError,
    internal_error,
    invalid_params,
)

logger = logging.getLogger("mcp_elicit.server")

INVALID_STATE_DATA = {"reason": "invalid_request_state"}
STORE_UNAVAILABLE_DATA = {"reason": "state_store_unavailable", "retryable": True}
RETIRED_RESOURCE_NOT_FOUND = -32002  # 2026-07-28 answers a missing resource with -32602


# Not frozen: one per round, and a frozen dataclass's __init__ sets each field through
# object.__setattr__ (~1.3k instructions a field; bench/README.md). Never modified.
@dataclass(slots=True)
class Complete:
    """The call is over: ``result`` is what the client gets (a tool, prompt or resource result)."""

    result: dict[str, Any]


@dataclass(slots=True)
class NeedsInput:
    """The handler waits for the client: ``requests`` maps each question's key to its input
    request (``{"method", "params"}``, checked against the client's capabilities), ``state`` is
    the sealed record the next round must carry (None when no state is kept)."""

    requests: dict[str, dict[str, Any]]
    state: str | None

    def result(self) -> dict[str, Any]:
        """The 2026-07-28 ``InputRequiredResult``."""
        return mrtr.input_required_result(self.requests, self.state)


Outcome = Complete | NeedsInput


class Engine:
    """Runs rounds of calls for one server (see the module docstring)."""

    def __init__(
        self,
        sealer: StateSealer,
        *,
        redelivery: bool = False,
        max_answer_attempts: int = 3,
        replay_grace: float = 2.0,
        extension: Extension | None = None,
    ) -> None:
        self.sealer = sealer
        self.redelivery = redelivery
        self._unknown_key_warned = -math.inf
        self.max_answer_attempts = max_answer_attempts
        self.replay_grace = replay_grace
        self.extension = extension

    async def run(self, entry: Entry, call: Call) -> Outcome:
        """One round of ``call`` on ``entry``."""
        try:
            kwargs = entry.signature.bind(call.arguments)
        except ArgumentError as exc:
            return Complete(entry.refused_arguments(exc, call))
        bound = _Bound(call, self._binding)
        opened = await self._open(call, bound)
        if isinstance(opened, Complete | NeedsInput):
            return opened  # redelivered: this very request was answered before
        record, claimed = opened
        rnd = Round(record, call.input_responses, call.meta.capabilities)
        if entry.signature.context_param is not None:
            kwargs[entry.signature.context_param] = Context(
                call, rnd, max_answer_attempts=self.max_answer_attempts, extension=self.extension
            )
        outcome = await self._handle(entry, call, rnd, kwargs, bound)
        if claimed is not None:
            return await self._commit(claimed, outcome, call)
        return outcome

    # -- the handler ---------------------------------------------------------------------------
    async def _handle(
        self, entry: Entry, call: Call, rnd: Round, kwargs: dict[str, Any], bound: _Bound
    ) -> Outcome:
        try:
            ended = await run_round(entry.fn, kwargs, rnd, self.replay_grace)
        except (HandlerDefect, SchemaError) as exc:
            # A defect in the handler, not in the request: say so loudly, on both sides.
            logger.error("%s in %s %r: %s", type(exc).__name__, call.method, call.target, exc)
            raise McpError(INTERNAL_ERROR, f"Internal error: {exc}") from None
        except McpError as exc:
            if _reserved(exc.code):
                raise _reserved_code_raised(exc, call) from None
            raise
        except Exception as exc:
            return Complete(entry.failed(exc, call))
        if isinstance(ended, Completed) and not isinstance(ended.value, InputRequired):
            try:
                return Complete(entry.complete(ended.value, call))
            except TypeError as exc:  # a value of no result's shape, or with no JSON form
                logger.error("%s %r returned a value that is no result: %s", call.method, call.target, exc)
                raise McpError(
                    INTERNAL_ERROR,
                    f"Internal error: the handler of {call.method} {call.target!r} returned a value "
                    f"that is no result: {exc}",
                ) from None
        if isinstance(ended, Completed):  # a low-level handler's own InputRequiredResult
            lowlevel: InputRequired = ended.value
            gating.gate(lowlevel.input_requests, call.meta.capabilities, allow_secrets=lowlevel.allow_secrets)
            requests = {key: mrtr.as_input_request(value) for key, value in lowlevel.input_requests.items()}
            payload = rnd.next_payload(lowlevel.state)
        else:
            requests = ended.requests
            payload = rnd.next_payload(rnd.record.user_state)
        return NeedsInput(requests, self._seal(payload, call, bound.binding()))

    # -- the state -----------------------------------------------------------------------------
    @staticmethod
    def _binding(call: Call, arguments: dict[str, Any]) -> RequestBinding:
        """What a state of this call is bound to; arguments that cannot be digested (nested too
        deeply) are refused as -32602 instead of failing inside the engine."""
        caller = call.caller
        principal = bound_principal(
            None if caller is None else caller.principal, None if caller is None else caller.client
        )
        try:
            return RequestBinding(call.method, call.target, args_digest(arguments), principal)
        except (TypeError, RecursionError):
            raise invalid_params(
                f"arguments must be JSON data nested at most {MAX_NESTING} levels deep"
            ) from None

    async def _open(self, call: Call, bound: _Bound) -> tuple[CallRecord, Claimed | None] | Outcome:
        """The record this round starts from, and (redelivery mode) the token's claim; or the
        outcome committed earlier for this very request."""
        token = call.request_state
        if token is None:
            return CallRecord(), None
        binding = bound.binding()
        try:
            if call.in_process:
                # Handed over in memory: a store outage cannot cost the person their answer.
                return CallRecord.from_payload(self.sealer.unseal(token, binding).payload), None
            if not self.redelivery:
                unsealed = await self.sealer.open(token, binding)
                return CallRecord.from_payload(unsealed.payload), None
            claimed = await self.sealer.claim(token, binding, self._request_digest(binding, call))
            if claimed.response is not None:
                logger.info("redelivering the committed answer on %s %r", call.method, call.target)
                return _stored_outcome(claimed.response, call)
            return CallRecord.from_payload(claimed.unsealed.payload), claimed
        except StateStoreUnavailable as exc:
            raise _store_unavailable(exc) from None
        except (StateRejected, MalformedRecord) as exc:
            if getattr(exc, "reason", None) == "unknown-key":
                self._warn_unknown_key()
            raise _refused_state(exc, call) from None

    def _warn_unknown_key(self) -> None:
        """A state sealed under a key this server lacks is a deployment fault, not a client's:
        instances with different keys, or a key removed too soon. Said at WARNING, once a minute
        (a client may send many), where the other refusals are INFO lines."""
        now = time.monotonic()
        if now - self._unknown_key_warned < 60.0:
            return
        self._unknown_key_warned = now
        logger.warning(
            "refused a requestState sealed under a key this server does not hold: give every "
            "instance the same state keys (MCP_ELICIT_STATE_KEYS or a key file), and keep a "
            "retired key until the state TTL has passed (said once a minute)"
        )

    @staticmethod
    def _request_digest(binding: RequestBinding, call: Call) -> str:
        try:
            return request_digest(binding, call.input_responses)
        except (TypeError, RecursionError):
            raise invalid_params(
                f"inputResponses must be JSON data nested at most {MAX_NESTING} levels deep"
            ) from None

    def _seal(self, payload: dict[str, Any], call: Call, binding: RequestBinding) -> str:
        try:
            return self.sealer.seal(payload, binding)
        except TypeError:
            # Raw answers (sampling, roots) are kept in the state as sent; JSON nested too deeply
            # to be encoded again is the request's fault, not the handler's.
            if nested_deeper_than(call.input_responses, MAX_ANSWER_NESTING):
                raise invalid_params(
                    f"inputResponses must be JSON data nested at most {MAX_ANSWER_NESTING} levels deep"
                ) from None
            raise
        except StateTooLarge as exc:
            single_use = call.request_state is not None and self.sealer.single_use is not None
            raise _state_too_large(exc, payload, call, single_use) from None

    async def _commit(self, claimed: Claimed, outcome: Outcome, call: Call) -> Outcome:
        """Redelivery mode: store this round's answer; return the one to send (the first
        committed for the token: ours, or that of a concurrent attempt that won)."""
        result = outcome.result if isinstance(outcome, Complete) else outcome.result()
        encoded = codec.dumps(result)
        try:
            stored = await self.sealer.commit(claimed, encoded)
        except StateStoreUnavailable as exc:
            raise _store_unavailable(exc) from None
        except StateRejected as exc:
            raise _refused_state(exc, call) from None
        return outcome if stored is encoded else _stored_outcome(stored, call)


class _Bound:
    """The one binding of a round, made when it is first needed: a later round needs it to open
    its state, a first round only if it seals one (a tool that asks nothing never digests its
    arguments). A handler may change nested arguments in place, and the state must be bound to
    those the client sent: a first round with nested arguments keeps them as JSON (cheap) to
    digest at the end."""

    def __init__(self, call: Call, make: Callable[[Call, dict[str, Any]], RequestBinding]) -> None:
        self._call = call
        self._make = make
        self._binding: RequestBinding | None = None
        self._sent: bytes | None = None
        arguments = call.arguments
        if call.request_state is None and any(type(v) is dict or type(v) is list for v in arguments.values()):
            try:
                self._sent = codec.dumps(arguments)
            except TypeError:  # not JSON orjson writes back (beyond 64 bits): digest now
                self._binding = make(call, arguments)

    def binding(self) -> RequestBinding:
        if self._binding is None:
            arguments = self._call.arguments if self._sent is None else codec.loads(self._sent)
            self._binding = self._make(self._call, arguments)
        return self._binding


def _stored_outcome(stored: bytes, call: Call) -> Outcome:
    """An outcome committed in redelivery mode, as it is sent again."""
    result = codec.loads(stored)
    if not isinstance(result, dict):  # only results (dicts) are committed
        raise internal_error("the stored answer for this requestState is corrupt")
    if result.get("resultType") != "input_required":
        return Complete(result)
    requests = result.get("inputRequests") or {}
    # Sent again to a re-issue of the request, which may declare less than the request that
    # produced it (the questions were vetted then).
    gating.gate(requests, call.meta.capabilities, vet=False)
    state = result.get("requestState")
    return NeedsInput(requests, state if isinstance(state, str) else None)


def _reserved(code: int) -> bool:
    """Whether a handler may not raise ``code``: -32020..-32099 hold only the codes the MCP
    specification defines, each with a meaning the client acts on (a header to fix, a version
    to renegotiate, URLs to open on 2025-11-25), and -32002 is retired. Of those, a handler
    means only -32021 (``ctx.require``: a capability the client did not declare)."""
    return code == RETIRED_RESOURCE_NOT_FOUND or (
        -32099 <= code <= -32020 and code != MISSING_REQUIRED_CLIENT_CAPABILITY
    )


def _reserved_code_raised(exc: McpError, call: Call) -> McpError:
    """A handler's ``McpError`` with a reserved code: a defect, sent as -32603. Passed on, a
    -32042 would send the client URLs no gating or URL check has seen, in an era that may
    forbid the code."""
    logger.error("%s %r raised %r, a code MCP reserves", call.method, call.target, exc)
    return McpError(
        INTERNAL_ERROR,
        f"Internal error: the handler of {call.method} {call.target!r} raised McpError({exc.code}), "
        "a code the MCP specification reserves (-32020..-32099 and -32002); to send the user to a "
        "URL use ctx.elicit_url(...), for a failure the model should read raise ToolError, and for "
        "a code of your own pick one outside -32000..-32099",
    )


def _store_unavailable(exc: StateStoreUnavailable) -> McpError:
    """The single-use store could not answer: fail closed with an error worth retrying."""
    logger.warning("the single-use state store is unavailable: %s", exc)
    return McpError(
        INTERNAL_ERROR,
        "Internal error: the server's state store is unavailable; retry the request shortly",
        dict(STORE_UNAVAILABLE_DATA),
    )


def _refused_state(exc: StateRejected | MalformedRecord, call: Call) -> McpError:
    reason = getattr(exc, "reason", str(exc))
    if reason == "principal":
        # Sealed by this server for someone else: a state copied from another user's session (or
        # a proxy that mixes users up). The other refusals are a client's slips: INFO lines.
        logger.warning(
            "SECURITY: a requestState sealed for %s was sent by %s on %s %r: refused",
            _who(getattr(exc, "sealed_for", None)),
            _who(bound_principal(call.caller.principal, call.caller.client) if call.caller else None),
            call.method,
            call.target,
        )
    else:
        logger.info("refused requestState on %s %r: %s", call.method, call.target, reason)
    return McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE, dict(INVALID_STATE_DATA))


def _who(principal: str | None) -> str:
    """A bound principal for a log line: ``'issuer|subject'`` (and its client), or anonymous."""
    if principal is None:
        return "an anonymous caller"
    who, _, client = principal.partition("\x00")
    return f"{who!r} (client {client!r})" if client else repr(who)


def _state_too_large(exc: StateTooLarge, payload: dict[str, Any], call: Call, single_use: bool) -> McpError:
    """Blame whoever made the state too large: the client's answers (every answer so far is kept
    in it) when the state would fit without them, otherwise the handler's own state."""
    answers_bytes = len(codec.dumps(payload.get("a", {})))
    if exc.size - answers_bytes * 4 // 3 <= exc.limit:  # base64 makes 4 bytes of every 3
        # In single-use mode the state this request carried is used up: only a new call can go on.
        advice = "call again and answer with less text" if single_use else "answer with less text"
        return invalid_params(
            f"the answers are too large to carry to the next round (requestState would be {exc.size} "
            f"bytes; the server's limit is {exc.limit}): {advice}"
        )
    logger.error("%s %r keeps too much in requestState: %s", call.method, call.target, exc)
    return internal_error("the handler keeps more in requestState than the server allows")
