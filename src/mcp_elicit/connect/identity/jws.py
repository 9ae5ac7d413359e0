"""Compact JWS: parse, and verify a signature with a public key (``cryptography`` only, no I/O).

Only asymmetric algorithms exist here: RS256/384/512, PS256/384/512, ES256/384/512 and EdDSA.
``none`` and the HMAC family are not implemented at all, so a token cannot talk its way into
them (the classic algorithm-confusion attack verifies an ``HS256`` token with the RSA *public* key
as the HMAC secret; here there is no code path that uses a key as an HMAC secret). A key is used
only with an algorithm of its own type and curve (:func:`key_fits`).

Parsing is strict: exactly three segments, canonical unpadded base64url, a JSON object header.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any, Final

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PublicKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

__all__ = [
    "SUPPORTED_ALGORITHMS",
    "CompactJWS",
    "MalformedJWS",
    "PublicKey",
    "b64url_decode",
    "key_fits",
    "parse_compact",
    "verify_signature",
]

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | Ed25519PublicKey | Ed448PublicKey

_HASHES: Final[dict[str, type[hashes.HashAlgorithm]]] = {
    "256": hashes.SHA256,
    "384": hashes.SHA384,
    "512": hashes.SHA512,
}
_EC_CURVES: Final[dict[str, tuple[type[ec.EllipticCurve], int]]] = {
    # alg: (curve, bytes per coordinate in the raw r||s signature)
    "ES256": (ec.SECP256R1, 32),
    "ES384": (ec.SECP384R1, 48),
    "ES512": (ec.SECP521R1, 66),
}
SUPPORTED_ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MIN_RSA_BITS: Final = 2048

_SEGMENT: Final = r"[A-Za-z0-9_-]"
_COMPACT_RE: Final = re.compile(rf"({_SEGMENT}+)\.({_SEGMENT}+)\.({_SEGMENT}*)")


class MalformedJWS(ValueError):
    """Not a compact JWS this module accepts."""


def b64url_decode(segment: str) -> bytes:
    """Decode canonical unpadded base64url; :class:`MalformedJWS` otherwise."""
    if len(segment) % 4 == 1:
        raise MalformedJWS("impossible base64url length")
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        raise MalformedJWS("not base64url") from None
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii") != segment:
        raise MalformedJWS("non-canonical base64url")
    return raw


@dataclass(frozen=True, slots=True)
class CompactJWS:
    """A parsed, not yet verified, compact JWS."""

    header: dict[str, Any]
    payload: bytes
    signing_input: bytes
    signature: bytes

    @property
    def alg(self) -> object:
        return self.header.get("alg")


def parse_compact(token: str) -> CompactJWS:
    """Split and decode ``token``; verifies nothing. Raises :class:`MalformedJWS`."""
    match = _COMPACT_RE.fullmatch(token)
    if match is None:
        raise MalformedJWS("not three base64url segments")
    header_b64, payload_b64, signature_b64 = match.groups()
    try:
        header = orjson.loads(b64url_decode(header_b64))
    except orjson.JSONDecodeError:
        raise MalformedJWS("header is not JSON") from None
    if not isinstance(header, dict):
        raise MalformedJWS("header is not a JSON object")
    return CompactJWS(
        header=header,
        payload=b64url_decode(payload_b64),
        signing_input=f"{header_b64}.{payload_b64}".encode("ascii"),
        signature=b64url_decode(signature_b64) if signature_b64 else b"",
    )


def key_fits(key: PublicKey, alg: str) -> bool:
    """Whether ``key`` may verify ``alg`` (right key type, curve and, for RSA, size)."""
    if alg.startswith(("RS", "PS")) and alg in SUPPORTED_ALGORITHMS:
        return isinstance(key, rsa.RSAPublicKey) and key.key_size >= MIN_RSA_BITS
    if alg in _EC_CURVES:
        curve, _ = _EC_CURVES[alg]
        return isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, curve)
    if alg == "EdDSA":
        return isinstance(key, Ed25519PublicKey | Ed448PublicKey)
    return False


def verify_signature(jws: CompactJWS, alg: str, key: PublicKey) -> bool:
    """``True`` when ``jws.signature`` is a valid ``alg`` signature by ``key``.

    ``alg`` must be supported and ``key`` must fit it (checked again here); anything else is
    ``False``, never an exception.
    """
    if alg not in SUPPORTED_ALGORITHMS or not key_fits(key, alg):
        return False
    message, signature = jws.signing_input, jws.signature
    try:
        if isinstance(key, rsa.RSAPublicKey):
            digest = _HASHES[alg[2:]]()
            if alg.startswith("RS"):
                key.verify(signature, message, padding.PKCS1v15(), digest)
            else:  # RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash output
                pss = padding.PSS(mgf=padding.MGF1(_HASHES[alg[2:]]()), salt_length=digest.digest_size)
                key.verify(signature, message, pss, digest)
            return True
        if isinstance(key, ec.EllipticCurvePublicKey):
            _, size = _EC_CURVES[alg]
            if len(signature) != 2 * size:  # RFC 7518 §3.4: fixed-length R || S, not DER
                return False
            r = int.from_bytes(signature[:size], "big")
            s = int.from_bytes(signature[size:], "big")
            key.verify(encode_dss_signature(r, s), message, ec.ECDSA(_HASHES[alg[2:]]()))
            return True
        key.verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False
