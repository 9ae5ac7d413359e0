"""The Multi Round-Trip Request loop of one call, as a small state machine with no I/O.

A :class:`Rounds` is made for one call and never shared (``inputRequests`` and ``requestState``
belong to the retry of *that* request only). The engine sends :meth:`Rounds.params`, feeds each
result to :meth:`Rounds.receive`, and gets back one step:

* :class:`Complete` -- the final result (an absent ``resultType`` counts as complete);
* :class:`AskInputs` -- answer these checked input requests, then call :meth:`Rounds.retry_with`;
* :class:`RetryAfter` -- a state-only round: wait ``delay`` seconds, then :meth:`Rounds.retry_with`
  with nothing.

The retry repeats the original params unchanged, adds ``inputResponses`` when there were
questions, and echoes ``requestState`` exactly as received (the same ``str`` object; it is
never parsed or rebuilt) or leaves it out when the server sent none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp_elicit.client.capabilities import Declared
from mcp_elicit.client.errors import MalformedMessageError, RoundLimitError
from mcp_elicit.client.inputs import InputRequest, UrlInput, parse_input_requests
from mcp_elicit.schema.text import short
from mcp_elicit.wire.mrtr import INPUT_REQUIRED_METHODS


@dataclass(frozen=True, slots=True)
class Complete:
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AskInputs:
    requests: tuple[InputRequest, ...]


@dataclass(frozen=True, slots=True)
class RetryAfter:
    delay: float


Step = Complete | AskInputs | RetryAfter


@dataclass(frozen=True, slots=True)
class Backoff:
    """Pacing of state-only rounds: ``initial`` seconds, doubling, up to ``cap``.

    Once the person has accepted a URL in this call, a server answering state-only is usually
    waiting for them to finish in the browser, so the wait may grow to ``url_cap`` instead:
    polling faster gains nothing and would burn the round budget in seconds.
    """

    initial: float = 0.05
    cap: float = 1.0
    url_cap: float = 5.0

    def delay(self, streak: int, *, waiting_for_url: bool) -> float:
        """Seconds to wait before retrying after ``streak`` earlier state-only rounds in a row
        (0 for the first): ``initial * 2**streak``, at most ``cap`` (``url_cap`` when
        ``waiting_for_url``)."""
        cap = self.url_cap if waiting_for_url else self.cap
        return min(cap, self.initial * (2.0 ** min(streak, 32)))


def result_kind(result: dict[str, Any]) -> str:
    """``"complete"`` or ``"input_required"``; anything else is refused."""
    kind = result.get("resultType", "complete")  # absent: an older server's final result
    if kind == "complete" or kind == "input_required":
        return str(kind)
    raise MalformedMessageError(
        f"unknown resultType {short(kind)} (this client knows complete and input_required)"
    )


class Rounds:
    """The loop state of one call: its original params, the round count and the last state."""

    __slots__ = (
        "_backoff",
        "_declared",
        "_max_rounds",
        "_next",
        "_original",
        "_state",
        "_streak",
        "_url",
        "method",
        "rounds",
    )

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        declared: Declared,
        *,
        max_rounds: int,
        backoff: Backoff,
    ) -> None:
        self.method = method
        self.rounds = 0  # input_required results received so far
        self._original = params
        self._declared = declared
        self._max_rounds = max_rounds
        self._backoff = backoff
        self._next: dict[str, Any] = params
        self._state: str | None = None
        self._streak = 0  # consecutive state-only rounds
        self._url = False  # a URL was accepted in this call

    def params(self) -> dict[str, Any]:
        """The params of the next request (without ``_meta``, which the engine adds)."""
        return self._next

    def receive(self, result: object) -> Step:
        if not isinstance(result, dict):
            raise MalformedMessageError(f"{self.method}: the result must be an object")
        if result_kind(result) == "complete":
            return Complete(result)
        if self.method not in INPUT_REQUIRED_METHODS:
            raise MalformedMessageError(
                f"{self.method} answered input_required, which only tools/call, prompts/get and "
                "resources/read may do"
            )
        state = result.get("requestState")
        if state is not None and not isinstance(state, str):
            raise MalformedMessageError("requestState must be a string")
        raw_requests = result.get("inputRequests")
        if raw_requests is not None and not isinstance(raw_requests, dict):
            raise MalformedMessageError("inputRequests must be an object keyed by request ids")
        if not raw_requests and state is None:
            raise MalformedMessageError(
                "an input_required result must carry inputRequests or requestState (it had neither)"
            )
        self.rounds += 1
        if self.rounds > self._max_rounds:
            raise RoundLimitError(self.method, self._max_rounds)
        self._state = state
        if raw_requests:
            requests = parse_input_requests(raw_requests, self._declared)
            self._streak = 0
            return AskInputs(requests)
        delay = self._backoff.delay(self._streak, waiting_for_url=self._url)
        self._streak += 1
        return RetryAfter(delay)

    def retry_with(
        self, responses: dict[str, dict[str, Any]] | None, asked: tuple[InputRequest, ...] = ()
    ) -> None:
        """Build the retry from the original params, these answers and the echoed state."""
        params = dict(self._original)
        if responses:
            params["inputResponses"] = responses
            for request in asked:
                if isinstance(request, UrlInput) and responses.get(request.key, {}).get("action") == "accept":
                    self._url = True
        if self._state is not None:
            params["requestState"] = self._state
        self._next = params
