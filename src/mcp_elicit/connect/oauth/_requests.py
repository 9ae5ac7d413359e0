"""Requests to a provider's back-channel endpoints, encoded by authlib.

authlib (imported lazily: it is only needed once a flow runs) encodes the token request bodies
(RFC 6749 §4.1.3, §6), the revocation body (RFC 7009 §2.1) and the client authentication
(``client_secret_basic``, ``client_secret_post`` or ``none`` for public clients). The HTTP itself
is ours (:mod:`._http`): bounded, no redirects, and sent only to the provider's *pinned* URLs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final
from urllib.parse import quote

from ._http import DEFAULT_TIMEOUT, HttpAnswer, request
from .provider import OAuthProvider

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_RESPONSE_BYTES", "post_revocation", "post_token_request"]

MAX_RESPONSE_BYTES: Final = 64 * 1024
_ACCEPT: Final = {"Accept": "application/json"}


def _authenticate(provider: OAuthProvider, url: str, body: str) -> tuple[dict[str, str], str]:
    from authlib.oauth2.auth import ClientAuth

    headers = {**_ACCEPT, "Content-Type": "application/x-www-form-urlencoded"}
    method = provider.auth_method
    client_id, secret = provider.client_id, provider.client_secret
    if method == "client_secret_basic":
        # RFC 6749 §2.3.1: id and secret are form-urlencoded before the Basic encoding.
        client_id, secret = quote(client_id, safe=""), quote(secret or "", safe="")
    auth = ClientAuth(client_id, secret, method)
    _, headers, body = auth.prepare("POST", url, headers, body)
    return headers, body


async def post_token_request(
    provider: OAuthProvider,
    grant_type: str,
    *,
    http: httpx.AsyncClient | None,
    deadline: float = DEFAULT_TIMEOUT,
    redirect_uri: str | None = None,
    **params: str,
) -> HttpAnswer:
    """POST a token request for ``grant_type`` to ``provider.token_url`` (and nowhere else)."""
    from authlib.oauth2.rfc6749.parameters import prepare_token_request

    body = prepare_token_request(grant_type, redirect_uri=redirect_uri, **params)
    headers, body = _authenticate(provider, provider.token_url, body)
    return await request(
        http,
        "POST",
        provider.token_url,
        headers=headers,
        body=body,
        deadline=deadline,
        max_bytes=MAX_RESPONSE_BYTES,
    )


async def post_revocation(
    provider: OAuthProvider,
    token: str,
    token_type_hint: str,
    *,
    http: httpx.AsyncClient | None,
    deadline: float = DEFAULT_TIMEOUT,
) -> HttpAnswer:
    """POST an RFC 7009 revocation request to ``provider.revocation_url``."""
    from authlib.oauth2.rfc7009 import prepare_revoke_token_request

    url = provider.revocation_url
    assert url is not None
    body, _ = prepare_revoke_token_request(token, token_type_hint)
    headers, body = _authenticate(provider, url, body)
    return await request(
        http,
        "POST",
        url,
        headers=headers,
        body=body,
        deadline=deadline,
        max_bytes=MAX_RESPONSE_BYTES,
    )
