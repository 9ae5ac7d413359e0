"""The vault's revoker for one provider: RFC 7009 token revocation.

Deleting a vault row does not end the grant upstream; :func:`token_revoker` does. The refresh
token goes first (revoking it ends the grant, and RFC 7009 §2.1 says the server SHOULD then drop
the access tokens of that grant as well), then the access token. ``200`` means revoked,
including for a token the server no longer knows (RFC 7009 §2.2). Some providers (Google)
answer ``400 invalid_token`` (or ``invalid_grant``) for a token that is already expired or
revoked instead: that token is dead too, so it counts as revoked (else a grant the user already
removed at the provider could never be disconnected, and the stuck row would block every
reconnection). Any other outcome raises :class:`RevocationFailed` (its reason is logged at
WARNING), so the vault keeps the row as ``revocation_failed`` and can try again, except one: a
provider that answers ``unsupported_token_type`` for the *access token* after the refresh token
was revoked (it cannot revoke access tokens; the grant is gone anyway).

A provider without a ``revocation_url`` has nothing to call: the revoker returns normally and
logs that at INFO (the tokens stay valid upstream until they expire).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from ..vault.records import Connection, Revoker
from ._http import DEFAULT_TIMEOUT, HttpFailure
from ._requests import post_revocation
from .errors import RevocationFailed
from .provider import OAuthProvider
from .token_response import parse_error

if TYPE_CHECKING:
    import httpx

__all__ = ["token_revoker"]

_log = logging.getLogger("mcp_elicit.connect.oauth")
# Answers saying the token presented is already unusable (RFC 6750 §3.1, RFC 6749 §5.2).
_ALREADY_DEAD: Final = frozenset({"invalid_token", "invalid_grant"})


def token_revoker(
    provider: OAuthProvider, *, http: httpx.AsyncClient | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Revoker:
    """A vault revoker that calls ``provider.revocation_url`` (RFC 7009)."""

    async def revoke_one(token: str, hint: str) -> str | None:
        """``None`` when revoked, else the OAuth error code (or a status word)."""
        try:
            answer = await post_revocation(provider, token, hint, http=http, deadline=timeout)
        except HttpFailure as exc:
            raise failed(f"revoking the {hint}: {exc.kind}") from None
        if answer.status == 200:
            return None
        error = parse_error(answer, withhold=(token, provider.client_secret)).error
        if answer.status == 400 and error in _ALREADY_DEAD:
            _log.info("provider %r: the %s was already invalid (%s)", provider.id, hint, error)
            return None
        return error or f"HTTP {answer.status}"

    def failed(step: str) -> RevocationFailed:
        _log.warning("provider %r: revocation failed: %s", provider.id, step)
        return RevocationFailed(f"{provider.id}: {step}")

    async def revoke(connection: Connection) -> None:
        if connection.provider != provider.id:
            raise RevocationFailed(f"{provider.id}: the connection belongs to {connection.provider!r}")
        if provider.revocation_url is None:
            _log.info(
                "provider %r has no revocation endpoint: connection %s not revoked upstream",
                provider.id,
                connection.id or "-",
            )
            return
        refresh_revoked = False
        if connection.refresh_token:
            problem = await revoke_one(connection.refresh_token, "refresh_token")
            if problem is not None:
                raise failed(f"revoking the refresh_token: {problem}")
            refresh_revoked = True
        problem = await revoke_one(connection.access_token, "access_token")
        if problem is None:
            return
        if refresh_revoked and problem == "unsupported_token_type":
            _log.info("provider %r cannot revoke access tokens; the refresh token was revoked", provider.id)
            return
        raise failed(f"revoking the access_token: {problem}")

    return revoke
