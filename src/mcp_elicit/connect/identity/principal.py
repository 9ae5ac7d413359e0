"""The authenticated principal: ``(issuer, subject)`` from a validated MCP access token.

``sub`` is unique only per issuer (OIDC Core §2, RFC 9068 §2.2), so the principal is the pair. Its
:attr:`Principal.key` (``"<issuer>|<subject>"``) is the string the engine binds ``requestState``
to and the owner stored on pending flows.

Comparison is by exact string, with no normalisation of any kind (no case folding, no trailing
slash removal, no percent-decoding, no Unicode normalisation): RFC 8414 §3.3 and RFC 9207 §2.4
require the issuer to be compared as a simple string, and the MCP authorization spec applies no
normalisation either. An issuer may not contain ``|`` (a URL has no use for it), which is what
makes the key unambiguous: the key splits at its *first* ``|``, and a subject may contain ``|``
(``auth0|1234`` is a common shape).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

__all__ = ["DEVELOPMENT_ISSUER", "MAX_ISSUER_LENGTH", "MAX_SUBJECT_LENGTH", "Principal"]

DEVELOPMENT_ISSUER: Final = "urn:mcp-elicit:development"
"""The issuer of every principal made by :class:`DevelopmentIdentity` (never a real issuer)."""

MAX_ISSUER_LENGTH: Final = 2048
MAX_SUBJECT_LENGTH: Final = 1024
_SEPARATOR: Final = "|"


def _problem(value: object, what: str, limit: int) -> str | None:
    if not isinstance(value, str):
        return f"{what} must be a str"
    if not value:
        return f"{what} must not be empty"
    if len(value) > limit:
        return f"{what} is longer than {limit} characters"
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in value):
        return f"{what} contains a control character"
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        return f"{what} contains a lone surrogate"
    return None


def principal_problem(issuer: object, subject: object) -> str | None:
    """Why ``(issuer, subject)`` cannot be a principal, or ``None`` when it can."""
    problem = _problem(issuer, "issuer", MAX_ISSUER_LENGTH) or _problem(
        subject, "subject", MAX_SUBJECT_LENGTH
    )
    if problem is None and _SEPARATOR in str(issuer):
        problem = "issuer must not contain '|'"
    return problem


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the ``iss`` and ``sub`` of a validated access token.

    Equality and hashing use ``(issuer, subject)`` only. ``client_id`` (the token's ``client_id``
    or ``azp``) and ``scopes`` (its ``scope``/``scp``) ride along for audit logs and per-client
    consent; they never take part in identity.
    """

    issuer: str
    subject: str
    client_id: str | None = field(default=None, compare=False)
    scopes: frozenset[str] = field(default_factory=frozenset, compare=False)

    def __post_init__(self) -> None:
        problem = principal_problem(self.issuer, self.subject)
        if problem is not None:
            raise ValueError(f"not a valid principal: {problem}")

    @property
    def key(self) -> str:
        """``"<issuer>|<subject>"``: the canonical string the engine uses as the principal."""
        return f"{self.issuer}{_SEPARATOR}{self.subject}"

    @property
    def is_development(self) -> bool:
        """Whether this principal came from the development identity (never trust it in production)."""
        return self.issuer == DEVELOPMENT_ISSUER

    @classmethod
    def from_key(cls, key: str) -> Principal:
        """The principal whose :attr:`key` is ``key`` (split at the first ``|``)."""
        if not isinstance(key, str) or _SEPARATOR not in key:
            raise ValueError("not a principal key")
        issuer, subject = key.split(_SEPARATOR, 1)
        return cls(issuer, subject)

    def __str__(self) -> str:
        return self.key
