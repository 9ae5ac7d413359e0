"""Exceptions of the OAuth client: :class:`AuthorizationFailed`, :class:`DiscoveryFailed`,
:class:`RevocationFailed`, and :func:`clean_provider_text` for text a provider sent us.

Every failure of an authorization is fail-closed and carries three separate things:

* :attr:`AuthorizationFailed.reason`: a short fixed code for logs and metrics;
* :attr:`AuthorizationFailed.public_message`: a fixed sentence chosen by *us*, safe to show as is
  (``str(exc)`` is this sentence);
* :attr:`AuthorizationFailed.provider_error`: what the provider said (``error_description``),
  cleaned of control and formatting characters and length-capped, but still attacker-influenced
  text: a page may show it only HTML-escaped.

None of them ever contains a token, a code or a code verifier: any the request carried is withheld
from the provider's description when the provider echoes it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final, Literal, TypeAlias

__all__ = [
    "PROVIDER_TEXT_LIMIT",
    "AuthorizationFailed",
    "DiscoveryFailed",
    "FailureReason",
    "RevocationFailed",
    "clean_error_code",
    "clean_provider_text",
]

FailureReason: TypeAlias = Literal[
    "bad-pending",  # the pending authorization is not one this flow made (type, redirect_uri, fields)
    "wrong-provider",  # the callback path, the pending authorization and this flow name different providers
    "expired",  # the pending authorization is older than max_age (or dated in the future)
    "malformed-callback",  # duplicated / non-string / oversized parameters, both code and error, ...
    "state-mismatch",  # state missing or not the pending one
    "iss-mismatch",  # RFC 9207: iss present and not exactly the provider's issuer
    "iss-missing",  # RFC 9207: the provider advertises iss in responses and this one has none
    "provider-error",  # the provider answered with error=... (see .error and .declined)
    "missing-code",  # no usable code in a success response
    "token-endpoint",  # the code redemption failed: network, timeout, non-200, an OAuth error
    "token-response",  # a 200 from the token endpoint that is not an acceptable token response
    "id-token",  # the ID token is missing or invalid (see .detail)
    "jwks-unavailable",  # the provider's JWKS could not be fetched to check the ID token
]

PROVIDER_TEXT_LIMIT: Final = 200
WITHHELD: Final = "[withheld]"
# Shorter "secrets" (a test client's secret "x") are no secrets, and replacing them would garble
# the provider's every word.
_MIN_WITHHELD: Final = 4

_PUBLIC_MESSAGES: Final[dict[str, str]] = {
    "expired": "This sign-in took too long. Please start again.",
    "provider-error": "The provider did not complete the authorization.",
    "token-endpoint": "The provider could not complete the authorization. Please try again.",
    "jwks-unavailable": "The provider could not complete the authorization. Please try again.",
}
_DECLINED_MESSAGE: Final = "The authorization was declined at the provider."
_DEFAULT_MESSAGE: Final = "The authorization could not be completed. Please start again."

# RFC 6749 error codes are short ASCII words; anything else is not kept as a code.
_ERROR_CODE_RE: Final = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
# Control (Cc), format (Cf: bidi overrides, zero-width), surrogates, private use, unassigned, and
# line/paragraph separators: nothing a page should ever render from a provider.
_DROPPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_provider_text(
    value: object, *, limit: int = PROVIDER_TEXT_LIMIT, withhold: Iterable[str | None] = ()
) -> str | None:
    """``value`` without control/format characters, whitespace collapsed, at most ``limit``
    characters; ``None`` when nothing is left (or ``value`` is not a str). Not HTML-escaped.

    ``withhold``: the secrets the request carried (the code, the code verifier, the client
    secret). A provider that echoes one in its description ("invalid code abc...") would put it
    on a page and in logs: each is replaced by ``[withheld]``, before the text is cut."""
    if not isinstance(value, str):
        return None
    value = without_secrets(value, withhold)
    # Bound the work before looking at characters (a provider could send megabytes).
    raw = value[: limit * 4]
    # Whitespace (including CR, LF, TAB and U+2028) becomes a space before controls are dropped.
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in raw
        if ch.isspace() or unicodedata.category(ch) not in _DROPPED_CATEGORIES
    )
    text = " ".join(kept.split())[:limit].rstrip()
    return text or None


def clean_error_code(value: object, *, withhold: Iterable[str | None] = ()) -> str | None:
    """An OAuth ``error`` code when it looks like one (``access_denied``), else ``None``; also
    ``None`` when it holds one of the secrets in ``withhold`` or a piece of one (a verifier or a
    token looks like a code, and a code is cut at 64 characters)."""
    if not isinstance(value, str) or not _ERROR_CODE_RE.fullmatch(value):
        return None
    if without_secrets(value, withhold) != value or any(secret and value in secret for secret in withhold):
        return None
    return value


def without_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every one of ``secrets`` in it replaced by ``[withheld]``."""
    for secret in secrets:
        if secret and len(secret) >= _MIN_WITHHELD:
            text = text.replace(secret, WITHHELD)
    return text


class AuthorizationFailed(Exception):
    """The authorization could not be completed; nothing was (or may be) stored.

    ``reason``: see :data:`FailureReason` (logs only). ``public_message``: fixed, safe to show.
    ``error``: the provider's OAuth error code when it sent a well-formed one (``access_denied``,
    ``invalid_grant``). ``provider_error``: the provider's description, cleaned (show it only
    HTML-escaped). ``detail``: a fixed sub-code for logs (which ID token check failed, which
    transport error). :attr:`declined` is true when the user refused at the provider.
    """

    __slots__ = ("detail", "error", "provider_error", "public_message", "reason")

    reason: FailureReason
    public_message: str
    error: str | None
    provider_error: str | None
    detail: str | None

    def __init__(
        self,
        reason: FailureReason,
        *,
        error: str | None = None,
        provider_error: str | None = None,
        detail: str | None = None,
    ) -> None:
        self.reason = reason
        self.error = clean_error_code(error)
        self.provider_error = clean_provider_text(provider_error)
        self.detail = detail
        if self.declined:
            self.public_message = _DECLINED_MESSAGE
        else:
            self.public_message = _PUBLIC_MESSAGES.get(reason, _DEFAULT_MESSAGE)
        super().__init__(self.public_message)

    @property
    def declined(self) -> bool:
        """The user (or the provider on their behalf) refused: ``error=access_denied``."""
        return self.reason == "provider-error" and self.error == "access_denied"

    def __str__(self) -> str:
        return self.public_message

    def __repr__(self) -> str:
        return f"AuthorizationFailed(reason={self.reason!r}, error={self.error!r}, detail={self.detail!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild,
            (self.reason, self.error, self.provider_error, self.detail),
        )


def _rebuild(
    reason: FailureReason, error: str | None, provider_error: str | None, detail: str | None
) -> AuthorizationFailed:
    return AuthorizationFailed(reason, error=error, provider_error=provider_error, detail=detail)


class DiscoveryFailed(Exception):
    """The provider's metadata could not be fetched or is not acceptable (wrong issuer, no S256,
    insecure endpoints). The message names the problem; metadata is public, it holds no secret."""


class RevocationFailed(Exception):
    """Upstream revocation (RFC 7009) did not succeed; the grant may still be valid upstream.

    The message names the step and the HTTP status or OAuth error code, never a token."""
