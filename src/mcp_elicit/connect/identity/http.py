"""MCP authorization on the HTTP side: the bearer-token authenticator and RFC 9728 metadata.

* :func:`authenticator` turns a :class:`Verifier` into the ``authenticate`` hook of
  :class:`~mcp_elicit.transport.http_app.HttpApp`: it reads ``Authorization: Bearer <token>``
  and answers ``401`` with a ``WWW-Authenticate`` challenge as MCP authorization expects
  (RFC 9728 §5.1 ``resource_metadata``, RFC 6750 §3 ``error="invalid_token"``).
* :func:`protected_resource_metadata` builds the RFC 9728 document, and
  :class:`ProtectedResourceMetadataApp` serves it at ``/.well-known/oauth-protected-resource``
  and at the path-suffixed form (``/.well-known/oauth-protected-resource/mcp`` for a resource
  ``https://host/mcp``, RFC 9728 §3.1), optionally in front of the MCP app.

URLs published to clients must be https; http is accepted only on a loopback host and only with
``development=True``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from mcp_elicit.server.auth import Authenticate, Caller, Unauthorized
from mcp_elicit.transport.asgi import ASGIApp, Receive, Scope, Send, send_response, send_text
from mcp_elicit.transport.lifespan import acknowledge_lifespan

from .errors import InvalidToken
from .urls import check_service_url
from .verifier import Verifier

__all__ = [
    "WELL_KNOWN_PATH",
    "ProtectedResourceMetadataApp",
    "authenticator",
    "protected_resource_metadata",
    "resource_metadata_path",
    "resource_metadata_url",
]

_log = logging.getLogger("mcp_elicit.connect.identity")

WELL_KNOWN_PATH: Final = "/.well-known/oauth-protected-resource"


# RFC 6750 §2.1: "Bearer" 1*SP b64token (scheme names are case-insensitive, RFC 7235 §2.1).
_BEARER_RE: Final = re.compile(r"[Bb][Ee][Aa][Rr][Ee][Rr] +([A-Za-z0-9\-._~+/]+=*) *")
_SCHEME_RE: Final = re.compile(r"\s*([A-Za-z][A-Za-z0-9!#$%&'*+\-.^_`|~]*)")
# RFC 6749 §3.3 scope-token.
_SCOPE_TOKEN_RE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_QUOTABLE_RE: Final = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")

# Public messages (the JSON-RPC error text of a 401), not passwords.
MISSING_TOKEN_MESSAGE: Final = "Unauthorized: this server requires a bearer access token"  # noqa: S105
INVALID_TOKEN_PUBLIC: Final = "Unauthorized: the access token is invalid or expired"  # noqa: S105
_ERROR_DESCRIPTION: Final = "The access token is invalid or expired"


def _quoted(name: str, value: str) -> str:
    if not _QUOTABLE_RE.fullmatch(value):
        raise ValueError(f"{name} cannot be sent in a WWW-Authenticate quoted-string: {value!r}")
    return f'{name}="{value}"'


def _scope_string(scope: str | Sequence[str] | None) -> str | None:
    if scope is None:
        return None
    tokens = scope.split() if isinstance(scope, str) else list(scope)
    if not tokens or not all(isinstance(t, str) and _SCOPE_TOKEN_RE.fullmatch(t) for t in tokens):
        raise ValueError(f"scope must be one or more scope tokens: {scope!r}")
    return " ".join(tokens)


def authenticator(
    verifier: Verifier,
    *,
    resource_metadata_url: str,
    realm: str | None = None,
    scope: str | Sequence[str] | None = None,
    development: bool = False,
) -> Authenticate:
    """The ``HttpApp(authenticate=...)`` hook for ``verifier``; returns a ``Caller`` of
    ``principal.key`` and the token's client (``client_id`` or ``azp``).

    * no ``Authorization: Bearer`` header (absent, or another scheme):
      ``Unauthorized('Bearer resource_metadata="<url>"')``, no error code (RFC 6750 §3.1);
    * a bearer token that is malformed or refused by the verifier:
      ``Unauthorized('Bearer error="invalid_token", error_description="...",
      resource_metadata="<url>"')``. The description is fixed and generic; the verifier's reason
      is logged at INFO (never the token).

    ``realm`` goes first and ``scope`` (RFC 6750 §3; MCP servers use it to say which scopes a
    token needs) last when given. :class:`IdentityUnavailable` from the verifier is not caught:
    the request fails closed with a server error, not a 401.
    """
    check_service_url(resource_metadata_url, "resource_metadata_url", allow_loopback_http=development)
    head = [_quoted("realm", realm)] if realm is not None else []
    tail = [_quoted("resource_metadata", resource_metadata_url)]
    scope_value = _scope_string(scope)
    if scope_value is not None:
        tail.append(_quoted("scope", scope_value))
    missing = "Bearer " + ", ".join([*head, *tail])
    invalid = "Bearer " + ", ".join(
        [*head, 'error="invalid_token"', _quoted("error_description", _ERROR_DESCRIPTION), *tail]
    )

    async def authenticate(headers: Mapping[str, str]) -> Caller:
        value = headers.get("authorization")
        if value is None:
            raise Unauthorized(missing, MISSING_TOKEN_MESSAGE)
        scheme = _SCHEME_RE.match(value)
        if scheme is None or scheme.group(1).lower() != "bearer":
            raise Unauthorized(missing, MISSING_TOKEN_MESSAGE)
        match = _BEARER_RE.fullmatch(value.strip())
        if match is None:
            _log.info("access token refused: malformed Authorization header")
            raise Unauthorized(invalid, INVALID_TOKEN_PUBLIC)
        try:
            principal = await verifier.verify(match.group(1))
        except InvalidToken as exc:
            _log.info("access token refused: %s", exc.reason)
            raise Unauthorized(invalid, INVALID_TOKEN_PUBLIC) from None
        # The client too: requestState is bound to the user and the client the token was issued to.
        return Caller(principal.key, principal.client_id)

    return authenticate


# ------------------------------------------------------------------------------ RFC 9728


def resource_metadata_path(resource: str) -> str:
    """The well-known path for ``resource`` (RFC 9728 §3.1): the well-known prefix, then the
    resource's path (``https://h/mcp`` → ``/.well-known/oauth-protected-resource/mcp``)."""
    path = check_service_url(resource, "resource", allow_loopback_http=True).path
    path = path.rstrip("/")
    return WELL_KNOWN_PATH + path if path else WELL_KNOWN_PATH


def resource_metadata_url(resource: str, *, development: bool = False) -> str:
    """The URL of ``resource``'s protected-resource metadata (RFC 9728 §3.1)."""
    parts = check_service_url(resource, "resource", allow_loopback_http=development)
    if parts.query:
        raise ValueError(f"resource must not contain a query: {resource!r}")
    return f"{parts.scheme}://{parts.netloc}{resource_metadata_path(resource)}"


def protected_resource_metadata(
    *,
    resource: str,
    authorization_servers: Sequence[str],
    scopes_supported: Sequence[str] | None = None,
    resource_name: str | None = None,
    resource_documentation: str | None = None,
    bearer_methods_supported: Sequence[str] = ("header",),
    development: bool = False,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An RFC 9728 protected-resource metadata document for this MCP server.

    ``resource``: this server's resource identifier, i.e. its canonical MCP endpoint URI (the
    ``aud`` that tokens must carry). ``authorization_servers``: issuer identifiers of the
    authorization servers whose tokens are accepted. ``bearer_methods_supported`` defaults to
    ``["header"]``, the only method :func:`authenticator` reads. ``extra``: further RFC 9728
    members (they may not replace the ones above).
    """
    parts = check_service_url(resource, "resource", allow_loopback_http=development)
    if parts.query:
        raise ValueError(f"resource must not contain a query: {resource!r}")
    if isinstance(authorization_servers, str) or not authorization_servers:
        raise ValueError("authorization_servers must be a non-empty list of issuer URLs")
    for issuer in authorization_servers:
        check_service_url(issuer, "authorization server", allow_loopback_http=development)
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
    }
    if scopes_supported is not None:
        if isinstance(scopes_supported, str):
            raise TypeError("scopes_supported must be a list of scope tokens")
        for token in scopes_supported:
            if not isinstance(token, str) or not _SCOPE_TOKEN_RE.fullmatch(token):
                raise ValueError(f"not a scope token: {token!r}")
        document["scopes_supported"] = list(scopes_supported)
    methods = list(bearer_methods_supported)
    if not set(methods) <= {"header", "body", "query"}:
        raise ValueError(f"unknown bearer methods: {methods!r}")
    document["bearer_methods_supported"] = methods
    if resource_name is not None:
        document["resource_name"] = resource_name
    if resource_documentation is not None:
        check_service_url(resource_documentation, "resource_documentation", allow_loopback_http=development)
        document["resource_documentation"] = resource_documentation
    for name, value in (extra or {}).items():
        if name in document:
            raise ValueError(f"extra may not replace {name!r}")
        document[name] = value
    orjson.dumps(document)  # fail now, not on the first request, if something is not JSON
    return document


class ProtectedResourceMetadataApp:
    """ASGI app serving a metadata document at the RFC 9728 well-known paths.

    ``GET``/``HEAD`` answer ``200`` with ``application/json``, ``Cache-Control: public,
    max-age=<max_age>`` (the document is public and changes rarely) and ``Access-Control-Allow-
    Origin: *`` (browser-based MCP clients discover it cross-origin; it carries no credentials).
    ``OPTIONS`` answers the CORS preflight; other methods get ``405``. Every other path goes to
    ``app`` (e.g. the MCP :class:`~mcp_elicit.transport.http_app.HttpApp`), or ``404``.
    """

    def __init__(
        self, metadata: Mapping[str, Any], *, app: ASGIApp | None = None, max_age: int = 3600
    ) -> None:
        resource = metadata.get("resource")
        if not isinstance(resource, str):
            raise ValueError("metadata has no 'resource'")
        if not isinstance(max_age, int) or max_age < 0:
            raise ValueError("max_age must be a non-negative int")
        self.paths = frozenset({WELL_KNOWN_PATH, resource_metadata_path(resource)})
        self.app = app
        self._body = orjson.dumps(dict(metadata))
        self._headers = [
            (b"content-type", b"application/json"),
            (b"cache-control", f"public, max-age={max_age}".encode()),
            (b"access-control-allow-origin", b"*"),
            (b"x-content-type-options", b"nosniff"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in self.paths:
            await self._serve(scope["method"], send)
        elif self.app is not None:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await send_text(send, 404, b"Not Found")
        elif scope["type"] == "lifespan":
            await acknowledge_lifespan(receive, send)

    async def _serve(self, method: str, send: Send) -> None:
        if method in ("GET", "HEAD"):
            body = b"" if method == "HEAD" else self._body
            await send_response(send, 200, self._headers, body, length=len(self._body))
        elif method == "OPTIONS":
            preflight = [
                (b"access-control-allow-origin", b"*"),
                (b"access-control-allow-methods", b"GET, HEAD, OPTIONS"),
                (b"access-control-allow-headers", b"mcp-protocol-version"),
                (b"access-control-max-age", b"86400"),
            ]
            await send_response(send, 204, preflight)
        else:
            await send_text(send, 405, b"", [(b"allow", b"GET, HEAD, OPTIONS")])
