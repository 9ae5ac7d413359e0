"""What the pages keep between the redirect to the provider and the callback.

A :class:`PendingAuthorization` holds the transaction secrets (``state``, PKCE ``code_verifier``,
``nonce``) and the context they are only valid in (provider id, exact ``redirect_uri``, creation
time). The pages store it sealed in a cookie or server-side; :meth:`PendingAuthorization.from_dict`
is strict, because whatever comes back from storage is treated as untrusted input: any deviation
raises :class:`AuthorizationFailed` (``bad-pending``), never ``KeyError``/``TypeError``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Final

from ..identity.urls import check_service_url
from .errors import AuthorizationFailed
from .provider import PROVIDER_ID_PATTERN

__all__ = ["PendingAuthorization"]

_FORMAT_VERSION: Final = 1
_KEYS: Final = frozenset({"v", "provider_id", "state", "code_verifier", "nonce", "redirect_uri", "created"})
# state and nonce are ours (token_urlsafe): url-safe base64, 22+ chars is 128+ bits.
_TOKEN_RE: Final = re.compile(r"[A-Za-z0-9_\-]{22,128}")
# RFC 7636 §4.1: 43-128 unreserved characters.
_VERIFIER_RE: Final = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_MAX_REDIRECT_URI: Final = 2048


def _bad(detail: str) -> AuthorizationFailed:
    return AuthorizationFailed("bad-pending", detail=detail)


@dataclass(frozen=True, slots=True, repr=False)
class PendingAuthorization:
    """One authorization request in flight (made by :meth:`AuthorizationCodeGrant.begin`).

    ``created`` is seconds since the epoch. ``repr()`` hides the state, verifier and nonce.
    """

    provider_id: str
    state: str
    code_verifier: str
    nonce: str | None
    redirect_uri: str
    created: float

    def __post_init__(self) -> None:
        # The same checks for objects built in code and for those read back from storage.
        if not isinstance(self.provider_id, str) or not PROVIDER_ID_PATTERN.fullmatch(self.provider_id):
            raise _bad("provider_id")
        if not isinstance(self.state, str) or not _TOKEN_RE.fullmatch(self.state):
            raise _bad("state")
        if not isinstance(self.code_verifier, str) or not _VERIFIER_RE.fullmatch(self.code_verifier):
            raise _bad("code_verifier")
        if self.nonce is not None and (
            not isinstance(self.nonce, str) or not _TOKEN_RE.fullmatch(self.nonce)
        ):
            raise _bad("nonce")
        uri = self.redirect_uri
        if not isinstance(uri, str) or len(uri) > _MAX_REDIRECT_URI:
            raise _bad("redirect_uri")
        try:
            check_service_url(uri, "redirect_uri", allow_loopback_http=True)
        except ValueError:
            raise _bad("redirect_uri") from None
        created = self.created
        if isinstance(created, bool) or not isinstance(created, int | float) or not math.isfinite(created):
            raise _bad("created")
        if created < 0:
            raise _bad("created")
        object.__setattr__(self, "created", float(created))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (with a format version) for :meth:`from_dict`."""
        return {
            "v": _FORMAT_VERSION,
            "provider_id": self.provider_id,
            "state": self.state,
            "code_verifier": self.code_verifier,
            "nonce": self.nonce,
            "redirect_uri": self.redirect_uri,
            "created": self.created,
        }

    @classmethod
    def from_dict(cls, d: object) -> PendingAuthorization:
        """Rebuild from :meth:`to_dict` output; :class:`AuthorizationFailed` (``bad-pending``) for
        anything else: a non-dict, missing or unknown keys, a wrong version, a wrong type."""
        if not isinstance(d, dict):
            raise _bad("not-a-dict")
        if set(d) != _KEYS:
            raise _bad("keys")
        version = d["v"]
        if type(version) is not int or version != _FORMAT_VERSION:
            raise _bad("version")
        return cls(
            provider_id=d["provider_id"],
            state=d["state"],
            code_verifier=d["code_verifier"],
            nonce=d["nonce"],
            redirect_uri=d["redirect_uri"],
            created=d["created"],
        )

    def __repr__(self) -> str:
        return (
            f"PendingAuthorization(provider_id={self.provider_id!r}, redirect_uri={self.redirect_uri!r}, "
            f"created={self.created!r}, state=***, code_verifier=***, "
            f"nonce={'None' if self.nonce is None else '***'})"
        )

    __str__ = __repr__
