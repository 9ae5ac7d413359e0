"""ID token validation (OpenID Connect Core §3.1.3.7) with the identity package's JWS/JWKS code.

The signature is checked with :func:`~mcp_elicit.connect.identity.jws.verify_signature` and keys
from a :class:`~mcp_elicit.connect.identity.jwks.JWKSCache` of the provider's *pinned*
``jwks_url`` (keys named in the token header, ``jku``/``jwk``/``x5u``, are never used). Then:

* ``alg`` in the allow-list (asymmetric only: ``none``/``HS*`` do not exist in that code), no
  ``crit``;
* ``iss`` exactly the provider's issuer; ``aud`` contains our ``client_id``; with several
  audiences ``azp`` is required, and whenever ``azp`` is present it must be our ``client_id``;
* ``exp`` in the future and ``iat`` not in the future (both required), ``nbf`` when present,
  each with ``leeway`` seconds;
* ``nonce`` equals the pending authorization's (constant-time);
* ``sub`` a non-empty string; ``at_hash`` checked against the access token when present (for the
  RSA and EC algorithms).

Failures raise :class:`~.errors.AuthorizationFailed` (``id-token``, with a fixed ``detail``), or
``jwks-unavailable`` when no key set could be obtained.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
from collections.abc import Callable, Collection
from typing import Any, Final

from ..identity.errors import IdentityUnavailable, InvalidToken
from ..identity.jwks import JWKSCache
from ..identity.jws import SUPPORTED_ALGORITHMS, MalformedJWS, parse_compact, verify_signature
from .errors import AuthorizationFailed

__all__ = ["DEFAULT_ID_TOKEN_ALGORITHMS", "IdTokenValidator"]

DEFAULT_ID_TOKEN_ALGORITHMS: Final = ("RS256", "PS256", "ES256", "EdDSA")
_MAX_ID_TOKEN: Final = 16 * 1024
_MAX_SUB: Final = 255  # OIDC Core §2: sub is at most 255 ASCII characters
_AT_HASH: Final = {"256": hashlib.sha256, "384": hashlib.sha384, "512": hashlib.sha512}


def _fail(detail: str) -> AuthorizationFailed:
    return AuthorizationFailed("id-token", detail=detail)


def _number(claims: dict[str, Any], name: str, *, required: bool) -> float | None:
    if name not in claims:
        if required:
            raise _fail(f"{name}-missing")
        return None
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(f"{name}-not-a-number")
    return float(value)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


class IdTokenValidator:
    """Validates the ID tokens of one provider for one ``client_id``."""

    def __init__(
        self,
        *,
        issuer: str,
        client_id: str,
        jwks: JWKSCache,
        algorithms: Collection[str] = DEFAULT_ID_TOKEN_ALGORITHMS,
        leeway: float = 60.0,
        clock: Callable[[], float],
    ) -> None:
        if isinstance(algorithms, str) or not algorithms:
            raise ValueError("algorithms must be a non-empty collection of names")
        for alg in algorithms:
            if alg not in SUPPORTED_ALGORITHMS:
                raise ValueError(f"ID token algorithm {alg!r} is not allowed (asymmetric only)")
        if isinstance(leeway, bool) or not isinstance(leeway, int | float) or not 0 <= leeway <= 300:
            raise ValueError("leeway must be between 0 and 300 seconds")
        self._issuer = issuer
        self._client_id = client_id
        self._jwks = jwks
        self._algorithms = frozenset(algorithms)
        self._leeway = float(leeway)
        self._clock = clock

    async def validate(self, id_token: str, *, nonce: str | None, access_token: str | None) -> dict[str, Any]:
        """The claims of a valid ``id_token``; :class:`AuthorizationFailed` otherwise."""
        if not isinstance(id_token, str) or len(id_token) > _MAX_ID_TOKEN:
            raise _fail("too-large")
        try:
            jws = parse_compact(id_token)
        except MalformedJWS:
            raise _fail("malformed") from None
        alg = jws.header.get("alg")
        if not isinstance(alg, str) or alg not in self._algorithms:
            raise _fail("alg-not-allowed")
        if "crit" in jws.header or "b64" in jws.header:
            raise _fail("bad-header")
        kid = jws.header.get("kid")
        if kid is not None and (not isinstance(kid, str) or len(kid) > 512):
            raise _fail("bad-header")
        try:
            keys = await self._jwks.keys_for(kid, alg)
        except InvalidToken as exc:
            raise _fail(exc.reason) from None
        except IdentityUnavailable:
            raise AuthorizationFailed("jwks-unavailable") from None
        if not any(verify_signature(jws, alg, key) for key in keys):
            raise _fail("bad-signature")
        claims = jws.json_payload()
        if claims is None:
            raise _fail("malformed")
        self._check_claims(claims, nonce)
        if access_token is not None and "at_hash" in claims:
            self._check_at_hash(claims["at_hash"], alg, access_token)
        return claims

    def _check_claims(self, claims: dict[str, Any], nonce: str | None) -> None:
        iss = claims.get("iss")
        if not isinstance(iss, str) or iss != self._issuer:  # exact, no normalisation
            raise _fail("issuer")
        aud = claims.get("aud")
        if isinstance(aud, str):
            audiences = [aud]
        elif isinstance(aud, list) and aud and all(isinstance(a, str) for a in aud):
            audiences = aud
        else:
            raise _fail("audience")
        if self._client_id not in audiences:
            raise _fail("audience")
        azp = claims.get("azp")
        if len(audiences) > 1 and azp is None:
            raise _fail("azp")
        if azp is not None and azp != self._client_id:
            raise _fail("azp")
        now, leeway = self._clock(), self._leeway
        exp = _number(claims, "exp", required=True)
        assert exp is not None
        if now >= exp + leeway:
            raise _fail("expired")
        iat = _number(claims, "iat", required=True)
        assert iat is not None
        if iat > now + leeway:
            raise _fail("issued-in-future")
        nbf = _number(claims, "nbf", required=False)
        if nbf is not None and nbf > now + leeway:
            raise _fail("not-yet-valid")
        if nonce is not None:
            got = claims.get("nonce")
            if not isinstance(got, str) or not _same(got, nonce):
                raise _fail("nonce")
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub or len(sub) > _MAX_SUB:
            raise _fail("subject")

    def _check_at_hash(self, at_hash: object, alg: str, access_token: str) -> None:
        # OIDC Core §3.1.3.6: base64url of the left half of the hash of the access token's ASCII.
        hash_fn = _AT_HASH.get(alg[2:]) if alg[:2] in ("RS", "PS", "ES") else None
        if hash_fn is None:
            # EdDSA: the hash depends on the curve. at_hash is optional in the code flow anyway
            # (both tokens come straight from the pinned token endpoint).
            return
        digest = hash_fn(access_token.encode("ascii")).digest()
        expected = base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode("ascii")
        if not isinstance(at_hash, str) or not _same(at_hash, expected):
            raise _fail("at_hash")
