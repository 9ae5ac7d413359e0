"""The single-use store protocols: which ``requestState`` tokens were already used, and for what.

Sealing binds a token to its request, principal and expiry, but a sealed token can still be sent
twice within its TTL. A single-use store closes that gap. Two modes exist.

Strict (:class:`SingleUseStore`, ``StateSealer.open``)
    The token id is consumed *before* the round runs; only the first consumption succeeds. Simple,
    one store round trip, but it cannot tell a replay from a re-issue: if the instance that
    consumed the token dies before its answer reaches the client, the client's re-issue of the
    very same request (same ``requestState``, new JSON-RPC id, possibly on another instance) is
    refused as replayed and the flow is lost.

Redelivery (:class:`RedeliveryStore`, ``StateSealer.claim`` / ``StateSealer.commit``)
    Consumption is made idempotent *per token and request*. Two atomic steps:

    1. **claim** before the round runs: insert ``(token id, request digest)`` where the request
       digest (:func:`~mcp_elicit.state.binding.request_digest`) covers the binding and the
       canonical ``inputResponses``. The first claim fixes, forever (until expiry), which request
       may use the token. A later claim of the same token id gets the stored row back:

       * another digest: refused (``StateRejected("replayed")``) before anything runs, so a token
         can never drive a second, *different* round (other answers, other branch, other side
         effects), whoever sends it and whenever;
       * the same digest and a committed response: that response is sent again, byte for byte,
         and the handler does not run at all;
       * the same digest and no committed response: the first attempt crashed, was cut off, or is
         still running. The round runs again. This is the case that strict mode gets wrong.

    2. **commit** after the round produced its answer (an ``InputRequiredResult`` with the next
       state, or the final result) and before it is sent: store the answer on the row if the row
       has none yet. First commit wins; a caller whose commit lost sends the winner's answer
       instead of its own. So every response that ever leaves any instance for a given token is
       the same one: at most one next ``requestState`` exists per token, and the flow cannot fork.

    Failure cases, and why each keeps the guarantees:

    * crash (or ``kill -9``, a dropped connection, a cancelled request) before the claim: nothing
      is recorded; the re-issue claims normally.
    * crash between claim and commit: the re-issue finds its own digest without a response and runs
      the round again. Side effects that ran in the first attempt must not run twice: that is what
      ``ctx.once(name, fn)`` and its idempotency key (flow id + step name, the same in every attempt)
      are for; the step's own store must deduplicate on that key.
    * crash after the commit, before the answer was sent: the re-issue gets the stored answer.
    * two attempts of the same request at the same time (a double click, a client timeout that
      raced the first one): the later claim finds the first one's claim without an answer and,
      while that claim is younger than ``CLAIM_WAIT`` (``StateSealer.claim``), waits for its
      answer and sends it; only a claim older than that (its attempt crashed, failed, or is
      slower than that) lets the round run again, and the first commit wins. Side effects: as
      above.
    * the store is unreachable, or a claim's or commit's outcome is unknown: the request fails with
      a retryable error (never "not replayed" by guess). A claim that did land is found again by the
      re-issue (same digest); a commit that did land is redelivered.
    * an error answer (JSON-RPC error, tool failure) is not committed: the token stays bound to the
      request that failed; re-issuing that same request runs it again, any other request is refused.

    The cost is a second store round trip per retried round (the commit) and the answer's bytes kept
    until the token expires.

Implementations in this package: :class:`SQLiteSingleUseStore` (one host, one or more processes
sharing a file) and :class:`PostgresSingleUseStore` (any number of hosts), both the one store of
:mod:`mcp_elicit.state.database_store` over their database; they implement both protocols, on one
table (a token consumed in strict mode is refused by a claim, and the reverse).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["Claim", "RedeliveryStore", "SingleUseStore"]


@runtime_checkable
class SingleUseStore(Protocol):
    """Atomic "first use wins" set of token ids, each remembered until its expiry."""

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """Record ``token_id``. ``True`` the first time, ``False`` for every later call.

        Must be atomic across concurrent callers (and across processes for shared stores).
        ``expires_at`` (seconds since the epoch) is how long the record must be kept at least.
        Raises :class:`StateStoreUnavailable` when the answer is unknown; never guesses ``True``.
        """
        ...

    async def purge_expired(self, now: float) -> int:
        """Delete records whose ``expires_at`` is before ``now``; returns how many were deleted."""
        ...

    async def close(self) -> None:
        """Release connections. The store cannot be used afterwards."""
        ...


@dataclass(frozen=True, slots=True)
class Claim:
    """What :meth:`RedeliveryStore.claim` found.

    ``first``: this call created the record. ``same_request``: the record is for the same request
    digest (always true when ``first``). ``response``: the answer committed for it, if any.
    ``claimed_at``: when the record was created (seconds since the epoch, the store's clock).
    """

    first: bool
    same_request: bool
    response: bytes | None = None
    claimed_at: float | None = None


@runtime_checkable
class RedeliveryStore(SingleUseStore, Protocol):
    """A single-use store that also remembers, per token, the request it was used for and the
    answer given to it (see the module docstring)."""

    async def claim(self, token_id: str, request_digest: str, expires_at: float) -> Claim:
        """Record ``(token_id, request_digest)`` unless ``token_id`` is known; report what is stored.

        Atomic like :meth:`SingleUseStore.consume` (a token consumed by ``consume`` has no digest
        and so never matches). Raises :class:`StateStoreUnavailable` when the answer is unknown.
        """
        ...

    async def commit(self, token_id: str, request_digest: str, response: bytes) -> bytes | None:
        """Store ``response`` for the claimed token unless an answer is stored already.

        Returns the answer now stored (``response`` if this call won, the earlier one otherwise),
        or ``None`` when no claim for this token and digest exists (expired and purged).
        Raises :class:`StateStoreUnavailable` when the outcome is unknown.
        """
        ...
