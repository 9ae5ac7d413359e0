"""Build an :class:`OAuthProvider` from the provider's published metadata, once, then pin it.

:func:`discover` fetches ``<issuer>/.well-known/openid-configuration`` (OpenID Connect Discovery
§4) and, when that is not found, the RFC 8414 ``/.well-known/oauth-authorization-server`` document
(inserted before the issuer's path, RFC 8414 §3.1). The document must name *exactly* the issuer
that was asked for (RFC 8414 §3.3, OIDC Discovery §4.3: no normalisation), which stops a
metadata document from steering a client to another server's endpoints. authlib's RFC 8414 /
RFC 9207 metadata classes validate the document (https endpoints, http only on loopback).
Providers that do not list ``S256`` in ``code_challenge_methods_supported`` are refused: PKCE is
not optional here.

The endpoints returned are then fixed in the provider object; nothing is looked up again per flow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from ..identity.urls import check_service_url
from ._http import DEFAULT_TIMEOUT, HttpFailure, request
from .errors import DiscoveryFailed
from .provider import OAuthProvider, TokenEndpointAuthMethod

if TYPE_CHECKING:
    import httpx

__all__ = ["discover", "metadata_urls"]

MAX_METADATA_BYTES: Final = 256 * 1024
_URL_MEMBERS: Final = (
    "authorization_endpoint",
    "token_endpoint",
    "revocation_endpoint",
    "jwks_uri",
    "userinfo_endpoint",
    "registration_endpoint",
    "introspection_endpoint",
    "service_documentation",
    "op_policy_uri",
    "op_tos_uri",
)
# RFC 8414 §2 arrays (authlib's checks index and iterate them as lists).
_ARRAY_MEMBERS: Final = (
    "scopes_supported",
    "response_types_supported",
    "response_modes_supported",
    "grant_types_supported",
    "token_endpoint_auth_methods_supported",
    "token_endpoint_auth_signing_alg_values_supported",
    "ui_locales_supported",
    "revocation_endpoint_auth_methods_supported",
    "revocation_endpoint_auth_signing_alg_values_supported",
    "introspection_endpoint_auth_methods_supported",
    "introspection_endpoint_auth_signing_alg_values_supported",
    "code_challenge_methods_supported",
)


def metadata_urls(issuer: str) -> tuple[str, str]:
    """(OpenID Connect discovery URL, RFC 8414 metadata URL) of ``issuer``."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    return (
        f"{origin}{path}/.well-known/openid-configuration",
        f"{origin}/.well-known/oauth-authorization-server{path}",
    )


async def _fetch(http: httpx.AsyncClient | None, url: str, deadline: float) -> dict[str, Any] | None:
    """The metadata document at ``url``; ``None`` when there is none (404/other non-200)."""
    try:
        answer = await request(
            http,
            "GET",
            url,
            headers={"Accept": "application/json"},
            deadline=deadline,
            max_bytes=MAX_METADATA_BYTES,
        )
    except HttpFailure as exc:
        raise DiscoveryFailed(f"{url}: {exc}") from None
    if answer.status != 200:
        return None
    document = answer.json_object()
    if document is None:
        raise DiscoveryFailed(f"{url}: not a JSON object")
    return document


def _auth_method(document: dict[str, Any], overrides: dict[str, Any]) -> TokenEndpointAuthMethod | None:
    if "token_endpoint_auth_method" in overrides:
        method: TokenEndpointAuthMethod | None = overrides.pop("token_endpoint_auth_method")
        return method
    if not overrides.get("client_secret"):
        return "none"
    supported = document.get("token_endpoint_auth_methods_supported", ["client_secret_basic"])
    for method in ("client_secret_basic", "client_secret_post"):
        if isinstance(supported, list) and method in supported:
            return method
    raise DiscoveryFailed(
        "the provider supports neither client_secret_basic nor client_secret_post; "
        "pass token_endpoint_auth_method explicitly"
    )


