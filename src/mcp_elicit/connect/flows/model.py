"""The pending-flow record and the rules every store shares (no I/O).

Life of a record::

    pending ──begin──▶ in_progress ──claim──▶ redeeming ──complete──▶ completed
       │                 │ ↺ restart (connect)    │                       ▲
       │                 ├──complete──────────────┼───────────────────────┘
       └─────fail────────┴────────────────────────┴──fail──▶ failed | declined
    (pending, in_progress or redeeming past ``expires``) ─▶ expired

``begin`` and ``restart`` each start a new *attempt* (its number, :attr:`PendingFlow.attempt`,
goes up by one). ``restart`` is a connection whose owner pressed Continue again after leaving the
provider's page without an answer (a closed tab, Back, an error page at the provider): the
connection would otherwise stay in progress, unusable, until it expires. ``claim`` is the OAuth
callback taking the flow for itself before it redeems the code, and only for the attempt its
browser started: a callback of an earlier attempt, and a second load of the same callback (a
reload, a double navigation), change nothing. A record is
*open* while pending, in progress or redeeming and unexpired. Reads report an open record whose
expiry has passed as ``expired`` even before :meth:`FlowStore.expire_old` writes that down, so an
expired flow can never be begun or completed, whatever the purge schedule.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal, cast, get_args

from mcp_elicit.connect.identity.principal import Principal

from .errors import FlowNotFound, FlowStateConflict, FlowStoreUnavailable

__all__ = [
    "DEFAULT_MAX_PENDING_PER_USER",
    "DEFAULT_RETENTION",
    "FLOW_ID_BYTES",
    "MAX_CLIENT_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_FLOW_TTL",
    "FlowKind",
    "FlowStatus",
    "PendingFlow",
    "flow_fingerprint",
    "is_flow_id",
    "new_flow_id",
]

FLOW_ID_BYTES: Final = 32
"""Random bytes per id: 256 bits from :mod:`secrets`, 43 base64url characters."""
MAX_FLOW_TTL: Final = 600.0
"""A flow lives at most 10 minutes (the OAuth ``state`` lifetime the security BCPs suggest)."""
DEFAULT_MAX_PENDING_PER_USER: Final = 3
DEFAULT_RETENTION: Final = 3600.0
"""Seconds a record is kept after its expiry, so a late retry learns "expired"/"completed"
rather than "unknown". Keep it at least as long as the ``requestState`` TTL."""

FlowKind = Literal["connect", "secret"]
FlowStatus = Literal["pending", "in_progress", "redeeming", "completed", "failed", "expired", "declined"]
FLOW_KINDS: Final[frozenset[str]] = frozenset(get_args(FlowKind))
FLOW_STATUSES: Final[frozenset[str]] = frozenset(get_args(FlowStatus))
OPEN_STATUSES: Final = frozenset({"pending", "in_progress", "redeeming"})

_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{43}")
_PROVIDER_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAME_RULE: Final = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
""":data:`_PROVIDER_RE` in words, for the messages that refuse a provider or secret name."""
_SCOPE_RE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,256}")
MAX_SCOPES: Final = 64
MAX_OWNER_LENGTH: Final = 4096
MAX_DETAIL_LENGTH: Final = 200
MAX_CLIENT_LENGTH: Final = 100
"""Characters kept of the MCP client's (self-reported) display name."""
MAX_DESCRIPTION_LENGTH: Final = 300
"""Characters kept of a flow's description (why the server asks, or what a secret is)."""


def new_flow_id() -> str:
    """A fresh flow id: 256 bits from the OS CSPRNG, URL-safe (43 characters)."""
    return secrets.token_urlsafe(FLOW_ID_BYTES)


def is_flow_id(value: object) -> bool:
    """Whether ``value`` has the shape of a flow id (says nothing about whether it exists)."""
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def flow_key(flow_id: str) -> str:
    """The database key of a flow: SHA-256 of its id. Stores keep only this, so a copy of the
    table (a backup, a read-only SQL injection elsewhere) does not yield working URLs, and a
    lookup's timing depends on a hash, not on how much of a guessed id matches."""
    return hashlib.sha256(flow_id.encode("ascii")).hexdigest()


def flow_fingerprint(flow_id: str) -> str:
    """A short, non-reversible name for a flow in logs (the id itself is never logged)."""
    return flow_key(flow_id)[:12] if is_flow_id(flow_id) else "malformed"


