"""Verify bearer JWT access tokens (RFC 9068 shape) locally against the issuer's JWKS.

Checks, in order (the first failure wins; every failure is :class:`InvalidToken` with a
``reason`` for logs and one generic public message):

1. the token is a str of at most ``max_token_bytes``, a compact JWS (three canonical base64url
   segments, a JSON object header with unique member names);
2. header: ``alg`` is in the configured allow-list (``none`` and ``HS*`` can never be in it, and
   no HMAC implementation is reachable: the RSA-public-key-as-HMAC-secret confusion has no path);
   no ``crit`` and no ``b64`` (no extension is understood, RFC 7515 §4.1.11); ``kid`` a string when
   present; ``typ`` one of ``token_types`` when that is configured (e.g. ``{"at+jwt"}``, RFC 9068
   §2.1). Header members that point at keys (``jku``, ``jwk``, ``x5u``, ``x5c``) are ignored:
   keys come only from the configured JWKS, never from the token;
3. signature (verified by PyJWT), with a key from the JWKS whose ``kid`` matches (all fitting
   keys when the token has no ``kid``), of the algorithm's own key type and curve (``unknown-kid``
   after at most one rate-limited refresh, ``no-matching-key``, ``bad-signature``);
4. claims, against ``clock()`` with ``leeway`` seconds for clock skew: ``iss`` exactly the
   configured issuer (simple string comparison, no normalisation); ``aud`` (a string or an array)
   contains the configured audience, i.e. this resource server (RFC 8707 / RFC 9068 §4: a token
   minted for another resource is refused, which is what stops token passthrough into this server);
   ``exp`` present, a number, and in the future; ``nbf`` and ``iat`` numbers not in the future when
   present; ``sub`` a non-empty string usable as a principal. (These are ours, not PyJWT's: its
   time checks read the system clock, not ``clock``.)

No passthrough: the token is only parsed and checked here, in memory. It is never sent anywhere:
not to the JWKS endpoint (a plain credential-free GET), not to any third party, not to logs
(neither the token nor any part of it appears in an exception or a log record).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .errors import InvalidToken
from .jwks import JWKSCache
from .jws import SUPPORTED_ALGORITHMS, MalformedJWS, parse_compact, verify_signature
from .principal import Principal, principal_problem

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_ALGORITHMS", "JWTIdentity"]

DEFAULT_ALGORITHMS: Final = ("RS256", "ES256", "EdDSA")
MAX_TOKEN_BYTES: Final = 16 * 1024
_MAX_KID: Final = 512


def _number(value: object) -> float | None:
    """A JSON number as float, or ``None`` for anything else (bools, strings, NaN, ...)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _optional_time(claims: Mapping[str, Any], name: str) -> float | None:
    """A NumericDate claim that may be absent; ``bad-claims`` when present but not a number."""
    if name not in claims:
        return None
    value = _number(claims[name])
    if value is None:
        raise InvalidToken("bad-claims")
    return value


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, str):
        return frozenset(scp.split())
    if isinstance(scp, list) and all(isinstance(s, str) for s in scp):
        return frozenset(scp)
    return frozenset()


def _normalise_typ(typ: str) -> str:
    typ = typ.strip().lower()
    return typ[len("application/") :] if typ.startswith("application/") else typ


