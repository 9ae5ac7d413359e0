"""How the pages learn who the browser user is: OpenID Connect sign-in against the *same*
authorization server that issues the MCP access tokens.

The flow's owner is the ``(iss, sub)`` of the MCP access token; the browser's session is the
``(iss, sub)`` of an ID token from the same issuer, so the two compare by exact string equality.
(An issuer that gives each client a different, *pairwise* ``sub`` breaks this comparison: configure
one sector identifier for the MCP clients and this web client.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from mcp_elicit.connect.identity.principal import Principal
from mcp_elicit.connect.oauth.grant import TokenGrant
from mcp_elicit.connect.oauth.provider import OAuthProvider

if TYPE_CHECKING:
    import httpx

__all__ = ["OidcLogin"]

_log = logging.getLogger("mcp_elicit.connect.pages")
_USERINFO_TIMEOUT: Final = 5.0
_USERINFO_MAX_BYTES: Final = 64 * 1024


class OidcLogin:
    """Sign-in configuration for the pages: ``provider`` is an ``openid=True``
    :class:`OAuthProvider` for the MCP authorization server, registered with the redirect URI
    ``<base_url>/login/callback``."""

    __slots__ = ("provider",)

    def __init__(self, provider: OAuthProvider) -> None:
        if not isinstance(provider, OAuthProvider):
            raise TypeError("OidcLogin needs an OAuthProvider")
        if not provider.openid or not provider.issuer:
            needs = (
                "OidcLogin needs an OpenID Connect provider (openid=True, with its issuer): the "
                "signed-in user is the (iss, sub) of its ID token; "
            )
            if "openid" in provider.scopes:
                # The scope was asked for: what is missing is OpenID Connect at the server.
                raise ValueError(
                    needs + f"{provider.id!r} asks for the 'openid' scope, but discover() found no "
                    "OpenID configuration at its issuer (/.well-known/openid-configuration), or "
                    "openid=False was passed; sign users in with the MCP authorization server's "
                    "OpenID Connect"
                )
            raise ValueError(
                needs + "with discover(), ask for the 'openid' scope (scopes=['openid', 'profile', 'email'])"
            )
        self.provider = provider

    def principal(self, id_claims: Mapping[str, Any] | None) -> Principal | None:
        """The principal of validated ID token claims, or ``None`` if they do not name one of
        this issuer's users (the OAuth client has checked signature, ``aud``, ``nonce``...)."""
        if id_claims is None:
            return None
        issuer, subject = id_claims.get("iss"), id_claims.get("sub")
        if not isinstance(issuer, str) or not isinstance(subject, str) or issuer != self.provider.issuer:
            return None
        try:
            return Principal(issuer, subject)
        except ValueError:
            return None

    async def display_claims(
        self, grant: TokenGrant, http: httpx.AsyncClient | None
    ) -> tuple[object, object]:
        """``(name, email)`` to show on the pages: from the ID token, else from userinfo.

        Many providers (oidc-provider by default) put profile claims only in userinfo when an
        access token is issued. Display only: a userinfo failure costs the label, never the
        sign-in, and its answer counts only if its ``sub`` is the ID token's (OIDC Core §5.3.2).
        """
        claims = grant.id_claims or {}
        name, email = claims.get("name"), claims.get("email")
        url = self.provider.userinfo_url
        if (name and email) or url is None:
            return name, email
        import httpx

        headers = {"Authorization": f"Bearer {grant.access_token}", "Accept": "application/json"}
        try:
            if http is None:
                async with httpx.AsyncClient(timeout=_USERINFO_TIMEOUT) as client:
                    response = await client.get(url, headers=headers)
            else:
                response = await http.get(url, headers=headers, timeout=_USERINFO_TIMEOUT)
            info = (
                response.json()
                if response.status_code == 200 and len(response.content) <= _USERINFO_MAX_BYTES
                else None
            )
        except (httpx.HTTPError, ValueError):
            info = None
        if not isinstance(info, dict) or info.get("sub") != claims.get("sub"):
            _log.info("userinfo gave no usable display claims for the signed-in user")
            return name, email
        return name or info.get("name"), email or info.get("email")

    def __repr__(self) -> str:
        return f"OidcLogin(provider={self.provider.id!r}, issuer={self.provider.issuer!r})"
