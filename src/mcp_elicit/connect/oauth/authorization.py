"""The authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636, RFC 9207, OIDC Core §3.1).

:meth:`AuthorizationCodeGrant.begin` makes a :class:`PendingAuthorization` (fresh ``state``,
S256 ``code_verifier``, ``nonce`` for OpenID providers) and the authorization URL, which authlib
encodes from the *pinned* ``authorize_url``. :meth:`AuthorizationCodeGrant.finish` checks the
callback and redeems the code. Its checks, in order, each fail-closed with
:class:`AuthorizationFailed`:

1. the provider in the callback path, the pending authorization's provider and this flow's
   provider are the same (mix-up / COAT: a callback under another provider's path is refused),
   and the pending authorization was made for this ``redirect_uri``;
2. the pending authorization is at most ``max_age`` seconds old;
3. the parameters are well formed: single values, strings, bounded sizes, not both ``code`` and
   ``error``;
4. ``state`` equals the pending one (constant-time);
5. RFC 9207: an ``iss`` must equal the provider's issuer exactly; a missing ``iss`` is refused
   when the provider advertises it;
6. ``error`` → ``provider-error`` (``declined`` for ``access_denied``); the description is kept
   only cleaned, in ``provider_error``;
7. ``code`` present, printable ASCII, bounded;
8. the caller's ``before_redeem`` hook, if any (it may refuse: then nothing is redeemed);
9. the code is redeemed at ``provider.token_url`` only (never a URL from the callback) with the
   code verifier, the identical ``redirect_uri`` and client authentication;
10. the token response is validated; for OpenID providers the ID token too (:mod:`.id_token`).

``state`` and ``iss`` are checked before ``error`` on purpose: an error response is believed only
when it belongs to this transaction and this issuer, so a forged ``?error=access_denied`` link cannot
make the pages mark someone's flow declined, and an error from another issuer is never shown
(the MCP authorization spec's rule for an ``iss`` mismatch).

The pages must use each :class:`PendingAuthorization` once (delete it before calling
:meth:`finish`); a replayed code is refused by the provider (``token-endpoint``).
"""

from __future__ import annotations

import hmac
import logging
import math
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Final

from ..identity.jwks import JWKSCache
from ..identity.urls import check_service_url
from ._http import DEFAULT_TIMEOUT, HttpFailure
from ._requests import post_token_request
from .errors import AuthorizationFailed
from .grant import TokenGrant
from .id_token import DEFAULT_ID_TOKEN_ALGORITHMS, IdTokenValidator
from .pending import PendingAuthorization
from .provider import OAuthProvider
from .token_response import InvalidTokenResponse, parse_error, parse_tokens

if TYPE_CHECKING:
    import httpx

__all__ = ["AuthorizationCodeGrant"]

_log = logging.getLogger("mcp_elicit.connect.oauth")

_MAX_PARAMS: Final = 32
_MAX_VALUE: Final = 8192
_MAX_CODE: Final = 2048
_SINGLE: Final = ("state", "code", "iss", "error", "error_description")
_CODE_RE: Final = re.compile(r"[\x20-\x7e]+")  # RFC 6749 Appendix A.11: VSCHAR
_CLOCK_SKEW: Final = 60.0  # a pending authorization dated this far in the future is still accepted
# Parameters begin() sets itself; an extra_authorize_params entry may not replace them.
_RESERVED: Final = frozenset({"response_type", "client_id", "scope", "code_challenge_method", "uri"})


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def _callback_params(params: object) -> dict[str, str]:
    """The callback's parameters as single strings; ``malformed-callback`` otherwise."""
    if not isinstance(params, Mapping):
        raise AuthorizationFailed("malformed-callback", detail="not-a-mapping")
    if len(params) > _MAX_PARAMS:
        raise AuthorizationFailed("malformed-callback", detail="too-many-parameters")
    getlist = getattr(params, "getlist", None)  # Starlette's QueryParams, multidicts
    result: dict[str, str] = {}
    for key, value in params.items():
        if not isinstance(key, str) or not isinstance(value, str) or len(value) > _MAX_VALUE:
            raise AuthorizationFailed("malformed-callback", detail="bad-parameter")
        if key in _SINGLE and callable(getlist):
            values = getlist(key)
            if not isinstance(values, list | tuple) or len(values) != 1:
                raise AuthorizationFailed("malformed-callback", detail="repeated-parameter")
        result[key] = value
    if "code" in result and "error" in result:
        raise AuthorizationFailed("malformed-callback", detail="code-and-error")
    return result