class JWTIdentity:
    """An async :class:`~mcp_elicit.connect.identity.Verifier` for JWT access tokens.

    ``issuer``: the authorization server's issuer identifier, compared exactly with ``iss``.
    ``audience``: this MCP server's resource identifier (its canonical URI), or several; a token
    is accepted when its ``aud`` contains one of them. ``jwks_url`` (fetched, cached) or ``jwks``
    (a fixed JWK Set object or list of JWKs). ``algorithms``: the allow-list (asymmetric only).
    ``leeway``: allowed clock skew in seconds. ``token_types``: accepted ``typ`` header values
    (``None``: not checked, since many issuers send ``JWT``; ``{"at+jwt"}`` enforces RFC 9068).
    ``jwks_cache_seconds`` / ``jwks_refresh_min_interval`` / ``jwks_timeout`` /
    ``jwks_failure_backoff`` / ``jwks_max_stale``: see :class:`~.jwks.JWKSCache`.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_url: str | None = None,
        jwks: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
        token_types: Collection[str] | None = None,
        jwks_cache_seconds: float = 300.0,
        jwks_refresh_min_interval: float = 30.0,
        jwks_timeout: float = 5.0,
        jwks_failure_backoff: float = 5.0,
        jwks_max_stale: float = 3600.0,
        max_token_bytes: int = MAX_TOKEN_BYTES,
        clock: Callable[[], float] = time.time,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        problem = principal_problem(issuer, "-")
        if problem is not None:
            raise ValueError(f"issuer: {problem}")
        audiences = (audience,) if isinstance(audience, str) else tuple(audience)
        if not audiences or not all(isinstance(a, str) and a for a in audiences):
            raise ValueError("audience must be a non-empty str (or a non-empty list of them)")
        if isinstance(algorithms, str):
            raise TypeError("algorithms must be a collection of names, not a str")
        allowed = tuple(algorithms)
        if not allowed:
            raise ValueError("algorithms must not be empty")
        for alg in allowed:
            if alg not in SUPPORTED_ALGORITHMS:
                raise ValueError(
                    f"algorithm {alg!r} is not allowed: only asymmetric signatures are accepted "
                    f"({', '.join(sorted(SUPPORTED_ALGORITHMS))}); never 'none' or HS*"
                )
        if isinstance(leeway, bool) or not isinstance(leeway, int | float) or not 0 <= leeway <= 300:
            raise ValueError("leeway must be between 0 and 300 seconds")
        if max_token_bytes < 64:
            raise ValueError("max_token_bytes is too small")
        self._issuer = issuer
        self._audiences = frozenset(audiences)
        self._algorithms = frozenset(allowed)
        self._leeway = float(leeway)
        self._types = None if token_types is None else frozenset(_normalise_typ(t) for t in token_types)
        self._max_token_bytes = int(max_token_bytes)
        self._clock = clock
        self._jwks = JWKSCache(
            jwks_url,
            static=jwks,
            timeout=jwks_timeout,
            cache_seconds=jwks_cache_seconds,
            refresh_min_interval=jwks_refresh_min_interval,
            failure_backoff=jwks_failure_backoff,
            max_stale=jwks_max_stale,
            clock=clock,
            http_client=http_client,
        )

    @property
    def issuer(self) -> str:
        """The issuer identifier a token's ``iss`` must equal exactly."""
        return self._issuer

    @property
    def jwks(self) -> JWKSCache:
        """The issuer's key set the signatures are checked against."""
        return self._jwks

    def __repr__(self) -> str:
        return f"JWTIdentity(issuer={self._issuer!r}, audience={sorted(self._audiences)!r})"

    async def verify(self, token: str) -> Principal:
        """The principal of a valid ``token``.

        Raises :class:`InvalidToken` for any token that must be refused, and
        :class:`IdentityUnavailable` when the JWKS cannot be obtained.
        """
        if not isinstance(token, str):
            raise InvalidToken("not-a-string")
        if len(token) > self._max_token_bytes:
            raise InvalidToken("too-large")
        try:
            jws = parse_compact(token)
        except MalformedJWS:
            raise InvalidToken("malformed") from None
        header = jws.header
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self._algorithms:
            raise InvalidToken("alg-not-allowed")
        if "crit" in header or "b64" in header:
            raise InvalidToken("bad-header")
        kid = header.get("kid")
        if "kid" in header and (not isinstance(kid, str) or len(kid) > _MAX_KID):
            raise InvalidToken("bad-header")  # "kid": null is not "no kid" (all keys)
        if self._types is not None:
            typ = header.get("typ")
            if not isinstance(typ, str) or _normalise_typ(typ) not in self._types:
                raise InvalidToken("bad-header")

        keys = await self._jwks.keys_for(kid, alg)
        if not any(verify_signature(jws, alg, key) for key in keys):
            raise InvalidToken("bad-signature")

        claims = jws.json_payload()
        if claims is None:
            raise InvalidToken("malformed")
        return self._principal(claims)

    def _principal(self, claims: dict[str, Any]) -> Principal:
        now = self._clock()
        leeway = self._leeway
        iss = claims.get("iss")
        if not isinstance(iss, str) or iss != self._issuer:
            raise InvalidToken("issuer")
        aud = claims.get("aud")
        if isinstance(aud, str):
            audiences = {aud}
        elif isinstance(aud, list) and all(isinstance(a, str) for a in aud):
            audiences = set(aud)
        else:
            raise InvalidToken("audience")
        if not audiences & self._audiences:
            raise InvalidToken("audience")
        if "exp" not in claims:
            raise InvalidToken("expired")
        exp = _number(claims["exp"])
        if exp is None:
            raise InvalidToken("bad-claims")
        if now >= exp + leeway:
            raise InvalidToken("expired")
        nbf = _optional_time(claims, "nbf")
        if nbf is not None and nbf > now + leeway:
            raise InvalidToken("not-yet-valid")
        iat = _optional_time(claims, "iat")
        if iat is not None and iat > now + leeway:
            raise InvalidToken("issued-in-future")
        sub = claims.get("sub")
        if principal_problem(self._issuer, sub) is not None:
            raise InvalidToken("no-subject")
        assert isinstance(sub, str)
        client_id = claims.get("client_id", claims.get("azp"))
        return Principal(
            self._issuer,
            sub,
            client_id=client_id if isinstance(client_id, str) else None,
            scopes=_scopes(claims),
        )
