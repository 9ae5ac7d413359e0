"""Compact JWS: a strict parse, a signature check with a public key (PyJWT does the crypto), and
the payload read as a JSON object.

PyJWT's algorithm objects verify the signatures (RSASSA-PKCS1-v1_5, RSASSA-PSS, ECDSA with the
fixed-length ``R || S`` of RFC 7518 §3.4, EdDSA) and its decoder reads base64url. The rules are ours:

* Only asymmetric algorithms exist: RS256/384/512, PS256/384/512, ES256/384/512 and EdDSA.
  :func:`verify_signature` looks algorithms up in a table of those alone, so ``none`` and the
  HMAC family cannot be reached whatever a token says (the classic algorithm-confusion attack
  verifies an ``HS256`` token with the RSA *public* key as the HMAC secret). A key is used only
  with an algorithm of its own type and curve, RSA from 2048 bits (:func:`key_fits`).
* Parsing is stricter than PyJWT's, which (by version) accepts ``=`` padding, non-canonical
  base64url or duplicate header names: three segments, each in canonical unpadded base64url (one
  token, one spelling), and a UTF-8 JSON object header with unique member names (RFC 7515 §4
  allows refusing duplicates; then there is no doubt which ``alg`` or ``kid`` was checked).

PyJWT is imported on first use: it loads ``cryptography.x509`` and ``urllib`` (70 ms and more),
which a server that never sees a JWT should not pay at start-up.
"""

from __future__ import annotations

import binascii
import functools
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import orjson
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PublicKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

if TYPE_CHECKING:
    from jwt.algorithms import Algorithm

__all__ = [
    "MIN_RSA_BITS",
    "SUPPORTED_ALGORITHMS",
    "CompactJWS",
    "MalformedJWS",
    "PublicKey",
    "key_fits",
    "parse_compact",
    "verify_signature",
]

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | Ed25519PublicKey | Ed448PublicKey

_EC_CURVES: Final[dict[str, type[ec.EllipticCurve]]] = {
    "ES256": ec.SECP256R1,
    "ES384": ec.SECP384R1,
    "ES512": ec.SECP521R1,
}
SUPPORTED_ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MIN_RSA_BITS: Final = 2048

_SEGMENT: Final = r"[A-Za-z0-9_-]"
_COMPACT_RE: Final = re.compile(rf"({_SEGMENT}+)\.({_SEGMENT}+)\.({_SEGMENT}*)")


class MalformedJWS(ValueError):
    """Not a compact JWS this module accepts."""


@dataclass(frozen=True, slots=True)
class CompactJWS:
    """A parsed, not yet verified, compact JWS."""

    header: dict[str, Any]
    payload: bytes
    signing_input: bytes
    signature: bytes

    def json_payload(self) -> dict[str, Any] | None:
        """The payload as a JSON object (a JWT's claims), or ``None`` when it is not one."""
        try:
            claims = orjson.loads(self.payload)
        except orjson.JSONDecodeError:
            return None
        return claims if isinstance(claims, dict) else None


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("duplicate member name")
    return members


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


# The parser PyJWT uses too, without its leniencies (duplicate names, NaN, UTF-16/32 bytes).
_HEADER_JSON: Final = json.JSONDecoder(object_pairs_hook=_unique_members, parse_constant=_no_constant)


def parse_compact(token: str) -> CompactJWS:
    """Split and decode ``token``; verifies nothing. Raises :class:`MalformedJWS`."""
    from jwt.utils import base64url_decode, base64url_encode

    match = _COMPACT_RE.fullmatch(token)
    if match is None:
        raise MalformedJWS("not three base64url segments")
    try:
        header_json, payload, signature = (base64url_decode(segment) for segment in match.groups())
    except binascii.Error:  # a segment of 4n+1 characters
        raise MalformedJWS("not base64url") from None
    # Canonical, unpadded: encoding the decoded bytes again gives back the very same token.
    if b".".join(map(base64url_encode, (header_json, payload, signature))) != token.encode("ascii"):
        raise MalformedJWS("non-canonical base64url")
    try:
        header = _HEADER_JSON.decode(header_json.decode("utf-8"))
    except (ValueError, RecursionError):
        raise MalformedJWS("header is not a JSON object with unique member names") from None
    if not isinstance(header, dict):
        raise MalformedJWS("header is not a JSON object")
    signing_input = token[: match.end(2)].encode("ascii")
    return CompactJWS(header=header, payload=payload, signing_input=signing_input, signature=signature)


def key_fits(key: PublicKey, alg: str) -> bool:
    """Whether ``key`` may verify ``alg`` (right key type, curve and, for RSA, size)."""
    if alg.startswith(("RS", "PS")) and alg in SUPPORTED_ALGORITHMS:
        return isinstance(key, rsa.RSAPublicKey) and key.key_size >= MIN_RSA_BITS
    if alg in _EC_CURVES:
        return isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, _EC_CURVES[alg])
    if alg == "EdDSA":
        return isinstance(key, Ed25519PublicKey | Ed448PublicKey)
    return False


@functools.cache
def _algorithms() -> dict[str, Algorithm]:
    """PyJWT's implementations of :data:`SUPPORTED_ALGORITHMS`, and of nothing else."""
    from jwt.algorithms import get_default_algorithms

    return {name: impl for name, impl in get_default_algorithms().items() if name in SUPPORTED_ALGORITHMS}


def verify_signature(jws: CompactJWS, alg: str, key: PublicKey) -> bool:
    """``True`` when ``jws.signature`` is a valid ``alg`` signature by ``key``.

    ``alg`` must be supported and ``key`` must fit it (checked again here); anything else is
    ``False``, never an exception.
    """
    implementation = _algorithms().get(alg)
    if implementation is None or not key_fits(key, alg):
        return False
    from jwt.exceptions import InvalidKeyError

    try:
        prepared = implementation.prepare_key(key)
    except InvalidKeyError:
        return False
    return implementation.verify(jws.signing_input, prepared, jws.signature)
