"""Exceptions raised by :mod:`mcp_elicit.connect.flows`.

At the public boundary (a browser opening ``/connect/<id>``, anyone holding a URL) an unknown id,
an expired flow and another user's flow all raise the same :class:`FlowNotFound` with the same
message, so the answer says nothing about which ids exist or whose they are. The internal cause is
:attr:`FlowNotFound.reason`, for logs only.
"""

from __future__ import annotations

from typing import Final, Literal

from mcp_elicit.state.errors import FixedMessageError

__all__ = [
    "FLOW_NOT_FOUND_MESSAGE",
    "FlowError",
    "FlowNotFound",
    "FlowNotFoundReason",
    "FlowStateConflict",
    "FlowStoreUnavailable",
    "TooManyPendingFlows",
]

FLOW_NOT_FOUND_MESSAGE: Final = "This link is invalid or has expired."

FlowNotFoundReason = Literal[
    "malformed-id",  # not a string of the id's shape (never reaches the database)
    "unknown",  # no such record (never created, or purged)
    "expired",  # the record exists but its expiry has passed
    "other-owner",  # the record belongs to another principal
]


class FlowError(Exception):
    """Base class of the flow errors."""


class FlowNotFound(FlowError, FixedMessageError[FlowNotFoundReason]):
    """No usable flow for this id *for this caller*. ``str()`` is always
    :data:`FLOW_NOT_FOUND_MESSAGE`; :attr:`reason` is for logs, never for the page or the wire."""

    __slots__ = ()

    public_message = FLOW_NOT_FOUND_MESSAGE


class TooManyPendingFlows(FlowError):
    """The owner already has :attr:`limit` open (pending or in progress, unexpired) flows."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Too many unfinished links for this account (at most {limit}); finish one or wait "
            "a few minutes for them to expire."
        )
        self.limit = limit

    def __reduce__(self) -> tuple[type[TooManyPendingFlows], tuple[int]]:
        return (type(self), (self.limit,))


class FlowStateConflict(FlowError):
    """The owner's flow exists and is unexpired but is not in a state that allows this step
    (a second ``begin``, ``complete`` before ``begin``, anything after ``completed``...).
    Only ever raised to the flow's owner, so naming the state reveals nothing to others."""

    def __init__(self, status: str, action: str) -> None:
        super().__init__(f"cannot {action} a flow that is {status}")
        self.status = status
        self.action = action

    def __reduce__(self) -> tuple[type[FlowStateConflict], tuple[str, str]]:
        return (type(self), (self.status, self.action))


class FlowStoreUnavailable(FlowError):
    """The store could not answer (database down, timeout, closed). Fail closed. The message
    never contains a DSN or a flow id."""