def checked_id(flow_id: object) -> str:
    """``flow_id`` if it has the id shape, else :class:`FlowNotFound` (``malformed-id``)."""
    if not is_flow_id(flow_id):
        raise FlowNotFound("malformed-id")
    assert isinstance(flow_id, str)
    return flow_id


def _clean_text(value: str) -> bool:
    return not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F or 0xD800 <= ord(ch) <= 0xDFFF for ch in value)


def owner_key(owner: str | Principal) -> str:
    """The owner string of a flow: a principal's :attr:`~Principal.key`, or such a key."""
    if isinstance(owner, Principal):
        return owner.key
    if not isinstance(owner, str) or not owner or len(owner) > MAX_OWNER_LENGTH or not _clean_text(owner):
        raise ValueError("owner must be a principal key (a non-empty str without control characters)")
    return owner


def checked_kind(kind: str) -> FlowKind:
    if kind == "connect":
        return "connect"
    if kind == "secret":
        return "secret"
    raise ValueError(f"kind must be 'connect' or 'secret', not {kind!r}")


def checked_provider(provider: str) -> str:
    if not isinstance(provider, str) or not _PROVIDER_RE.fullmatch(provider):
        raise ValueError(
            f"provider must be an identifier of {NAME_RULE} (it names configuration, it is never "
            f"taken from a request): {provider!r}"
        )
    return provider


def checked_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    if isinstance(scopes, str):
        raise TypeError("scopes must be a sequence of scope tokens, not a str")
    result = tuple(scopes)
    if len(result) > MAX_SCOPES:
        raise ValueError(f"at most {MAX_SCOPES} scopes")
    for scope in result:
        if not isinstance(scope, str) or not _SCOPE_RE.fullmatch(scope):
            raise ValueError(f"not an OAuth scope token (RFC 6749 §3.3): {scope!r}")
    return result


def checked_ttl(ttl: float | None, default: float) -> float:
    value = default if ttl is None else ttl
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError("ttl must be a number of seconds")
    if not 0 < value <= MAX_FLOW_TTL:
        raise ValueError(f"ttl must be more than 0 and at most {MAX_FLOW_TTL:g} seconds")
    return float(value)


def checked_detail(detail: str | None) -> str | None:
    """A failure reason shown to the owner: short, one line, printable. It must never hold a
    secret (a token, a code, a provider's raw error body); the store cannot check that."""
    if detail is None:
        return None
    if not isinstance(detail, str) or len(detail) > MAX_DETAIL_LENGTH or not _clean_text(detail):
        raise ValueError(f"detail must be one line of at most {MAX_DETAIL_LENGTH} printable characters")
    return detail


