"""Pending URL flows: the server-side record behind ``<base>/connect/<id>`` and ``/secret/<id>``.

* :class:`PendingFlow`: id (256 random bits, URL-safe), owner (the principal key from the
  validated token), kind, provider, scopes, created, expires (at most 10 minutes), status
  (``pending → in_progress [→ redeeming] → completed | failed | declined``, or ``expired``), detail.
* :class:`FlowStore` with :class:`SQLiteFlowStore` and :class:`PostgresFlowStore`: ``create``
  (capped per owner: :class:`TooManyPendingFlows`), ``get`` (server side), ``lookup`` (public
  boundary), ``begin`` (atomic, owner only, exactly one concurrent winner), ``restart`` (a new
  attempt of a connection left at the provider), ``claim`` (the latest attempt's callback only),
  ``complete``, ``fail``, ``expire_old``. Unknown, expired and other-owner ids are one :class:`FlowNotFound`.
  It also keeps the pages' sign-outs (``revoke_session``, ``revoke_sessions_of``,
  ``session_revoked``), so a signed-out session cookie is void on every instance.
* :func:`flow_url`: the URL for a flow (https, or http on loopback in development; no personal
  data); :func:`flow_id_in` reads the id back from such a URL.
* :func:`check_for_retry`: :class:`Ready` / :class:`Waiting` / :class:`Failed` for the client's
  retry, with the phishing alarm when the principal differs; :func:`step_words`: how every
  message names a flow's step.

The store classes are loaded on first access (no sqlite3 or psycopg import until needed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    FLOW_NOT_FOUND_MESSAGE,
    FlowError,
    FlowNotFound,
    FlowNotFoundReason,
    FlowStateConflict,
    FlowStoreUnavailable,
    TooManyPendingFlows,
)
from .model import (
    DEFAULT_MAX_PENDING_PER_USER,
    DEFAULT_RETENTION,
    FLOW_ID_BYTES,
    MAX_FLOW_TTL,
    FlowKind,
    FlowStatus,
    PendingFlow,
    flow_fingerprint,
    is_flow_id,
    new_flow_id,
)
from .retry import Failed, FailureReason, Ready, RetryOutcome, Waiting, check_for_retry, step_words
from .store import MAX_SESSION_LIFETIME, FlowStore
from .urls import check_base_url, flow_id_in, flow_url

if TYPE_CHECKING:
    from .postgres_store import PostgresFlowStore
    from .sqlite_store import SQLiteFlowStore

__all__ = [
    "DEFAULT_MAX_PENDING_PER_USER",
    "DEFAULT_RETENTION",
    "FLOW_ID_BYTES",
    "FLOW_NOT_FOUND_MESSAGE",
    "MAX_FLOW_TTL",
    "MAX_SESSION_LIFETIME",
    "Failed",
    "FailureReason",
    "FlowError",
    "FlowKind",
    "FlowNotFound",
    "FlowNotFoundReason",
    "FlowStateConflict",
    "FlowStatus",
    "FlowStore",
    "FlowStoreUnavailable",
    "PendingFlow",
    "PostgresFlowStore",
    "Ready",
    "RetryOutcome",
    "SQLiteFlowStore",
    "TooManyPendingFlows",
    "Waiting",
    "check_base_url",
    "check_for_retry",
    "flow_fingerprint",
    "flow_id_in",
    "flow_url",
    "is_flow_id",
    "new_flow_id",
    "step_words",
]


def __getattr__(name: str) -> Any:
    if name == "SQLiteFlowStore":
        from .sqlite_store import SQLiteFlowStore

        return SQLiteFlowStore
    if name == "PostgresFlowStore":
        from .postgres_store import PostgresFlowStore

        return PostgresFlowStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