class AuthorizationCodeGrant:
    """Authorization code + PKCE against one provider, for one exact ``redirect_uri``.

    ``http``: an ``httpx.AsyncClient`` for the token endpoint and JWKS (default: a short-lived
    client per request). ``max_age``: seconds a pending authorization stays usable. ``timeout``:
    the deadline of each request to the provider. ``clock``: wall time in seconds (tests).
    ``id_token_algorithms`` / ``leeway``: ID token checks. ``jwks``: a shared key cache for the
    provider's ``jwks_url`` (default: one per flow object).
    """

    def __init__(
        self,
        provider: OAuthProvider,
        redirect_uri: str,
        *,
        http: httpx.AsyncClient | None = None,
        max_age: float = 600,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.time,
        id_token_algorithms: Collection[str] = DEFAULT_ID_TOKEN_ALGORITHMS,
        leeway: float = 60.0,
        jwks: JWKSCache | None = None,
    ) -> None:
        if not isinstance(provider, OAuthProvider):
            raise TypeError("provider must be an OAuthProvider")
        check_service_url(redirect_uri, "redirect_uri", allow_loopback_http=True)
        for name, value in (("max_age", max_age), ("timeout", timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number of seconds")
            if value <= 0:
                raise ValueError(f"{name} must be positive")
        clash = _RESERVED & provider.extra_authorize_params.keys()
        if clash:
            raise ValueError(
                f"OAuth provider {provider.id!r}: extra_authorize_params may not set {sorted(clash)}"
            )
        mode = provider.extra_authorize_params.get("response_mode", "query")
        if mode != "query":
            # form_post arrives as a cross-site POST, which carries no SameSite=Lax cookie (so no
            # transaction, no session); fragment never reaches the server at all.
            raise ValueError(
                f"OAuth provider {provider.id!r}: response_mode={mode!r} is not supported; the "
                "callback must be a GET with the response in its query (response_mode=query)"
            )
        self.provider = provider
        self.redirect_uri = redirect_uri
        self.max_age = float(max_age)
        self._http = http
        self._timeout = float(timeout)
        self._clock = clock
        self._id_tokens: IdTokenValidator | None = None
        if provider.openid:
            # OAuthProvider guarantees both for openid providers.
            assert provider.issuer is not None
            assert provider.jwks_url is not None
            keys = jwks or JWKSCache(provider.jwks_url, timeout=timeout, clock=clock, http_client=http)
            self._id_tokens = IdTokenValidator(
                issuer=provider.issuer,
                client_id=provider.client_id,
                jwks=keys,
                algorithms=id_token_algorithms,
                leeway=leeway,
                clock=clock,
            )

    def __repr__(self) -> str:
        return f"AuthorizationCodeGrant(provider={self.provider.id!r}, redirect_uri={self.redirect_uri!r})"

    @property
    def scope(self) -> tuple[str, ...]:
        """The scopes requested by default: the provider's, with ``openid`` first for OpenID
        providers."""
        return self.requested_scopes()

    def requested_scopes(self, scopes: Iterable[str] | None = None) -> tuple[str, ...]:
        """What :meth:`begin` asks for: ``scopes`` (default: the provider's), without duplicates,
        with ``openid`` first for OpenID providers (the ID token checks need it)."""
        if isinstance(scopes, str):
            raise TypeError("scopes must be a sequence of scope tokens, not a str")
        requested = tuple(dict.fromkeys(self.provider.scopes if scopes is None else scopes))
        if self.provider.openid and "openid" not in requested:
            requested = ("openid", *requested)
        return requested

    # ------------------------------------------------------------------------------ begin

    def begin(self, scopes: Iterable[str] | None = None) -> tuple[str, PendingAuthorization]:
        """The authorization URL to redirect the browser to, and what to keep until the callback.

        ``scopes``: what to ask the provider for (a connect flow's own scopes); default the
        provider's. Give the same ``scopes`` to :meth:`finish`."""
        requested = self.requested_scopes(scopes)
        from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
        from authlib.oauth2.rfc7636 import create_s256_code_challenge

        provider = self.provider
        pending = PendingAuthorization(
            provider_id=provider.id,
            state=secrets.token_urlsafe(32),  # 256 bits
            code_verifier=secrets.token_urlsafe(64),  # 86 chars, 512 bits (RFC 7636 §4.1: 43-128)
            nonce=secrets.token_urlsafe(32) if provider.openid else None,
            redirect_uri=self.redirect_uri,
            created=self._clock(),
        )
        extra: dict[str, str] = {
            "code_challenge": str(create_s256_code_challenge(pending.code_verifier)),
            "code_challenge_method": "S256",
        }
        if pending.nonce is not None:
            extra["nonce"] = pending.nonce
        extra.update(provider.extra_authorize_params)
        url = prepare_grant_uri(
            provider.authorize_url,
            provider.client_id,
            "code",
            redirect_uri=self.redirect_uri,
            scope=list(requested) or None,
            state=pending.state,
            **extra,
        )
        return str(url), pending

    # ------------------------------------------------------------------------------ finish

    async def finish(
        self,
        pending: PendingAuthorization,
        params: Mapping[str, str],
        *,
        provider_in_path: str,
        scopes: Iterable[str] | None = None,
        before_redeem: Callable[[], Awaitable[None]] | None = None,
    ) -> TokenGrant:
        """Check the callback ``params`` against ``pending`` and redeem the code.

        ``scopes``: what :meth:`begin` asked for (the grant's scopes when the token response
        omits ``scope``, RFC 6749 §5.1). ``before_redeem``: awaited once every check of the
        callback passed, just before the code is redeemed; whatever it raises propagates and the
        code is never redeemed (the pages use it to revoke the grant being replaced, and to refuse
        a code they could not store).

        Raises :class:`AuthorizationFailed` (see the module doc for the order of the checks).
        """
        requested = self.requested_scopes(scopes)
        try:
            return await self._finish(pending, params, provider_in_path, requested, before_redeem)
        except AuthorizationFailed as exc:
            self._log_failure(exc)
            raise

    def _log_failure(self, exc: AuthorizationFailed) -> None:
        """One line per failed authorization: WARNING for what the operator must look at (a
        possible attack, or a token endpoint refusing our own configuration, with what to
        check), INFO for the rest (a person's denial, an expired sign-in, a code used twice)."""
        hint = ""
        if exc.reason in _SECURITY_EVENTS:
            level = logging.WARNING
        elif _points_at_configuration(exc):
            level = logging.WARNING
            hint = f"; check client_id/client_secret/token_url for provider {self.provider.id!r}"
        else:
            level = logging.INFO
        _log.log(
            level,
            "authorization with provider %r failed: %s%s%s%s",
            self.provider.id,
            exc.reason,
            f" ({exc.detail})" if exc.detail else "",
            f" error={exc.error}" if exc.error else "",
            hint,
        )

    async def _finish(
        self,
        pending: object,
        params: object,
        provider_in_path: object,
        requested: tuple[str, ...],
        before_redeem: Callable[[], Awaitable[None]] | None,
    ) -> TokenGrant:
        provider = self.provider
        if not isinstance(pending, PendingAuthorization):
            raise AuthorizationFailed("bad-pending", detail="type")
        if not (isinstance(provider_in_path, str) and provider_in_path == pending.provider_id == provider.id):
            raise AuthorizationFailed("wrong-provider")
        if pending.redirect_uri != self.redirect_uri:
            raise AuthorizationFailed("bad-pending", detail="redirect_uri")
        now = self._clock()
        if now - pending.created > self.max_age or pending.created - now > _CLOCK_SKEW:
            raise AuthorizationFailed("expired")
        values = _callback_params(params)

        state = values.get("state")
        if state is None or not _same(state, pending.state):
            raise AuthorizationFailed("state-mismatch")
        iss = values.get("iss")
        if iss is not None and provider.issuer is not None:
            if iss != provider.issuer:  # RFC 9207 §2.4: simple string comparison
                raise AuthorizationFailed("iss-mismatch")
        elif iss is None and provider.iss_parameter_supported:
            raise AuthorizationFailed("iss-missing")
        if "error" in values:
            raise AuthorizationFailed(
                "provider-error", error=values["error"], provider_error=values.get("error_description")
            )
        code = values.get("code")
        if not code:
            raise AuthorizationFailed("missing-code")
        if len(code) > _MAX_CODE or not _CODE_RE.fullmatch(code):
            raise AuthorizationFailed("malformed-callback", detail="code")

        if before_redeem is not None:
            await before_redeem()
        return await self._redeem(pending, code, requested)

    async def _redeem(
        self, pending: PendingAuthorization, code: str, requested: tuple[str, ...]
    ) -> TokenGrant:
        try:
            answer = await post_token_request(
                self.provider,
                "authorization_code",
                http=self._http,
                deadline=self._timeout,
                redirect_uri=pending.redirect_uri,
                code=code,
                code_verifier=pending.code_verifier,
            )
        except HttpFailure as exc:
            raise AuthorizationFailed("token-endpoint", detail=exc.kind) from None
        if answer.status != 200:
            body = parse_error(answer, withhold=(code, pending.code_verifier, self.provider.client_secret))
            raise AuthorizationFailed(
                "token-endpoint",
                error=body.error,
                provider_error=body.description,
                detail=f"http-{answer.status}",
            )
        try:
            tokens = parse_tokens(answer)
        except InvalidTokenResponse as exc:
            raise AuthorizationFailed("token-response", detail=str(exc)) from None

        claims = None
        if self._id_tokens is not None:
            if tokens.id_token is None:
                raise AuthorizationFailed("id-token", detail="missing")
            claims = await self._id_tokens.validate(
                tokens.id_token, nonce=pending.nonce, access_token=tokens.access_token
            )
        return TokenGrant(
            access_token=tokens.access_token,
            refresh_token=tokens.refresh_token,
            expires_in=tokens.expires_in,
            scopes=tokens.scopes if tokens.scopes is not None else requested,
            token_type="Bearer",  # noqa: S106 - a token type, not a password
            id_claims=claims,
        )


# Failures that suggest an attack (or a misconfiguration worth a look) rather than a user's choice.
_SECURITY_EVENTS: Final = frozenset(
    {"bad-pending", "wrong-provider", "state-mismatch", "iss-mismatch", "iss-missing", "id-token"}
)
# OAuth errors of a token endpoint that mean the request it was sent is wrong for it: the
# client's id or secret, its authentication method, the token URL (RFC 6749 §5.2).
_CONFIGURATION_ERRORS: Final = frozenset(
    {"invalid_client", "unauthorized_client", "invalid_request", "unsupported_grant_type"}
)
# Statuses of a token endpoint that refuses the request itself: 400/401 (RFC 6749 §5.2), or a
# URL that is not its token endpoint at all (404, 405).
_CONFIGURATION_STATUSES: Final = frozenset({"http-400", "http-401", "http-403", "http-404", "http-405"})


def _points_at_configuration(exc: AuthorizationFailed) -> bool:
    """Whether the token endpoint's refusal points at this server's settings for the provider.
    Not ``invalid_grant`` (a 400 too): that is the code, expired or already used, which a new
    attempt fixes."""
    if exc.reason != "token-endpoint" or exc.error == "invalid_grant":
        return False
    return exc.error in _CONFIGURATION_ERRORS or exc.detail in _CONFIGURATION_STATUSES
