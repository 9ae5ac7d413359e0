"""What to do when the client retries a request that sent a URL elicitation (sans-IO).

The sealed ``requestState`` carries the flow id. On the retry the engine reads the record
(``await store.get(id)``) and asks :func:`check_for_retry` with the principal of the *current*
request's token (never one remembered from earlier):

* :class:`Ready`: the flow completed for this principal; finish the tool call;
* :class:`Waiting`: still pending or in progress; either hold the request a bounded time and look
  again (:meth:`Waiting.hold_for` gives the bound), or re-issue input-required with the *same* URL;
* :class:`Failed`: it can never complete (expired, failed, declined, unknown, or not this
  principal's); end with a tool error carrying :attr:`Failed.message`.

A flow owned by someone else is refused first, whatever its status, and logged at WARNING with
both principals: the sealed state is bound to its principal, so reaching this point means a state
or flow id moved between users, which is what the phishing attack looks like.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from mcp_elicit.connect.identity.principal import Principal

from .model import FlowKind, PendingFlow, owner_key

__all__ = ["Failed", "FailureReason", "Ready", "RetryOutcome", "Waiting", "check_for_retry", "step_words"]

_log = logging.getLogger("mcp_elicit.connect.flows")

FailureReason = Literal["not-owner", "expired", "failed", "declined", "unknown"]


def step_words(kind: FlowKind, name: str) -> str:
    """How every message names a flow's step: "connecting your GitHub account" (``name``: what
    the provider is called), "entering the secret 'openai_api_key'"."""
    if kind == "connect":
        return f"connecting your {name} account"
    return f"entering the secret {name!r}"


@dataclass(frozen=True, slots=True)
class Ready:
    """The flow completed for this principal."""

    flow: PendingFlow


@dataclass(frozen=True, slots=True)
class Waiting:
    """The flow is still pending or in progress."""

    flow: PendingFlow

    def hold_for(self, max_hold: float, now: float) -> float:
        """Seconds to hold the request before answering (at most ``max_hold``, never past the
        flow's expiry, never negative)."""
        return max(0.0, min(float(max_hold), self.flow.expires - now))


@dataclass(frozen=True, slots=True)
class Failed:
    """The flow can never complete. :attr:`message` is for the tool error the user sees."""

    reason: FailureReason
    flow: PendingFlow | None = None

    @property
    def message(self) -> str:
        """Why the flow failed and what to do next, in words for the user (no secrets)."""
        flow = self.flow
        what = "the step in your browser"
        if flow is not None and self.reason != "not-owner":
            what = step_words(flow.kind, flow.provider)
        if self.reason == "expired":
            return f"The link for {what} expired before it was completed. Run the tool again for a new link."
        if self.reason == "declined":
            return f"You declined {what}."
        if self.reason == "failed":
            detail = "."
            if flow is not None and flow.detail:
                # A sentence of its own before "Run the tool again": end it.
                detail = f": {flow.detail}" + ("" if flow.detail.endswith((".", "!", "?")) else ".")
            return f"{what[:1].upper()}{what[1:]} did not complete{detail} Run the tool again to retry."
        if self.reason == "not-owner":
            return "This request cannot be completed for the signed-in account. Run the tool again."
        return "The link for this request is no longer valid. Run the tool again for a new link."


RetryOutcome = Ready | Waiting | Failed


def check_for_retry(flow: PendingFlow, current_principal: str | Principal | None, now: float) -> RetryOutcome:
    """Decide a retry of the request that created ``flow`` (see the module docstring).

    ``current_principal`` is the principal of the retry's own token (``ctx.principal``); an
    anonymous retry (``None``) is never the owner.
    """
    caller = "<anonymous>" if current_principal is None else owner_key(current_principal)
    if flow.owner != caller:
        _log.warning(
            "SECURITY: flow %s belongs to %r but was presented on a retry by %r "
            "(possible phishing or stolen requestState); refused",
            flow.fingerprint,
            flow.owner,
            caller,
        )
        return Failed("not-owner", flow)
    if flow.status == "completed":
        return Ready(flow)
    if flow.expired_at(now):
        return Failed("expired", flow)
    if flow.status == "failed":
        return Failed("failed", flow)
    if flow.status == "declined":
        return Failed("declined", flow)
    return Waiting(flow)
