"""Validation of token endpoint answers (RFC 6749 §5.1 success, §5.2 error).

Shared by the code redemption and the refresh grant. A success must be JSON (``application/json``,
a JSON object), ``token_type`` Bearer (case-insensitive, RFC 6749 §7.1), a non-empty
``access_token`` of printable ASCII, and sizes within caps. Problems are reported as
:class:`InvalidTokenResponse` with a fixed description that never quotes a token.

A refresh answer is read with ``refresh=True``: by then the provider has already rotated the
refresh token, so refusing the whole answer for a field that can be defaulted would lose the new
refresh token (the stored one is dead; with reuse detection the provider may revoke the whole
grant, RFC 9700 §4.14). There, an unusable ``expires_in`` is "expired now" if negative and
"unknown" otherwise, an unusable ``scope`` is "unchanged", and ``id_token`` is not looked at.
The token, the token type and the refresh token are checked as strictly as ever.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._http import HttpAnswer
from .errors import clean_error_code, clean_provider_text

__all__ = ["InvalidTokenResponse", "OAuthErrorBody", "ParsedTokens", "parse_error", "parse_tokens"]

MAX_ACCESS_TOKEN: Final = 16 * 1024
MAX_REFRESH_TOKEN: Final = 8 * 1024
MAX_ID_TOKEN: Final = 16 * 1024
MAX_SCOPES: Final = 256
MAX_EXPIRES_IN: Final = 10 * 365 * 24 * 3600.0
# RFC 6749 Appendix A: tokens are VSCHAR (printable ASCII); scope tokens NQCHAR.
_VSCHAR_RE: Final = re.compile(r"[\x20-\x7e]+")
_SCOPE_TOKEN_RE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,256}")


class InvalidTokenResponse(ValueError):
    """A 200 answer that is not an acceptable token response (the message is fixed text)."""


@dataclass(frozen=True, slots=True, repr=False)
class ParsedTokens:
    access_token: str
    refresh_token: str | None
    expires_in: float | None
    scopes: tuple[str, ...] | None  # None: the response had no scope
    id_token: str | None
    dropped: tuple[str, ...] = ()  # refresh answers: unusable fields replaced by defaults

    def __repr__(self) -> str:
        return f"ParsedTokens(expires_in={self.expires_in!r}, scopes={self.scopes!r})"


@dataclass(frozen=True, slots=True)
class OAuthErrorBody:
    error: str | None  # a well-formed code, else None
    description: str | None  # cleaned


def _token(body: Mapping[str, Any], name: str, limit: int, *, required: bool) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise InvalidTokenResponse(f"{name} missing or not a non-empty string")
    if len(value) > limit:
        raise InvalidTokenResponse(f"{name} longer than {limit} characters")
    if not _VSCHAR_RE.fullmatch(value):
        raise InvalidTokenResponse(f"{name} has characters outside printable ASCII")
    return value


def _expires_in(body: Mapping[str, Any]) -> float | None:
    value = body.get("expires_in")
    if value is None:
        return None
    # Some providers send the number as a string ("3600"); accept plain digits only.
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidTokenResponse("expires_in is not a number")
    if value < 0:
        raise InvalidTokenResponse("expires_in is negative")
    return float(min(value, MAX_EXPIRES_IN))


def _scopes(body: Mapping[str, Any]) -> tuple[str, ...] | None:
    value = body.get("scope")
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidTokenResponse("scope is not a string")
    ordered = tuple(s for s in dict.fromkeys(value.split(" ")) if s)  # dedupe, keep order
    if len(ordered) > MAX_SCOPES or not all(_SCOPE_TOKEN_RE.fullmatch(s) for s in ordered):
        raise InvalidTokenResponse("scope is not a list of scope tokens")
    return ordered


def _lenient(body: Mapping[str, Any]) -> tuple[float | None, tuple[str, ...] | None, list[str]]:
    """``expires_in`` and ``scope`` of a refresh answer, with defaults for unusable values."""
    dropped: list[str] = []
    try:
        expires_in = _expires_in(body)
    except InvalidTokenResponse:
        value = body.get("expires_in")
        negative = not isinstance(value, bool) and isinstance(value, int | float) and value < 0
        expires_in = 0.0 if negative else None
        dropped.append("expires_in")
    try:
        scopes = _scopes(body)
    except InvalidTokenResponse:
        scopes = None
        dropped.append("scope")
    return expires_in, scopes, dropped


def parse_tokens(answer: HttpAnswer, *, refresh: bool = False) -> ParsedTokens:
    """The tokens of a ``200`` token response; :class:`InvalidTokenResponse` otherwise.

    ``refresh=True`` for a refresh-token grant's answer (see the module docstring); the names of
    fields replaced by defaults are then in :attr:`ParsedTokens.dropped`."""
    body = answer.json_object()
    if body is None:
        raise InvalidTokenResponse("not a JSON object with a JSON content type")
    token_type = body.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        # DPoP or MAC tokens would need proof keys this client does not have.
        raise InvalidTokenResponse("token_type is not Bearer")
    access = _token(body, "access_token", MAX_ACCESS_TOKEN, required=True)
    assert access is not None
    if refresh:
        expires_in, scopes, dropped = _lenient(body)
        return ParsedTokens(
            access_token=access,
            refresh_token=_token(body, "refresh_token", MAX_REFRESH_TOKEN, required=False),
            expires_in=expires_in,
            scopes=scopes,
            id_token=None,
            dropped=tuple(dropped),
        )
    return ParsedTokens(
        access_token=access,
        refresh_token=_token(body, "refresh_token", MAX_REFRESH_TOKEN, required=False),
        expires_in=_expires_in(body),
        scopes=_scopes(body),
        id_token=_token(body, "id_token", MAX_ID_TOKEN, required=False),
    )


def parse_error(answer: HttpAnswer, withhold: Iterable[str | None] = ()) -> OAuthErrorBody:
    """The ``error`` and ``error_description`` of a non-200 answer (both ``None`` if absent/odd);
    the secrets in ``withhold`` (what the request carried) appear in neither."""
    body = answer.json_object()
    if body is None:
        return OAuthErrorBody(None, None)
    error = clean_error_code(body.get("error"), withhold=withhold)
    return OAuthErrorBody(error, clean_provider_text(body.get("error_description"), withhold=withhold))