def _invisible(ch: str) -> bool:
    """Control, format (bidi overrides, zero-width), surrogate, private-use and unassigned
    characters: nothing a page should show of a label that someone else wrote."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")


def visible_identifier(value: str) -> str:
    """An identifier (an OAuth subject) as a page shows it: each invisible character written as
    ``\\u{202e}`` (and a backslash as two), so that two identifiers never look alike and a bidi
    override cannot turn the text around it. Not removed, as :func:`clean_label` does: ``alice``
    and ``alice`` followed by a zero-width space are two users."""
    return "".join("\\\\" if ch == "\\" else f"\\u{{{ord(ch):x}}}" if _invisible(ch) else ch for ch in value)


def clean_label(value: str | None, limit: int) -> str | None:
    """``value`` made safe to store and show as one line: invisible characters removed (see
    :func:`_invisible`), whitespace runs collapsed to one space, at most ``limit`` characters
    (cut with ``…``). ``None`` for ``None`` or for nothing left. Used for the client's name and a
    flow's description, which come from the client or the server author: cleaned, not refused."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("a flow label must be a str or None")
    text = " ".join("".join(" " if ch.isspace() else "" if _invisible(ch) else ch for ch in value).split())
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class PendingFlow:
    """A server-side record of one URL flow (see the module docstring for its life).

    ``id`` is the only handle to the record and appears in the URL; ``repr`` shows a fingerprint
    instead. ``owner`` is the principal key of whoever started the flow. ``created`` and
    ``expires`` are seconds since the epoch. ``detail`` is a short failure reason (no secrets).
    ``client`` is the MCP client's display name as it reported it (self-asserted: show it as
    such, never decide on it) and ``description`` what the server said the flow is for (a
    connection's reason, a secret's description); both cleaned to one short printable line.
    ``attempt`` counts the times the flow was begun or restarted (0 while pending): the OAuth
    callback may claim only the latest attempt (see the module docstring).
    """

    id: str = field(repr=False)
    owner: str
    kind: FlowKind
    provider: str
    scopes: tuple[str, ...]
    created: float
    expires: float
    status: FlowStatus
    detail: str | None = None
    client: str | None = None
    description: str | None = None
    attempt: int = 0

    @property
    def fingerprint(self) -> str:
        """A short, non-reversible name for the flow in logs (the id itself is never logged)."""
        return flow_fingerprint(self.id)

    @property
    def can_start(self) -> bool:
        """Whether the owner's page still offers its form: a pending flow, or a connection in
        progress (Continue was pressed, the provider's page left without an answer: Continue
        again restarts it). A secret in progress is being saved right now: never twice."""
        return self.status == "pending" or (self.kind == "connect" and self.status == "in_progress")

    @property
    def is_open(self) -> bool:
        """Pending or in progress (as read; see :meth:`expired_at` for the clock)."""
        return self.status in OPEN_STATUSES

    def expired_at(self, now: float) -> bool:
        """Whether the flow is past its expiry at ``now`` (or was marked expired)."""
        return self.status == "expired" or (self.is_open and now >= self.expires)

    def __repr__(self) -> str:
        return (
            f"PendingFlow(fingerprint={self.fingerprint!r}, owner={self.owner!r}, kind={self.kind!r}, "
            f"provider={self.provider!r}, scopes={self.scopes!r}, created={self.created!r}, "
            f"expires={self.expires!r}, status={self.status!r}, detail={self.detail!r}, "
            f"client={self.client!r}, description={self.description!r}, attempt={self.attempt!r})"
        )


# Column order of every SELECT / RETURNING in the stores.
COLUMNS: Final = (
    "owner, kind, provider, scopes, created, expires, status, detail, client, description, attempt"
)
Row = Sequence[object]


def flow_from_row(flow_id: str, row: Row, now: float) -> PendingFlow:
    """The record as read at ``now`` (an open record past its expiry reads as ``expired``)."""
    owner, kind, provider, scopes, created, expires, status, detail, client, description, attempt = row
    if not (
        isinstance(owner, str)
        and isinstance(provider, str)
        and isinstance(scopes, str)
        and isinstance(created, float | int)
        and isinstance(expires, float | int)
        and isinstance(status, str)
        and status in FLOW_STATUSES
        and kind in FLOW_KINDS
        and (detail is None or isinstance(detail, str))
        and (client is None or isinstance(client, str))
        and (description is None or isinstance(description, str))
        and isinstance(attempt, int)
        and not isinstance(attempt, bool)
    ):
        raise FlowStoreUnavailable("flow store: a record does not have the expected shape")
    flow = PendingFlow(
        id=flow_id,
        owner=owner,
        kind=checked_kind(str(kind)),
        provider=provider,
        scopes=tuple(scopes.split()),
        created=float(created),
        expires=float(expires),
        status=cast(FlowStatus, status),  # checked against FLOW_STATUSES above
        detail=detail,
        client=client,
        description=description,
        attempt=attempt,
    )
    if flow.is_open and now >= flow.expires:
        flow = replace(flow, status="expired")
    return flow


def refusal(row: Row | None, owner: str | None, now: float, action: str) -> Exception:
    """Why a transition that matched no row was refused, as the exception to raise.

    Unknown, expired and other-owner are all :class:`FlowNotFound`; a wrong state for the right,
    unexpired owner is :class:`FlowStateConflict`."""
    if row is None:
        return FlowNotFound("unknown")
    stored_owner, status, expires = row[0], row[6], row[5]
    if owner is not None and stored_owner != owner:
        return FlowNotFound("other-owner")
    if not isinstance(expires, float | int):
        raise FlowStoreUnavailable("flow store: a record does not have the expected shape")
    if status == "expired" or (status in OPEN_STATUSES and now >= float(expires)):
        return FlowNotFound("expired")
    return FlowStateConflict(str(status), action)
