"""The vault's refresher for one provider: the refresh-token grant (RFC 6749 §6).

:func:`token_refresher` returns an ``async (Connection) -> RefreshResult`` for
:meth:`~mcp_elicit.connect.vault.Vault.refresh`. It maps every outcome instead of raising:

* ``200`` with a valid token response → :meth:`RefreshResult.ok` (a rotated refresh token is
  passed on; scopes only when the response names them);
* ``400`` ``invalid_grant`` (revoked, expired, reused refresh token), or no refresh token at all
  → :meth:`RefreshResult.invalid_grant`: the user has to connect again. GitHub answers errors with
  ``200`` and calls this one ``bad_refresh_token``: a ``200`` whose JSON body has an ``error`` and
  no ``access_token`` is read as an error answer, and ``bad_refresh_token`` as ``invalid_grant``;
* ``429`` (with ``Retry-After``), ``5xx``, timeouts and network errors →
  :meth:`RefreshResult.transient`;
* anything else (``invalid_client``, ``unauthorized_client``, a ``200`` without a usable Bearer
  token) → :meth:`RefreshResult.failed`: a configuration problem, not the user's. An unusable
  ``expires_in`` or ``scope`` next to usable tokens does not throw the (possibly rotated) tokens
  away: defaults are used (see :func:`~.token_response.parse_tokens`).

Reasons are fixed words plus a sanitised OAuth error code, never a token or provider prose.
"""

from __future__ import annotations

import logging
import math
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Final

from ..vault.records import Connection, Refresher, RefreshResult
from ._http import DEFAULT_TIMEOUT, HttpAnswer, HttpFailure
from ._requests import post_token_request
from .provider import OAuthProvider
from .token_response import InvalidTokenResponse, parse_error, parse_tokens

if TYPE_CHECKING:
    import httpx

__all__ = ["parse_retry_after", "token_refresher"]

_log = logging.getLogger("mcp_elicit.connect.oauth")
_MAX_RETRY_AFTER: Final = 3600.0
# The refresh token is dead: RFC 6749 §5.2, and GitHub's name for it (sent with HTTP 200).
_DEAD_GRANT: Final = frozenset({"invalid_grant", "bad_refresh_token"})


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP-date), capped at an hour."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit() and len(value) <= 10:
        return min(float(value), _MAX_RETRY_AFTER)
    try:
        moment = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    delay = moment - (time.time() if now is None else now)
    if not math.isfinite(delay):
        return None
    return min(max(delay, 0.0), _MAX_RETRY_AFTER)


def _is_error_body(answer: HttpAnswer) -> bool:
    """A ``200`` that is an OAuth error answer in disguise (GitHub): ``error`` and no token."""
    body = answer.json_object()
    return body is not None and "error" in body and "access_token" not in body


def token_refresher(
    provider: OAuthProvider, *, http: httpx.AsyncClient | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Refresher:
    """A vault refresher that runs the refresh-token grant at ``provider.token_url``."""

    async def refresh(connection: Connection) -> RefreshResult:
        if connection.provider != provider.id:
            return RefreshResult.failed("connection belongs to another provider")
        if not connection.refresh_token:
            return RefreshResult.invalid_grant("no refresh token")
        try:
            answer = await post_token_request(
                provider,
                "refresh_token",
                http=http,
                deadline=timeout,
                refresh_token=connection.refresh_token,
            )
        except HttpFailure as exc:
            if exc.kind == "too-large":
                return RefreshResult.failed("token endpoint answer too large")
            return RefreshResult.transient(f"token endpoint {exc.kind}")
        if answer.status == 200 and not _is_error_body(answer):
            try:
                tokens = parse_tokens(answer, refresh=True)
            except InvalidTokenResponse as exc:
                return RefreshResult.failed(f"token response: {exc}")
            if tokens.dropped:
                _log.warning(
                    "refresh with provider %r: unusable %s in the token response, defaults used",
                    provider.id,
                    " and ".join(tokens.dropped),
                )
            return RefreshResult.ok(
                tokens.access_token,
                refresh_token=tokens.refresh_token,
                expires_in=tokens.expires_in,
                scopes=tokens.scopes,
                token_type="Bearer",  # noqa: S106 - a token type, not a password
            )
        if answer.status == 429 or answer.status >= 500:
            retry_after = parse_retry_after(answer.retry_after)
            return RefreshResult.transient(f"token endpoint HTTP {answer.status}", retry_after=retry_after)
        held = (connection.refresh_token, connection.access_token, provider.client_secret)
        error = parse_error(answer, withhold=held).error
        if error in _DEAD_GRANT:
            _log.info("refresh with provider %r: %s (re-authorization needed)", provider.id, error)
            return RefreshResult.invalid_grant("invalid_grant")
        _log.warning("refresh with provider %r refused: HTTP %d %s", provider.id, answer.status, error)
        return RefreshResult.failed(f"token endpoint HTTP {answer.status} {error or 'no error code'}")

    return refresh
