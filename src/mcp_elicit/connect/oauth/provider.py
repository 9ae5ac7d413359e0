"""One third-party authorization server the kit connects users to (or signs them in with).

Endpoints are configured (or discovered once) and then *pinned*: the code is only ever redeemed at
:attr:`OAuthProvider.token_url`, whatever a callback says, which is what defeats the mix-up attack
family. :attr:`OAuthProvider.id` appears in the callback path (``/oauth/<id>/callback``) and is
checked against the stored transaction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from mcp_elicit.wire.hosts import is_loopback_host

from ..identity.urls import parse_configured_url

__all__ = ["PROVIDER_ID_PATTERN", "OAuthProvider", "TokenEndpointAuthMethod"]

TokenEndpointAuthMethod: TypeAlias = Literal["client_secret_basic", "client_secret_post", "none"]
"""How the client authenticates at the token and revocation endpoints (RFC 7591 §2 names)."""

PROVIDER_ID_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
"""Provider ids are short, lower-case and URL-safe: they live in paths and log lines."""


_MAX_ENDPOINT: Final = 8192  # RFC 9110 §4.1 asks for at least 8000 octets; HTTP clients cap near 64 KiB


def _check_endpoint(provider_id: str, name: str, url: str | None, *, required: bool) -> None:
    if url is None:
        if required:
            raise ValueError(f"OAuth provider {provider_id!r}: {name} is required")
        return
    # A URL that no request can be sent to (an HTTP client refuses it with an error of its own) is
    # refused here, when the provider is configured or discovered, not at the first request.
    what = f"OAuth provider {provider_id!r}: {name}"
    if isinstance(url, str) and len(url) > _MAX_ENDPOINT:
        raise ValueError(f"{what} is longer than {_MAX_ENDPOINT} characters, got {url!r:.200}")
    parts = parse_configured_url(url, what)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and is_loopback_host(parts.hostname):
        return  # a provider on this machine (development and tests)
    raise ValueError(
        f"OAuth provider {provider_id!r}: {name} must be an https URL (http only on loopback), got {url!r}"
    )


@dataclass(frozen=True, slots=True)
class OAuthProvider:
    """Static configuration of one OAuth 2.0 / OpenID Connect provider.

    ``issuer`` is the provider's issuer identifier: when set, an ``iss`` in the authorization
    response must equal it (RFC 9207), and ID tokens must carry it. ``iss_parameter_supported``
    says the provider advertises ``authorization_response_iss_parameter_supported``: then a
    response *without* ``iss`` is refused too. ``openid`` asks for an ID token (``nonce`` sent and
    checked against ``jwks_url``). ``token_endpoint_auth_method``: ``None`` picks
    ``client_secret_basic`` when there is a ``client_secret`` and ``none`` (a public client)
    otherwise.
    """

    id: str
    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] = ()
    issuer: str | None = None
    iss_parameter_supported: bool = False
    revocation_url: str | None = None
    openid: bool = False
    jwks_url: str | None = None
    userinfo_url: str | None = None
    title: str | None = None
    extra_authorize_params: Mapping[str, str] = field(default_factory=dict)
    token_endpoint_auth_method: TokenEndpointAuthMethod | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not PROVIDER_ID_PATTERN.fullmatch(self.id):
            raise ValueError(
                f"OAuth provider id {self.id!r}: use 1-32 characters a-z 0-9 _ - (it appears in URLs)"
            )
        _check_endpoint(self.id, "authorize_url", self.authorize_url, required=True)
        _check_endpoint(self.id, "token_url", self.token_url, required=True)
        _check_endpoint(self.id, "revocation_url", self.revocation_url, required=False)
        _check_endpoint(self.id, "jwks_url", self.jwks_url, required=self.openid)
        _check_endpoint(self.id, "userinfo_url", self.userinfo_url, required=False)
        if self.openid and not self.issuer:
            raise ValueError(f"OAuth provider {self.id!r}: openid=True needs the issuer")
        if self.iss_parameter_supported and not self.issuer:
            raise ValueError(f"OAuth provider {self.id!r}: iss_parameter_supported needs the issuer")
        if not self.client_id:
            raise ValueError(f"OAuth provider {self.id!r}: client_id is required")
        object.__setattr__(self, "scopes", tuple(self.scopes))
        method = self.token_endpoint_auth_method
        if method not in (None, "client_secret_basic", "client_secret_post", "none"):
            raise ValueError(f"OAuth provider {self.id!r}: unknown token_endpoint_auth_method {method!r}")
        if method in ("client_secret_basic", "client_secret_post") and not self.client_secret:
            raise ValueError(f"OAuth provider {self.id!r}: {method} needs the client_secret")
        for reserved in ("state", "code_challenge", "code_challenge_method", "nonce", "redirect_uri"):
            if reserved in self.extra_authorize_params:
                raise ValueError(
                    f"OAuth provider {self.id!r}: extra_authorize_params may not set {reserved!r}"
                )

    @property
    def auth_method(self) -> TokenEndpointAuthMethod:
        """The effective token endpoint authentication method."""
        if self.token_endpoint_auth_method is not None:
            return self.token_endpoint_auth_method
        return "client_secret_basic" if self.client_secret else "none"

    @property
    def display_name(self) -> str:
        """What a page shows: the title, else the id."""
        return self.title or self.id
