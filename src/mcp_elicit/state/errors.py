"""Exceptions raised by :mod:`mcp_elicit.state`.

Nothing in this module says *why* a ``requestState`` was refused on the wire: the only text a client
ever sees is :data:`INVALID_STATE_MESSAGE`. The machine-readable cause travels in
:attr:`StateRejected.reason` and is meant for server logs and metrics only.
"""

from __future__ import annotations

from typing import ClassVar, Final, Generic, Literal, TypeVar

__all__ = [
    "INVALID_STATE_MESSAGE",
    "FixedMessageError",
    "RejectReason",
    "StateRejected",
    "StateStoreUnavailable",
    "StateTooLarge",
]

INVALID_STATE_MESSAGE: Final = "Invalid or expired requestState"
"""The one fixed message sent to clients (JSON-RPC ``-32602``) for every refused state."""

RejectReason = Literal[
    "not-a-string",  # the value is not a str (None, number, object, bytes, ...)
    "too-large",  # longer than the sealer's ``max_token_bytes``
    "bad-version",  # missing or unknown version prefix (only ``v1.`` is understood)
    "bad-encoding",  # empty, non-ASCII, or not canonical unpadded base64url
    "truncated",  # decodes to fewer bytes than kid + nonce + tag + 1
    "unknown-key",  # the key id names no key in the ring
    "decrypt-failed",  # AES-GCM authentication failed (tampering, wrong key, truncation)
    "bad-claims",  # authenticated, but the claims are not what this library writes
    "expired",  # now is past the expiry (or past issued-at + the sealer's current TTL)
    "issued-in-future",  # issued-at lies further in the future than the allowed clock skew
    "audience",  # sealed for another audience (another server / deployment)
    "binding-method",  # sealed for another JSON-RPC method
    "binding-target",  # sealed for another tool / prompt / resource
    "binding-args",  # sealed for different arguments
    "principal",  # sealed for another principal, or principal vs. anonymous either way
    "replayed",  # already consumed once (single-use store)
]


_Reason = TypeVar("_Reason", bound=str)


class FixedMessageError(Exception, Generic[_Reason]):
    """An error whose text is always the class's one :attr:`public_message`, whoever formats it;
    the cause is in :attr:`reason`, for logs only (``repr()`` shows it; a pickled copy keeps it).

    The refusals that must not tell a caller which check failed are made of it: a refused
    ``requestState`` here, a refused access token and an unusable flow id in the connect kit."""

    __slots__ = ("reason",)

    public_message: ClassVar[str]
    reason: _Reason

    def __init__(self, reason: _Reason) -> None:
        super().__init__(self.public_message)
        self.reason = reason

    def __str__(self) -> str:
        return self.public_message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(reason={self.reason!r})"

    def __reduce__(self) -> tuple[type[FixedMessageError[_Reason]], tuple[_Reason]]:
        return (type(self), (self.reason,))


class StateRejected(FixedMessageError[RejectReason]):
    """A ``requestState`` that must be refused.

    ``str(exc)`` is always :data:`INVALID_STATE_MESSAGE`, so an engine that formats the exception
    cannot leak the cause. The cause is in :attr:`reason` (log it, never send it).
    """

    __slots__ = ("sealed_for",)

    public_message = INVALID_STATE_MESSAGE

    def __init__(self, reason: RejectReason, sealed_for: str | None = None) -> None:
        super().__init__(reason)
        # reason "principal": the principal the state was sealed for (the caller is the other),
        # so that the engine can log a state sent by another user as the security event it is.
        self.sealed_for = sealed_for

    def __reduce__(self) -> tuple[type[StateRejected], tuple[RejectReason, str | None]]:  # type: ignore[override]
        return (type(self), (self.reason, self.sealed_for))


class StateStoreUnavailable(Exception):
    """The single-use store could not answer (database down, timeout, closed store).

    The engine must fail closed: treat the request as an internal error, never as "not replayed".
    The message names the store and the failure but never contains a DSN or password.
    """


class StateTooLarge(ValueError):
    """:meth:`StateSealer.seal` would make a token longer than ``max_token_bytes`` (it would be
    refused on the way back). ``size`` and ``limit`` are in bytes, so that the engine can tell
    whether the client's answers or the handler's own state made it too large."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"sealed requestState is {size} bytes, over max_token_bytes={limit}; keep less in the state"
        )
        self.size = size
        self.limit = limit
