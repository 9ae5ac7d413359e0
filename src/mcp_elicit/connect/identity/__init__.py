"""Who is calling: the principal comes only from the validated MCP access token.

The elicitation spec's rule (user identification): never trust identity a client asserts
("I am joe@…" in an argument, a header of its own, a URL parameter). For a remote server the user
is derived from MCP authorization, i.e. the ``iss`` and ``sub`` of the access token this server
validated. This package does exactly that:

* :class:`Principal` ``(issuer, subject)`` and its canonical :attr:`Principal.key`
  (``"<issuer>|<subject>"``, exact string comparison, no normalisation) used as the engine's
  principal string and as the owner of pending flows.
* :class:`Verifier`, the pluggable protocol (``async verify(token) -> Principal``), and
  :class:`JWTIdentity`, which checks a bearer JWT locally against the issuer's JWKS (signature,
  ``alg`` allow-list, ``iss`` exact, ``aud`` = this server, ``exp``, ``nbf``, ``iat``, ``sub``).
  The JWKS is fetched with a timeout, cached, and refreshed on an unknown ``kid`` at most once per
  interval.
* :func:`authenticator` for ``HttpApp(authenticate=...)``: ``401`` with
  ``WWW-Authenticate: Bearer resource_metadata="…"`` (plus ``error="invalid_token"`` when a token
  was sent), and :func:`protected_resource_metadata` / :class:`ProtectedResourceMetadataApp` for
  RFC 9728 discovery.
* :class:`DevelopmentIdentity`: for the demo only, clearly labelled, refuses to exist without an
  explicit acknowledgement.

No passthrough: the MCP access token is verified in memory and never sent anywhere. The only
network request this package makes is a credential-free GET of the issuer's JWKS. A verifier must
never forward the token to a third-party API (that is token passthrough, which MCP forbids);
third-party access goes through the server's own OAuth client and token vault instead.

Errors: :class:`InvalidToken` (``reason`` for logs, one generic public message),
:class:`IdentityUnavailable` (the JWKS could not be obtained: fail closed with a server error, not
a 401), :class:`DevelopmentIdentityRefused`.
"""

from __future__ import annotations

from .development import DEVELOPMENT_IDENTITY_ENV_VAR, DevelopmentIdentity
from .errors import (
    INVALID_TOKEN_MESSAGE,
    DevelopmentIdentityRefused,
    IdentityUnavailable,
    InvalidToken,
    TokenRejectReason,
)
from .http import (
    WELL_KNOWN_PATH,
    ProtectedResourceMetadataApp,
    authenticator,
    protected_resource_metadata,
    resource_metadata_path,
    resource_metadata_url,
)
from .jwks import JWKSCache
from .jwt_identity import DEFAULT_ALGORITHMS, JWTIdentity
from .principal import DEVELOPMENT_ISSUER, Principal
from .verifier import Verifier

__all__ = [
    "DEFAULT_ALGORITHMS",
    "DEVELOPMENT_IDENTITY_ENV_VAR",
    "DEVELOPMENT_ISSUER",
    "INVALID_TOKEN_MESSAGE",
    "WELL_KNOWN_PATH",
    "DevelopmentIdentity",
    "DevelopmentIdentityRefused",
    "IdentityUnavailable",
    "InvalidToken",
    "JWKSCache",
    "JWTIdentity",
    "Principal",
    "ProtectedResourceMetadataApp",
    "TokenRejectReason",
    "Verifier",
    "authenticator",
    "protected_resource_metadata",
    "resource_metadata_path",
    "resource_metadata_url",
]
