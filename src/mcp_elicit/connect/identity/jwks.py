"""The issuer's JSON Web Key Set: parsed strictly, fetched over HTTP, cached, refreshed carefully.

Fetching (the only network I/O in :mod:`mcp_elicit.connect.identity`):

* a plain ``GET`` of the configured ``jwks_url`` (https; http only on a loopback host), no
  redirects, no credentials of any kind, and never an access token (no passthrough);
* bounded: the whole fetch (connect, headers, body) has one deadline (``timeout``), and the body a
  size limit, so a slow or hostile endpoint cannot hang a request or exhaust memory;
* cached for ``cache_seconds``; after that the next verification refreshes it;
* an unknown ``kid`` (key rotation) triggers one refresh, but at most one per
  ``refresh_min_interval`` seconds however many tokens arrive: a stream of tokens with made-up
  ``kid`` values cannot turn this server into a load generator against the identity provider;
* single-flight: concurrent verifications that all need a refresh share one request;
* after a failed fetch, no new attempt for ``failure_backoff`` seconds; meanwhile (and whenever a
  refresh fails) the previous key set keeps being used while it is at most ``max_stale`` seconds
  past its cache lifetime, else :class:`IdentityUnavailable` is raised (fail closed).

The fetch is ours rather than PyJWT's ``PyJWKClient``, which reads with ``urllib`` under no
overall deadline and no size limit, and has no back-off or stale window.

Parsing keeps only public signing keys this package can use: RSA (at least 2048 bits), EC P-256 /
P-384 / P-521 and OKP Ed25519 / Ed448. Symmetric (``oct``) keys, keys marked for encryption,
keys with an unsupported ``alg`` and anything carrying private-key members are skipped (logged).
PyJWT's ``PyJWK`` builds each key that passes those rules.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import orjson
from cryptography.hazmat.primitives.asymmetric import rsa

from .errors import IdentityUnavailable, InvalidToken
from .jws import MIN_RSA_BITS, SUPPORTED_ALGORITHMS, PublicKey, key_fits
from .urls import check_service_url

if TYPE_CHECKING:
    import httpx

__all__ = ["JWK", "JWKSCache", "parse_jwk", "parse_jwks"]

_log = logging.getLogger("mcp_elicit.connect.identity")

MAX_KEYS: Final = 256
MAX_JWKS_BYTES: Final = 512 * 1024
_PRIVATE_MEMBERS: Final = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
_CREDENTIAL_HEADERS: Final = ("authorization", "proxy-authorization", "cookie")


@dataclass(frozen=True, slots=True)
class JWK:
    """One usable public signing key from a JWKS."""

    kid: str | None
    alg: str | None
    key: PublicKey

    def fits(self, alg: str) -> bool:
        """May this key verify a token with header ``alg`` (key type, curve, pinned ``alg``)?"""
        if self.alg is not None and self.alg != alg:
            return False
        return key_fits(self.key, alg)


def parse_jwk(obj: object) -> JWK:
    """A public signing key from one JWK object; ``ValueError`` (with the reason) otherwise.

    Our rules come first, so PyJWT only ever sees public signing keys of a supported type (it
    would load an ``oct`` key as an HMAC secret and a JWK with ``d`` as a private key); PyJWT
    then builds the key (and checks that an EC point lies on its curve).
    """
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    kty = obj.get("kty")
    if kty == "oct":
        raise ValueError("symmetric (oct) keys are never used to verify access tokens")
    if _PRIVATE_MEMBERS & obj.keys():
        raise ValueError("the JWK contains private key material (the JWKS must publish public keys)")
    use = obj.get("use")
    if use is not None and use != "sig":
        raise ValueError(f"not a signing key (use={use!r})")
    key_ops = obj.get("key_ops")
    if key_ops is not None and (not isinstance(key_ops, list) or "verify" not in key_ops):
        raise ValueError("key_ops does not include 'verify'")
    kid = obj.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise ValueError("kid is not a string")
    alg = obj.get("alg")
    if alg is not None and (not isinstance(alg, str) or alg not in SUPPORTED_ALGORITHMS):
        raise ValueError(f"unsupported alg {alg!r}")
    from jwt import PyJWK, PyJWTError

    try:
        # PyJWK picks the algorithm (so the loader) of a JWK that names none, except for Ed448.
        loaded = PyJWK(obj, algorithm=alg or ("EdDSA" if kty == "OKP" else None))
    except (PyJWTError, TypeError, ValueError) as exc:  # PyJWT 2.10 lets the last two out
        raise ValueError(f"not a usable key: {exc}") from None
    key = loaded.key
    if isinstance(key, rsa.RSAPublicKey) and key.key_size < MIN_RSA_BITS:
        raise ValueError(f"RSA key of {key.key_size} bits (at least {MIN_RSA_BITS} required)")
    if not key_fits(key, loaded.algorithm_name):  # secp256k1, or an alg of another curve or type
        raise ValueError(f"unsupported key type or curve for {loaded.algorithm_name!r}")
    return JWK(kid=kid, alg=alg, key=key)


def parse_jwks(document: object) -> list[JWK]:
    """The usable keys of a JWKS document; ``ValueError`` when it is not a JWKS at all.

    Individual keys that cannot be used are skipped and logged (at WARNING for the dangerous
    cases: symmetric or private keys; at DEBUG otherwise), so one odd key (an encryption key, a
    new algorithm) does not take the whole set down. (One ``PyJWK`` per entry, not ``PyJWKSet``:
    that one drops keys without saying why and would load symmetric and private keys.)
    """
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("not a JWK Set (a JSON object with a 'keys' array)")
    entries: list[object] = document["keys"]
    if len(entries) > MAX_KEYS:
        raise ValueError(f"the JWK Set has {len(entries)} keys (at most {MAX_KEYS} accepted)")
    keys: list[JWK] = []
    for index, entry in enumerate(entries):
        try:
            keys.append(parse_jwk(entry))
        except ValueError as exc:
            dangerous = isinstance(entry, dict) and (
                entry.get("kty") == "oct" or bool(_PRIVATE_MEMBERS & entry.keys())
            )
            level = logging.WARNING if dangerous else logging.DEBUG
            _log.log(level, "JWKS key #%d skipped: %s", index, exc)
    return keys


@dataclass(frozen=True, slots=True)
class _KeySet:
    keys: tuple[JWK, ...]
    fetched_at: float


class JWKSCache:
    """The key set of one issuer: either fixed (``static``) or fetched from ``url`` (see module doc).

    ``clock`` (seconds, wall time) drives the cache lifetime and all rate limits.
    ``http_client``: an ``httpx.AsyncClient`` to use (proxies, custom CA); by default a short-lived
    client is made per fetch. Either way the request carries no credentials: not the given client's
    ``auth``, nor its default ``Authorization`` or ``Cookie`` header, nor its cookies.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        static: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        timeout: float = 5.0,
        cache_seconds: float = 300.0,
        refresh_min_interval: float = 30.0,
        failure_backoff: float = 5.0,
        max_stale: float = 3600.0,
        max_bytes: int = MAX_JWKS_BYTES,
        clock: Callable[[], float] = time.time,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if (url is None) == (static is None):
            raise ValueError("give exactly one of jwks_url and jwks")
        for name, value in (
            ("timeout", timeout),
            ("cache_seconds", cache_seconds),
            ("refresh_min_interval", refresh_min_interval),
            ("failure_backoff", failure_backoff),
            ("max_stale", max_stale),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number of seconds")
            if value < 0 or (name == "timeout" and value == 0):
                raise ValueError(f"{name} must be {'positive' if name == 'timeout' else '>= 0'}")
        self._url = url
        if url is not None:
            check_service_url(url, "jwks_url", allow_loopback_http=True)
        self._timeout = float(timeout)
        self._cache_seconds = float(cache_seconds)
        self._min_interval = float(refresh_min_interval)
        self._failure_backoff = float(failure_backoff)
        self._max_stale = float(max_stale)
        self._max_bytes = int(max_bytes)
        self._clock = clock
        self._http_client = http_client
        self._lock = asyncio.Lock()
        self._generation = 0  # fetches that ended with an outcome (keys or IdentityUnavailable)
        self._last_attempt: float | None = None
        self._last_error: IdentityUnavailable | None = None
        self._keyset: _KeySet | None = None
        self.fetches = 0  # how many HTTP fetches were started (metrics, tests)
        if static is not None:
            document = {"keys": list(static)} if isinstance(static, Sequence) else dict(static)
            keys = parse_jwks(document)
            if not keys:
                raise ValueError("the jwks given holds no usable public signing key")
            self._keyset = _KeySet(tuple(keys), math.inf)

    @property
    def url(self) -> str | None:
        """Where the key set is fetched from; None for a fixed (``static``) key set."""
        return self._url

    def __repr__(self) -> str:
        source = repr(self._url) if self._url is not None else "static"
        return f"JWKSCache({source})"

    # ------------------------------------------------------------------------------ lookups

    async def keys_for(self, kid: str | None, alg: str) -> list[PublicKey]:
        """The keys that may verify a token with this ``kid`` and ``alg``: the keys with that
        ``kid`` (all keys when the token names none; the keys without a ``kid`` when the token
        names one that no key has), restricted to those that fit ``alg``.

        Raises :class:`InvalidToken` (``unknown-kid`` / ``no-matching-key``) or
        :class:`IdentityUnavailable` (no key set could be obtained).
        """
        keys = await self._current()
        if kid is None:
            named: tuple[JWK, ...] = keys
        else:
            named = tuple(k for k in keys if k.kid == kid)
            if not named and self._url is not None:
                keys = await self._refresh(unknown_kid=True)
                named = tuple(k for k in keys if k.kid == kid)
            if not named:
                # A JWKS whose keys carry no kid at all: those keys are the candidates.
                named = tuple(k for k in keys if k.kid is None)
            if not named:
                raise InvalidToken("unknown-kid")
        found = [k.key for k in named if k.fits(alg)]
        if not found:
            raise InvalidToken("no-matching-key")
        return found

    async def _current(self) -> tuple[JWK, ...]:
        keyset = self._keyset
        if keyset is not None and (
            self._url is None or self._clock() - keyset.fetched_at < self._cache_seconds
        ):
            return keyset.keys
        return await self._refresh(unknown_kid=False)

    # ------------------------------------------------------------------------------ refreshing

    def _stale_or_raise(self, now: float, error: IdentityUnavailable) -> tuple[JWK, ...]:
        keyset = self._keyset
        if keyset is not None and now - keyset.fetched_at < self._cache_seconds + self._max_stale:
            return keyset.keys
        raise IdentityUnavailable(str(error)) from error

    async def _refresh(self, *, unknown_kid: bool) -> tuple[JWK, ...]:
        generation = self._generation
        async with self._lock:
            now = self._clock()
            if self._generation != generation:
                # Another task fetched while this one waited: use its outcome, do not fetch again.
                if self._last_error is not None:
                    return self._stale_or_raise(now, self._last_error)
                if self._keyset is not None:
                    return self._keyset.keys
            last = self._last_attempt
            if last is not None:
                since = now - last
                if self._last_error is not None and since < self._failure_backoff:
                    return self._stale_or_raise(now, self._last_error)
                if unknown_kid and since < self._min_interval and self._keyset is not None:
                    _log.debug("JWKS refresh for an unknown kid skipped (rate limit)")
                    return self._keyset.keys
            self._last_attempt = now
            # The generation moves only once the fetch has an outcome: the tasks that queued
            # behind it share that outcome, whereas a fetch cancelled half-way (its caller gave
            # up) has none, and they must not take the old key set for a fresh one.
            try:
                keys = await self._fetch()
            except IdentityUnavailable as exc:
                self._generation += 1
                self._last_error = exc
                _log.warning("%s", exc)
                return self._stale_or_raise(now, exc)
            self._generation += 1
            self._last_error = None
            self._keyset = _KeySet(tuple(keys), now)
            return self._keyset.keys

    async def _fetch(self) -> list[JWK]:
        import httpx

        url = self._url
        assert url is not None
        self.fetches += 1
        try:
            async with asyncio.timeout(self._timeout):
                if self._http_client is not None:
                    body = await self._get(self._http_client, url)
                else:
                    # The deadline above is the one that counts; httpx's own is only a backstop.
                    backstop = self._timeout + 1.0
                    async with httpx.AsyncClient(timeout=backstop, follow_redirects=False) as client:
                        body = await self._get(client, url)
        except (TimeoutError, httpx.TimeoutException):
            raise IdentityUnavailable(f"JWKS {url}: no complete answer within {self._timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise IdentityUnavailable(f"JWKS {url}: {type(exc).__name__}: {exc}") from None
        try:
            keys = parse_jwks(orjson.loads(body))
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise IdentityUnavailable(f"JWKS {url}: not a usable JWK Set: {exc}") from None
        if not keys:
            _log.warning("JWKS %s holds no usable public signing key", url)
        return keys

    async def _get(self, client: httpx.AsyncClient, url: str) -> bytes:
        headers = {"accept": "application/jwk-set+json, application/json"}
        request = client.build_request("GET", url, headers=headers)
        # A client given by the application may carry credentials for other uses (its auth, a
        # default Authorization header, cookies): none of them goes with this request.
        for name in _CREDENTIAL_HEADERS:
            request.headers.pop(name, None)
        response = await client.send(request, stream=True, auth=None, follow_redirects=False)
        try:
            if response.status_code != 200:
                raise IdentityUnavailable(f"JWKS {url}: HTTP {response.status_code}")
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self._max_bytes:
                    raise IdentityUnavailable(f"JWKS {url}: larger than {self._max_bytes} bytes")
                chunks.append(chunk)
        finally:
            await response.aclose()
        return b"".join(chunks)
