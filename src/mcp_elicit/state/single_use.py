"""The single-use store protocol: remembers which ``requestState`` token ids were already used.

Sealing binds a token to its request, principal and expiry, but a sealed token can still be sent
twice within its TTL. :class:`SingleUseStore` closes that gap: :meth:`StateSealer.open` consumes the
token id, and only the first consumption succeeds.

Implementations in this package: :class:`SQLiteSingleUseStore` (one host, one or more processes
sharing a file) and :class:`PostgresSingleUseStore` (any number of hosts).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["SingleUseStore"]


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
