"""The result of a successful code redemption: :class:`TokenGrant`.

``repr()``/``str()`` never show the tokens (the same rule as the vault's records), so a grant can
be logged or appear in an assertion message without leaking anything.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..vault.records import Connection

__all__ = ["TokenGrant"]


@dataclass(frozen=True, slots=True, repr=False)
class TokenGrant:
    """Tokens from the provider's token endpoint, already validated.

    ``scopes`` are the scopes *granted* (the response's ``scope``, or the requested ones when the
    provider omitted it, RFC 6749 §5.1). ``token_type`` is normalised to ``"Bearer"``.
    ``id_claims``: the validated ID token claims when the provider is ``openid``, else ``None``.
    """

    access_token: str
    refresh_token: str | None
    expires_in: float | None
    scopes: tuple[str, ...]
    token_type: str
    id_claims: Mapping[str, Any] | None = None

    @property
    def subject(self) -> str | None:
        """The provider account's ``sub`` from the ID token, if there is one."""
        sub = None if self.id_claims is None else self.id_claims.get("sub")
        return sub if isinstance(sub, str) else None

    def to_connection(
        self,
        owner: str,
        provider: str,
        *,
        now: float | None = None,
        provider_account_id: str | None = None,
    ) -> Connection:
        """A vault :class:`Connection` for ``owner`` (``provider_account_id`` defaults to
        :attr:`subject`; ``expires_at`` is ``now + expires_in``)."""
        moment = time.time() if now is None else now
        return Connection(
            owner=owner,
            provider=provider,
            access_token=self.access_token,
            refresh_token=self.refresh_token,
            expires_at=None if self.expires_in is None else moment + self.expires_in,
            scopes=self.scopes,
            token_type=self.token_type,
            provider_account_id=provider_account_id if provider_account_id is not None else self.subject,
        )

    def __repr__(self) -> str:
        return (
            f"TokenGrant(access_token=***, refresh_token={'None' if self.refresh_token is None else '***'}, "
            f"expires_in={self.expires_in!r}, scopes={list(self.scopes)!r}, "
            f"token_type={self.token_type!r}, subject={self.subject!r})"
        )

    __str__ = __repr__