async def discover(
    issuer: str,
    *,
    http: httpx.AsyncClient | None = None,
    request_timeout: float = DEFAULT_TIMEOUT,
    **overrides: Any,
) -> OAuthProvider:
    """An :class:`OAuthProvider` for ``issuer`` from its metadata.

    ``overrides`` are further :class:`OAuthProvider` fields: ``id`` and ``client_id`` are
    required; ``client_secret``, ``scopes``, ``openid``, ``title``, ``extra_authorize_params``,
    ``token_endpoint_auth_method`` are typical. They may also replace a discovered endpoint, but
    never ``issuer``. ``openid`` defaults to true when the OpenID configuration was found and
    ``openid`` is among ``scopes``. ``request_timeout``: seconds per metadata request. Raises
    :class:`DiscoveryFailed`.
    """
    from authlib.oauth2 import rfc8414, rfc9207

    if "issuer" in overrides:
        raise TypeError("discover(): the issuer is the one asked for; it cannot be overridden")
    for required in ("id", "client_id"):
        if required not in overrides:
            raise TypeError(f"discover(): {required}= is required")
    try:
        check_service_url(issuer, "issuer", allow_loopback_http=True)
    except ValueError as exc:
        raise DiscoveryFailed(str(exc)) from None
    if urlsplit(issuer).query:
        raise DiscoveryFailed(f"issuer must not contain a query: {issuer!r}")

    oidc_url, oauth_url = metadata_urls(issuer)
    document = await _fetch(http, oidc_url, request_timeout)
    found_oidc = document is not None
    if document is None:
        document = await _fetch(http, oauth_url, request_timeout)
    if document is None:
        raise DiscoveryFailed(f"no metadata for {issuer!r} at {oidc_url} or {oauth_url}")

    if document.get("issuer") != issuer:  # exact: RFC 8414 §3.3
        raise DiscoveryFailed(
            f"the metadata names issuer {str(document.get('issuer'))[:200]!r}, not {issuer!r}"
        )
    # authlib's validation assumes these types (a number as service_documentation, an object as
    # grant_types_supported: AttributeError, KeyError), so they are checked first.
    for name in _URL_MEMBERS:
        if document.get(name) is not None and not isinstance(document[name], str):
            raise DiscoveryFailed(f"{issuer}: {name} is not a string")
    for name in _ARRAY_MEMBERS:
        if document.get(name) is not None and not isinstance(document[name], list):
            raise DiscoveryFailed(f"{issuer}: {name} is not an array")
    metadata = rfc8414.AuthorizationServerMetadata(document)
    try:
        metadata.validate(metadata_classes=[rfc9207.AuthorizationServerMetadata])
    except (ValueError, TypeError) as exc:
        raise DiscoveryFailed(f"{issuer}: invalid metadata: {exc}") from None
    methods = document.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise DiscoveryFailed(f"{issuer}: the provider does not advertise PKCE with S256")

    options = dict(overrides)
    method = _auth_method(document, options)
    scopes = tuple(options.get("scopes", ()))
    openid = options.pop("openid", found_oidc and "openid" in scopes)
    fields: dict[str, Any] = {
        "issuer": issuer,
        "authorize_url": document.get("authorization_endpoint"),
        "token_url": document.get("token_endpoint"),
        "revocation_url": document.get("revocation_endpoint"),
        "jwks_url": document.get("jwks_uri"),
        "userinfo_url": document.get("userinfo_endpoint") if found_oidc else None,
        "iss_parameter_supported": document.get("authorization_response_iss_parameter_supported") is True,
        "openid": bool(openid),
        "token_endpoint_auth_method": method,
    }
    fields.update(options)
    for name in ("authorize_url", "token_url"):
        if not isinstance(fields[name], str):
            raise DiscoveryFailed(f"{issuer}: the metadata has no usable {name}")
    try:
        return OAuthProvider(**fields)
    except ValueError as exc:
        raise DiscoveryFailed(f"{issuer}: {exc}") from None
