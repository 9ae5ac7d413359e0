"""Exceptions raised by :mod:`mcp_elicit.connect.identity`.

A refused token never says *why* to the caller: ``str(InvalidToken(...))`` is always
:data:`INVALID_TOKEN_MESSAGE`. The machine-readable cause is :attr:`InvalidToken.reason`, for
server logs and metrics only (it helps an operator, and would help an attacker probing which check
failed).
"""

from __future__ import annotations

from typing import Final, Literal

from mcp_elicit.state.errors import FixedMessageError

__all__ = [
    "INVALID_TOKEN_MESSAGE",
    "DevelopmentIdentityRefused",
    "IdentityUnavailable",
    "InvalidToken",
    "TokenRejectReason",
]

INVALID_TOKEN_MESSAGE: Final = "Invalid access token"  # noqa: S105 - a message, not a password
"""The one fixed public message for every refused token."""

TokenRejectReason = Literal[
    "not-a-string",  # the token is not a str
    "too-large",  # longer than the verifier's max_token_bytes
    "malformed",  # not three base64url segments, bad JSON, not an object, ...
    "bad-header",  # crit / b64 / a non-string kid / typ not accepted
    "alg-not-allowed",  # alg is none, HS*, or outside the configured allow-list
    "unknown-kid",  # no key with this kid in the JWKS, even after the (rate-limited) refresh
    "no-matching-key",  # keys exist but none fits the alg (key type, curve, use, key_ops, alg)
    "bad-signature",  # the signature does not verify with any candidate key
    "bad-claims",  # a registered claim has the wrong type (exp not a number, aud not str/list...)
    "issuer",  # iss missing or not exactly the configured issuer
    "audience",  # aud missing or does not contain this resource (token for another server)
    "expired",  # exp missing or not in the future (after leeway)
    "not-yet-valid",  # nbf in the future (after leeway)
    "issued-in-future",  # iat in the future (after leeway)
    "no-subject",  # sub missing, empty, not a string, or not a usable identifier
    "unknown-token",  # development identity: a token that is not in its table
]


class InvalidToken(FixedMessageError[TokenRejectReason]):
    """An access token that must be refused (answer ``401`` with ``error="invalid_token"``).

    ``str(exc)`` is always :data:`INVALID_TOKEN_MESSAGE`; the cause is in :attr:`reason` (log it,
    never send it). Neither ever contains the token.
    """

    __slots__ = ()

    public_message = INVALID_TOKEN_MESSAGE


class IdentityUnavailable(Exception):
    """The token could not be checked at all (the issuer's JWKS is unreachable, times out, or is
    not a JWKS, and no usable cached copy exists).

    This is a server-side failure, not a bad token: fail closed, answer 5xx (503), never 401 (a
    401 would send the client off to refresh a token that may be perfectly valid). The message
    names the JWKS URL and the failure; it never contains a token.
    """


class DevelopmentIdentityRefused(RuntimeError):
    """:class:`~mcp_elicit.connect.identity.DevelopmentIdentity` was constructed without the
    explicit acknowledgement that it is not secure."""
