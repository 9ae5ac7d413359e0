"""What the vault stores and hands out: :class:`Connection`, :class:`Secret`, and the contracts of
the injected refresher and revoker (:class:`RefreshResult`, :data:`Refresher`, :data:`Revoker`).

``repr()`` and ``str()`` of every class here show ``***`` in place of tokens and secret values, so
logging a record, putting one in an f-string or an assertion message leaks nothing. The values
themselves are plain ``str`` attributes (``connection.access_token``): reading them is deliberate.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "Connection",
    "ConnectionStatus",
    "RefreshOutcome",
    "RefreshResult",
    "Refresher",
    "Revoker",
    "RotationReport",
    "Secret",
]

ConnectionStatus: TypeAlias = Literal["active", "needs_reauthorization", "revocation_failed"]
"""``active``: usable. ``needs_reauthorization``: the grant was refused (``invalid_grant``); a new
URL flow is needed. ``revocation_failed``: the user disconnected, upstream revocation failed, the row
is kept until :meth:`Vault.disconnect` succeeds."""

RefreshOutcome: TypeAlias = Literal["ok", "invalid_grant", "transient", "failed"]

_HIDDEN = "***"


def _hidden(value: str | None) -> str:
    return "None" if value is None else _HIDDEN


@dataclass(frozen=True, slots=True, repr=False)
class Connection:
    """A third-party account connected by ``owner`` (an ``"issuer|subject"`` principal).

    ``expires_at`` is the access token's expiry in seconds since the epoch (``None``: unknown, never
    refreshed proactively). ``scopes`` are the scopes *granted*, which may be fewer than requested.
    ``id``, ``created_at``, ``updated_at``, ``last_refresh_at`` and ``key_id`` are set by the vault.
    """

    owner: str
    provider: str
    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()
    token_type: str = "Bearer"  # noqa: S105 - an OAuth token type, not a password
    provider_account_id: str | None = None
    status: ConnectionStatus = "active"
    id: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    last_refresh_at: float | None = None
    key_id: str = ""

    @property
    def active(self) -> bool:
        """Whether the connection is usable (``status == "active"``)."""
        return self.status == "active"

    def expires_within(self, seconds: float, *, now: float) -> bool:
        """Whether the access token expires less than ``seconds`` after ``now`` (``False`` if the
        expiry is unknown)."""
        return self.expires_at is not None and self.expires_at - now < seconds

    def __repr__(self) -> str:
        return (
            f"Connection(owner={self.owner!r}, provider={self.provider!r}, id={self.id!r}, "
            f"status={self.status!r}, expires_at={self.expires_at!r}, scopes={list(self.scopes)!r}, "
            f"access_token={_HIDDEN}, refresh_token={_hidden(self.refresh_token)}, "
            f"key_id={self.key_id!r})"
        )

    __str__ = __repr__


@dataclass(frozen=True, slots=True, repr=False)
class Secret:
    """A secret value ``owner`` entered on a secure page (an API key, a password for a legacy API)."""

    owner: str
    name: str
    value: str
    id: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    key_id: str = ""

    def __repr__(self) -> str:
        return (
            f"Secret(owner={self.owner!r}, name={self.name!r}, id={self.id!r}, value={_HIDDEN}, "
            f"key_id={self.key_id!r})"
        )

    __str__ = __repr__


@dataclass(frozen=True, slots=True, repr=False)
class RefreshResult:
    """What a refresher reports. Build it with one of the four constructors.

    * :meth:`ok`: new tokens. ``refresh_token=None`` keeps the current refresh token (the server did
      not rotate it); ``scopes=None`` keeps the current scopes; give ``expires_in`` (seconds, as in
      the token response) or ``expires_at`` (epoch seconds), or neither when the server said nothing.
    * :meth:`invalid_grant`: the grant is gone (RFC 6749 §5.2 ``invalid_grant``): the connection
      becomes ``needs_reauthorization`` and :class:`NeedsReauthorization` is raised.
    * :meth:`transient`: 5xx, 429, a network failure: retryable, the status is left alone.
    * :meth:`failed`: any other refusal (``invalid_client``, a malformed response): not retryable,
      the status is left alone (it is a configuration problem, not the user's).

    ``reason`` must be a short code or description, never a token: it ends up in error messages.
    """

    outcome: RefreshOutcome
    access_token: str | None = None
    refresh_token: str | None = None
    expires_in: float | None = None
    expires_at: float | None = None
    scopes: tuple[str, ...] | None = None
    token_type: str | None = None
    reason: str = ""
    retry_after: float | None = None

    @classmethod
    def ok(
        cls,
        access_token: str,
        *,
        refresh_token: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
        scopes: tuple[str, ...] | list[str] | None = None,
        token_type: str | None = None,
    ) -> RefreshResult:
        """New tokens (see the class docstring for each argument). Raises ``ValueError`` for an
        empty token, both ``expires_in`` and ``expires_at``, or an expiry that is not a finite
        number."""
        if not isinstance(access_token, str) or not access_token:
            raise ValueError("RefreshResult.ok: access_token must be a non-empty str")
        if refresh_token is not None and (not isinstance(refresh_token, str) or not refresh_token):
            raise ValueError("RefreshResult.ok: refresh_token must be a non-empty str or None")
        if expires_in is not None and expires_at is not None:
            raise ValueError("RefreshResult.ok: give expires_in or expires_at, not both")
        for name, value in (("expires_in", expires_in), ("expires_at", expires_at)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value)
            ):
                raise ValueError(f"RefreshResult.ok: {name} must be a finite number or None")
        return cls(
            "ok",
            access_token=access_token,
            refresh_token=refresh_token,
            expires_in=None if expires_in is None else float(expires_in),
            expires_at=None if expires_at is None else float(expires_at),
            scopes=None if scopes is None else tuple(scopes),
            token_type=token_type,
        )

    @classmethod
    def invalid_grant(cls, description: str | None = None) -> RefreshResult:
        """The grant is gone; ``description`` (a short text, never a token) becomes the ``reason``."""
        return cls("invalid_grant", reason=description or "invalid_grant")

    @classmethod
    def transient(cls, reason: str = "transient", *, retry_after: float | None = None) -> RefreshResult:
        """A retryable failure; ``retry_after`` is the server's hint in seconds, if any."""
        return cls("transient", reason=reason, retry_after=retry_after)

    @classmethod
    def failed(cls, reason: str = "failed") -> RefreshResult:
        """A refusal that retrying will not fix."""
        return cls("failed", reason=reason)

    def __repr__(self) -> str:
        if self.outcome != "ok":
            return f"RefreshResult({self.outcome!r}, reason={self.reason!r})"
        return (
            f"RefreshResult('ok', access_token={_HIDDEN}, refresh_token="
            f"{_hidden(self.refresh_token)}, expires_in={self.expires_in!r}, "
            f"expires_at={self.expires_at!r}, scopes={self.scopes!r})"
        )

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class RotationReport:
    """What :meth:`Vault.rotate` did: rows re-wrapped, rows already under the new key, and the ids
    of rows that could not be opened (left as they are; see :class:`VaultCorrupt`)."""

    rewrapped: int
    unchanged: int
    failed: tuple[str, ...] = ()


Refresher: TypeAlias = Callable[[Connection], Awaitable[RefreshResult]]
"""``async def refresher(connection) -> RefreshResult``: run the OAuth refresh-token grant.

It should *return* :meth:`RefreshResult.invalid_grant` / :meth:`~RefreshResult.transient` /
:meth:`~RefreshResult.failed` for the outcomes it knows; an exception it raises is treated as a
transient failure (reported by type name only)."""

Revoker: TypeAlias = Callable[[Connection], Awaitable[None]]
"""``async def revoker(connection) -> None``: revoke the grant upstream (RFC 7009 where the provider
supports it; return normally when it has nothing to revoke). Raising means "not revoked"."""
