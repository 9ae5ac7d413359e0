"""The kit's OAuth 2.0 / OpenID Connect client: third-party connections and the pages' sign-in.

* :class:`OAuthProvider`: one provider's pinned configuration; :func:`discover` builds one from
  the provider's metadata (exact issuer match, S256 required, RFC 9207 flag).
* :class:`AuthorizationCodeGrant`: ``begin()`` → the authorization URL and a
  :class:`PendingAuthorization` for the pages to keep; ``finish()`` → checks the callback
  (provider in the path, age, state, ``iss``, error, code), redeems the code with PKCE at the
  pinned token endpoint and validates the answer (and the ID token) → :class:`TokenGrant`.
  Every failure is an :class:`AuthorizationFailed` (``reason`` for logs, a fixed
  ``public_message``, the provider's text only cleaned in ``provider_error``).
* :func:`token_refresher` / :func:`token_revoker`: the vault's refresher (refresh-token grant) and
  revoker (RFC 7009) for one provider.

authlib encodes the authorization URL, the PKCE challenge, the token and revocation requests, the
client authentication, and validates discovered metadata; it is imported only when a flow runs.
The HTTP is this package's own: a deadline on every request, response size caps, no redirects.
Tokens never appear in logs, exception messages or ``repr()``.
"""

from __future__ import annotations

from .authorization import AuthorizationCodeGrant
from .discovery import discover
from .errors import AuthorizationFailed, DiscoveryFailed, FailureReason, RevocationFailed
from .grant import TokenGrant
from .id_token import DEFAULT_ID_TOKEN_ALGORITHMS
from .pending import PendingAuthorization
from .provider import PROVIDER_ID_PATTERN, OAuthProvider, TokenEndpointAuthMethod
from .refresh import token_refresher
from .revoke import token_revoker

__all__ = [
    "DEFAULT_ID_TOKEN_ALGORITHMS",
    "PROVIDER_ID_PATTERN",
    "AuthorizationCodeGrant",
    "AuthorizationFailed",
    "DiscoveryFailed",
    "FailureReason",
    "OAuthProvider",
    "PendingAuthorization",
    "RevocationFailed",
    "TokenEndpointAuthMethod",
    "TokenGrant",
    "discover",
    "token_refresher",
    "token_revoker",
]
