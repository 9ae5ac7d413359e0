"""The kit's OAuth 2.0 / OpenID Connect client: third-party connections and the pages' sign-in."""

from __future__ import annotations

from .provider import PROVIDER_ID_PATTERN, OAuthProvider

__all__ = ["PROVIDER_ID_PATTERN", "OAuthProvider"]
